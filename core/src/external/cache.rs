//! The successes of earlier external link checks, in the workspace's state folder
//! ([`crate::workspace::state_dir`], file [`CACHE_FILE`]): a URL that worked less than
//! `cache_max_age_s` ago is not asked again.
//!
//! Only successes are kept. A broken or rate-limited link is what the user acts on, so
//! it is asked again on every run: a link just repaired (or a server back up, or one that
//! stopped limiting) shows at once, and an outage never outlives the run that saw it.
//! Broken links are few, so this costs few requests.
//!
//! The file is JSON, `{"version": 1, "entries": {URL: {status, final_url, checked_at}}}`
//! with `checked_at` in seconds since the Unix epoch; it is rewritten whole (a temporary
//! file renamed over it), without the entries older than the maximum age. A file that
//! does not parse is set aside with a warning: the check then asks every URL.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The cache's file name in the state folder.
pub const CACHE_FILE: &str = "external-links.json";

/// The version of the file's layout.
const VERSION: u32 = 1;

/// One URL that worked.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Entry {
    /// The HTTP status of its last answer (2xx).
    pub status: u16,
    /// The URL that answered, after redirects.
    pub final_url: String,
    /// When it was checked, in seconds since the Unix epoch.
    pub checked_at: u64,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct File {
    version: u32,
    entries: BTreeMap<String, Entry>,
}

/// The cache of one workspace.
#[derive(Debug)]
pub struct Cache {
    path: PathBuf,
    max_age: Duration,
    entries: BTreeMap<String, Entry>,
}

/// Seconds since the Unix epoch at `t` (0 before it).
pub fn unix_secs(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Cache {
    /// The cache at `path`, whose entries count for `max_age`: empty when the file does
    /// not exist; with a warning (and empty) when it cannot be read or does not parse.
    pub fn load(path: &Path, max_age: Duration) -> (Cache, Option<String>) {
        let mut cache = Cache {
            path: path.to_path_buf(),
            max_age,
            entries: BTreeMap::new(),
        };
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (cache, None),
            Err(e) => {
                return (
                    cache,
                    Some(format!(
                        "cannot read the link cache {}: {e}; every link is checked",
                        path.display()
                    )),
                );
            }
        };
        match serde_json::from_str::<File>(&text) {
            Ok(file) if file.version == VERSION => {
                cache.entries = file.entries;
                (cache, None)
            }
            Ok(file) => (
                cache,
                Some(format!(
                    "the link cache {} has layout version {}, not {VERSION}; every link is checked and the cache is rewritten",
                    path.display(),
                    file.version
                )),
            ),
            Err(e) => (
                cache,
                Some(format!(
                    "the link cache {} does not parse ({e}); every link is checked and the cache is rewritten",
                    path.display()
                )),
            ),
        }
    }

    /// The entry of `url` when it is younger than the maximum age at `now` (one dated
    /// in the future, by a clock set back, is not).
    pub fn fresh(&self, url: &str, now: SystemTime) -> Option<&Entry> {
        let now = unix_secs(now);
        self.entries
            .get(url)
            .filter(|e| e.checked_at <= now && now - e.checked_at < self.max_age.as_secs())
    }

    /// Records that `url` answered `status` (a success) from `final_url` at `now`.
    pub fn record(&mut self, url: &str, status: u16, final_url: &str, now: SystemTime) {
        self.entries.insert(
            url.to_string(),
            Entry {
                status,
                final_url: final_url.to_string(),
                checked_at: unix_secs(now),
            },
        );
    }

    /// Forgets `url` (it no longer works).
    pub fn forget(&mut self, url: &str) {
        self.entries.remove(url);
    }

    /// Writes the entries still fresh at `now`, creating the state folder if needed.
    ///
    /// Errors: the folder or the file cannot be written, as a sentence naming the file.
    pub fn save(&mut self, now: SystemTime) -> Result<(), String> {
        let now_secs = unix_secs(now);
        let max_age = self.max_age.as_secs();
        self.entries
            .retain(|_, e| e.checked_at <= now_secs && now_secs - e.checked_at < max_age);
        let fail = |e: &dyn std::fmt::Display| {
            format!("cannot write the link cache {}: {e}", self.path.display())
        };
        let dir = self
            .path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        crate::workspace::prepare_state_dir(dir).map_err(|e| fail(&e))?;
        let file = File {
            version: VERSION,
            entries: std::mem::take(&mut self.entries),
        };
        let text = serde_json::to_string_pretty(&file).map_err(|e| fail(&e));
        self.entries = file.entries;
        let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| fail(&e))?;
        std::io::Write::write_all(&mut tmp, text?.as_bytes()).map_err(|e| fail(&e))?;
        tmp.persist(&self.path).map_err(|e| fail(&e.error))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_entries_are_kept_stale_and_future_ones_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".folio").join(CACHE_FILE);
        let day = Duration::from_secs(86_400);
        let (mut cache, warning) = Cache::load(&path, day);
        assert_eq!(warning, None);
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
        cache.record("https://a.org/", 200, "https://a.org/", t0);
        cache.record("https://b.org/", 204, "https://b.org/x", t0 - day);
        cache.save(t0).unwrap();
        assert!(dir.path().join(".folio/.gitignore").is_file());
        let (cache, warning) = Cache::load(&path, day);
        assert_eq!(warning, None);
        assert_eq!(
            cache.fresh("https://a.org/", t0 + Duration::from_secs(60)),
            Some(&Entry {
                status: 200,
                final_url: "https://a.org/".into(),
                checked_at: 1_000_000_000
            })
        );
        assert_eq!(cache.fresh("https://b.org/", t0), None, "written stale");
        assert_eq!(cache.fresh("https://a.org/", t0 + day), None, "aged");
        assert_eq!(
            cache.fresh("https://a.org/", t0 - Duration::from_secs(1)),
            None
        );
        std::fs::write(&path, "{not json").unwrap();
        let (cache, warning) = Cache::load(&path, day);
        assert!(warning.unwrap().contains("does not parse"));
        assert_eq!(cache.fresh("https://a.org/", t0), None);
    }
}
