//! Tags: `#name` in a document's text, and the entries of its frontmatter `tags`.
//!
//! The rule is Obsidian's (Foam and markdown-oxide read tags the same way): an inline tag
//! is `#` at the start of a line or after white space, followed by tag characters
//! ([`is_tag_char`]: letters, combining marks and digits of any script, emoji, `_`, `-`
//! and `/`), with at least one letter or emoji (`#123`, an issue number, is not a tag).
//! `/` nests: `#project/alpha` is a tag within `project`; a trailing `/` is not part of
//! the name. A `#` inside a word (`C#`, `page#section`), a heading's own `#` marks, and
//! anything in code, HTML, math, links or the frontmatter are not tags; the scanner
//! (`scanner.rs`) applies those exclusions.
//!
//! Frontmatter `tags` may be a list (`[a, b]`, or one entry per line), one string, or a
//! number; strings are split at commas and white space (`"a, b"`, `"a b"`), and each part
//! loses its leading `#`s and trailing `/`s ([`clean`]). A number is the tag its JSON
//! form spells (YAML reads `1.10` as the number 1.1: quote version-like tags). Tags
//! compare exactly, case included, everywhere folio matches them (search filters,
//! references, completion); [`within`] adds nesting.

use std::ops::Range;
use std::sync::OnceLock;

use regex::Regex;
use unicode_properties::{GeneralCategoryGroup, UnicodeEmoji, UnicodeGeneralCategory};

use super::parsed::Tag;

/// Every `#name` of `text` that the rule makes a tag, before the exclusions: (the bytes
/// of `#name`, the name).
pub(super) fn inline_candidates(text: &str) -> Vec<(Range<usize>, &str)> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices('#') {
        if text[..at]
            .chars()
            .next_back()
            .is_some_and(|c| !c.is_whitespace())
        {
            continue;
        }
        let rest = &text[at + 1..];
        let len = rest
            .char_indices()
            .find(|&(_, c)| !is_tag_char(c))
            .map_or(rest.len(), |(i, _)| i);
        if let Some(name) = inline_name(&rest[..len]) {
            out.push((at..at + 1 + name.len(), name));
        }
    }
    out
}

/// A character of a tag name: a letter, combining mark or digit of any script (Unicode
/// general categories L, M and N: the vowel signs and viramas of Indic scripts and Thai
/// tone marks included), an emoji or emoji component (zero-width joiner, variation
/// selectors, skin tones), `_`, `-` or `/`.
pub fn is_tag_char(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '/');
    }
    matches!(
        c.general_category_group(),
        GeneralCategoryGroup::Letter | GeneralCategoryGroup::Mark | GeneralCategoryGroup::Number
    ) || is_emoji(c)
}

/// An emoji or a character of an emoji sequence, outside ASCII (`#`, `*` and the digits
/// are emoji components too).
fn is_emoji(c: char) -> bool {
    !c.is_ascii() && (c.is_emoji_char() || c.is_emoji_component() || c == '\u{200d}')
}

/// The tag `raw` (tag characters after `#`) names: without trailing `/`, when it holds a
/// letter or an emoji.
pub(super) fn inline_name(raw: &str) -> Option<&str> {
    let name = raw.trim_end_matches('/');
    name.chars()
        .any(|c| c.is_alphabetic() || is_emoji(c))
        .then_some(name)
}

/// True when `name` (without `#`) is a whole tag name an inline `#name` would give: tag
/// characters only, a letter or emoji among them, no `/` at either end.
pub fn is_tag_name(name: &str) -> bool {
    !name.starts_with('/') && name.chars().all(is_tag_char) && inline_name(name) == Some(name)
}

/// A tag as a user or a frontmatter entry writes it, as folio names it: trimmed, without
/// leading `#`s and trailing `/`s; `None` when nothing is left. Search filters and
/// frontmatter entries go through it, so `#project/` names `project`.
pub fn clean(raw: &str) -> Option<&str> {
    let name = raw
        .trim()
        .trim_start_matches('#')
        .trim_end_matches('/')
        .trim();
    (!name.is_empty()).then_some(name)
}

/// True when `tag` is `query` or nested within it: `project/alpha` is within `project`,
/// `projects` is not.
pub fn within(tag: &str, query: &str) -> bool {
    tag.strip_prefix(query)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// The tag names of a frontmatter `tags` value (see the module docs for the shapes).
fn frontmatter_names(value: &serde_json::Value) -> Vec<String> {
    let split = |s: &str| -> Vec<String> {
        s.split(|c: char| c == ',' || c.is_whitespace())
            .filter_map(clean)
            .map(str::to_string)
            .collect()
    };
    match value {
        serde_json::Value::Array(items) => items
            .iter()
            .flat_map(|v| match v {
                serde_json::Value::String(s) => split(s),
                // `tags: [2024, release]`: YAML reads 2024 as a number; it is the tag "2024".
                serde_json::Value::Number(n) => vec![n.to_string()],
                _ => Vec::new(),
            })
            .collect(),
        serde_json::Value::Number(n) => vec![n.to_string()],
        serde_json::Value::String(s) => split(s),
        _ => Vec::new(),
    }
}

/// The frontmatter tags of a document, each located in the frontmatter's source
/// (`block`, the bytes of the frontmatter element): the first occurrence of the name
/// after the `tags` key and the previous entry, as a whole word. An entry not found there
/// (a number YAML rewrote, `1.10` read as 1.1) gets the bytes of the `tags` key, or of
/// the whole block without one, and is marked not located ([`Tag::located`]).
pub(super) fn frontmatter_tags(
    text: &str,
    frontmatter: &serde_json::Value,
    block: Range<usize>,
) -> Vec<Tag> {
    let Some(value) = frontmatter.get("tags") else {
        return Vec::new();
    };
    let source = &text[block.clone()];
    let key = key_regex().find(source);
    let mut cursor = key.map_or(source.len(), |m| m.end());
    let unlocated = key.map_or(block.clone(), |m| {
        block.start + m.start()..block.start + m.start() + "tags".len()
    });
    let mut tags = Vec::new();
    for name in frontmatter_names(value) {
        let found = source[cursor..]
            .match_indices(name.as_str())
            .map(|(i, _)| cursor + i)
            .find(|&at| {
                let before = source[..at].chars().next_back();
                let after = source[at + name.len()..].chars().next();
                !before.is_some_and(is_tag_char) && !after.is_some_and(is_tag_char)
            });
        let (range, located) = match found {
            Some(at) => {
                cursor = at + name.len();
                (block.start + at..block.start + at + name.len(), true)
            }
            None => (unlocated.clone(), false),
        };
        tags.push(Tag {
            name,
            range,
            in_frontmatter: true,
            located,
        });
    }
    tags
}

/// The `tags` key of YAML (`tags:`) or TOML (`tags =`) frontmatter, at a line start.
fn key_regex() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"(?m)^tags[ \t]*[:=]").expect("valid regex"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn within_is_the_tag_or_a_tag_nested_in_it() {
        assert!(within("project", "project"));
        assert!(within("project/alpha", "project"));
        assert!(within("project/alpha/x", "project/alpha"));
        assert!(!within("projects", "project"));
        assert!(!within("project", "project/alpha"));
        assert!(!within("Project", "project"));
    }

    #[test]
    fn inline_names_need_a_letter_and_lose_a_trailing_slash() {
        assert_eq!(inline_name("project/"), Some("project"));
        assert_eq!(inline_name("2024"), None);
        assert_eq!(inline_name("2024/q1"), Some("2024/q1"));
        assert_eq!(inline_name("日本語"), Some("日本語"));
        assert_eq!(inline_name("--"), None);
        assert_eq!(inline_name("👍"), Some("👍"));
    }

    /// Letters with combining marks stay whole: Thai tone marks, Tamil and Devanagari
    /// viramas and vowel signs, a decomposed é, emoji sequences with a joiner.
    #[test]
    fn tag_characters_cover_marks_and_emoji() {
        for name in [
            "เรื่อง",
            "தமிழ்",
            "हिन्दी",
            "cafe\u{301}",
            "한국어",
            "עִבְרִית",
            "👩\u{200d}💻",
            "🚀launch",
            "x\u{fe0f}",
        ] {
            assert!(name.chars().all(is_tag_char), "{name:?}");
        }
        for c in ['.', ',', '#', '!', ' ', '\u{3000}', '(', '|'] {
            assert!(!is_tag_char(c), "{c:?}");
        }
    }

    #[test]
    fn clean_drops_hashes_slashes_and_space() {
        assert_eq!(clean(" ##a/b// "), Some("a/b"));
        assert_eq!(clean("#"), None);
        assert_eq!(clean("  "), None);
        assert_eq!(clean("x"), Some("x"));
    }

    #[test]
    fn frontmatter_shapes() {
        let list = serde_json::json!(["#a", "b/c", 2024, "", null, "a b", "x,y", "##d", "e/", 1.1]);
        assert_eq!(
            frontmatter_names(&list),
            ["a", "b/c", "2024", "a", "b", "x", "y", "d", "e", "1.1"]
        );
        let string = serde_json::json!("a, b  c");
        assert_eq!(frontmatter_names(&string), ["a", "b", "c"]);
        assert_eq!(frontmatter_names(&serde_json::json!(7)), ["7"]);
        assert!(frontmatter_names(&serde_json::json!({"a": 1})).is_empty());
    }

    #[test]
    fn frontmatter_tags_are_located_after_the_key() {
        let text = "---\ntitle: a tag\ntags:\n  - tag\n  - tagged/x\n---\n";
        let fm = serde_json::json!({"title": "a tag", "tags": ["tag", "tagged/x"]});
        let tags = frontmatter_tags(text, &fm, 0..text.len() - 1);
        let spans: Vec<(&str, &str)> = tags
            .iter()
            .map(|t| (t.name.as_str(), &text[t.range.clone()]))
            .collect();
        assert_eq!(spans, [("tag", "tag"), ("tagged/x", "tagged/x")]);
        assert_eq!(tags[0].range, 27..30);
        assert!(tags.iter().all(|t| t.in_frontmatter && t.located));
        // `1.10` is the number 1.1 once read: not found, it points at the key.
        let text = "---\ntags: [1.10, a]\n---\n";
        let fm = serde_json::json!({"tags": [1.1, "a"]});
        let tags = frontmatter_tags(text, &fm, 0..text.len() - 1);
        let spans: Vec<(&str, &str, bool)> = tags
            .iter()
            .map(|t| (t.name.as_str(), &text[t.range.clone()], t.located))
            .collect();
        assert_eq!(spans, [("1.1", "tags", false), ("a", "a", true)]);
    }
}
