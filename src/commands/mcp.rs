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
        fetch: test_fetch_allowances()?,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let agent_id = args.agent_id.clone().or(user.mcp.agent_id.clone());
    runtime.block_on(folio_mcp::serve_stdio(options, agent_id))?;
    Ok(ExitCode::SUCCESS)
}

/// Environment variable naming a PEM root certificate that replaces the public roots for
/// `kb_save_image` downloads. **Test-only**: the MCP end-to-end tests serve images from a
/// local HTTPS server with a certificate only they trust.
const TEST_FETCH_CA_ENV: &str = "FOLIO_TEST_FETCH_CA";

/// Environment variable naming one loopback socket address (`127.0.0.1:PORT`) that
/// `kb_save_image` downloads may reach despite the rule against non-public addresses.
/// **Test-only**, like [`TEST_FETCH_CA_ENV`].
const TEST_FETCH_LOOPBACK_ENV: &str = "FOLIO_TEST_FETCH_LOOPBACK";

/// The test-only download allowances, read from this process's environment only (no
/// configuration file, of the workspace or the user, can set them).
fn test_fetch_allowances() -> Result<folio_core::fetch::TestAllowances> {
    let mut out = folio_core::fetch::TestAllowances::default();
    if let Some(path) = std::env::var_os(TEST_FETCH_CA_ENV).filter(|v| !v.is_empty()) {
        let pem = std::fs::read(&path).with_context(|| {
            format!(
                "{TEST_FETCH_CA_ENV}: reading {}",
                std::path::Path::new(&path).display()
            )
        })?;
        out.trusted_root_pem = Some(pem);
    }
    if let Some(addr) = std::env::var_os(TEST_FETCH_LOOPBACK_ENV).filter(|v| !v.is_empty()) {
        let addr = addr.to_string_lossy();
        out.loopback = Some(addr.parse().with_context(|| {
            format!(
                "{TEST_FETCH_LOOPBACK_ENV}=`{addr}` is not an address with a port (127.0.0.1:PORT)"
            )
        })?);
    }
    Ok(out)
}
