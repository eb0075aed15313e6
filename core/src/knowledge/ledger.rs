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

/// `time_ms` (milliseconds since 1970 UTC) as RFC 3339: `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub fn rfc3339(time_ms: u64) -> String {
    let secs = time_ms / 1000;
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        time_ms % 1000
    )
}
