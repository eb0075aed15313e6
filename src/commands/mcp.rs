//! `folio mcp`: the MCP server over stdin and stdout, with the user's settings for writes
//! and embeddings.

use std::process::ExitCode;

use anyhow::{Context, Result};
use folio_core::config::user::UserConfig;
use folio_core::embed::settings::EmbedSettings;

use super::root::resolve_root;
use crate::cli::McpArgs;

/// Serves MCP on stdio until the client closes the connection.
pub fn run(args: &McpArgs) -> Result<ExitCode> {
    let r = resolve_root(&args.root)?;
    let user = UserConfig::load().map_err(anyhow::Error::msg)?;
    // Settings that cannot be resolved (a refused remote endpoint, say) leave embeddings
    // off with the reason in kb_status; the server still starts.
    let embed = EmbedSettings::resolve(
        &r.config.embed,
        &user.embed,
        args.embed.allow_remote_embeddings,
    );
    if let Err(reason) = &embed {
        tracing::warn!(%reason, "embeddings are off");
    }
    let options = folio_mcp::Options {
        root: r.root,
        db: Some(r.db),
        allow_writes: args.allow_writes || user.mcp.allow_writes,
        embed,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(folio_mcp::serve_stdio(options))?;
    Ok(ExitCode::SUCCESS)
}
