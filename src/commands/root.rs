//! The workspace a command works on: its root (from `--root` or found above the current
//! folder), its `folio.toml` and its index database (from `--db` or the default place).

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use folio_core::index::default_db_path;
use folio_core::workspace::{Config, find_root};

use crate::cli::RootArgs;

/// A workspace root with its configuration and index database.
pub struct Resolved {
    /// The root folder.
    pub root: PathBuf,
    /// Its `folio.toml` (defaults when there is none).
    pub config: Config,
    /// The index database file.
    pub db: PathBuf,
}

/// The root, configuration and database `args` name.
pub fn resolve_root(args: &RootArgs) -> Result<Resolved> {
    let root = match &args.root {
        Some(dir) => {
            if !dir.is_dir() {
                bail!("root `{}` does not exist or is not a folder", dir.display());
            }
            dir.canonicalize()
                .with_context(|| format!("cannot resolve `{}`", dir.display()))?
        }
        None => find_root(&std::env::current_dir().context("cannot read the current folder")?),
    };
    let config = Config::load(&root)?;
    let db = args.db.clone().unwrap_or_else(|| default_db_path(&root));
    Ok(Resolved { root, config, db })
}
