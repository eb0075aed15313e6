//! A heading's trailing attribute list: `{#id}` (Pandoc, mdBook), `{ #id .class key=value }`
//! and `{: #id }` (Python-Markdown's attr_list, used by MkDocs; kramdown's IAL), and
//! `{ id="x" }`.
//!
//! The renderers that read one take it off the heading's text and use its id as the
//! heading's anchor; a list without an id still comes off the text, so the anchor is the
//! slug of what is left. GitHub has no such syntax and slugs the whole text, so a caller
//! keeps that slug too.
//!
//! A list is a `{`, an optional `:`, then attributes separated by white space, then a `}`
//! that ends the text. An attribute is `#id`, `.class`, `key=value`, `key="value"` or
//! `key='value'`, or Pandoc's `-` (unnumbered). Braces holding anything else (`{x}`,
//! `{{ name }}`) are text.

/// A heading's text split from its trailing attribute list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SplitHeading {
    /// The text without the attribute list, trimmed; the whole text when there is none.
    pub text: String,
    /// The id the list gives (`#id` or `id=…`; the last one wins, as in Python-Markdown).
    pub id: Option<String>,
    /// Whether the text ended with an attribute list.
    pub has_list: bool,
}

/// Splits a trailing attribute list off `text` (see the module docs).
pub(super) fn split_attribute_list(text: &str) -> SplitHeading {
    let whole = || SplitHeading {
        text: text.to_string(),
        id: None,
        has_list: false,
    };
    let Some(body) = text.strip_suffix('}') else {
        return whole();
    };
    let Some(open) = body.rfind('{') else {
        return whole();
    };
    let inner = &body[open + 1..];
    let inner = inner.strip_prefix(':').unwrap_or(inner);
    let Some(id) = attributes_id(inner) else {
        return whole();
    };
    SplitHeading {
        text: body[..open].trim_end().to_string(),
        id,
        has_list: true,
    }
}

/// The id named by the attributes in `inner` (`Some(None)` when they name none), or `None`
/// when `inner` is not a list of attributes.
fn attributes_id(inner: &str) -> Option<Option<String>> {
    let mut id = None;
    let mut count = 0;
    let mut rest = inner.trim_start();
    while !rest.is_empty() {
        let (attribute, after) = next_attribute(rest)?;
        match attribute {
            Attribute::Id(value) => id = Some(value),
            Attribute::Other => {}
        }
        count += 1;
        // Attributes are separated by white space.
        let trimmed = after.trim_start();
        if trimmed.len() == after.len() && !trimmed.is_empty() {
            return None;
        }
        rest = trimmed;
    }
    (count > 0).then_some(id)
}

enum Attribute {
    Id(String),
    Other,
}

/// The attribute at the start of `s` and the text after it.
fn next_attribute(s: &str) -> Option<(Attribute, &str)> {
    let word_end = |s: &str| s.find(char::is_whitespace).unwrap_or(s.len());
    if let Some(rest) = s.strip_prefix('#') {
        let end = word_end(rest);
        let id = &rest[..end];
        return (!id.is_empty() && !id.contains(['{', '}']))
            .then(|| (Attribute::Id(id.to_string()), &rest[end..]));
    }
    if let Some(rest) = s.strip_prefix('.') {
        let end = word_end(rest);
        return (end > 0 && !rest[..end].contains(['{', '}', '=']))
            .then_some((Attribute::Other, &rest[end..]));
    }
    if s.starts_with('-') && s[1..].chars().next().is_none_or(char::is_whitespace) {
        return Some((Attribute::Other, &s[1..]));
    }
    // key=value: a key is a letter, `_` or `:` then letters, digits, `-`, `_`, `:`, `.`
    // (an XML name, as HTML attribute names are written).
    let key_end = s
        .find(|c: char| !(c.is_alphanumeric() || matches!(c, '-' | '_' | ':' | '.')))
        .unwrap_or(s.len());
    let key = &s[..key_end];
    let first = key.chars().next()?;
    if !(first.is_alphabetic() || first == '_' || first == ':') {
        return None;
    }
    let rest = s[key_end..].strip_prefix('=')?;
    let (value, after) = match rest.chars().next() {
        Some(quote @ ('"' | '\'')) => {
            let close = rest[1..].find(quote)?;
            (&rest[1..1 + close], &rest[close + 2..])
        }
        _ => {
            let end = word_end(rest);
            (&rest[..end], &rest[end..])
        }
    };
    if value.is_empty() && !rest.starts_with(['"', '\'']) {
        return None;
    }
    if key == "id" {
        return (!value.is_empty()).then(|| (Attribute::Id(value.to_string()), after));
    }
    Some((Attribute::Other, after))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(text: &str) -> (String, Option<String>, bool) {
        let s = split_attribute_list(text);
        (s.text, s.id, s.has_list)
    }

    fn id(text: &str, id: &str) -> (String, Option<String>, bool) {
        (text.to_string(), Some(id.to_string()), true)
    }

    #[test]
    fn ids_in_every_written_form() {
        assert_eq!(split("API {#api}"), id("API", "api"));
        assert_eq!(split("Context  { #context }"), id("Context", "context"));
        assert_eq!(split("Tabs {: #tabs }"), id("Tabs", "tabs"));
        assert_eq!(
            split("Path { id=navigation-path }"),
            id("Path", "navigation-path")
        );
        assert_eq!(split("9.7.0 { id=\"9.7.0\" }"), id("9.7.0", "9.7.0"));
        assert_eq!(split("Quoted {id='a b'}"), id("Quoted", "a b"));
        assert_eq!(
            split("Blocks { #overriding-blocks data-toc-label=\"Overriding blocks\" }"),
            id("Blocks", "overriding-blocks")
        );
        assert_eq!(split("Two {#one #two}"), id("Two", "two"));
        assert_eq!(split("Mixed {.note #x lang=en}"), id("Mixed", "x"));
    }

    #[test]
    fn lists_without_an_id_still_come_off() {
        assert_eq!(
            split("Appendix {.unnumbered}"),
            ("Appendix".into(), None, true)
        );
        assert_eq!(split("Appendix {-}"), ("Appendix".into(), None, true));
        assert_eq!(
            split("Note { .admonition data-x='1 2' }"),
            ("Note".into(), None, true)
        );
    }

    #[test]
    fn other_braces_are_text() {
        for text in [
            "Using {x}",
            "Template {{ name }}",
            "Empty {}",
            "Blank { }",
            "Hash {#}",
            "Set {a, b}",
            "Key {=x}",
            "Unclosed {id=\"x}",
            "Glued {#a.b.c#d}x",
            "No space {#a.b}{#c}d",
            "Object {\"id\": 1}",
            "Middle {#id} text",
            "Bare {key=}",
        ] {
            assert_eq!(split(text), (text.to_string(), None, false), "{text}");
        }
        // `#a.b` is one id: Python-Markdown reads up to white space.
        assert_eq!(split("Dotted {#a.b}"), id("Dotted", "a.b"));
    }
}
