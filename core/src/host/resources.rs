//! The `kb://` resources an MCP server offers: `kb://topic/<prefix>` (listed),
//! `kb://doc/<path>` (a template) and `kb://file/<path>` (the URI of
//! `kb_download_file`'s embedded resource).
//!
//! Both come from the index: a document is served only if it is indexed, and then
//! through the same path policy as kb_read. Paths in URIs are percent-encoded with `/`
//! kept.

use std::collections::BTreeMap;

use percent_encoding::percent_decode_str;

use super::{ErrorCode, Host, HostError, HostResult, doc_uri};

/// Largest document text a `kb://doc/` read returns (4 MiB of UTF-8): a larger one is
/// refused, and `kb_read` pages through it.
pub const MAX_RESOURCE_BYTES: usize = 4 * 1024 * 1024;

/// A topic group: the root, a category or a topic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopicGroup {
    /// `""` (root), `cat` or `cat/topic`.
    pub prefix: String,
    /// Indexed documents in the group.
    pub count: usize,
}

impl Host {
    /// Every topic group of the index (`resources/list`), sorted by prefix.
    ///
    /// Errors: as [`Host::list_topics`].
    pub fn topic_groups(&self) -> HostResult<Vec<TopicGroup>> {
        topic_groups(self)
    }

    /// Reads a `kb://` resource: `kb://doc/<path>` as the document's Markdown or, for
    /// another format, its extracted text; `kb://topic/<prefix>` as a Markdown list of
    /// the group's documents; `kb://file/<path>` as the file's bytes (what
    /// `kb_download_file` returns).
    ///
    /// Errors: `NOT_FOUND` (not indexed, no such group, unknown scheme), `INVALID_PATH`,
    /// `INVALID_ARGUMENT` (bad percent-encoding; a text over [`MAX_RESOURCE_BYTES`]),
    /// `UNSUPPORTED_FORMAT` (text not extracted), and those of [`Host::download`].
    pub fn read_resource(&self, uri: &str) -> HostResult<Contents> {
        read(self, uri)
    }
}

fn topic_groups(kb: &Host) -> HostResult<Vec<TopicGroup>> {
    let topics = kb.list_topics()?;
    let mut groups: BTreeMap<String, usize> = BTreeMap::new();
    groups.insert(String::new(), topics.total_documents);
    for t in topics.topics {
        match t.kind.as_str() {
            "category" => {
                groups.insert(t.category, t.document_count);
            }
            "topic" => {
                if let Some(topic) = t.topic {
                    groups.insert(topic, t.document_count);
                }
            }
            _ => {}
        }
    }
    Ok(groups
        .into_iter()
        .map(|(prefix, count)| TopicGroup { prefix, count })
        .collect())
}

fn decode(s: &str) -> HostResult<String> {
    percent_decode_str(s)
        .decode_utf8()
        .map(|c| c.into_owned())
        .map_err(|_| HostError::invalid("the URI is not valid percent-encoded UTF-8"))
}

/// What a `kb://` resource holds.
#[derive(Debug)]
pub enum Contents {
    /// Markdown text (`kb://doc/…`, `kb://topic/…`).
    Markdown(String),
    /// The extracted text of a document other than Markdown (`kb://doc/…` of a PDF, an
    /// Office file, a spreadsheet, a text or source file): `text/plain`.
    Text(String),
    /// A file's bytes and MIME type (`kb://file/…`, the URI of `kb_download_file`'s
    /// embedded resource).
    Blob(Vec<u8>, String),
}

fn read(kb: &Host, uri: &str) -> HostResult<Contents> {
    if let Some(rest) = uri.strip_prefix("kb://file/") {
        let path = decode(rest)?;
        let d = kb.download(&super::files::DownloadArgs { path })?;
        return Ok(Contents::Blob(d.data, d.meta.mime_type));
    }
    if let Some(rest) = uri.strip_prefix("kb://doc/") {
        let path = decode(rest)?;
        if let Some(format) = kb.extracted_format(&path) {
            check_indexed(kb, &path)?;
            let text = kb.read_extracted(&path, format)?.extracted.text;
            return within_resource_size(&path, text).map(Contents::Text);
        }
    }
    read_markdown(kb, uri).map(Contents::Markdown)
}

/// Refuses (`NOT_FOUND`) a path the index does not hold.
fn check_indexed(kb: &Host, path: &str) -> HostResult<()> {
    crate::path_policy::check_syntax(path)?;
    let indexed = kb.with_store(|store| store.documents().map_err(HostError::internal))?;
    if !indexed.contains_key(path) {
        return Err(HostError::new(
            ErrorCode::NotFound,
            format!("`{path}` is not an indexed document"),
        ));
    }
    Ok(())
}

/// `text`, unless it is over [`MAX_RESOURCE_BYTES`] (`INVALID_ARGUMENT`: page through it
/// with kb_read).
fn within_resource_size(path: &str, text: String) -> HostResult<String> {
    if text.len() > MAX_RESOURCE_BYTES {
        return Err(HostError::invalid(format!(
            "`{path}` is {} bytes; resources return at most 4 MiB, page through it with kb_read",
            text.len()
        )));
    }
    Ok(text)
}

/// Reads a `kb://doc/` or `kb://topic/` resource as Markdown text.
fn read_markdown(kb: &Host, uri: &str) -> HostResult<String> {
    if let Some(rest) = uri.strip_prefix("kb://doc/") {
        let path = decode(rest)?;
        check_indexed(kb, &path)?;
        let (_, text) = kb.read_document(&path)?;
        return within_resource_size(&path, text);
    }
    if let Some(rest) = uri
        .strip_prefix("kb://topic/")
        .or_else(|| (uri == "kb://topic").then_some(""))
    {
        let prefix = decode(rest.trim_end_matches('/'))?;
        let catalog = kb.with_store(|store| store.catalog().map_err(HostError::internal))?;
        let docs: Vec<_> = catalog
            .iter()
            .filter(|d| match prefix.as_str() {
                "" => true,
                p if p.contains('/') => d.topic.as_deref() == Some(p),
                p => d.category.as_deref() == Some(p),
            })
            .collect();
        if docs.is_empty() {
            return Err(HostError::new(
                ErrorCode::NotFound,
                format!("no indexed documents in topic group `{prefix}`"),
            ));
        }
        let title = if prefix.is_empty() {
            "All documents".to_string()
        } else {
            format!("Documents in `{prefix}`")
        };
        let mut out = format!("# {title}\n\n");
        for d in docs {
            let name = d.title.clone().unwrap_or_else(|| d.path.clone());
            out.push_str(&format!(
                "- [{}]({}) — `{}`\n",
                name.replace(['[', ']'], ""),
                doc_uri(&d.path),
                d.path
            ));
        }
        return Ok(out);
    }
    Err(HostError::new(
        ErrorCode::NotFound,
        format!(
            "unknown resource `{uri}`; folio serves kb://doc/<path>, kb://topic/<prefix> and kb://file/<path>"
        ),
    ))
}
