//! `folio doctor`: the host's [`LeftOut`] of a root, as text or JSON.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use folio_core::host::doctor::{LeftOut, WithheldReason};

use super::root::{host_error, open_host, resolve_root};
use crate::cli::DoctorArgs;

/// Indexes the root `args` names and prints what the index leaves out; exit 3 when
/// something the settings mean to read is left out, 0 otherwise (files whose parser is
/// off are listed, and do not count).
pub fn run(args: &DoctorArgs) -> Result<ExitCode> {
    let r = resolve_root(&args.root)?;
    let host = open_host(&r, false, false)?;
    let report = host.doctor().map_err(host_error)?;
    let mut out = crate::output::stdout();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        write_text(&mut out, &report)?;
    }
    Ok(if report.is_clean() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(3)
    })
}

/// The text report of `report`: one section per finding, each line a path.
fn write_text(out: &mut impl Write, report: &LeftOut) -> Result<()> {
    if report.is_clean() && report.not_enabled.is_empty() && report.withheld.is_empty() {
        writeln!(out, "nothing left out: every document is indexed")?;
        return Ok(());
    }
    if !report.skipped.is_empty() {
        writeln!(out, "not indexed ({}):", report.skipped.len())?;
        for s in &report.skipped {
            writeln!(out, "  {}: {}", s.path, s.reason)?;
        }
    }
    if !report.not_enabled.is_empty() {
        writeln!(
            out,
            "not read: their parser is off (add the extension to [parsers].enabled in folio.toml):"
        )?;
        for n in &report.not_enabled {
            let more = n.files - n.examples.len();
            let more = if more > 0 {
                format!(", and {more} more")
            } else {
                String::new()
            };
            writeln!(
                out,
                "  .{} ({}): {}{more}",
                n.extension,
                super::counted(n.files, "file", "files"),
                n.examples.join(", ")
            )?;
        }
    }
    if !report.without_text.is_empty() {
        writeln!(
            out,
            "indexed, but no text found (a scanned PDF has only pictures of its pages; folio does no OCR):"
        )?;
        for path in &report.without_text {
            writeln!(out, "  {path}")?;
        }
    }
    if !report.withheld.is_empty() {
        writeln!(
            out,
            "indexed and found by search, but not returned whole by a read:"
        )?;
        for w in &report.withheld {
            let why = match w.reason {
                WithheldReason::ExtensionNotRegistered => {
                    "extension-not-registered: its parser is off in [parsers].enabled; the next pass removes it"
                }
                WithheldReason::LargerThanAReadReturns => {
                    "larger-than-a-read-returns: over 4 MiB, kb://doc/ refuses it; kb_read pages through it"
                }
            };
            writeln!(out, "  {}: {why}", w.path)?;
        }
    }
    if !report.frontmatter_unparsed.is_empty() {
        writeln!(
            out,
            "frontmatter that does not parse (title, tags, aliases and date not read):"
        )?;
        for f in &report.frontmatter_unparsed {
            writeln!(out, "  {}: {}", f.path, f.error)?;
        }
    }
    Ok(())
}
