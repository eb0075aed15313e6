//! The polling backend: a walk of each polled folder every `[index].poll_interval_ms`
//! (ignore files applied, one `lstat` per Markdown file, no file read), compared with
//! the walk before it. A Markdown file whose size or times changed, a file or folder
//! that appeared or went, is a change.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::{Batch, Shared};
use crate::config::Config;
use crate::workspace::{DiskState, FileStamp};

/// The interval is at least this many times the CPU time a walk takes (its wall time
/// times the cores it runs on).
const MAX_SHARE: u32 = 100;

/// A polled folder and what its last walk found.
struct Polled {
    folder: PathBuf,
    config: Config,
    due: Instant,
    snapshot: Snapshot,
}

/// One walk: the stamp of each Markdown file, and the other files and folders.
#[derive(Default)]
struct Snapshot {
    markdown: HashMap<String, Option<FileStamp>>,
    other: HashSet<String>,
}

impl Snapshot {
    fn take(folder: &Path, config: &Config) -> Snapshot {
        match DiskState::read(folder, config) {
            Ok(disk) => Snapshot {
                markdown: disk.scan.markdown.into_iter().zip(disk.stamps).collect(),
                other: disk.scan.other.into_iter().collect(),
            },
            // The folder is gone: everything in it is.
            Err(_) => Snapshot::default(),
        }
    }

    /// The changes from `self` to `now`, as absolute paths under `folder`.
    fn changes_to(&self, now: &Snapshot, folder: &Path) -> Vec<(PathBuf, bool)> {
        let abs = |rel: &str| folder.join(rel);
        let mut out: Vec<(PathBuf, bool)> = Vec::new();
        for (path, stamp) in &now.markdown {
            if self.markdown.get(path) != Some(stamp) || stamp.is_none() {
                out.push((abs(path), stamp.is_some()));
            }
        }
        out.extend(
            self.markdown
                .keys()
                .filter(|p| !now.markdown.contains_key(*p))
                .map(|p| (abs(p), false)),
        );
        out.extend(
            now.other
                .iter()
                .filter(|p| !self.other.contains(*p))
                .map(|p| (abs(p), true)),
        );
        out.extend(
            self.other
                .iter()
                .filter(|p| !now.other.contains(*p))
                .map(|p| (abs(p), false)),
        );
        out.sort();
        out
    }
}

/// The polling thread and its folders; dropping it stops the thread.
pub(super) struct Poller {
    folders: Arc<Mutex<Vec<Polled>>>,
    _stop: mpsc::Sender<()>,
}

impl Poller {
    /// Starts the polling thread over no folder.
    pub(super) fn start(shared: Arc<Shared>) -> Poller {
        let folders: Arc<Mutex<Vec<Polled>>> = Arc::default();
        let (stop, stopped) = mpsc::channel::<()>();
        let polled = Arc::clone(&folders);
        let spawned = std::thread::Builder::new()
            .name("folio-poll".into())
            .spawn(move || run(&shared, &polled, &stopped));
        if let Err(e) = spawned {
            tracing::warn!("cannot start the polling thread: {e}");
        }
        Poller {
            folders,
            _stop: stop,
        }
    }

    /// Polls `folder` from now on, taking its first walk now.
    pub(super) fn add(&mut self, folder: &Path, config: &Config) {
        let snapshot = Snapshot::take(folder, config);
        let interval = Duration::from_millis(config.index.poll_interval_ms);
        let mut folders = self.folders.lock().unwrap_or_else(PoisonError::into_inner);
        folders.retain(|p| p.folder != folder);
        folders.push(Polled {
            folder: folder.to_path_buf(),
            config: config.clone(),
            due: Instant::now() + interval,
            snapshot,
        });
    }
}

/// The thread: sleeps until the next folder is due (or the poller is dropped), walks
/// every due folder and delivers what changed.
fn run(shared: &Shared, folders: &Mutex<Vec<Polled>>, stopped: &mpsc::Receiver<()>) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    loop {
        let next = folders
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|p| p.due)
            .min();
        let wait = next.map_or(Duration::from_secs(1), |due| {
            due.saturating_duration_since(Instant::now())
        });
        match stopped.recv_timeout(wait) {
            Err(RecvTimeoutError::Timeout) => {}
            _ => return,
        }
        let due: Vec<(PathBuf, Config)> = folders
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|p| p.due <= Instant::now())
            .map(|p| (p.folder.clone(), p.config.clone()))
            .collect();
        for (folder, config) in due {
            // The walk runs without the lock, so `add` never waits for it.
            let walk = Instant::now();
            let now = Snapshot::take(&folder, &config);
            // At most 1% of a core: a walk (which runs on every core) that takes longer
            // than a hundredth of the interval divided by the cores stretches it.
            let interval = Duration::from_millis(config.index.poll_interval_ms)
                .max(walk.elapsed() * MAX_SHARE * cores);
            shared.set_poll_interval(&folder, interval);
            let changes = {
                let mut folders = folders.lock().unwrap_or_else(PoisonError::into_inner);
                let Some(polled) = folders.iter_mut().find(|p| p.folder == folder) else {
                    continue;
                };
                let changes = polled.snapshot.changes_to(&now, &folder);
                polled.snapshot = now;
                polled.due = Instant::now() + interval;
                changes
            };
            shared.deliver(Batch {
                changes,
                rescan: Vec::new(),
            });
        }
    }
}
