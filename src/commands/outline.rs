//! `folio outline`: the elements of one Markdown file with their pointers, as text or JSON.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use folio_core::config::DEFAULT_MAX_FILE_SIZE;
use folio_core::parse::parse;
use folio_core::workspace::{is_markdown, read_markdown_lossy};

use crate::cli::OutlineArgs;

/// Prints the outline of the file `args` names.
pub fn run(args: &OutlineArgs) -> Result<ExitCode> {
    let (file, json) = (args.file.as_path(), args.json);
    let name = file.to_string_lossy();
    if !is_markdown(&name)
        && let Some(format) = folio_core::formats::Format::of_path(&name)
        && format.is_binary()
    {
        anyhow::bail!(
            "cannot outline `{}`: it is a {} document, not Markdown (`folio search` finds its text, kb_read reads it)",
            file.display(),
            format.name()
        );
    }
    // The same checks and reading as indexing: a regular file, under the size cap, no NUL
    // bytes; text that is not UTF-8 is read with U+FFFD replacements, so the pointers are
    // the index's.
    let (text, invalid_at) = read_markdown_lossy(file, DEFAULT_MAX_FILE_SIZE)
        .map_err(|reason| anyhow::anyhow!("cannot outline `{}`: {reason}", file.display()))?;
    if let Some(at) = invalid_at {
        note!(
            "folio: note: {} is not valid UTF-8 (first invalid byte at offset {at}); read with U+FFFD replacements",
            file.display()
        );
    }
    if !is_markdown(&file.to_string_lossy()) {
        note!(
            "folio: warning: `{}` is not a Markdown file (.md, .markdown); outlining it as Markdown",
            file.display()
        );
    }
    let parsed = parse(&text);
    let mut out = crate::output::stdout();
    if json {
        let elements: Vec<serde_json::Value> = parsed
            .elements
            .iter()
            .map(|e| {
                serde_json::json!({
                    "pointer": e.pointer().to_string(),
                    "logical": e.logical,
                    "kind": e.kind.as_str(),
                    "level": e.level,
                    "start_line": e.start_line,
                    "end_line": e.end_line,
                    "preview": preview(&text[e.range.clone()]),
                })
            })
            .collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&elements)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    for e in &parsed.elements {
        let depth = e.logical.matches('.').count();
        writeln!(
            out,
            "{:>5}-{:<5} {}{:<16} {}  {}",
            e.start_line,
            e.end_line,
            "  ".repeat(depth),
            e.kind.as_str(),
            e.pointer(),
            preview(&text[e.range.clone()])
        )?;
    }
    for p in &parsed.problems {
        note!(
            "folio: {}:{}: {}",
            file.display(),
            parsed.line_of(p.range.start),
            p.message
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// First line of an element, at most 60 characters.
fn preview(text: &str) -> String {
    let line = text.lines().next().unwrap_or("").trim();
    if line.chars().count() > 60 {
        format!("{}…", line.chars().take(59).collect::<String>())
    } else {
        line.to_string()
    }
}
