//! What the index leaves out of a root and why: files not indexed (with the reason),
//! files whose format has a parser that `[parsers].enabled` leaves off, notes whose
//! frontmatter did not parse, documents with no text, and indexed documents a read does
//! not return whole. `folio doctor` brings the index up to date first; `kb_status` and
//! `folio/status` give the same report as of the last pass.

use schemars::JsonSchema;
use serde::Serialize;

use crate::formats::Format;
use crate::workspace::Skipped;

use super::resources::MAX_RESOURCE_BYTES;
use super::{Host, HostError, HostResult};

/// Examples of paths kept per extension in [`NotEnabled::examples`].
const EXAMPLES: usize = 5;

/// What the index leaves out of the root.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct LeftOut {
    /// Documents not indexed, each with its reason (`reason`: `too-large`, `binary`,
    /// `symlink`, `too-complex`, `unreadable`, `not-extracted`; `message` or the
    /// numbers for some), sorted by path.
    #[schemars(with = "Vec<serde_json::Value>")]
    pub skipped: Vec<Skipped>,
    /// Files of a format folio can read whose extension `[parsers].enabled` does not
    /// list, by extension: they are not indexed until it does.
    pub not_enabled: Vec<NotEnabled>,
    /// Indexed notes whose frontmatter did not parse: their title, tags, aliases and
    /// date are not read, so filters miss them.
    pub frontmatter_unparsed: Vec<FrontmatterUnparsed>,
    /// Documents other than Markdown indexed with no text in them (a scanned PDF holds
    /// only pictures of its pages, and folio does no OCR), sorted by path.
    pub without_text: Vec<String>,
    /// Indexed documents (search finds them) that a read does not return whole, each
    /// with its reason, sorted by path.
    pub withheld: Vec<Withheld>,
}

/// An indexed document that a read does not return whole.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Withheld {
    /// KB-relative path.
    pub path: String,
    /// Why.
    pub reason: WithheldReason,
}

/// Why an indexed document is not returned whole by a read. The names are those of the
/// MCP knowledge-base servers folio's tools follow; a third reason there,
/// `binary-uris-withheld` (a decompression budget raised above the one reads use), does
/// not arise in folio: reads extract under the same budgets as the index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum WithheldReason {
    /// Its format's parser is no longer in `[parsers].enabled`: the index keeps its rows
    /// until the next pass removes them, and `kb_read` and `kb://doc/` refuse it. A pass
    /// (`folio index`, `kb_reindex`, the watcher's next change) clears it.
    ExtensionNotRegistered,
    /// A Markdown or text document over [`MAX_RESOURCE_BYTES`] (4 MiB): `kb://doc/`
    /// refuses it and `kb_read` returns it a page at a time. (Binary documents are
    /// judged by their extracted text, when read.)
    LargerThanAReadReturns,
}

/// Files of one extension whose parser is off.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct NotEnabled {
    /// The extension, lowercase, without the dot.
    pub extension: String,
    /// How many files have it.
    pub files: usize,
    /// The first few of them (sorted), KB-relative.
    pub examples: Vec<String>,
}

/// A note whose frontmatter did not parse.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct FrontmatterUnparsed {
    /// KB-relative path.
    pub path: String,
    /// The YAML (or TOML) parser's message.
    pub error: String,
}

impl LeftOut {
    /// True when nothing is left out that the settings mean to read: no file skipped, no
    /// frontmatter unparsed, no document without text. Files whose parser is off are left
    /// out by the settings (source code is, by default), and withheld documents are still
    /// found and read in pages, so neither counts.
    pub fn is_clean(&self) -> bool {
        self.skipped.is_empty()
            && self.frontmatter_unparsed.is_empty()
            && self.without_text.is_empty()
    }
}

impl Host {
    /// Brings the index up to date with a pass over the whole root (as `folio index`
    /// without embedding), then reports what it leaves out.
    ///
    /// Errors: as [`Host::index_now`]; `INTERNAL` when the index cannot be read.
    pub fn doctor(&self) -> HostResult<LeftOut> {
        self.index_now(false, None)?;
        self.left_out()
    }

    /// What the index leaves out, as of the last pass that completed since this host
    /// opened (`skipped` and `not_enabled` are empty before one has); the rest is read
    /// from the index.
    ///
    /// Errors: `INTERNAL` when the index cannot be read.
    pub fn left_out(&self) -> HostResult<LeftOut> {
        let (skipped, not_enabled) = self
            .reindex
            .lock()
            .map_err(HostError::internal)?
            .walked_out
            .clone()
            .unwrap_or_default();
        let mut off: std::collections::BTreeMap<String, Vec<String>> = Default::default();
        for path in not_enabled {
            let ext = path.rsplit('.').next().unwrap_or_default();
            off.entry(ext.to_ascii_lowercase()).or_default().push(path);
        }
        let (frontmatter_unparsed, without_text, candidates) = if self.db_path.exists() {
            self.with_store(|store| {
                let internal = HostError::internal;
                Ok((
                    store.frontmatter_errors().map_err(internal)?,
                    store.documents_without_text().map_err(internal)?,
                    store
                        .documents_to_withhold(MAX_RESOURCE_BYTES as u64)
                        .map_err(internal)?,
                ))
            })?
        } else {
            Default::default()
        };
        Ok(LeftOut {
            skipped,
            not_enabled: off
                .into_iter()
                .map(|(extension, paths)| NotEnabled {
                    extension,
                    files: paths.len(),
                    examples: paths.into_iter().take(EXAMPLES).collect(),
                })
                .collect(),
            frontmatter_unparsed: frontmatter_unparsed
                .into_iter()
                .map(|(path, error)| FrontmatterUnparsed { path, error })
                .collect(),
            without_text,
            withheld: candidates
                .into_iter()
                .filter_map(|(path, format, size)| {
                    let reason = self.withheld_reason(&path, format.as_deref(), size)?;
                    Some(Withheld { path, reason })
                })
                .collect(),
        })
    }

    /// Why a read does not return the indexed document at `path` (of the recorded
    /// `format`, `None` for Markdown, and `size` bytes) whole; `None` when it does.
    fn withheld_reason(
        &self,
        path: &str,
        format: Option<&str>,
        size: u64,
    ) -> Option<WithheldReason> {
        let format = match format {
            None => None,
            Some(name) => {
                if self.extracted_format(path).is_none() {
                    return Some(WithheldReason::ExtensionNotRegistered);
                }
                Format::from_name(name)
            }
        };
        (size > MAX_RESOURCE_BYTES as u64 && !format.is_some_and(Format::is_binary))
            .then_some(WithheldReason::LargerThanAReadReturns)
    }
}
