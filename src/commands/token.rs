//! `folio token add|list|revoke`: the bearer tokens of `folio mcp --http`.
//!
//! The file is `--tokens FILE`, else `[mcp.http] tokens_file` of the user's config.toml,
//! else `tokens.toml` beside it. `add` prints the token once on stdout (only its hash is
//! kept); everything else goes to stderr.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, anyhow};
use folio_core::config::tokens::{TokenFile, unix_now};
use folio_core::config::user::UserConfig;

use crate::cli::{TokenAction, TokenArgs};

/// The token file named by the flag or the user's configuration.
pub fn tokens_path(flag: Option<&PathBuf>, user: &UserConfig) -> Result<PathBuf> {
    flag.cloned()
        .or_else(|| user.mcp.http.tokens_path())
        .ok_or_else(|| anyhow!("no token file: set HOME or XDG_CONFIG_HOME, or pass --tokens FILE"))
}

/// Runs one token action.
pub fn run(args: &TokenArgs) -> Result<ExitCode> {
    let user = UserConfig::load().map_err(anyhow::Error::msg)?;
    let path = tokens_path(args.tokens.as_ref(), &user)?;
    let mut file = TokenFile::load(&path).map_err(anyhow::Error::msg)?;
    let mut out = crate::output::stdout();
    match &args.action {
        TokenAction::Add { agent, scope } => {
            let token = file
                .add(agent, *scope, unix_now())
                .map_err(anyhow::Error::msg)?;
            file.save().map_err(anyhow::Error::msg)?;
            let entry = file.tokens.last().expect("just added");
            writeln!(out, "{token}")?;
            note!(
                "token {} for agent `{agent}` (scope {}) added to {}; it is shown only now: send it as `Authorization: Bearer <token>`",
                entry.id,
                scope.as_str(),
                path.display()
            );
        }
        TokenAction::List { json } => {
            if *json {
                let rows: Vec<_> = file
                    .tokens
                    .iter()
                    .map(|t| {
                        serde_json::json!({"id": t.id, "agent": t.agent, "scope": t.scope.as_str(),
                            "created": t.created, "revoked": t.revoked})
                    })
                    .collect();
                writeln!(out, "{}", serde_json::to_string_pretty(&rows)?)?;
            } else {
                writeln!(
                    out,
                    "{:<12}  {:<24}  {:<10}  {:<20}  revoked",
                    "id", "agent", "scope", "created"
                )?;
                for t in &file.tokens {
                    writeln!(
                        out,
                        "{:<12}  {:<24}  {:<10}  {:<20}  {}",
                        t.id,
                        t.agent,
                        t.scope.as_str(),
                        t.created,
                        t.revoked.as_deref().unwrap_or("-")
                    )?;
                }
            }
        }
        TokenAction::Revoke { which } => {
            let ids = file.revoke(which, unix_now()).map_err(anyhow::Error::msg)?;
            file.save().map_err(anyhow::Error::msg)?;
            note!("revoked {} in {}", ids.join(", "), path.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}
