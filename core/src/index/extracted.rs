//! The store records of a document other than Markdown: its bytes read beneath the root,
//! its text extracted by its format's parser ([`crate::formats`]), cut into chunks that
//! carry their lines, page and definition.

use std::path::Path;

use crate::config::Config;
use crate::extract::{chunk_sections, extract};
use crate::formats::Format;
use crate::pointer::{hash_bytes, hex};
use crate::store::{ChunkRecord, DocRecord};
use crate::workspace::SkipReason;

/// The bytes of the document at KB-relative `path`, read beneath `root` (never through
/// a symbolic link) under its format's size cap.
///
/// Errors: the [`SkipReason`] an index summary lists.
pub fn read_bytes(
    root: &Path,
    path: &str,
    format: Format,
    config: &Config,
) -> Result<Vec<u8>, SkipReason> {
    let limits = config.parsers.limits(&config.index);
    let cap = if format.is_binary() {
        limits.max_binary_size
    } else {
        limits.max_text_size
    };
    crate::workspace::beneath::read(root, path, cap).map_err(|e| {
        if e.kind() == std::io::ErrorKind::InvalidData {
            let size = std::fs::metadata(root.join(path)).map_or(cap + 1, |m| m.len());
            SkipReason::TooLarge { size, cap }
        } else {
            SkipReason::Unreadable {
                message: e.to_string(),
            }
        }
    })
}

/// The `meta` key of the budgets the recorded extraction failures (`unextracted`) were
/// found under ([`limits_key`]): under other budgets they are tried again.
pub const LIMITS_META: &str = "extract_limits";

/// The budgets of `config` as recorded under [`LIMITS_META`].
pub fn limits_key(config: &Config) -> String {
    let l = config.parsers.limits(&config.index);
    format!(
        "text {} binary {} inflated {} ms {}",
        l.max_text_size,
        l.max_binary_size,
        l.max_decompressed_size,
        l.time_budget.as_millis()
    )
}

/// The source hash of a document other than Markdown: XxHash64 of its bytes.
pub fn source_hash(bytes: &[u8]) -> String {
    hex(hash_bytes(bytes))
}

/// The records of the document at `path` of `format` whose bytes are `bytes`: its text
/// extracted within `config`'s budgets, cut under its chunk budget.
///
/// Errors: [`SkipReason::NotExtracted`] with the parser's reason.
pub fn records(
    path: &str,
    format: Format,
    bytes: Vec<u8>,
    mtime_ms: i64,
    config: &Config,
) -> Result<(DocRecord, Vec<ChunkRecord>), SkipReason> {
    let size = bytes.len() as u64;
    let source_hash = source_hash(&bytes);
    let limits = config.parsers.limits(&config.index);
    let extracted = extract(format, bytes, &limits).map_err(|e| SkipReason::NotExtracted {
        message: e.to_string(),
    })?;
    let (category, topic) = super::path_category_topic(path);
    let file_name = path.rsplit('/').next().unwrap_or(path).to_string();
    let doc = DocRecord {
        path: path.to_string(),
        source_hash,
        size,
        mtime_ms,
        title: Some(extracted.title.clone().unwrap_or(file_name)),
        category,
        topic,
        tags: Vec::new(),
        date: None,
        frontmatter_json: None,
        quality: 1.0,
        format: Some(format.name()),
        frontmatter_error: None,
    };
    let chunks = chunk_sections(&extracted, config.index.chunk_budget());
    Ok((doc, chunks))
}
