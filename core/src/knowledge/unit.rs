//! A knowledge unit: a JSON document of type `ReasoningTrace`, `ToolCallPattern` or
//! `ExpertSOP`, checked against the shipped JSON Schema of its `schema_version`
//! (`unit-1.0.schema.json`, draft 2020-12), and kept as a Markdown file: frontmatter for
//! the search filters, a text rendering for the index, and the unit itself in a final
//! ```` ```json kp-unit ```` block, which is what counts when the file is read back.

use std::sync::OnceLock;

use serde_json::Value;

use super::{MAX_ITEM_BYTES, Rejection, check_id, short_hash};

/// The schema versions this build knows.
pub const SCHEMA_VERSIONS: [&str; 1] = ["1.0"];

/// The JSON Schema of version 1.0.
pub const SCHEMA_1_0: &str = include_str!("unit-1.0.schema.json");

/// The unit types.
pub const TYPES: [&str; 3] = ["ReasoningTrace", "ToolCallPattern", "ExpertSOP"];

/// The opening line of the block holding the unit in its file.
pub const BLOCK_OPEN: &str = "```json kp-unit";

/// A checked unit with the fields the index and the tools use.
#[derive(Clone, Debug, PartialEq)]
pub struct Unit {
    /// `id`.
    pub id: String,
    /// `type`.
    pub kind: String,
    /// `domain`.
    pub domain: String,
    /// `schema_version`.
    pub schema_version: String,
    /// `title`.
    pub title: String,
    /// `tags`.
    pub tags: Vec<String>,
    /// The whole unit.
    pub value: Value,
    /// Structural completeness in [0.5, 1] ([`structure_score`]).
    pub structure: f64,
}

fn validator() -> &'static jsonschema::Validator {
    static VALIDATOR: OnceLock<jsonschema::Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        let schema: Value = serde_json::from_str(SCHEMA_1_0).expect("the shipped schema is JSON");
        jsonschema::draft202012::new(&schema).expect("the shipped schema is valid")
    })
}

/// Checks a unit: an object of at most 256 KiB, a known `schema_version` and `type`, an
/// `id` (when given) that can name a file, then the schema.
///
/// Errors: [`Rejection::Invalid`] naming the JSON pointer and the schema rule of the
/// first violation; [`Rejection::BadId`] for an id that would escape its folder.
pub fn check(unit: &Value) -> Result<(), Rejection> {
    let Some(obj) = unit.as_object() else {
        return Err(Rejection::Invalid("`unit` must be a JSON object".into()));
    };
    let size = serde_json::to_string(unit).map_or(0, |s| s.len());
    if size > MAX_ITEM_BYTES {
        return Err(Rejection::Invalid(format!(
            "the unit is {size} bytes as JSON; at most {MAX_ITEM_BYTES} (256 KiB) are allowed"
        )));
    }
    match obj.get("schema_version") {
        Some(Value::String(v)) if SCHEMA_VERSIONS.contains(&v.as_str()) => {}
        Some(Value::String(v)) => {
            return Err(Rejection::Invalid(format!(
                "unknown schema_version `{v}`; this server knows {}",
                SCHEMA_VERSIONS.join(", ")
            )));
        }
        _ => {
            return Err(Rejection::Invalid(format!(
                "the unit needs a string `schema_version` (at `/schema_version`): {}",
                SCHEMA_VERSIONS.join(", ")
            )));
        }
    }
    match obj.get("type") {
        Some(Value::String(t)) if TYPES.contains(&t.as_str()) => {}
        Some(Value::String(t)) => {
            return Err(Rejection::Invalid(format!(
                "unknown unit type `{t}`; the types are {}",
                TYPES.join(", ")
            )));
        }
        _ => {
            return Err(Rejection::Invalid(format!(
                "the unit needs a string `type` (at `/type`): {}",
                TYPES.join(", ")
            )));
        }
    }
    if let Some(id) = obj.get("id") {
        match id {
            Value::String(id) => check_id(id)?,
            _ => return Err(Rejection::Invalid("`/id` must be a string".into())),
        }
    }
    // A property whose own subschema failed also counts as "unevaluated"; that echo is
    // dropped when a more precise violation is there.
    let rule_of = |e: &jsonschema::ValidationError<'_>| {
        e.schema_path
            .as_str()
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .to_string()
    };
    let mut errors: Vec<(String, String, String)> = validator()
        .iter_errors(unit)
        .map(|e| {
            (
                e.instance_path.as_str().to_string(),
                rule_of(&e),
                e.to_string(),
            )
        })
        .collect();
    if errors
        .iter()
        .any(|(_, rule, _)| rule != "unevaluatedProperties")
    {
        errors.retain(|(_, rule, _)| rule != "unevaluatedProperties");
    }
    if let Some((pointer, rule, message)) = errors.first() {
        let place = if pointer.is_empty() {
            "the top level (``)".to_string()
        } else {
            format!("`{pointer}`")
        };
        let tail = match errors.len() - 1 {
            0 => String::new(),
            1 => " (and 1 more violation)".into(),
            n => format!(" (and {n} more violations)"),
        };
        return Err(Rejection::Invalid(format!(
            "the unit does not match schema 1.0 at {place}: {message} (rule `{rule}`){tail}"
        )));
    }
    Ok(())
}

/// The id given to a contributed unit without one: `ku-<XxHash64 of its JSON>`.
pub fn contributed_id(unit: &Value) -> String {
    format!("ku-{}", short_hash(unit.to_string().as_bytes()))
}

/// Checks `value` ([`check`]) and reads its fields; `value` must hold an `id`.
///
/// Errors: as [`check`], and [`Rejection::Invalid`] without an `id`.
pub fn from_value(value: Value) -> Result<Unit, Rejection> {
    check(&value)?;
    let text = |key: &str| {
        value
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let id = text("id");
    if id.is_empty() {
        return Err(Rejection::Invalid("the unit has no `id`".into()));
    }
    let tags = value
        .get("tags")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    Ok(Unit {
        id,
        kind: text("type"),
        domain: text("domain"),
        schema_version: text("schema_version"),
        title: text("title"),
        tags,
        structure: structure_score(&value),
        value,
    })
}

/// Structural completeness of a unit: `0.5 + 0.125 × filled`, over four optional
/// fields that make a unit more useful: `tags` and `author`, and per type a
/// `ReasoningTrace`'s `context` and `lessons`, a `ToolCallPattern`'s `arguments` and
/// `pitfalls`, an `ExpertSOP`'s `prerequisites` and `checks`. A field counts when it is a
/// non-blank string, or a list or object with at least one entry. The required fields are
/// always there (the schema checked them), so a minimal unit scores 0.5.
pub fn structure_score(unit: &Value) -> f64 {
    let per_type: [&str; 2] = match unit.get("type").and_then(Value::as_str) {
        Some("ReasoningTrace") => ["context", "lessons"],
        Some("ToolCallPattern") => ["arguments", "pitfalls"],
        _ => ["prerequisites", "checks"],
    };
    let filled = ["tags", "author"]
        .iter()
        .chain(per_type.iter())
        .filter(|key| match unit.get(**key) {
            Some(Value::String(s)) => !s.trim().is_empty(),
            Some(Value::Array(a)) => !a.is_empty(),
            Some(Value::Object(o)) => !o.is_empty(),
            _ => false,
        })
        .count();
    0.5 + 0.125 * filled as f64
}

/// The Markdown file of a unit: frontmatter (`kp: knowledge-unit`, id, type, domain,
/// schema_version, title, tags) for the search filters, the unit rendered as text for
/// the index, and the unit itself, pretty-printed, in the final ```` ```json kp-unit ````
/// block.
pub fn render(unit: &Unit) -> String {
    let q = |s: &str| Value::String(s.to_string()).to_string();
    let v = &unit.value;
    let mut out = String::new();
    out.push_str("---\nkp: knowledge-unit\n");
    out.push_str(&format!("id: {}\n", q(&unit.id)));
    out.push_str(&format!("type: {}\n", q(&unit.kind)));
    out.push_str(&format!("domain: {}\n", q(&unit.domain)));
    out.push_str(&format!("schema_version: {}\n", q(&unit.schema_version)));
    out.push_str(&format!("title: {}\n", q(&unit.title)));
    if !unit.tags.is_empty() {
        out.push_str(&format!("tags: {}\n", Value::from(unit.tags.clone())));
    }
    out.push_str("---\n\n");
    out.push_str(&format!("# {}\n\n", one_line(&unit.title)));
    out.push_str(&format!("{} · {}\n\n", unit.kind, unit.domain));
    paragraph(&mut out, None, v.get("summary"));
    match unit.kind.as_str() {
        "ReasoningTrace" => {
            paragraph(&mut out, Some("Task"), v.get("task"));
            paragraph(&mut out, Some("Context"), v.get("context"));
            if let Some(steps) = v.get("steps").and_then(Value::as_array) {
                out.push_str("## Steps\n\n");
                for (i, step) in steps.iter().enumerate() {
                    let part = |k: &str| step.get(k).and_then(Value::as_str).map(one_line);
                    out.push_str(&format!(
                        "{}. {}",
                        i + 1,
                        part("thought").unwrap_or_default()
                    ));
                    if let Some(a) = part("action") {
                        out.push_str(&format!(" Action: {a}"));
                    }
                    if let Some(o) = part("observation") {
                        out.push_str(&format!(" Observation: {o}"));
                    }
                    out.push('\n');
                }
                out.push('\n');
            }
            paragraph(&mut out, Some("Outcome"), v.get("outcome"));
            list(&mut out, "Lessons", v.get("lessons"));
        }
        "ToolCallPattern" => {
            paragraph(&mut out, Some("Tool"), v.get("tool"));
            paragraph(&mut out, Some("When to use"), v.get("when_to_use"));
            if let Some(args) = v.get("arguments").and_then(Value::as_object) {
                out.push_str("## Arguments\n\n");
                for (name, shape) in args {
                    let ty = shape
                        .get("type")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    let desc = shape
                        .get("description")
                        .and_then(Value::as_str)
                        .map(one_line);
                    out.push_str(&format!(
                        "- {name} ({}){}\n",
                        one_line(ty),
                        desc.map(|d| format!(": {d}")).unwrap_or_default()
                    ));
                }
                out.push('\n');
            }
            if let Some(calls) = v.get("example_calls").and_then(Value::as_array) {
                out.push_str("## Example calls\n\n");
                for call in calls {
                    let args = call
                        .get("arguments")
                        .map(Value::to_string)
                        .unwrap_or_default();
                    let note = call.get("note").and_then(Value::as_str).map(one_line);
                    out.push_str(&format!(
                        "- `{}`{}\n",
                        args.replace('`', "'"),
                        note.map(|n| format!(": {n}")).unwrap_or_default()
                    ));
                }
                out.push('\n');
            }
            list(&mut out, "Pitfalls", v.get("pitfalls"));
        }
        _ => {
            paragraph(&mut out, Some("Goal"), v.get("goal"));
            list(&mut out, "Prerequisites", v.get("prerequisites"));
            if let Some(steps) = v.get("steps").and_then(Value::as_array) {
                out.push_str("## Steps\n\n");
                for (i, step) in steps.iter().enumerate() {
                    out.push_str(&format!(
                        "{}. {}\n",
                        i + 1,
                        one_line(step.as_str().unwrap_or_default())
                    ));
                }
                out.push('\n');
            }
            list(&mut out, "Checks", v.get("checks"));
        }
    }
    out.push_str("## Unit\n\n");
    out.push_str(BLOCK_OPEN);
    out.push('\n');
    out.push_str(&serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string()));
    out.push_str("\n```\n");
    out
}

/// Text on one line, without characters that would start Markdown blocks.
fn one_line(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace("```", "'''")
}

fn paragraph(out: &mut String, heading: Option<&str>, value: Option<&Value>) {
    let Some(text) = value.and_then(Value::as_str) else {
        return;
    };
    if let Some(h) = heading {
        out.push_str(&format!("## {h}\n\n"));
    }
    out.push_str(&one_line(text));
    out.push_str("\n\n");
}

fn list(out: &mut String, heading: &str, value: Option<&Value>) {
    let Some(items) = value.and_then(Value::as_array).filter(|a| !a.is_empty()) else {
        return;
    };
    out.push_str(&format!("## {heading}\n\n"));
    for item in items {
        out.push_str(&format!(
            "- {}\n",
            one_line(item.as_str().unwrap_or_default())
        ));
    }
    out.push('\n');
}

/// Reads the unit back from its file: the last ```` ```json kp-unit ```` block, checked
/// like a contribution ([`from_value`]).
///
/// Errors: [`Rejection::Invalid`] when the block is missing, not JSON, or the unit does
/// not pass [`check`].
pub fn read_file(text: &str) -> Result<Unit, Rejection> {
    let open = format!("\n{BLOCK_OPEN}");
    let Some(start) = text.rfind(&open) else {
        return Err(Rejection::Invalid(format!(
            "the file has no `{BLOCK_OPEN}` block holding the unit"
        )));
    };
    let after = &text[start + open.len()..];
    let after = after
        .strip_prefix("\r\n")
        .or_else(|| after.strip_prefix('\n'))
        .unwrap_or(after);
    let end = after.find("\n```").map_or(after.len(), |e| e);
    let value: Value = serde_json::from_str(&after[..end])
        .map_err(|e| Rejection::Invalid(format!("the `{BLOCK_OPEN}` block is not JSON: {e}")))?;
    from_value(value)
}
