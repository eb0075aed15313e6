//! The reranker of a command's search: the workspace's and the user's `[rerank]`, as
//! core resolves them for every front end (`host::Options::resolve`).

use anyhow::Result;
use folio_core::config::user::UserConfig;
use folio_core::rerank::{RerankSetup, setup_of};
use folio_core::workspace::Config;

/// The [`RerankSetup`] of a root's configuration and the user's.
///
/// Errors: the user's config cannot be read.
pub fn rerank_setup(root: &std::path::Path, config: &Config) -> Result<RerankSetup> {
    let user = UserConfig::load().map_err(anyhow::Error::msg)?;
    let options = folio_core::host::Options::resolve(root, config, Ok(&user), false);
    Ok(setup_of(options.rerank))
}
