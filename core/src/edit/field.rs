//! `set_field` and `delete_field`: one top-level key of a document's YAML frontmatter,
//! edited in place.
//!
//! Only the lines of the key being set or deleted change: every other byte of the block
//! (comments, quoting, key order, blank lines, line endings) stays as written. The entry
//! of a key is its line (`key: value`, the key plain or quoted, at the start of the line)
//! and the lines its value continues on: indented lines (a block scalar `|` / `>`, an
//! indented list or map, a multi-line flow value) and, for a key whose value starts on the
//! next line, `- item` lines at the key's column; comment and blank lines between them are
//! the value's, those after it are not.
//!
//! Values are serialised with `serde_norway` (the workspace's YAML library): a scalar on
//! the key's line (a multi-line string as a block scalar `|-` indented two spaces below),
//! a non-empty list or map in block style indented two spaces under the key (`{}` and
//! `[]` stay on the key's line). A comment on the key's line stays after the new value.
//! A JSON object has no order of its own here, so a nested map's keys come out sorted.
//!
//! Every result is read back with `serde_norway` and must equal the old frontmatter with
//! the operations applied, or nothing is written.

use std::ops::Range;

use serde_json::{Map, Value};

use super::EditError;
use crate::document::TextEdit;
use crate::parse::{ElementKind, Parsed};

/// One field operation of a patch request.
#[derive(Clone, Copy, Debug)]
pub(super) enum FieldOp<'a> {
    /// `set_field`: the key gets the value (added at the end of the block when missing).
    Set(&'a str, &'a Value),
    /// `delete_field`: the key goes, with every line of its value.
    Delete(&'a str),
}

/// The edit that applies `ops` (each with its index in the request, for errors) in order
/// to the YAML frontmatter of `text` (parsed as `parsed`, its dominant line ending `eol`),
/// creating the block (`---`, `key: value`, `---`) at the start of the file (after a BOM)
/// when there is none. `None` when the block reads the same after the operations.
///
/// Errors ([`EditError::InvalidArgument`], prefixed with `operation N (kind):`): an invalid
/// key (empty, or holding a control character such as a line break); TOML frontmatter;
/// frontmatter that is not valid YAML or not a mapping; `delete_field` of a key the
/// frontmatter does not have; `set_field` of a key written more than once; a value whose
/// YAML would not read back as the value.
pub(super) fn plan_fields(
    text: &str,
    parsed: &Parsed,
    eol: &str,
    ops: &[(usize, FieldOp<'_>)],
) -> Result<Option<TextEdit>, EditError> {
    let block = parsed
        .elements
        .iter()
        .find(|e| e.kind == ElementKind::Frontmatter)
        .map(|e| e.range.clone());
    let (body_range, eol) = match &block {
        Some(range) => {
            let source = &text[range.clone()];
            if !source.starts_with("---") {
                let (i, op) = &ops[0];
                return Err(failed(
                    *i,
                    op,
                    "the frontmatter is TOML (`+++`); set_field and delete_field edit YAML frontmatter (`---`)",
                ));
            }
            let first_break = source.find('\n').unwrap_or(source.len());
            let block_eol = if source[..first_break].ends_with('\r') {
                "\r\n"
            } else {
                "\n"
            };
            let closing = source.rfind('\n').map_or(source.len(), |i| i + 1);
            let start = range.start + (first_break + 1).min(closing);
            (start..range.start + closing, block_eol)
        }
        None => {
            let at = if text.starts_with('\u{feff}') { 3 } else { 0 };
            let mut lines = text[at..].lines();
            let first_line = lines.next().unwrap_or("").trim_end();
            let second_line = lines.next().unwrap_or("");
            // (`---` then a blank line is a thematic break, not a block.)
            if matches!(first_line, "---" | "+++") && !second_line.trim().is_empty() {
                // A block folio does not read as frontmatter (closed by `...`, or not
                // closed): a new block above it would leave two.
                let (i, op) = &ops[0];
                return Err(failed(
                    *i,
                    op,
                    &format!(
                        "the file starts with `{first_line}` but has no frontmatter folio reads (a block closed by `{first_line}` on a line of its own); nothing was written"
                    ),
                ));
            }
            (at..at, eol)
        }
    };
    let old_body = &text[body_range.clone()];
    let mut mapping = read_mapping(old_body).map_err(|m| {
        let (i, op) = &ops[0];
        failed(*i, op, &m)
    })?;
    // A key in YAML's explicit form (`? key` then `: value`) is not found by its line:
    // setting it would add the key a second time.
    if old_body
        .lines()
        .any(|l| l == "?" || l.starts_with("? ") || l.starts_with("?\t"))
    {
        let (i, op) = &ops[0];
        return Err(failed(
            *i,
            op,
            "the frontmatter writes a key in YAML's explicit form (`? key`), which set_field and delete_field do not edit; replace the frontmatter instead; nothing was written",
        ));
    }
    let mut body = old_body.to_string();
    for (i, op) in ops {
        body = apply(&body, op, eol).map_err(|m| failed(*i, op, &m))?;
        match op {
            FieldOp::Set(key, value) => {
                mapping.insert((*key).to_string(), (*value).clone());
            }
            FieldOp::Delete(key) => {
                mapping.remove(*key);
            }
        }
        let read = read_mapping(&body).ok();
        let closes_early = body.lines().any(|l| matches!(l.trim_end(), "---" | "..."));
        if read.as_ref() != Some(&mapping) || closes_early {
            return Err(failed(
                *i,
                op,
                "the frontmatter would not read back as that value; nothing was written",
            ));
        }
    }
    if block.is_none() {
        let new_text = format!("---{eol}{body}---{eol}");
        return Ok(Some(TextEdit {
            range: body_range,
            new_text,
        }));
    }
    Ok(
        changed_lines(old_body, &body).map(|(range, new_text)| TextEdit {
            range: body_range.start + range.start..body_range.start + range.end,
            new_text,
        }),
    )
}

/// The operation's wire name.
fn op_name(op: &FieldOp<'_>) -> &'static str {
    match op {
        FieldOp::Set(..) => "set_field",
        FieldOp::Delete(..) => "delete_field",
    }
}

fn failed(index: usize, op: &FieldOp<'_>, message: &str) -> EditError {
    EditError::InvalidArgument(format!("operation {index} ({}): {message}", op_name(op)))
}

/// Checks a key from a request: not blank, no control characters (a line break would
/// start another entry).
pub(super) fn check_key(key: &str) -> Result<(), String> {
    if key.trim().is_empty() || key.chars().any(char::is_control) {
        return Err(format!(
            "`key` must be a frontmatter key on one line, not blank and without control characters (got {key:?})"
        ));
    }
    Ok(())
}

/// The frontmatter body as a JSON object (an empty body is an empty one).
fn read_mapping(body: &str) -> Result<Map<String, Value>, String> {
    if body.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_norway::from_str::<Value>(body) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(Value::Null) => Ok(Map::new()),
        Ok(_) => Err("the frontmatter is not a YAML mapping of keys to values".to_string()),
        Err(e) => Err(format!(
            "the frontmatter is not valid YAML ({e}); fix it first"
        )),
    }
}

/// `body` (whole lines, each with its line break) after `op`.
fn apply(body: &str, op: &FieldOp<'_>, eol: &str) -> Result<String, String> {
    let key = match op {
        FieldOp::Set(key, _) | FieldOp::Delete(key) => *key,
    };
    check_key(key)?;
    let entries = entries_of(body, key);
    match op {
        FieldOp::Delete(_) => {
            if entries.is_empty() {
                return Err(format!(
                    "the frontmatter has no key `{key}`; nothing was written"
                ));
            }
            let mut out = body.to_string();
            for entry in entries.iter().rev() {
                out.replace_range(entry.lines.clone(), "");
            }
            Ok(out)
        }
        FieldOp::Set(_, value) => {
            if entries.len() > 1 {
                return Err(format!(
                    "the frontmatter has key `{key}` {} times; delete_field removes them all, then set_field it once",
                    entries.len()
                ));
            }
            let mut out = body.to_string();
            match entries.first() {
                Some(entry) => {
                    let new = entry_text(
                        &entry.key,
                        value,
                        entry.comment.as_deref(),
                        entry.quote,
                        eol,
                    )?;
                    out.replace_range(entry.text.clone(), &new);
                }
                None => {
                    let written_key = key_text(key)?;
                    if !out.is_empty() && !out.ends_with('\n') {
                        out.push_str(eol);
                    }
                    out.push_str(&entry_text(&written_key, value, None, None, eol)?);
                    out.push_str(eol);
                }
            }
            Ok(out)
        }
    }
}

/// Where one key's entry is in a frontmatter body.
struct Entry {
    /// The key as written (quotes included).
    key: String,
    /// Bytes of the entry: its first line through the end of its value's last line,
    /// without that line's break.
    text: Range<usize>,
    /// Bytes of its lines with the last line's break.
    lines: Range<usize>,
    /// The comment on the key's line with the white space before it (`   # …`), if any.
    comment: Option<String>,
    /// The quote the value was written in (`"` or `'`), if it was quoted.
    quote: Option<char>,
}

/// The lines of `body`: (start, end without the line break, end with it).
fn lines_of(body: &str) -> Vec<(usize, usize, usize)> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < body.len() {
        let next = body[at..].find('\n').map_or(body.len(), |i| at + i + 1);
        let content = body[at..next].trim_end_matches(['\n', '\r']);
        out.push((at, at + content.len(), next));
        at = next;
    }
    out
}

/// Every top-level entry of `body` whose key reads as `key`.
fn entries_of(body: &str, key: &str) -> Vec<Entry> {
    let lines = lines_of(body);
    let mut out = Vec::new();
    for (n, &(start, end, _)) in lines.iter().enumerate() {
        let line = &body[start..end];
        let Some((written, rest)) = split_key(line) else {
            continue;
        };
        if decode_key(written).as_deref() != Some(key) {
            continue;
        }
        let comment = line_comment(rest);
        let value = comment
            .as_ref()
            .map_or(rest, |c| &rest[..rest.len() - c.len()]);
        // A value that starts on the next line may be a list at the key's column.
        let opens_below = value
            .split_whitespace()
            .all(|w| w.starts_with('&') || w.starts_with('!'));
        let mut last = n;
        for (m, &(s, e, _)) in lines.iter().enumerate().skip(n + 1) {
            let l = &body[s..e];
            if l.trim().is_empty() || l.starts_with('#') {
                continue;
            }
            let indented = l.starts_with([' ', '\t']);
            let item = opens_below && (l == "-" || l.starts_with("- ") || l.starts_with("-\t"));
            if !(indented || item) {
                break;
            }
            last = m;
        }
        out.push(Entry {
            key: written.to_string(),
            text: start..lines[last].1,
            lines: start..lines[last].2,
            // With the white space before it, so that a column of comments stays.
            comment: comment.map(|c| c.trim_end().to_string()),
            quote: value
                .trim_start()
                .chars()
                .next()
                .filter(|c| matches!(c, '"' | '\'')),
        });
    }
    out
}

/// A top-level `key: value` line split into the key as written and what follows its
/// colon; `None` for other lines (indented, comments, list items, complex keys).
fn split_key(line: &str) -> Option<(&str, &str)> {
    let first = line.chars().next()?;
    let item = first == '-' && (line == "-" || line[1..].starts_with([' ', '\t']));
    if item
        || matches!(
            first,
            ' ' | '\t' | '#' | '?' | '[' | '{' | '&' | '*' | '!' | '%'
        )
    {
        return None;
    }
    let key_end = if first == '"' || first == '\'' {
        closing_quote(line, 0)? + 1
    } else {
        // A plain key ends at the first `:` followed by white space or the line's end.
        let bytes = line.as_bytes();
        (0..bytes.len()).find(|&i| {
            bytes[i] == b':' && bytes.get(i + 1).is_none_or(|b| matches!(b, b' ' | b'\t'))
        })?
    };
    let after = line[key_end..].trim_start_matches([' ', '\t']);
    let rest = after.strip_prefix(':')?;
    if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    Some((line[..key_end].trim_end(), rest))
}

/// The byte of the quote that closes the one at `open` in `s`: `\` escapes in double
/// quotes, `''` in single quotes.
fn closing_quote(s: &str, open: usize) -> Option<usize> {
    let bytes = s.as_bytes();
    let quote = bytes[open];
    let mut i = open + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if quote == b'"' => i += 2,
            q if q == quote => {
                if quote == b'\'' && bytes.get(i + 1) == Some(&b'\'') {
                    i += 2;
                } else {
                    return Some(i);
                }
            }
            _ => i += 1,
        }
    }
    None
}

/// A written key as YAML reads it (`"a b"` → `a b`; `1` → `1`, as the frontmatter's
/// JSON keys read it).
fn decode_key(written: &str) -> Option<String> {
    match serde_norway::from_str::<Value>(written).ok()? {
        Value::String(s) => Some(s),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Null => Some("null".to_string()),
        _ => None,
    }
}

/// The comment at the end of what follows a key's colon (`# …`, starting after white
/// space and outside quotes), as written, with the white space before it.
fn line_comment(rest: &str) -> Option<String> {
    let bytes = rest.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let after_space = i == 0 || matches!(bytes[i - 1], b' ' | b'\t');
        let opens = i == 0 || matches!(bytes[i - 1], b' ' | b'\t' | b'[' | b'{' | b',');
        match bytes[i] {
            b'"' | b'\'' if opens => match closing_quote(rest, i) {
                Some(close) => i = close + 1,
                None => return None,
            },
            b'#' if after_space => {
                let start = rest[..i].trim_end_matches([' ', '\t']).len();
                return Some(rest[start..].to_string());
            }
            _ => i += 1,
        }
    }
    None
}

/// A new key as YAML writes it (quoted when it must be, and when a YAML 1.1 reader would
/// read it as something else: [`yaml11_reads_otherwise`], or the merge key `<<`).
fn key_text(key: &str) -> Result<String, String> {
    let yaml = serde_norway::to_string(key).map_err(|e| format!("cannot write key: {e}"))?;
    let yaml = yaml.trim_end_matches('\n');
    if !yaml.starts_with(['\'', '"']) && (key == "<<" || yaml11_reads_otherwise(key)) {
        return Ok(format!("'{}'", key.replace('\'', "''")));
    }
    Ok(yaml.to_string())
}

/// Whether a YAML 1.1 reader (PyYAML, Ruby's Psych: Jekyll, many static site
/// generators) would read the plain scalar `s` as a boolean, a null, a number or a
/// date, where YAML 1.2 (what folio and serde read) reads a string: `yes`, `no`, `on`,
/// `off` in their three case forms, `2024-01-01`, `1_000`, `0b101`, `017`, `1:30`
/// (YAML 1.1 types, yaml.org/type; `y` and `n`, which those readers leave as strings, stay
/// plain). Such a string is written quoted.
pub(crate) fn yaml11_reads_otherwise(s: &str) -> bool {
    static AMBIGUOUS: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = AMBIGUOUS.get_or_init(|| {
        regex::Regex::new(concat!(
            r"^(?:yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF",
            r"|true|True|TRUE|false|False|FALSE|null|Null|NULL|~",
            r"|[-+]?0b[01_]+|[-+]?0[0-7_]+|[-+]?0x[0-9a-fA-F_]+",
            r"|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?",
            r"|[-+]?(?:[0-9][0-9_]*)?\.[0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*",
            r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)",
            r"|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?)?",
            r")$"
        ))
        .expect("a valid pattern")
    });
    re.is_match(s)
}

/// The entry `key: value` (its lines joined by `eol`, no final break), with `comment`
/// on the key's line. See the module documentation for the layout.
fn entry_text(
    key: &str,
    value: &Value,
    comment: Option<&str>,
    quote: Option<char>,
    eol: &str,
) -> Result<String, String> {
    let yaml =
        serde_norway::to_string(value).map_err(|e| format!("cannot write the value: {e}"))?;
    let one_line = !yaml.trim_end_matches('\n').contains('\n');
    let yaml = match value {
        // A string replacing a quoted one keeps its quote (JSON's escapes are YAML's).
        Value::String(s) if quote == Some('"') && one_line => {
            serde_json::to_string(s).map_err(|e| format!("cannot write the value: {e}"))?
        }
        Value::String(s) if quote == Some('\'') && one_line && !s.contains(['\n', '\r', '\t']) => {
            format!("'{}'", s.replace('\'', "''"))
        }
        Value::String(s)
            if !yaml.starts_with(['\'', '"', '|', '>']) && yaml11_reads_otherwise(s) =>
        {
            format!("'{}'", s.replace('\'', "''"))
        }
        _ => yaml,
    };
    let yaml = yaml.trim_end_matches('\n');
    let comment = match comment {
        Some(c) if c.starts_with([' ', '\t']) => c.to_string(),
        Some(c) => format!(" {c}"),
        None => String::new(),
    };
    let nested = match value {
        Value::Object(map) => !map.is_empty(),
        Value::Array(list) => !list.is_empty(),
        _ => false,
    };
    let mut out;
    if nested {
        out = format!("{key}:{comment}");
        for line in yaml.split('\n') {
            out.push_str(eol);
            if !line.is_empty() {
                out.push_str("  ");
            }
            out.push_str(line);
        }
    } else {
        let mut lines = yaml.split('\n');
        out = format!("{key}: {}{comment}", lines.next().unwrap_or(""));
        // A block scalar's lines: already indented below the key.
        for line in lines {
            out.push_str(eol);
            out.push_str(line);
        }
    }
    Ok(out)
}

/// The whole lines that differ between `old` and `new` (both whole lines): the bytes of
/// `old` to replace and their new text; `None` when they are equal.
fn changed_lines(old: &str, new: &str) -> Option<(Range<usize>, String)> {
    if old == new {
        return None;
    }
    let (a, b) = (old.as_bytes(), new.as_bytes());
    let at_line_start = |s: &[u8], at: usize| at == 0 || s[at - 1] == b'\n';
    let mut prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    // Back to the start of the line the difference is on (the same bytes in both).
    while !at_line_start(a, prefix) {
        prefix -= 1;
    }
    let most = a.len().min(b.len()) - prefix;
    let mut suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(most)
        .take_while(|(x, y)| x == y)
        .count();
    // Forward to where a line starts in both.
    while suffix > 0 && !(at_line_start(a, a.len() - suffix) && at_line_start(b, b.len() - suffix))
    {
        suffix -= 1;
    }
    Some((
        prefix..a.len() - suffix,
        new[prefix..b.len() - suffix].to_string(),
    ))
}
