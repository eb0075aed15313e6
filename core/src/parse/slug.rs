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
}
