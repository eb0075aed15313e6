//! `folio check`: every link of the workspace checked, with diagnostics as text, JSON or
//! GitHub Actions commands, and an exit code for CI.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use folio_core::document::Encoding;
use folio_core::external;
use folio_core::links::{Severity, diagnostics};
use folio_core::workspace::{Workspace, state_dir};

use super::counted;
use super::root::resolve_root;
use crate::cli::{CheckArgs, Format};

/// Checks the root `args` names: exit code 1 when there are errors, 3 when files were skipped.
///
/// With `--external` (or `--external-only`) the http(s) links are checked too
/// ([`external::check`]) and their diagnostics join the others, in the same formats.
pub fn run(args: &CheckArgs) -> Result<ExitCode> {
    let format = args.format;
    let r = resolve_root(&args.root)?;
    let external_settings = if args.external || args.external_only {
        let mut settings = external::Settings::new(&r.config.links.external, &state_dir(&r.root))
            .map_err(anyhow::Error::msg)?;
        settings.include_local = args.external_include_local;
        Some(settings)
    } else {
        None
    };
    // Outlines hold every link but external ones, so the link diagnostics come from
    // them (and from the outline cache where a file did not change); the external
    // checker reads the documents' external links.
    let (ws, report) = if external_settings.is_some() {
        Workspace::load(&r.root, r.config.clone())?
    } else {
        Workspace::load_outlines(&r.root, r.config.clone())?
    };
    for s in &report.skipped {
        note!("folio: skipped {}: {}", s.path, s.reason);
    }
    super::report_replaced(&report.replaced);
    // A move a killed folio process left half done breaks the links it had not rewritten
    // yet: say so before those errors.
    for op in folio_core::write::Writer::new(&r.root).interrupted() {
        note!(
            "folio: warning: {} (the link errors it leaves are among those below); to finish it, {}",
            op.describe(),
            folio_core::host::status::FINISH_INTERRUPTED
        );
    }
    if ws.is_empty() {
        note!(
            "folio: warning: no Markdown files (.md, .markdown) found; check .gitignore, .ignore, .folioignore and [index].exclude"
        );
    }
    let mut external_diags = match &external_settings {
        Some(settings) => {
            let bar = super::progress::bar("checking external links", "");
            let progress = |done: usize, total: usize| {
                super::progress::report(bar.as_ref(), done as u64, total as u64);
            };
            let checked = external::check(&ws, settings, Some(&progress));
            if let Some(bar) = bar {
                bar.finish_and_clear();
            }
            for warning in &checked.warnings {
                note!("folio: warning: {warning}");
            }
            note!(
                "folio: external links: {} checked ({} from cache), {} broken, {} rate-limited{}",
                checked.checked.len(),
                checked.n_from_cache(),
                checked.n_broken(),
                checked.n_rate_limited(),
                if checked.excluded.is_empty() {
                    String::new()
                } else {
                    format!(", {} excluded", checked.excluded.len())
                }
            );
            checked.diagnostics(&ws)
        }
        None => Default::default(),
    };
    let mut out = std::io::BufWriter::new(crate::output::stdout());
    let (mut n_errors, mut n_warnings, mut n_files) = (0usize, 0usize, 0usize);
    let mut json_items = Vec::new();
    for path in ws.document_paths() {
        let mut diags = if args.external_only {
            Vec::new()
        } else {
            diagnostics(&ws, path)
        };
        if let Some(more) = external_diags.remove(path) {
            diags.extend(more);
            diags.sort_by_key(|d| (d.range.start, d.code));
        }
        if diags.is_empty() {
            continue;
        }
        n_files += 1;
        let doc = &ws.get(path).expect("listed document exists").doc;
        for d in diags {
            let lc = doc.offset_to_line_col(d.range.start, Encoding::Utf32);
            // Editors do not show a byte order mark, so it is not a column.
            let bom = u32::from(lc.line == 0 && doc.slice(0..3).as_deref() == Some("\u{feff}"));
            let (line, col) = (lc.line + 1, lc.col + 1 - bom);
            let severity = match d.severity {
                Severity::Error => {
                    n_errors += 1;
                    "error"
                }
                Severity::Warning => {
                    n_warnings += 1;
                    "warning"
                }
            };
            match format {
                Format::Text => writeln!(out, "{path}:{line}:{col}: {}: {}", d.code, d.message)?,
                Format::Github => writeln!(
                    out,
                    "::{severity} file={},line={line},col={col},title={}::{}",
                    github_property(path),
                    d.code,
                    github_data(&d.message)
                )?,
                Format::Json => json_items.push(serde_json::json!({
                    "path": path, "line": line, "column": col, "code": d.code.as_str(),
                    "severity": severity, "message": d.message,
                })),
            }
        }
    }
    if let Format::Json = format {
        writeln!(out, "{}", serde_json::to_string_pretty(&json_items)?)?;
    }
    out.flush()?;
    note!(
        "folio: checked {}: {}, {} in {}{}",
        counted(ws.len(), "document", "documents"),
        counted(n_errors, "error", "errors"),
        counted(n_warnings, "warning", "warnings"),
        counted(n_files, "file", "files"),
        if report.skipped.is_empty() {
            String::new()
        } else {
            format!(
                ", {} skipped",
                counted(report.skipped.len(), "file", "files")
            )
        }
    );
    Ok(if n_errors > 0 {
        ExitCode::from(1)
    } else if !report.skipped.is_empty() {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    })
}

/// A workflow command's message, escaped as GitHub Actions reads it: `%`, CR and LF.
fn github_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A workflow command's property value (`file=…`), escaped as GitHub Actions reads it:
/// the message's escapes, and `:` and `,`, which end a property.
fn github_property(text: &str) -> String {
    github_data(text).replace(':', "%3A").replace(',', "%2C")
}
