//! MkDocs: a site is an `mkdocs.yml` (or `.yaml`) at the root; its heading ids are
//! Python-Markdown's `toc` extension's.

use std::collections::HashSet;
use std::path::Path;

/// True when `root` is an MkDocs site: it has an `mkdocs.yml` or `mkdocs.yaml`.
pub(super) fn is_site(root: &Path) -> bool {
    root.join("mkdocs.yml").is_file() || root.join("mkdocs.yaml").is_file()
}

/// The id Python-Markdown's `toc` extension gives a heading by default, so the anchor of
/// every MkDocs site that configures no other `slugify`: the text decomposed (Unicode NFKD)
/// and reduced to ASCII, every character but a word character (`[A-Za-z0-9_]`), white
/// space or `-` removed, trimmed, lowercased, and each run of white space and `-` turned
/// into one `-`. `Caret, Mark & Tilde` → `caret-mark-tilde` (GitHub: `caret-mark--tilde`);
/// `Über uns` → `uber-uns`; `日本語` → `` (see [`super::heading_ids`]).
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

/// The id Python-Markdown's `toc` extension gives the heading with text `text`: its
/// [`toc_slug`], made unique against `used` (every id given so far and every
/// attribute-list id of the document) by appending `_1`, or by counting up a trailing
/// `_N` (an empty slug becomes `_1`), as the extension's `unique` does; added to `used`.
pub(super) fn unique_id(text: &str, used: &mut HashSet<String>) -> String {
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
