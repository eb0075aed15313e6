//! The knowledge base as the MCP tools see it: one root, its index, and the write switch.
//!
//! Every method here is synchronous and protocol-free apart from its serde types: the
//! server runs each call on a blocking thread, catches panics, and turns [`ToolError`]
//! into an MCP tool error. Every path argument goes through the core path policy before
//! any disk access.

pub mod edit;
pub mod files;
pub mod graph;
pub mod links;
pub mod live;
pub mod model;
pub mod read;
pub mod search;
pub mod status;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use folio_core::index::default_db_path;
use folio_core::store::Store;
use folio_core::workspace::path_policy::{PathError, check_syntax, resolve_existing};
use folio_core::workspace::{Config, SkipReason, is_markdown, read_markdown};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde::Serialize;

/// The stable error codes of DESIGN.md "MCP surface".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    /// The path is not a name the index could hold.
    InvalidPath,
    /// Nothing under that exact spelling (or a link folio does not follow).
    NotFound,
    /// The target changed since it was read, or the edit would break untouched structure.
    Conflict,
    /// Writes are off.
    PermissionDenied,
    /// The target path exists.
    AlreadyExists,
    /// Not a Markdown file, or not text.
    UnsupportedFormat,
    /// A malformed or contradictory argument.
    InvalidArgument,
    /// The feature needs configuration this server does not have.
    NotConfigured,
    /// Another operation holds what this one needs.
    Busy,
    /// An unexpected failure inside the server (a bug, or an I/O error).
    Internal,
}

/// A tool that ran and failed: `{code, message}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ToolError {
    /// Stable error code.
    pub code: ErrorCode,
    /// What went wrong, for the agent.
    pub message: String,
}

impl ToolError {
    /// An error with a code and message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ToolError {
        ToolError {
            code,
            message: message.into(),
        }
    }

    /// `INVALID_ARGUMENT`.
    pub fn invalid(message: impl Into<String>) -> ToolError {
        ToolError::new(ErrorCode::InvalidArgument, message)
    }

    /// `INTERNAL` from any error.
    pub fn internal(err: impl std::fmt::Display) -> ToolError {
        ToolError::new(ErrorCode::Internal, err.to_string())
    }
}

impl From<PathError> for ToolError {
    fn from(err: PathError) -> ToolError {
        let code = match err {
            PathError::Invalid { .. } => ErrorCode::InvalidPath,
            PathError::NotFound { .. } => ErrorCode::NotFound,
        };
        ToolError::new(code, err.to_string())
    }
}

impl From<folio_core::write::WriteError> for ToolError {
    fn from(err: folio_core::write::WriteError) -> ToolError {
        use folio_core::write::WriteError;
        let code = match &err {
            WriteError::Busy { .. } => ErrorCode::Busy,
            WriteError::Changed { .. } => ErrorCode::Conflict,
            WriteError::AlreadyExists { .. } => ErrorCode::AlreadyExists,
            WriteError::NotFound { .. } => ErrorCode::NotFound,
            WriteError::Io { .. } => ErrorCode::Internal,
        };
        ToolError::new(code, err.to_string())
    }
}

impl From<folio_core::edit::EditError> for ToolError {
    fn from(err: folio_core::edit::EditError) -> ToolError {
        let code = match err {
            folio_core::edit::EditError::InvalidArgument(_) => ErrorCode::InvalidArgument,
            folio_core::edit::EditError::Conflict(_) => ErrorCode::Conflict,
        };
        ToolError::new(code, err.to_string())
    }
}

/// Makes an argument schema portable: an optional field is described by its own type
/// (`"type": "string"`, not `["string", "null"]`) with no `"default": null`, since
/// leaving it out is how a caller omits it. Applied to every argument struct.
pub fn portable_schema(schema: &mut schemars::Schema) {
    if let Some(obj) = schema.as_object_mut() {
        if let Some(serde_json::Value::Array(types)) = obj.get("type") {
            let non_null: Vec<serde_json::Value> = types
                .iter()
                .filter(|t| t.as_str() != Some("null"))
                .cloned()
                .collect();
            if non_null.len() == 1 && non_null.len() < types.len() {
                obj.insert("type".into(), non_null[0].clone());
            }
        }
        if obj.get("default") == Some(&serde_json::Value::Null) {
            obj.remove("default");
        }
        if let Some(serde_json::Value::Array(any)) = obj.get("anyOf") {
            let non_null: Vec<serde_json::Value> = any
                .iter()
                .filter(|s| s.get("type").and_then(|t| t.as_str()) != Some("null"))
                .cloned()
                .collect();
            if non_null.len() == 1 && non_null.len() < any.len() {
                obj.remove("anyOf");
                if let serde_json::Value::Object(inner) = &non_null[0] {
                    for (k, v) in inner {
                        obj.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                }
            }
        }
        // An enum of strings may list `null` among its values.
        if let Some(serde_json::Value::Array(values)) = obj.get_mut("enum") {
            values.retain(|v| !v.is_null());
        }
    }
    schemars::transform::transform_subschemas(&mut portable_schema, schema);
}

/// Result of a tool body.
pub type ToolResult<T> = Result<T, ToolError>;

/// How the server was started.
#[derive(Clone, Debug)]
pub struct Options {
    /// The knowledge base root.
    pub root: PathBuf,
    /// The index database (default: `<root>/.folio/index.db`).
    pub db: Option<PathBuf>,
    /// Allow writing tools (patch, tables, create, move, delete).
    pub allow_writes: bool,
    /// Resolved embedding settings (`folio_core::embed::settings::EmbedSettings::resolve`),
    /// or why there are none; embeddings are then off with that reason.
    pub embed: Result<folio_core::embed::settings::EmbedSettings, String>,
}

/// The knowledge base behind the tools.
#[derive(Debug)]
pub struct Kb {
    root: PathBuf,
    config: Config,
    db_path: PathBuf,
    allow_writes: bool,
    reindex: Arc<Mutex<status::ReindexState>>,
    /// Serialises writes across every folio process on this root and checks each file
    /// against what its edit was planned on (core `write`).
    writer: folio_core::write::Writer,
    /// A connection kept open for reads (search, status, catalog).
    read_store: Mutex<Option<Store>>,
    /// The parsed workspace, for links and moves.
    model: Mutex<Option<model::Model>>,
    /// Where editors' `folio lsp` bridge endpoints are (core `bridge::base_dir`).
    bridge_dir: PathBuf,
    /// How long a bridge call may take ([`live::BRIDGE_TIMEOUT`]).
    bridge_timeout: std::time::Duration,
    /// The embedder and the background embedding pass.
    pub(crate) embedding: folio_core::embed::runner::Embedding,
}

/// Characters kept as they are in `kb://` URIs: unreserved ones and `/`.
const URI_KEEP: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/');

/// `kb://doc/<percent-encoded path>`.
pub fn doc_uri(path: &str) -> String {
    format!("kb://doc/{}", utf8_percent_encode(path, URI_KEEP))
}

/// `kb://topic/<percent-encoded prefix>`.
pub fn topic_uri(prefix: &str) -> String {
    format!("kb://topic/{}", utf8_percent_encode(prefix, URI_KEEP))
}

impl Kb {
    /// Opens the knowledge base at `options.root` (the root must be a folder).
    ///
    /// Errors: the root is missing or `folio.toml` is invalid.
    pub fn open(options: Options) -> anyhow::Result<Kb> {
        let root = options
            .root
            .canonicalize()
            .map_err(|e| anyhow::anyhow!("root {}: {e}", options.root.display()))?;
        anyhow::ensure!(root.is_dir(), "root {} is not a folder", root.display());
        let config = Config::load(&root)?;
        let db_path = options.db.clone().unwrap_or_else(|| default_db_path(&root));
        let writer = folio_core::write::Writer::new(&root);
        if options.allow_writes {
            // Finishes any move a killed writer left half done, before the first request.
            if let Err(e) = writer.lock() {
                tracing::warn!("could not check for interrupted writes: {e}");
            }
        }
        Ok(Kb {
            root,
            config,
            db_path,
            allow_writes: options.allow_writes,
            reindex: Arc::new(Mutex::new(status::ReindexState::default())),
            writer,
            read_store: Mutex::new(None),
            model: Mutex::new(None),
            bridge_dir: folio_core::bridge::base_dir(),
            bridge_timeout: live::BRIDGE_TIMEOUT,
            embedding: folio_core::embed::runner::Embedding::new(options.embed),
        })
    }

    /// The root folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The index database file.
    pub fn db_path(&self) -> &Path {
        &self.db_path
    }

    /// Whether writes are allowed.
    pub fn allow_writes(&self) -> bool {
        self.allow_writes
    }

    fn require_writes(&self) -> ToolResult<()> {
        if self.allow_writes {
            Ok(())
        } else {
            Err(ToolError::new(
                ErrorCode::PermissionDenied,
                "this server is read-only; start it with `folio mcp --allow-writes` or set `[mcp] allow_writes = true` in ~/.config/folio/config.toml",
            ))
        }
    }

    /// Runs `f` on the kept-open read connection (opened on first use, reopened after an error).
    pub(crate) fn with_store<T>(&self, f: impl FnOnce(&Store) -> ToolResult<T>) -> ToolResult<T> {
        let mut guard = self.read_store.lock().map_err(ToolError::internal)?;
        if guard.is_none() {
            *guard = Some(Store::open(&self.db_path).map_err(ToolError::internal)?);
        }
        let res = f(guard.as_ref().expect("opened above"));
        if matches!(&res, Err(e) if e.code == ErrorCode::Internal) {
            *guard = None;
        }
        res
    }

    /// Resolves an existing Markdown document and reads it: from the editor's buffer
    /// when an editor has it open (unsaved changes included), else from disk.
    pub(crate) fn read_document(&self, path: &str) -> ToolResult<(PathBuf, String)> {
        let (abs, text, _) = self.read_live(path)?;
        Ok((abs, text))
    }

    /// [`Kb::read_document`], also returning the editor buffer the text came from.
    pub(crate) fn read_live(
        &self,
        path: &str,
    ) -> ToolResult<(PathBuf, String, Option<live::Buffer>)> {
        let abs = self.resolve_markdown(path)?;
        if let Some(buffer) = self.buffer(path)? {
            return Ok((abs, buffer.text.clone(), Some(buffer)));
        }
        let text = self.read_disk(path, &abs)?;
        Ok((abs, text, None))
    }

    /// Resolves an existing Markdown document (path policy, then the file must exist).
    pub(crate) fn resolve_markdown(&self, path: &str) -> ToolResult<PathBuf> {
        let abs = resolve_existing(&self.root, path)?;
        if !is_markdown(path) {
            return Err(ToolError::new(
                ErrorCode::UnsupportedFormat,
                format!("`{path}` is not a Markdown file (.md, .markdown)"),
            ));
        }
        Ok(abs)
    }

    /// The text of a document on disk.
    pub(crate) fn read_disk(&self, path: &str, abs: &Path) -> ToolResult<String> {
        let text =
            read_markdown(abs, self.config.index.max_file_size).map_err(|reason| match reason {
                SkipReason::TooLarge { .. } => ToolError::invalid(format!("`{path}`: {reason}")),
                SkipReason::Unreadable { .. } => ToolError::internal(format!("`{path}`: {reason}")),
                _ => ToolError::new(ErrorCode::UnsupportedFormat, format!("`{path}`: {reason}")),
            })?;
        Ok(text)
    }

    /// Checks that `path` names a Markdown file, syntax only.
    pub(crate) fn check_markdown_name(path: &str) -> ToolResult<()> {
        check_syntax(path)?;
        if !is_markdown(path) {
            return Err(ToolError::new(
                ErrorCode::UnsupportedFormat,
                format!("`{path}` is not a Markdown file (.md, .markdown)"),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
