//! KnowledgePulse on folio: agent skills (`SKILL.md` files) and knowledge units (JSON
//! documents kept as Markdown files), an append-only ledger of contributions and
//! verdicts, and the scores derived from them. docs/knowledgepulse.md is the user's view.
//!
//! This module holds the model only: it parses, validates, renders and scores text and
//! knows nothing of the index, the writer or any protocol. The host (`host::knowledge`)
//! reads and writes the files and runs the searches.
//!
//! - [`skill`]: a `SKILL.md`: frontmatter rules, ids, its structural score.
//! - [`unit`](mod@unit): a knowledge unit: the shipped JSON Schema, validation, the Markdown file
//!   it lives in, its structural score.
//! - [`ledger`]: one JSON file per event (contribution or verdict).
//! - [`scores`]: quality and reputation from the ledger, with their formulas.
//! - [`place`]: where each visibility keeps its files.

pub mod ledger;
pub mod place;
pub mod scores;
pub mod skill;
pub mod unit;

/// The most bytes a `SKILL.md` or a unit may hold: 256 KiB.
pub const MAX_ITEM_BYTES: usize = 256 * 1024;

/// Why a skill, a unit or an id was refused. Nothing was written.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Rejection {
    /// The content breaks a rule (missing frontmatter, a schema violation, too large…).
    #[error("{0}")]
    Invalid(String),
    /// An id that cannot name a file in its folder (it would escape it, or holds
    /// characters a file name must not).
    #[error("{0}")]
    BadId(String),
}

/// Checks an id given by a contributor: 1–128 characters of `A–Z a–z 0–9 . _ -`,
/// starting with a letter or digit. Such an id can only name a file inside its folder.
///
/// Errors: [`Rejection::BadId`] saying why.
pub fn check_id(id: &str) -> Result<(), Rejection> {
    let ok_chars = id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    let starts_well = id.chars().next().is_some_and(|c| c.is_ascii_alphanumeric());
    if id.is_empty() || id.len() > 128 || !ok_chars || !starts_well || id.contains("..") {
        return Err(Rejection::BadId(format!(
            "id `{id}` cannot name a file in its folder: use 1-128 of A-Z a-z 0-9 . _ -, starting with a letter or digit, without `..`"
        )));
    }
    Ok(())
}

/// Where an item lives: `private` (the user's data folder for this root, never the
/// knowledge base), `org` (the knowledge base, shared by git) or `network` (a shared
/// registry, not configured in this build).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Visibility {
    /// The user's data folder for this root.
    Private,
    /// The knowledge base.
    Org,
    /// A shared registry.
    Network,
}

/// 16 lowercase hex digits of the XxHash64 of `bytes` (the hash of pointers).
pub(crate) fn short_hash(bytes: &[u8]) -> String {
    crate::pointer::hex(crate::pointer::hash_bytes(bytes))
}

#[cfg(test)]
mod tests;
