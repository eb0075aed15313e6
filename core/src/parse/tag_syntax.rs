//! Tags: `#name` in a document's text, and the entries of its frontmatter `tags`.
//!
//! The rule is Obsidian's (Foam and markdown-oxide read tags the same way): an inline tag
//! is `#` at the start of a line or after white space, followed by letters, digits, `_`,
//! `-` and `/`, with at least one letter (`#123`, an issue number, is not a tag). `/`
//! nests: `#project/alpha` is a tag within `project`. A `#` inside a word (`C#`,
//! `page#section`), a heading's own `#` marks, and anything in code, HTML, math, links
//! or the frontmatter are not tags; the scanner (`scanner.rs`) applies those exclusions.
//!
//! Frontmatter `tags` may be a list (`[a, b]`, or one entry per line), one string split at
//! commas and spaces (`"a, b"`), or a number; a leading `#` is dropped (`"#a"` is `a`).
//! Tags compare exactly, case included, everywhere folio matches them (search filters,
//! references, completion); [`within`] adds nesting.

use std::ops::Range;
use std::sync::OnceLock;

use regex::Regex;

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

/// A character of a tag name: a letter or digit of any script, `_`, `-` or `/`.
pub fn is_tag_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '/')
}

/// The tag `raw` names: without trailing `/`, when it holds a letter.
pub(super) fn inline_name(raw: &str) -> Option<&str> {
    let name = raw.trim_end_matches('/');
    name.chars().any(char::is_alphabetic).then_some(name)
}

/// True when `tag` is `query` or nested within it: `project/alpha` is within `project`,
/// `projects` is not.
pub fn within(tag: &str, query: &str) -> bool {
    tag.strip_prefix(query)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// The tag names of a frontmatter `tags` value (see the module docs for the shapes).
fn frontmatter_names(value: &serde_json::Value) -> Vec<String> {
    let clean = |s: &str| {
        let s = s.trim();
        let s = s.strip_prefix('#').unwrap_or(s);
        (!s.is_empty()).then(|| s.to_string())
    };
    match value {
        serde_json::Value::Array(items) => items
            .iter()
            .filter_map(|v| match v {
                serde_json::Value::String(s) => clean(s),
                // `tags: [2024, release]`: YAML reads 2024 as a number; it is the tag "2024".
                serde_json::Value::Number(n) => Some(n.to_string()),
                _ => None,
            })
            .collect(),
        serde_json::Value::Number(n) => vec![n.to_string()],
        serde_json::Value::String(s) => s.split([',', ' ']).filter_map(clean).collect(),
        _ => Vec::new(),
    }
}

/// The frontmatter tags of a document, each located in the frontmatter's source
/// (`block`, the bytes of the frontmatter element): the first occurrence of the name
/// after the `tags` key and the previous entry, as a whole word; the whole block when it
/// is not found there (a tag written in a flow style this search does not follow).
pub(super) fn frontmatter_tags(
    text: &str,
    frontmatter: &serde_json::Value,
    block: Range<usize>,
) -> Vec<Tag> {
    let Some(value) = frontmatter.get("tags") else {
        return Vec::new();
    };
    let source = &text[block.clone()];
    let mut cursor = key_regex().find(source).map_or(source.len(), |m| m.end());
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
        let range = match found {
            Some(at) => {
                cursor = at + name.len();
                block.start + at..block.start + at + name.len()
            }
            None => block.clone(),
        };
        tags.push(Tag {
            name,
            range,
            in_frontmatter: true,
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
    }

    #[test]
    fn frontmatter_shapes() {
        let list = serde_json::json!(["#a", "b/c", 2024, "", null]);
        assert_eq!(frontmatter_names(&list), ["a", "b/c", "2024"]);
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
        assert!(tags.iter().all(|t| t.in_frontmatter));
    }
}
