//! The workspace a command works on: its root (from `--root` or found above the current
//! folder), its `folio.toml` and its index database (from `--db` or the default place),
//! and the core host over them.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use folio_core::config::user::UserConfig;
use folio_core::host::{ErrorCode, Host, HostError};
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
    let db = match &args.db {
        // Absolute, as the root is: status and errors name it so.
        Some(db) => {
            std::path::absolute(db).with_context(|| format!("cannot resolve `{}`", db.display()))?
        }
        None => default_db_path(&root),
    };
    Ok(Resolved { root, config, db })
}

/// The core host over `r` (its index database included), with the embedding and rerank
/// settings of its `folio.toml` under the user's configuration (`allow_remote`: the
/// `--allow-remote-embeddings` flag). `for_search`: the `[search]` numbers are checked
/// now (an error naming `folio.toml`); otherwise a search would refuse them.
///
/// Errors: the root is gone or `folio.toml` is invalid. An unreadable user configuration
/// is not one here: embeddings and a configured reranker are then refused with its error
/// when a command needs them.
pub fn open_host(r: &Resolved, allow_remote: bool, for_search: bool) -> Result<Host> {
    let user = UserConfig::load();
    let mut options = folio_core::host::Options::resolve(
        &r.root,
        &r.config,
        user.as_ref().map_err(String::as_str),
        allow_remote,
    );
    options.db = Some(r.db.clone());
    Ok(if for_search {
        Host::open(options)?
    } else {
        Host::open_for_indexing(options)?
    })
}

/// A host's error as the command line says it: prefixed by what kind of error it is
/// (`invalid argument: `, `not configured: `, `unavailable: `) where that tells the user
/// what to change.
pub fn host_error(e: HostError) -> anyhow::Error {
    match e.code {
        ErrorCode::InvalidArgument => anyhow::anyhow!("invalid argument: {}", e.message),
        ErrorCode::NotConfigured => anyhow::anyhow!("not configured: {}", e.message),
        ErrorCode::Unavailable => anyhow::anyhow!("unavailable: {}", e.message),
        _ => anyhow::anyhow!(e.message),
    }
}

/// Opens the index of `r` for reading, refusing an index that belongs to another folder
/// (`--db`; `folio_core::index::foreign_index`): its text would come back under this
/// root's paths. A reindex checks the same; this covers `--no-reindex`.
///
/// Errors: the index cannot be opened, or records another folder.
pub fn open_index(r: &Resolved) -> Result<folio_core::store::Store> {
    let store = folio_core::store::Store::open(&r.db)
        .with_context(|| format!("opening the index `{}`", r.db.display()))?;
    if let Some(err) =
        folio_core::index::foreign_index(&r.root, &r.db, store.meta("root")?.as_deref())
    {
        return Err(err.into());
    }
    Ok(store)
}
