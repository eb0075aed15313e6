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
/// `Über uns` → `uber-uns`; `日本語` → `` (see [`toc_ids`]).
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

/// Python-Markdown's `toc` ids of a document's headings, in order, from each heading's
/// text and attribute-list id: a heading with an id keeps it; another gets its
/// [`toc_slug`], made unique against every id given so far and every attribute-list id
/// of the document by appending `_1`, or by counting up a trailing `_N` (an empty slug
/// becomes `_1`), as the extension's `unique` does.
pub fn toc_ids<'a>(
    headings: impl Iterator<Item = (&'a str, Option<&'a str>)> + Clone,
) -> Vec<String> {
    let mut used: std::collections::HashSet<String> = headings
        .clone()
        .filter_map(|(_, id)| id.map(str::to_string))
        .collect();
    headings
        .map(|(text, id)| {
            if let Some(id) = id {
                return id.to_string();
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
            toc_ids(headings.iter().copied()),
            vec![
                "usage", "usage_1", "usage_2", "_1", "_2", "usage_3", "usage_4"
            ]
        );
    }
}
