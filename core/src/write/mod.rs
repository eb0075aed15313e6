//! Writes to the notes of a root, safe against every other writer.
//!
//! Every write by a folio process goes through a [`Writer`]:
//! - **One writer at a time per root, across processes.** [`Writer::lock`] takes an
//!   advisory lock on `write.lock` in the root's state folder
//!   ([`crate::workspace::state_dir`]) with the operating system's file locking (`flock`
//!   on Unix), so two `folio mcp` processes, or an MCP server and a CLI, never interleave
//!   their read-plan-write sequences. A process that dies releases its lock with it.
//! - **Compare before rename.** A write is staged in a temporary file, and right before
//!   the rename the file on disk is compared, byte for byte, with the text the write was
//!   planned against. If another program (an editor, `git checkout`, a sync client)
//!   changed it meanwhile, nothing is written: [`WriteGuard::update`] plans again against
//!   the new text (pointers re-anchor by content), and an operation that cannot be planned
//!   again, or keeps losing the race, fails with [`WriteError::Changed`].
//! - **Durable.** The temporary file is flushed (`fsync`) before the rename and the folder
//!   after it, so an acknowledged write survives a crash; a crash before the rename leaves
//!   the old file whole and a temporary file that the next start removes.
//! - **Multi-file operations are journaled** ([`journal`]): a move that rewrites links in
//!   several files writes its plan first, so a crash in the middle is finished by the next
//!   writer that takes the lock. Their new texts can be staged (written to temporary files
//!   and flushed) before the lock is taken ([`Writer::stage`]); under the lock each file
//!   is still compared before its rename ([`WriteGuard::run_staged`]), and each folder is
//!   flushed once after its last rename, before the journal entry goes.
//!
//! - **Wait for a program saving in place.** Before each read and again before the
//!   rename, [`atomic::open_for_writing`] asks the kernel whether any process holds the
//!   file open for writing; while one does (it emptied the file and is writing it),
//!   the write waits up to [`IN_USE_WAIT`], so it neither plans against a partial text nor
//!   sends that program's bytes to the replaced file.
//!
//! What this cannot promise against programs that are not folio (they take no lock): a
//! write that starts in the microseconds between folio's final checks and its rename
//! is replaced by folio's. docs/reliability.md says this for users.

pub mod atomic;
pub mod journal;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

pub use atomic::StagedWrite;
pub use journal::{Interrupted, MovedPath, RecoveryReport, StagedSteps, Step};

/// How long [`Writer::lock`] waits for another writer before giving up with
/// [`WriteError::Busy`]. A write holds the lock for milliseconds; an edit sent to an
/// editor over the live bridge may hold it for up to that bridge's timeout (10 s).
pub const LOCK_TIMEOUT: Duration = Duration::from_secs(20);

/// How many times [`WriteGuard::update`] plans again when the file keeps changing under it.
pub const MAX_REPLANS: usize = 3;

/// How long a write waits for another program that holds the file open for writing (one
/// saving in place) to close it before giving up with [`WriteError::InUse`]
/// ([`atomic::open_for_writing`]).
pub const IN_USE_WAIT: Duration = Duration::from_secs(2);

/// Why a write did not happen. Nothing was changed.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// Another writer held the root's write lock for longer than the timeout.
    #[error(
        "another writer is busy with this knowledge base (waited {waited_ms} ms); nothing was changed, try again"
    )]
    Busy {
        /// How long this writer waited, in milliseconds.
        waited_ms: u64,
    },
    /// The file changed on disk between the read and the write (another program wrote
    /// it), and the operation could not be planned again.
    #[error(
        "`{path}` was changed by another program while this write was planned; nothing was changed, read it again"
    )]
    Changed {
        /// KB-relative path.
        path: String,
    },
    /// Another program kept the file open for writing (it was saving it in place) for
    /// longer than [`IN_USE_WAIT`]: reading it now could see a partial text, and replacing
    /// it would lose what that program writes next.
    #[error(
        "`{path}` is open for writing in another program (it is being saved); nothing was changed, try again once it is closed"
    )]
    InUse {
        /// KB-relative path.
        path: String,
    },
    /// The target of a create or move exists.
    #[error("`{path}` already exists")]
    AlreadyExists {
        /// KB-relative path.
        path: String,
    },
    /// The file to replace, move or remove is gone.
    #[error("`{path}` no longer exists")]
    NotFound {
        /// KB-relative path.
        path: String,
    },
    /// The file system refused.
    #[error("`{path}`: {source}")]
    Io {
        /// KB-relative path (or the lock file's path).
        path: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
}

/// The write coordinator of one root: hands out [`WriteGuard`]s, one at a time across
/// every folio process on the machine (and every machine sharing the folder, where the
/// file system carries `flock`).
#[derive(Debug)]
pub struct Writer {
    root: PathBuf,
    state_dir: PathBuf,
    /// Serialises the threads of this process before they take the file lock.
    local: Mutex<()>,
    timeout: Duration,
}

/// The root's write lock, held. Dropping it releases the lock.
#[derive(Debug)]
pub struct WriteGuard<'a> {
    writer: &'a Writer,
    file: File,
    _local: MutexGuard<'a, ()>,
    /// When the lock was taken (how long it was held is logged at `debug` on release).
    taken: Instant,
}

/// What [`WriteGuard::update`] wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Updated<T> {
    /// The text the final plan was made against (the file's content before the write).
    pub old: String,
    /// The text written.
    pub new: String,
    /// What the plan returned besides the text.
    pub value: T,
    /// How many times the file changed under the write and the plan was made again.
    pub replans: usize,
}

impl Writer {
    /// The writer of `root` (absolute), keeping its lock and journal in
    /// [`crate::workspace::state_dir`]. Creates nothing until the first [`Writer::lock`].
    pub fn new(root: &Path) -> Writer {
        Writer::with_state_dir(root, &crate::workspace::state_dir(root))
    }

    /// The writer of `root` with its lock and journal in `state_dir`.
    pub fn with_state_dir(root: &Path, state_dir: &Path) -> Writer {
        Writer {
            root: root.to_path_buf(),
            state_dir: state_dir.to_path_buf(),
            local: Mutex::new(()),
            timeout: LOCK_TIMEOUT,
        }
    }

    /// The same writer with another lock timeout (tests).
    pub fn with_timeout(mut self, timeout: Duration) -> Writer {
        self.timeout = timeout;
        self
    }

    /// The root folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The multi-file operations a killed folio writer left unfinished on this root,
    /// found without changing anything (a read-only process reports them; the next
    /// [`Writer::lock`] finishes them). Empty while a writer holds the lock: its journal
    /// entry is then an operation in progress.
    pub fn interrupted(&self) -> Vec<journal::Interrupted> {
        let dir = self.state_dir.join("journal");
        if !dir.is_dir() {
            return Vec::new();
        }
        let busy = std::fs::File::open(self.lock_path())
            .is_ok_and(|f| matches!(f.try_lock(), Err(std::fs::TryLockError::WouldBlock)));
        if busy {
            return Vec::new();
        }
        journal::interrupted(&self.root, &dir)
    }

    /// Writes the new text of every [`Step::Replace`] of `steps` to a temporary file next
    /// to its file and flushes it, without the lock and without touching the files
    /// themselves, so that [`WriteGuard::run_staged`] only compares and renames under the
    /// lock. Dropping the result removes the temporary files.
    ///
    /// Errors: [`WriteError::Changed`] when a file's folder is gone; [`WriteError::Io`]
    /// when a temporary file cannot be written.
    pub fn stage(&self, steps: Vec<Step>) -> Result<StagedSteps, WriteError> {
        journal::stage(&self.root, steps)
    }

    /// The lock file.
    pub fn lock_path(&self) -> PathBuf {
        self.state_dir.join("write.lock")
    }

    /// Takes the root's write lock, waiting up to the timeout for another writer, then
    /// finishes any journaled operation a crashed writer left ([`journal::recover`]).
    ///
    /// Errors: [`WriteError::Busy`] after the timeout; [`WriteError::Io`] when the state
    /// folder or the lock file cannot be made.
    pub fn lock(&self) -> Result<WriteGuard<'_>, WriteError> {
        self.lock_recovering().map(|(guard, _)| guard)
    }

    /// Takes the root's write lock without finishing anything a killed writer left: for
    /// a process that only needs other writers to wait (the indexer, which a read-only
    /// server runs too, must not change notes). Its guard must not write notes.
    ///
    /// Errors: as [`Writer::lock`].
    pub fn lock_to_read(&self) -> Result<WriteGuard<'_>, WriteError> {
        self.take_lock()
    }

    /// Finishes now what a killed writer left unfinished ([`Writer::interrupted`]) by
    /// taking the lock and letting it go; returns what was found and what recovery did.
    /// For a process that can write, on start (the language server, `folio index`).
    ///
    /// Errors: as [`Writer::lock`].
    pub fn finish_interrupted(&self) -> Result<(Vec<Interrupted>, RecoveryReport), WriteError> {
        let found = self.interrupted();
        if found.is_empty() {
            return Ok((found, RecoveryReport::default()));
        }
        let (_guard, report) = self.lock_recovering()?;
        Ok((found, report))
    }

    /// [`Writer::lock`], also returning what its recovery did.
    fn lock_recovering(&self) -> Result<(WriteGuard<'_>, RecoveryReport), WriteError> {
        let guard = self.take_lock()?;
        let report = journal::recover(&guard);
        if !report.is_empty() {
            tracing::warn!(
                finished = report.finished,
                left = report.left.len(),
                "finished the journaled writes of an interrupted folio process"
            );
        }
        Ok((guard, report))
    }

    /// Takes the lock (waiting up to the timeout), recovering nothing.
    fn take_lock(&self) -> Result<WriteGuard<'_>, WriteError> {
        let started = Instant::now();
        let local = self.local.lock().unwrap_or_else(PoisonError::into_inner);
        let lock_path = self.lock_path();
        let io = |source| WriteError::Io {
            path: lock_path.display().to_string(),
            source,
        };
        crate::workspace::prepare_state_dir(&self.state_dir).map_err(io)?;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(io)?;
        let mut pause = Duration::from_millis(1);
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(std::fs::TryLockError::WouldBlock) => {
                    let waited = started.elapsed();
                    if waited >= self.timeout {
                        return Err(WriteError::Busy {
                            waited_ms: waited.as_millis() as u64,
                        });
                    }
                    std::thread::sleep(pause.min(self.timeout - waited));
                    pause = (pause * 2).min(Duration::from_millis(25));
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
            }
        }
        Ok(WriteGuard {
            writer: self,
            file,
            _local: local,
            taken: Instant::now(),
        })
    }
}

impl Drop for WriteGuard<'_> {
    fn drop(&mut self) {
        let _ = self.file.unlock();
        tracing::debug!(
            held_ms = self.taken.elapsed().as_millis() as u64,
            "released the root's write lock"
        );
    }
}

/// The error of a failed file operation on KB-relative `path`: `AlreadyExists` and
/// `NotFound` become [`WriteError::AlreadyExists`] and [`WriteError::NotFound`], the rest
/// [`WriteError::Io`].
pub(crate) fn io_error(path: &str, source: std::io::Error) -> WriteError {
    match source.kind() {
        std::io::ErrorKind::AlreadyExists => WriteError::AlreadyExists {
            path: path.to_string(),
        },
        std::io::ErrorKind::NotFound => WriteError::NotFound {
            path: path.to_string(),
        },
        _ => WriteError::Io {
            path: path.to_string(),
            source,
        },
    }
}

impl WriteGuard<'_> {
    /// The root folder.
    pub fn root(&self) -> &Path {
        &self.writer.root
    }

    fn journal_dir(&self) -> PathBuf {
        self.writer.state_dir.join("journal")
    }

    fn io(&self, path: &str, source: std::io::Error) -> WriteError {
        io_error(path, source)
    }

    /// Waits up to [`IN_USE_WAIT`] while another program holds the file at `path` open
    /// for writing ([`atomic::open_for_writing`]), checking every 10 ms.
    ///
    /// Errors: [`WriteError::InUse`] when it is still open after that.
    fn await_closed(&self, path: &str) -> Result<(), WriteError> {
        let deadline = Instant::now() + IN_USE_WAIT;
        while atomic::being_written(self.root(), path) == Some(true) {
            if Instant::now() >= deadline {
                return Err(WriteError::InUse {
                    path: path.to_string(),
                });
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(())
    }

    /// Waits while another program holds the file at `path` open for writing
    /// ([`WriteGuard::await_closed`]), then fails with [`WriteError::Changed`] unless it
    /// holds exactly `expected`.
    fn check_unchanged(&self, path: &str, expected: &[u8]) -> Result<(), WriteError> {
        self.await_closed(path)?;
        match atomic::read(self.root(), path) {
            Ok(Some(now)) if now == expected => Ok(()),
            Ok(_) => Err(WriteError::Changed {
                path: path.to_string(),
            }),
            Err(e) => Err(self.io(path, e)),
        }
    }

    /// Replaces the file at KB-relative `path` with `new` if it still holds `expected`:
    /// the new bytes are staged and flushed first, then the file is compared with
    /// `expected` and, if equal, the staged file is renamed over it — all in the folder
    /// opened once, never through a symbolic link.
    ///
    /// It first waits while another program holds the file open for writing (saving it
    /// in place); one that opens it after the new bytes are staged counts as a change,
    /// since the rename would send its next bytes to the replaced file.
    ///
    /// Errors: [`WriteError::Changed`] (nothing written) when the file differs, is gone,
    /// or was opened for writing meanwhile; [`WriteError::InUse`] when it stayed open for
    /// writing.
    pub fn replace(&self, path: &str, expected: &[u8], new: &[u8]) -> Result<(), WriteError> {
        self.await_closed(path)?;
        let staged = StagedWrite::new(self.root(), path, new).map_err(|e| self.io(path, e))?;
        if staged.being_written() == Some(true) {
            return Err(WriteError::Changed {
                path: path.to_string(),
            });
        }
        self.require_current(path, expected, &staged)?;
        staged.commit().map_err(|e| self.io(path, e))
    }

    /// Renames `staged` (the new text of KB-relative `path`, staged before) over the file
    /// if it still holds `expected`, after waiting while another program holds it open for
    /// writing, without flushing the folder; returns the folder, for the caller to flush.
    ///
    /// Errors: as [`WriteGuard::replace`].
    fn commit_staged(
        &self,
        path: &str,
        expected: &[u8],
        staged: StagedWrite,
    ) -> Result<std::sync::Arc<crate::workspace::beneath::Folder>, WriteError> {
        self.await_closed(path)?;
        self.require_current(path, expected, &staged)?;
        staged.commit_unflushed().map_err(|e| self.io(path, e))
    }

    /// Fails with [`WriteError::Changed`] unless the file `staged` is to replace (at
    /// KB-relative `path`) holds exactly `expected`, read through the folder the staged
    /// file is in.
    fn require_current(
        &self,
        path: &str,
        expected: &[u8],
        staged: &StagedWrite,
    ) -> Result<(), WriteError> {
        match staged.current() {
            Ok(Some(now)) if now == expected => Ok(()),
            Ok(_) => Err(WriteError::Changed {
                path: path.to_string(),
            }),
            Err(e) => Err(self.io(path, e)),
        }
    }

    /// Reads the file with `read`, plans its new text with `plan`, and replaces the file
    /// at KB-relative `path` if it did not change meanwhile; when it did, reads and plans
    /// again, up to [`MAX_REPLANS`] times. A plan that leaves the text as it is writes
    /// nothing. Each read waits first while another program holds the file open for
    /// writing, so a plan is never made against a text that program is still saving.
    ///
    /// Errors: whatever `read` or `plan` return (a pointer that no longer resolves in the
    /// new text is the plan's `CONFLICT`), [`WriteError::Changed`] when the file kept
    /// changing, or [`WriteError::InUse`] when another program kept it open for writing.
    pub fn update<T, E: From<WriteError>>(
        &self,
        path: &str,
        mut read: impl FnMut() -> Result<String, E>,
        mut plan: impl FnMut(&str) -> Result<(String, T), E>,
    ) -> Result<Updated<T>, E> {
        let mut replans = 0;
        loop {
            self.await_closed(path)?;
            let old = read()?;
            let (new, value) = plan(&old)?;
            if new == old {
                return Ok(Updated {
                    old,
                    new,
                    value,
                    replans,
                });
            }
            match self.replace(path, old.as_bytes(), new.as_bytes()) {
                Ok(()) => {
                    return Ok(Updated {
                        old,
                        new,
                        value,
                        replans,
                    });
                }
                Err(WriteError::Changed { .. }) if replans < MAX_REPLANS => {
                    tracing::info!(
                        path,
                        "changed by another program while planned; planning again"
                    );
                    replans += 1;
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Creates KB-relative `path` with `bytes` (missing folders too).
    ///
    /// Errors: [`WriteError::AlreadyExists`] when anything is there.
    pub fn create(&self, path: &str, bytes: &[u8]) -> Result<(), WriteError> {
        atomic::create_new(self.root(), path, bytes).map_err(|e| self.io(path, e))
    }

    /// Moves `from` to `to` (KB-relative; never over an existing file) if `from` still
    /// holds `expected`.
    ///
    /// Errors: [`WriteError::Changed`] when `from` differs or is gone,
    /// [`WriteError::AlreadyExists`] when `to` exists.
    pub fn rename(&self, from: &str, to: &str, expected: &[u8]) -> Result<(), WriteError> {
        if matches!(atomic::read(self.root(), to), Ok(Some(_))) {
            return Err(WriteError::AlreadyExists {
                path: to.to_string(),
            });
        }
        self.check_unchanged(from, expected)?;
        atomic::move_file(self.root(), from, to).map_err(|e| self.io(to, e))
    }

    /// Removes KB-relative `path` if it still holds `expected`.
    ///
    /// Errors: [`WriteError::Changed`] when it differs or is gone.
    pub fn remove(&self, path: &str, expected: &[u8]) -> Result<(), WriteError> {
        self.check_unchanged(path, expected)?;
        atomic::remove(self.root(), path).map_err(|e| self.io(path, e))
    }

    /// Runs the steps of a multi-file operation as one unit: each file must still hold
    /// the text its step was planned against (else nothing is written and the result is
    /// [`WriteError::Changed`]); the plan is written to the journal before the first
    /// change, so a crash midway is finished by the next writer ([`journal::recover`]);
    /// a file that changes under the operation midway undoes the steps already done.
    ///
    /// Errors: [`WriteError::Changed`], [`WriteError::AlreadyExists`] (a move's target
    /// exists), [`WriteError::InUse`], or [`WriteError::Io`] from staging or writing.
    pub fn run_journaled(&self, steps: &[Step]) -> Result<(), WriteError> {
        let staged = journal::stage(self.root(), steps.to_vec())?;
        journal::run(self, staged)
    }

    /// [`WriteGuard::run_journaled`] of steps staged before the lock was taken
    /// ([`Writer::stage`], on this root): every file is compared with the text its step
    /// was planned against first, and again right before its rename, so a file changed
    /// since the staging fails the whole operation with [`WriteError::Changed`] and
    /// nothing is written.
    ///
    /// Errors: as [`WriteGuard::run_journaled`].
    pub fn run_staged(&self, staged: StagedSteps) -> Result<(), WriteError> {
        journal::run(self, staged)
    }
}

#[cfg(test)]
mod tests;
