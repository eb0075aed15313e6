//! GitHub-compatible heading anchors.
//!
//! The rule is github-slugger's, which GitHub uses for heading ids: lowercase the
//! heading text, remove every character that is not a letter, mark, number, connector
//! punctuation (`_`), hyphen or space, then turn each space into `-`. A slug already
//! used in the document gets `-1`, `-2`, … appended (the first free one).

use std::collections::HashMap;
use std::sync::OnceLock;

use regex::Regex;

/// The slug of one heading text, without de-duplication.
pub fn slug(text: &str) -> String {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| Regex::new(r"[^\p{L}\p{M}\p{N}\p{Pc} -]").expect("valid regex"));
    re.replace_all(&text.to_lowercase(), "").replace(' ', "-")
}

/// Makes slugs unique within one document, as GitHub does.
#[derive(Debug, Default)]
pub struct Slugger {
    occurrences: HashMap<String, u32>,
}

impl Slugger {
    /// The unique slug of the next heading with text `text`.
    pub fn slug(&mut self, text: &str) -> String {
        let original = slug(text);
        let mut result = original.clone();
        while self.occurrences.contains_key(&result) {
            let n = self
                .occurrences
                .get_mut(&original)
                .expect("original slug was recorded first");
            *n += 1;
            result = format!("{original}-{n}");
        }
        self.occurrences.insert(result.clone(), 0);
        result
    }
}

/// The id Python-Markdown's `toc` extension gives a heading by default, so the anchor of
/// every MkDocs site that configures no other `slugify`: the text decomposed (Unicode NFKD)
/// and reduced to ASCII, every character but a word character (`[A-Za-z0-9_]`), white
/// space or `-` removed, trimmed, lowercased, and each run of white space and `-` turned
/// into one `-`. `Caret, Mark & Tilde` → `caret-mark-tilde` (GitHub: `caret-mark--tilde`);
/// `Über uns` → `uber-uns`; `日本語` → `` (see [`site_ids`]).
pub fn toc_slug(text: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    let kept: String = text
        .nfkd()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-') || c.is_ascii_whitespace())
        .collect();
    let mut out = String::with_capacity(kept.len());
    let mut separator = false;
    for c in kept.trim().chars() {
        if c == '-' || c.is_ascii_whitespace() {
            separator = true;
            continue;
        }
        if separator {
            out.push('-');
            separator = false;
        }
        out.push(c.to_ascii_lowercase());
    }
    if separator {
        out.push('-');
    }
    out
}

/// The id VitePress gives a heading (its `slugify`, from `@mdit-vue/shared`): the text
/// decomposed (NFKD) with combining marks and control characters removed, each run of
/// white space and ASCII punctuation (`` ~`!@#$%^&*()-_+=[]{}|\;:"'<>,.?/ `` and curly
/// quotes) turned into one `-`, `-` trimmed from both ends, `_` put before a leading
/// digit, lowercased. `build.assetsInlineLimit` → `build-assetsinlinelimit` (GitHub:
/// `buildassetsinlinelimit`); `日本語` stays `日本語`.
pub fn vitepress_slug(text: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    let special = |c: char| {
        c.is_whitespace()
            || c.is_ascii_punctuation()
            || matches!(c, '\u{201c}' | '\u{201d}' | '\u{2018}' | '\u{2019}')
    };
    let mut out = String::with_capacity(text.len());
    for c in text.nfkd() {
        if ('\u{300}'..='\u{36f}').contains(&c) || c < '\u{20}' {
            continue;
        }
        if special(c) {
            if !out.ends_with('-') {
                out.push('-');
            }
        } else {
            out.extend(c.to_lowercase());
        }
    }
    let trimmed = out.trim_matches('-');
    if trimmed.starts_with(|c: char| c.is_ascii_digit()) {
        format!("_{trimmed}")
    } else {
        trimmed.to_string()
    }
}

/// The heading ids a site generator gives a document's headings, in order, from each
/// heading's text and attribute-list id; a heading with an id keeps it.
///
/// - MkDocs (Python-Markdown's `toc`): [`toc_slug`], made unique against every id given so
///   far and every attribute-list id of the document by appending `_1`, or by counting up
///   a trailing `_N` (an empty slug becomes `_1`), as the extension's `unique` does.
/// - VitePress (markdown-it-anchor): [`vitepress_slug`]; a repeat gets `-1`, `-2`, … (the
///   first free one).
/// - None and Docusaurus (github-slugger): GitHub's slugs ([`Slugger`]).
/// - docfx (Markdig): [`crate::site::docfx::markdig_ids`].
pub fn site_ids<'a>(
    generator: crate::config::SiteGenerator,
    headings: impl Iterator<Item = (&'a str, Option<&'a str>)> + Clone,
) -> Vec<String> {
    use crate::config::SiteGenerator;
    if generator.uses_github_slugs() {
        let mut slugger = Slugger::default();
        return headings
            .map(|(text, id)| match id {
                Some(id) => id.to_string(),
                None => slugger.slug(text),
            })
            .collect();
    }
    let mut used: std::collections::HashSet<String> = headings
        .clone()
        .filter_map(|(_, id)| id.map(str::to_string))
        .collect();
    if generator == SiteGenerator::Docfx {
        return crate::site::docfx::markdig_ids(headings);
    }
    headings
        .map(|(text, id)| {
            if let Some(id) = id {
                return id.to_string();
            }
            if generator == SiteGenerator::Vitepress {
                return crate::site::first_free_id(&vitepress_slug(text), &mut used);
            }
            let mut candidate = toc_slug(text);
            while candidate.is_empty() || used.contains(&candidate) {
                candidate = match candidate.rsplit_once('_') {
                    Some((stem, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                        match n.parse::<u64>() {
                            Ok(n) => format!("{stem}_{}", n + 1),
                            Err(_) => format!("{candidate}_1"),
                        }
                    }
                    _ => format!("{candidate}_1"),
                };
            }
            used.insert(candidate.clone());
            candidate
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_slugs() {
        assert_eq!(slug("Hello World"), "hello-world");
        assert_eq!(slug("What's new in v1.2?"), "whats-new-in-v12");
        assert_eq!(slug("C++ & Rust: a_b -- c"), "c--rust-a_b----c");
        assert_eq!(slug("  padded  "), "--padded--");
        assert_eq!(slug("日本語の見出し"), "日本語の見出し");
        assert_eq!(slug("Ünïcödé Straße"), "ünïcödé-straße");
        assert_eq!(slug("emoji 🎉 party"), "emoji--party");
        assert_eq!(slug("`code` *em*"), "code-em");
    }

    #[test]
    fn duplicates_get_numbered_suffixes() {
        let mut s = Slugger::default();
        assert_eq!(s.slug("Usage"), "usage");
        assert_eq!(s.slug("Usage"), "usage-1");
        assert_eq!(s.slug("Usage 1"), "usage-1-1");
        assert_eq!(s.slug("Usage"), "usage-2");
    }

    #[test]
    fn python_markdown_toc_slugs() {
        assert_eq!(toc_slug("Caret, Mark & Tilde"), "caret-mark-tilde");
        assert_eq!(toc_slug("Sub- and superscripts"), "sub-and-superscripts");
        assert_eq!(toc_slug("What's new in v1.2?"), "whats-new-in-v12");
        assert_eq!(toc_slug("  padded -- text  "), "padded-text");
        assert_eq!(toc_slug("Über uns: Straße"), "uber-uns-strae");
        assert_eq!(toc_slug("a_b"), "a_b");
        assert_eq!(toc_slug("日本語の見出し"), "");
        assert_eq!(toc_slug("trailing -"), "trailing-");
    }

    #[test]
    fn vitepress_slugs() {
        assert_eq!(
            vitepress_slug("build.assetsInlineLimit"),
            "build-assetsinlinelimit"
        );
        assert_eq!(vitepress_slug("Caret, Mark & Tilde"), "caret-mark-tilde");
        assert_eq!(vitepress_slug("`--host` flag"), "host-flag");
        assert_eq!(vitepress_slug("2.0 Release"), "_2-0-release");
        assert_eq!(vitepress_slug("Café “quoted”"), "cafe-quoted");
        assert_eq!(vitepress_slug("日本語の見出し"), "日本語の見出し");
        assert_eq!(vitepress_slug("a_b"), "a-b");
    }

    #[test]
    fn site_ids_are_unique_as_each_generator_numbers_them() {
        use crate::config::SiteGenerator;
        let headings = [
            ("Usage", None),
            ("Usage", None),
            ("Custom", Some("usage-2")),
            ("Usage", None),
        ];
        assert_eq!(
            site_ids(SiteGenerator::Vitepress, headings.iter().copied()),
            vec!["usage", "usage-1", "usage-2", "usage-3"]
        );
        assert_eq!(
            site_ids(SiteGenerator::None, headings.iter().copied()),
            vec!["usage", "usage-1", "usage-2", "usage-2"]
        );
    }

    #[test]
    fn python_markdown_toc_ids_are_unique() {
        let headings = [
            ("Usage", None),
            ("Usage", None),
            ("Usage", None),
            ("日本語", None),
            ("中文", None),
            ("Custom", Some("usage_3")),
            ("Usage", None),
        ];
        assert_eq!(
            site_ids(
                crate::config::SiteGenerator::Mkdocs,
                headings.iter().copied()
            ),
            vec![
                "usage", "usage_1", "usage_2", "_1", "_2", "usage_3", "usage_4"
            ]
        );
    }
}
