//! The reranker of a command's search: the workspace's and the user's `[rerank]`.

use anyhow::Result;
use folio_core::config::user::UserConfig;
use folio_core::rerank::{RerankSetup, setup};
use folio_core::workspace::Config;

/// The [`RerankSetup`] of a root's configuration and the user's.
///
/// Errors: the user's config cannot be read.
pub fn rerank_setup(config: &Config) -> Result<RerankSetup> {
    let user = UserConfig::load().map_err(anyhow::Error::msg)?;
    Ok(setup(&config.rerank, &user.rerank))
}
