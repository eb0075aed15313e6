//! `workspace/executeCommand`: the commands the server runs itself — creating a missing
//! note the `folio.createNote` quick fix names, and opening today's daily note
//! (`folio.today`, created from its template when missing: core `features::notes`).
//! Each answers the URI of the note, which the server then asks the client to show.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use folio_core::features::notes::{daily_note, local_now, parse_local};
use folio_core::workspace::is_markdown;
use folio_core::write::{WriteError, Writer};
use serde_json::Value;
use tower_lsp_server::ls_types::{ExecuteCommandParams, Uri};

use crate::convert;
use crate::guard::{InvalidParams, RequestFailed};
use crate::session::Session;

/// Creates a note: arguments `[uri, text]` (the quick fix's).
pub const CREATE_NOTE: &str = "folio.createNote";
/// Opens today's note: arguments none, or `[{"uri": a document of the root, "now":
/// "YYYY-MM-DDTHH:MM"}]` (each optional: the first workspace folder, the local time).
pub const TODAY: &str = "folio.today";

/// The commands the server executes (`executeCommandProvider`).
pub fn commands() -> Vec<String> {
    vec![CREATE_NOTE.to_string(), TODAY.to_string()]
}

/// A note a command leads to.
pub struct Shown {
    /// Its absolute path.
    pub abs: PathBuf,
    /// Its URI.
    pub uri: Uri,
    /// True when the command created it.
    pub created: bool,
}

/// Runs a command; `None` for a command the server does not know.
///
/// Errors: bad arguments ([`InvalidParams`]: a missing or malformed argument, a URI that
/// is not one), a note that exists already (`folio.createNote`), a path outside the
/// workspace, the daily note's settings or template, a failed write.
pub fn execute(s: &Session, params: &ExecuteCommandParams) -> Result<Option<Shown>> {
    let args = &params.arguments;
    match params.command.as_str() {
        CREATE_NOTE => {
            let (Some(uri), Some(text)) = (
                args.first().and_then(Value::as_str),
                args.get(1).and_then(Value::as_str),
            ) else {
                bail!(InvalidParams(format!(
                    "{CREATE_NOTE} takes [uri, text] (two strings)"
                )));
            };
            let uri: Uri = uri
                .parse()
                .map_err(|e| InvalidParams(format!("the note's URI `{uri}`: {e}")))?;
            create(s, &uri, text, true).map(Some)
        }
        TODAY => {
            let options = args.first().cloned().unwrap_or(Value::Null);
            if !(options.is_null() || options.is_object()) {
                bail!(InvalidParams(format!(
                    "{TODAY} takes no arguments or [{{\"uri\": …, \"now\": …}}]"
                )));
            }
            let now = match options.get("now").and_then(Value::as_str) {
                Some(text) => parse_local(text).ok_or_else(|| {
                    InvalidParams(format!("`now` must be YYYY-MM-DDTHH:MM, not `{text}`"))
                })?,
                None => local_now(),
            };
            let root = match options.get("uri").and_then(Value::as_str) {
                Some(uri) => {
                    let uri: Uri = uri
                        .parse()
                        .map_err(|e| InvalidParams(format!("the document's URI `{uri}`: {e}")))?;
                    s.locate_uri(&uri)
                        .context("that document is not in a workspace folder")?
                        .root
                }
                None if !s.roots.is_empty() => 0,
                None => bail!("no workspace folder is open"),
            };
            let note = daily_note(s.roots[root].ws(), now).map_err(RequestFailed)?;
            let uri = s.uri(root, &note.path).context("the note has no URI")?;
            create(s, &uri, &note.text, false).map(Some)
        }
        _ => Ok(None),
    }
}

/// Creates the note at `uri` with `text` (never over a file, under the root's write
/// lock); an existing one is an error when `must_be_new`, else shown as it is.
fn create(s: &Session, uri: &Uri, text: &str, must_be_new: bool) -> Result<Shown> {
    let local = ["file:///", "file://localhost/"]
        .iter()
        .any(|p| uri.as_str().starts_with(p));
    if !local {
        bail!(RequestFailed(format!(
            "`{}` is not a file on this machine",
            uri.as_str()
        )));
    }
    let abs = convert::uri_to_path(uri).context("not a file URI")?;
    let doc = s.locate(&abs).ok_or_else(|| {
        RequestFailed("the note would be outside every workspace folder".to_owned())
    })?;
    if !is_markdown(&doc.path) {
        bail!(RequestFailed(format!(
            "`{}` is not a Markdown note (.md, .markdown)",
            doc.path
        )));
    }
    let writer = Writer::new(&s.roots[doc.root].folder);
    let guard = writer.lock().map_err(|e| anyhow::anyhow!("{e}"))?;
    let created = match guard.create(&doc.path, text.as_bytes()) {
        Ok(()) => true,
        Err(WriteError::AlreadyExists { .. }) if !must_be_new => false,
        Err(e @ WriteError::AlreadyExists { .. }) => {
            bail!(RequestFailed(format!("cannot create `{}`: {e}", doc.path)))
        }
        Err(e) => bail!("cannot create `{}`: {e}", doc.path),
    };
    Ok(Shown {
        abs,
        uri: uri.clone(),
        created,
    })
}
