//! The one file watcher of every long-running front end (`folio mcp` over stdio and HTTP,
//! `folio lsp` for clients that cannot watch files): it tells its owner which paths
//! other programs created, changed, renamed or deleted under the folders it watches.
//!
//! Each folder is followed the way its `[index].watch` says ([`WatchMode`]):
//! - **native** (`auto`): the system's notifications through `notify` and
//!   `notify-debouncer-full`, debounced for [`DEBOUNCE`], so a burst of saves or a
//!   `git checkout` of thousands of files arrives as a few batches;
//! - **poll** (`poll`, or `auto` where notifications cannot work: a network file system
//!   such as NFS, SMB or 9P, whose notifications miss other machines' changes, or the
//!   system's limit on watches reached): a walk of the folder every
//!   `[index].poll_interval_ms` comparing each file's size and times with the walk
//!   before;
//! - **off**: nothing.
//!
//! Reads are not changes: access events are dropped, so the owner's own reads never come
//! back as events. Paths inside `.folio/` (folio's own state: the index, locks, the
//! journal) and `.git/` are dropped too; ignore files (`.gitignore`, `.folioignore`,
//! `[index].exclude`) are the owner's to apply, since a change to an ignore file changes
//! what they leave out (the polling walk applies them already).

mod native;
mod network;
mod poll;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use schemars::JsonSchema;
use serde::Serialize;

use crate::config::{Config, WatchMode};

/// How long the native watcher waits for more events on a path before reporting a batch.
pub const DEBOUNCE: Duration = Duration::from_millis(150);

/// One batch of changes: each path (absolute) with whether it exists now, and the folders
/// whose events were lost (the system's event queue overflowed), which the owner must
/// compare with the disk as a whole.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Batch {
    /// Changed paths, each once, with whether the path exists after the change.
    pub changes: Vec<(PathBuf, bool)>,
    /// Watched folders whose events were lost: everything under them may have changed.
    pub rescan: Vec<PathBuf>,
}

impl Batch {
    /// True when the batch holds nothing.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty() && self.rescan.is_empty()
    }
}

/// Where the batches go; called on the watcher's own thread, so it must not block long.
pub type Sink = Arc<dyn Fn(Batch) + Send + Sync>;

/// What the watcher does, for `kb_status` and `folio status`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct WatchStatus {
    /// `[index].watch` as configured: `auto`, `poll` or `off`.
    pub configured: String,
    /// What runs: `native` (the system's file notifications), `poll` (a periodic scan),
    /// `off`, `starting` while the first watch is being set up, or `lost` when a watched
    /// folder is gone (deleted or moved away), or was deleted and made again under a
    /// native watch (which follows the old folder); `reason` says which.
    pub mode: String,
    /// Why `auto` polls (a network file system, the watch limit reached, notifications
    /// unavailable), or why nothing watches.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Milliseconds between two scans, when polling: `[index].poll_interval_ms`, or a
    /// hundred times the last scan's CPU time when that is longer (polling takes at most
    /// 1% of a core).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
    /// Changed paths reported since the watch started.
    pub changes_seen: u64,
    /// When the last change was seen (milliseconds since the Unix epoch).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_change_ms: Option<u64>,
    /// The last changed path seen (absolute).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_change_path: Option<String>,
}

/// How one folder is followed.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Following {
    /// The system's notifications, set up on the folder of this identity ([`identity`]):
    /// a native watch follows that folder, not its path.
    Native(Option<FolderId>),
    Poll {
        interval_ms: u64,
        reason: Option<String>,
    },
    Off,
}

#[derive(Default)]
struct Counters {
    folders: Vec<(PathBuf, Following)>,
    /// `[index].watch` of the folder watched last.
    configured: Option<WatchMode>,
    changes_seen: u64,
    last_change_ms: Option<u64>,
    last_change_path: Option<String>,
}

/// What the native and polling backends share: the owner's sink and the counters.
pub(crate) struct Shared {
    sink: Sink,
    counters: Mutex<Counters>,
}

impl Shared {
    /// Records the interval a polled folder is scanned at now (its configured interval,
    /// stretched when its walk is slow).
    fn set_poll_interval(&self, folder: &Path, interval: std::time::Duration) {
        let ms = interval.as_millis() as u64;
        let mut c = self.counters.lock().unwrap_or_else(PoisonError::into_inner);
        for (f, following) in c.folders.iter_mut() {
            if f == folder
                && let Following::Poll { interval_ms, .. } = following
            {
                *interval_ms = ms;
            }
        }
    }

    /// Counts `batch` and hands it to the owner.
    fn deliver(&self, batch: Batch) {
        if batch.is_empty() {
            return;
        }
        {
            let mut c = self.counters.lock().unwrap_or_else(PoisonError::into_inner);
            c.changes_seen += (batch.changes.len() + batch.rescan.len()) as u64;
            c.last_change_ms = Some(now_ms());
            c.last_change_path = batch
                .changes
                .last()
                .map(|(p, _)| p.clone())
                .or_else(|| batch.rescan.last().cloned())
                .map(|p| p.display().to_string());
        }
        (self.sink)(batch);
    }
}

/// The file watcher over any number of folders.
pub struct FolderWatcher {
    shared: Arc<Shared>,
    native: Mutex<Option<native::Native>>,
    poller: Mutex<Option<poll::Poller>>,
    /// Tests: the system's refusal of a native watch (the watch limit), to check the
    /// fallback on a machine whose limit is far away.
    #[cfg(test)]
    native_refusal: Mutex<Option<String>>,
}

impl std::fmt::Debug for FolderWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FolderWatcher")
            .field("status", &self.status())
            .finish()
    }
}

impl FolderWatcher {
    /// A watcher over no folder yet, reporting to `sink`.
    pub fn new(sink: Sink) -> FolderWatcher {
        FolderWatcher {
            shared: Arc::new(Shared {
                sink,
                counters: Mutex::new(Counters::default()),
            }),
            native: Mutex::new(None),
            poller: Mutex::new(None),
            #[cfg(test)]
            native_refusal: Mutex::new(None),
        }
    }

    /// Starts following `folder` (absolute) as `config`'s `[index].watch` says; returns
    /// how it is followed. Blocks while the watch is set up (the native watcher walks
    /// every folder to watch it; polling takes its first snapshot), so call it off async
    /// threads. Never fails: where notifications cannot be set up, `auto` polls and says
    /// why ([`FolderWatcher::status`]).
    pub fn watch(&self, folder: &Path, config: &Config) -> WatchStatus {
        let interval_ms = config.index.poll_interval_ms;
        let following = match config.index.watch {
            WatchMode::Off => Following::Off,
            WatchMode::Poll => self.poll(folder, config, interval_ms, None),
            WatchMode::Auto => match network::remote_file_system(folder) {
                Some(kind) => self.poll(
                    folder,
                    config,
                    interval_ms,
                    Some(format!(
                        "{} is on a network file system ({kind}), whose notifications miss changes made on other machines",
                        folder.display()
                    )),
                ),
                None => match self.native_watch(folder) {
                    Ok(()) => Following::Native(identity(folder)),
                    Err(why) => self.poll(folder, config, interval_ms, Some(why)),
                },
            },
        };
        if let Following::Poll {
            reason: Some(why), ..
        } = &following
        {
            tracing::warn!("watching by periodic scan every {interval_ms} ms: {why}");
        }
        {
            let mut c = self.counters();
            c.folders.retain(|(f, _)| f != folder);
            c.folders.push((folder.to_path_buf(), following));
            c.configured = Some(config.index.watch);
        }
        self.status()
    }

    fn native_watch(&self, folder: &Path) -> Result<(), String> {
        #[cfg(test)]
        if let Some(why) = self.native_refusal.lock().expect("test lock").clone() {
            return Err(why);
        }
        let mut native = self.native.lock().unwrap_or_else(PoisonError::into_inner);
        if native.is_none() {
            *native = Some(native::Native::start(Arc::clone(&self.shared))?);
        }
        native.as_mut().expect("started above").watch(folder)
    }

    fn poll(
        &self,
        folder: &Path,
        config: &Config,
        interval_ms: u64,
        reason: Option<String>,
    ) -> Following {
        let mut poller = self.poller.lock().unwrap_or_else(PoisonError::into_inner);
        let poller = poller.get_or_insert_with(|| poll::Poller::start(Arc::clone(&self.shared)));
        poller.add(folder, config);
        Following::Poll {
            interval_ms,
            reason,
        }
    }

    fn counters(&self) -> std::sync::MutexGuard<'_, Counters> {
        self.shared
            .counters
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// What the watcher does now: `starting` before any folder is watched, `lost` when a
    /// watched folder is gone, else `poll` when any folder is polled (with the first
    /// reason), else `native` when any folder is watched natively, else `off`.
    pub fn status(&self) -> WatchStatus {
        let c = self.counters();
        let polled = c.folders.iter().find_map(|(_, f)| match f {
            Following::Poll {
                interval_ms,
                reason,
            } => Some((*interval_ms, reason.clone())),
            _ => None,
        });
        let native = c
            .folders
            .iter()
            .any(|(_, f)| matches!(f, Following::Native(_)));
        let configured = c.configured.unwrap_or_default();
        let lost = c.folders.iter().find_map(|(folder, f)| {
            if *f == Following::Off {
                None
            } else if !folder.is_dir() {
                Some(format!(
                    "{} is gone (deleted or moved away): nothing under it is followed; restart folio once it is back",
                    folder.display()
                ))
            } else if let Following::Native(Some(id)) = f
                && identity(folder) != Some(*id)
            {
                Some(format!(
                    "{} was deleted and made again: the watch followed the old folder, so nothing in the new one is followed; restart folio to follow it",
                    folder.display()
                ))
            } else {
                None
            }
        });
        let (mode, reason, poll_interval_ms) = match (polled, native) {
            _ if c.folders.is_empty() => ("starting", None, None),
            _ if lost.is_some() => ("lost", lost, None),
            (Some((ms, reason)), _) => ("poll", reason, Some(ms)),
            (None, true) => ("native", None, None),
            (None, false) => (
                "off",
                Some("`[index] watch = \"off\"`: changes made by other programs are seen at the next `folio index` or kb_reindex".to_owned()),
                None,
            ),
        };
        WatchStatus {
            configured: configured.as_str().to_owned(),
            mode: mode.to_owned(),
            reason,
            poll_interval_ms,
            changes_seen: c.changes_seen,
            last_change_ms: c.last_change_ms,
            last_change_path: c.last_change_path.clone(),
        }
    }
}

/// How a server started now would follow `folder` under `config` (`folio status`): the
/// watch is set up as a server would (a native watch walks every folder) and let go.
pub fn probe(folder: &Path, config: &Config) -> WatchStatus {
    let watcher = FolderWatcher::new(Arc::new(|_| {}));
    let mut status = watcher.watch(folder, config);
    status.changes_seen = 0;
    status
}

/// True for a path inside folio's state folder or git's, under `folder`: never a change
/// the owner cares about (folio's own index writes would otherwise come back as events).
pub(crate) fn is_private(folder: &Path, path: &Path) -> bool {
    path.strip_prefix(folder).is_ok_and(|rel| {
        rel.components()
            .next()
            .is_some_and(|c| c.as_os_str() == ".folio" || c.as_os_str() == ".git")
    })
}

/// A folder's identity: device, inode and creation time (an inode number freed by a
/// deleted folder is often given at once to the next one made).
type FolderId = (u64, u64, Option<std::time::SystemTime>);

/// The [`FolderId`] of `folder`; `None` where it cannot be read or told (not Unix).
fn identity(folder: &Path) -> Option<FolderId> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(folder)
            .ok()
            .map(|m| (m.dev(), m.ino(), m.created().ok()))
    }
    #[cfg(not(unix))]
    {
        let _ = folder;
        None
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests;
