//! The previous runs: the history file (`eval-last.json`), keyed by golden file and
//! mode, and a saved report read as a baseline.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::EvalError;
use super::report::EvalReport;

/// Previous runs, keyed by golden file and mode (see [`history_key`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EvalHistory {
    /// The last run per key.
    pub runs: BTreeMap<String, EvalReport>,
}

/// The key of a run in [`EvalHistory`]: the golden file's canonical path and the mode.
pub fn history_key(golden_path: &Path, mode: &str) -> String {
    let p = golden_path
        .canonicalize()
        .unwrap_or_else(|_| golden_path.to_path_buf());
    format!("{}#{mode}", p.display())
}

impl EvalHistory {
    /// Reads a history file; a missing file is an empty history.
    pub fn load(path: &Path) -> Result<EvalHistory, EvalError> {
        match std::fs::read_to_string(path) {
            Ok(text) => serde_json::from_str(&text)
                .map_err(|e| EvalError::InvalidHistory(path.display().to_string(), e.to_string())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(EvalHistory::default()),
            Err(e) => Err(EvalError::Io(format!("reading `{}`", path.display()), e)),
        }
    }

    /// Writes the history atomically (a temporary file renamed over it).
    pub fn save(&self, path: &Path) -> Result<(), EvalError> {
        let io = |e| EvalError::Io(format!("writing `{}`", path.display()), e);
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(io)?;
        let json = serde_json::to_string_pretty(self).map_err(|e| io(std::io::Error::other(e)))?;
        let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(io)?;
        std::io::Write::write_all(&mut tmp, json.as_bytes()).map_err(io)?;
        tmp.persist(path).map_err(|e| io(e.error))?;
        Ok(())
    }
}

/// Reads one report (a `folio eval --json` output or a history entry) as a baseline.
pub fn load_report(path: &Path) -> Result<EvalReport, EvalError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| EvalError::Io(format!("reading `{}`", path.display()), e))?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| EvalError::InvalidHistory(path.display().to_string(), e.to_string()))?;
    // `folio eval --json` prints `{"report": …, "diff": …}`; a bare report is accepted too.
    let report = value.get("report").cloned().unwrap_or(value);
    serde_json::from_value(report)
        .map_err(|e| EvalError::InvalidHistory(path.display().to_string(), e.to_string()))
}
