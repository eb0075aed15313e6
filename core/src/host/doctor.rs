//! `folio doctor`: what the index leaves out of a root and why, after bringing it up to
//! date: files not indexed (with the reason), files whose format has a parser that
//! `[parsers].enabled` leaves off, and notes whose frontmatter did not parse.

use schemars::JsonSchema;
use serde::Serialize;

use crate::formats::Format;
use crate::workspace::Skipped;

use super::{Host, HostError, HostResult};

/// Examples of paths kept per extension in [`NotEnabled::examples`].
const EXAMPLES: usize = 5;

/// What the index leaves out of the root.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct DoctorReport {
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

impl DoctorReport {
    /// True when nothing is left out that the settings mean to read: no file skipped, no
    /// frontmatter unparsed, no document without text. Files whose parser is off are left
    /// out by the settings (source code is, by default), so they do not count.
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
    /// Errors: as [`Host::index_now`]; `INTERNAL` when the root cannot be walked.
    pub fn doctor(&self) -> HostResult<DoctorReport> {
        let summary = self.index_now(false, None)?;
        let scan = crate::workspace::scan(&self.root, &self.config).map_err(HostError::internal)?;
        let mut off: std::collections::BTreeMap<String, Vec<String>> = Default::default();
        for path in &scan.other {
            let parser_off =
                Format::of_path(path).is_some() && self.config.parsers.format_of(path).is_none();
            if parser_off && self.root.join(path).is_file() {
                let ext = path
                    .rsplit('.')
                    .next()
                    .unwrap_or_default()
                    .to_ascii_lowercase();
                off.entry(ext).or_default().push(path.clone());
            }
        }
        Ok(DoctorReport {
            skipped: summary.skipped,
            not_enabled: off
                .into_iter()
                .map(|(extension, paths)| NotEnabled {
                    extension,
                    files: paths.len(),
                    examples: paths.into_iter().take(EXAMPLES).collect(),
                })
                .collect(),
            frontmatter_unparsed: summary
                .frontmatter_unparsed
                .into_iter()
                .map(|(path, error)| FrontmatterUnparsed { path, error })
                .collect(),
            without_text: self
                .with_store(|store| store.documents_without_text().map_err(HostError::internal))?,
        })
    }
}
