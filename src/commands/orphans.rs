//! `folio orphans`: the notes no other note links to, as text (a path a line) or JSON.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use folio_core::host::links::LinksArgs;

use super::root::{host_error, open_host, resolve_root};
use crate::cli::OrphansArgs;

/// Prints the documents under `args.folder` (the whole root by default) that no other
/// document links to, sorted; exit 0 whatever it finds.
pub fn run(args: &OrphansArgs) -> Result<ExitCode> {
    let r = resolve_root(&args.root)?;
    let host = open_host(&r, false, false)?;
    let found = host
        .links(&LinksArgs {
            path: args.folder.clone().unwrap_or_default(),
            direction: Some("orphans".into()),
            depth: None,
            include_external: false,
        })
        .map_err(host_error)?
        .orphans
        .unwrap_or_default();
    let mut out = crate::output::stdout();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&found)?)?;
    } else {
        for path in &found {
            writeln!(out, "{path}")?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
