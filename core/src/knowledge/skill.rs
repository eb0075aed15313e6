//! A skill: a `SKILL.md` file (the Agent Skills layout `skills/<name>/SKILL.md`) with
//! YAML frontmatter holding `name` and `description` (required), and optionally
//! `domain`, `tags`, `version` and `id`.
//!
//! Ids: a contributed skill gets `skill-<16 hex>` (XxHash64 of its name and
//! description) written into its frontmatter unless it brings its own; a hand-written
//! skill without an `id` is known by `skill-<16 hex of its KB-relative path>`, stable
//! while the file stays where it is.

use crate::parse::parse;
use crate::pointer::ElementKind;

use super::{MAX_ITEM_BYTES, Rejection, check_id, short_hash};

/// A parsed `SKILL.md`.
#[derive(Clone, Debug, PartialEq)]
pub struct Skill {
    /// The frontmatter `id`, if it has one.
    pub id: Option<String>,
    /// Frontmatter `name`.
    pub name: String,
    /// Frontmatter `description`.
    pub description: String,
    /// Frontmatter `domain`.
    pub domain: Option<String>,
    /// Frontmatter `tags` (a list, or one string of comma-separated tags).
    pub tags: Vec<String>,
    /// Frontmatter `version` (a string or a number, as written).
    pub version: Option<String>,
    /// Structural completeness in [0.5, 1] ([`structure_score`]).
    pub structure: f64,
}

impl Skill {
    /// The skill's id: its frontmatter `id`, else the id derived from `path`
    /// ([`derived_id`]).
    pub fn id_at(&self, path: &str) -> String {
        self.id.clone().unwrap_or_else(|| derived_id(path))
    }
}

/// The id of a hand-written skill without one: `skill-<XxHash64 of its path>`.
pub fn derived_id(path: &str) -> String {
    format!("skill-{}", short_hash(path.as_bytes()))
}

/// The id given to a contributed skill without one: `skill-<XxHash64 of name, newline,
/// description>`, so contributing the same skill twice is a duplicate.
pub fn contributed_id(name: &str, description: &str) -> String {
    format!(
        "skill-{}",
        short_hash(format!("{name}\n{description}").as_bytes())
    )
}

/// Parses and checks a `SKILL.md`.
///
/// Errors: [`Rejection::Invalid`] for more than 256 KiB, no frontmatter, frontmatter
/// that is not a YAML mapping, a missing or empty `name` or `description`, or a `tags`,
/// `domain`, `version` of the wrong shape; [`Rejection::BadId`] for an `id` that could
/// not name a file.
pub fn parse_skill(text: &str) -> Result<Skill, Rejection> {
    if text.len() > MAX_ITEM_BYTES {
        return Err(Rejection::Invalid(format!(
            "the SKILL.md is {} bytes; at most {MAX_ITEM_BYTES} (256 KiB) are allowed",
            text.len()
        )));
    }
    let body_start = text.strip_prefix('\u{feff}').unwrap_or(text);
    if !(body_start.starts_with("---\n") || body_start.starts_with("---\r\n")) {
        return Err(Rejection::Invalid(
            "the SKILL.md has no YAML frontmatter: it must start with a `---` line, then `name:` and `description:`, then `---`".into(),
        ));
    }
    let parsed = parse(text);
    let Some(meta) = parsed.frontmatter.as_ref().and_then(|m| m.as_object()) else {
        let why = parsed
            .problems
            .iter()
            .map(|p| p.message.clone())
            .find(|m| m.contains("frontmatter"))
            .unwrap_or_else(|| "it is not a YAML mapping".into());
        return Err(Rejection::Invalid(format!(
            "the SKILL.md frontmatter cannot be read: {why}"
        )));
    };
    let required = |key: &str| -> Result<String, Rejection> {
        match meta.get(key) {
            Some(serde_json::Value::String(s)) if !s.trim().is_empty() => Ok(s.trim().to_string()),
            Some(serde_json::Value::String(_)) | None | Some(serde_json::Value::Null) => {
                Err(Rejection::Invalid(format!(
                    "the SKILL.md frontmatter needs a non-empty `{key}`"
                )))
            }
            Some(_) => Err(Rejection::Invalid(format!(
                "the SKILL.md frontmatter `{key}` must be a string"
            ))),
        }
    };
    let name = required("name")?;
    let description = required("description")?;
    let optional_text = |key: &str| -> Result<Option<String>, Rejection> {
        match meta.get(key) {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(serde_json::Value::String(s)) if s.trim().is_empty() => Ok(None),
            Some(serde_json::Value::String(s)) => Ok(Some(s.trim().to_string())),
            Some(serde_json::Value::Number(n)) => Ok(Some(n.to_string())),
            Some(_) => Err(Rejection::Invalid(format!(
                "the SKILL.md frontmatter `{key}` must be a string"
            ))),
        }
    };
    let id = optional_text("id")?;
    if let Some(id) = &id {
        check_id(id)?;
    }
    let domain = optional_text("domain")?;
    let version = optional_text("version")?;
    let tags = match meta.get("tags") {
        None | Some(serde_json::Value::Null) => Vec::new(),
        Some(serde_json::Value::String(s)) => s
            .split(',')
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .collect(),
        Some(serde_json::Value::Array(items)) => {
            let mut tags = Vec::new();
            for item in items {
                match item {
                    serde_json::Value::String(s) if !s.trim().is_empty() => {
                        tags.push(s.trim().to_string())
                    }
                    _ => {
                        return Err(Rejection::Invalid(
                            "the SKILL.md frontmatter `tags` must be a list of non-empty strings"
                                .into(),
                        ));
                    }
                }
            }
            tags
        }
        Some(_) => {
            return Err(Rejection::Invalid(
                "the SKILL.md frontmatter `tags` must be a list of strings".into(),
            ));
        }
    };
    let body = parsed
        .elements
        .iter()
        .find(|e| e.kind == ElementKind::Frontmatter)
        .map_or(text, |fm| &text[fm.range.end..]);
    let structured = parsed
        .elements
        .iter()
        .any(|e| matches!(e.kind, ElementKind::Heading | ElementKind::ListItem));
    let structure = structure_score(&Checks {
        description_words: word_count(&description),
        body_words: word_count(body),
        structured,
        has_domain: domain.is_some(),
        has_tags: !tags.is_empty(),
    });
    Ok(Skill {
        id,
        name,
        description,
        domain,
        tags,
        version,
        structure,
    })
}

/// What [`structure_score`] looks at.
#[derive(Clone, Copy, Debug)]
pub struct Checks {
    /// Words of the description ([`word_count`]).
    pub description_words: usize,
    /// Words of the body below the frontmatter.
    pub body_words: usize,
    /// The body has a heading or a list.
    pub structured: bool,
    /// A `domain` is given.
    pub has_domain: bool,
    /// At least one tag is given.
    pub has_tags: bool,
}

/// Structural completeness of a skill: `0.5 + 0.1 × passed`, over five checks: the
/// description has at least 12 words (it says what the skill does and when to use it),
/// the body at least 50 words, the body has a heading or a list, a `domain`, a tag.
pub fn structure_score(c: &Checks) -> f64 {
    let passed = [
        c.description_words >= 12,
        c.body_words >= 50,
        c.structured,
        c.has_domain,
        c.has_tags,
    ]
    .iter()
    .filter(|p| **p)
    .count();
    0.5 + 0.1 * passed as f64
}

/// Words of `text`: whitespace-separated tokens, plus one word per two Han, Kana or
/// Hangul characters (those scripts do not separate words with spaces).
pub fn word_count(text: &str) -> usize {
    let cjk = text.chars().filter(|c| is_cjk(*c)).count();
    text.split_whitespace()
        .filter(|t| !t.chars().all(is_cjk))
        .count()
        + cjk / 2
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF)
}

/// `text` with `id: <id>` added as the first frontmatter line (the rest of the bytes,
/// line endings included, as they were). `text` must start with a `---` line, as
/// [`parse_skill`] checked.
pub fn with_id(text: &str, id: &str) -> String {
    let (bom, rest) = match text.strip_prefix('\u{feff}') {
        Some(rest) => ("\u{feff}", rest),
        None => ("", text),
    };
    let newline = if rest.starts_with("---\r\n") {
        "\r\n"
    } else {
        "\n"
    };
    let after = &rest[3 + newline.len()..];
    format!("{bom}---{newline}id: {id}{newline}{after}")
}
