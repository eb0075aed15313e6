//! The ledger: one small JSON file per event, never changed once written, at
//! `knowledge/ledger/<item id>/<milliseconds>-<hash>.json`. Two people adding events
//! add different files, so git merges their ledgers without conflicts; the tallies are
//! computed from the files ([`super::scores`]).

use serde::{Deserialize, Serialize};

use super::place::LEDGER_DIR;
use super::short_hash;

/// What happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EventKind {
    /// An agent contributed the item.
    Contribution,
    /// An agent gave a verdict on the item.
    Validation,
}

/// One ledger event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// `contribution` or `validation`.
    pub event: EventKind,
    /// The id of the skill or unit.
    pub item: String,
    /// `skill` or `unit`.
    pub item_kind: String,
    /// Who: the agent id.
    pub agent: String,
    /// The verdict (validations only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid: Option<bool>,
    /// Why (validations only, optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
    /// When, UTC, RFC 3339 with milliseconds (`2026-11-30T23:59:01.123Z`).
    pub time: String,
}

impl Event {
    /// The file's bytes: pretty JSON and a final newline.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut text = serde_json::to_string_pretty(self).expect("an event is JSON");
        text.push('\n');
        text.into_bytes()
    }

    /// Reads an event file.
    ///
    /// Errors: the bytes are not an event (message).
    pub fn from_bytes(bytes: &[u8]) -> Result<Event, String> {
        serde_json::from_slice(bytes).map_err(|e| format!("not a ledger event: {e}"))
    }
}

/// The relative path of an event written at `time_ms` with file bytes `bytes`:
/// `knowledge/ledger/<item>/<13-digit milliseconds>-<XxHash64 of the bytes>.json`.
pub fn event_path(event: &Event, time_ms: u64, bytes: &[u8]) -> String {
    format!(
        "{LEDGER_DIR}/{}/{time_ms:013}-{}.json",
        event.item,
        short_hash(bytes)
    )
}

/// True for a path of an event file under [`LEDGER_DIR`].
pub fn is_event_path(path: &str) -> bool {
    path.starts_with(LEDGER_DIR)
        && path[LEDGER_DIR.len()..].starts_with('/')
        && path.ends_with(".json")
}

/// `time_ms` (milliseconds since 1970 UTC) as RFC 3339: `YYYY-MM-DDTHH:MM:SS.mmmZ`; the
/// date and time are [`crate::config::tokens::utc_timestamp`]'s.
pub fn rfc3339(time_ms: u64) -> String {
    let seconds = crate::config::tokens::utc_timestamp(time_ms / 1000);
    format!("{}.{:03}Z", seconds.trim_end_matches('Z'), time_ms % 1000)
}
