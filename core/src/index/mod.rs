//! The indexer: walk a root, parse what changed, write documents and chunks to the store.
//!
//! Incremental by content hash: a file whose XxHash64 matches the indexed one is not
//! parsed and not written, so a no-op reindex writes no rows. Files that vanished, or
//! that are now skipped (too large, not UTF-8, binary), are removed from the index.
//! `force` re-parses and rewrites everything.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use crate::chunk::chunks;
use crate::formats::Format;
use crate::parse::parse;
use crate::pointer::{hash_bytes, hex};
use crate::store::{ChunkRecord, DocRecord, Store, StoreError};
use crate::workspace::{
    Config, Skipped, WorkspaceError, parallel_map, read_markdown_lossy_in, scan,
};

pub mod extracted;

/// Errors that stop indexing (a single bad file never does).
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// The root is missing or its configuration is invalid.
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
    /// The index database failed.
    #[error("index database: {0}")]
    Store(#[from] StoreError),
    /// The database, kept outside the root (`--db`), holds the index of another folder.
    /// (An index in the root's own `.folio` folder that records another root was moved
    /// or copied with the folder, and is taken over.)
    #[error(
        "`{db}` is the index of `{recorded}`, not of `{root}`; use another index file (`--db`), or reindex with force (`folio index --force`, kb_reindex `force: true`) to take it over"
    )]
    OtherRoot {
        /// The database file.
        db: String,
        /// The root recorded in it.
        recorded: String,
        /// The root being indexed.
        root: String,
    },
    /// The lock file next to the database could not be taken.
    #[error("cannot lock `{path}`: {source}")]
    Lock {
        /// The lock file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
}

/// Whether the index at `db_path`, which records `recorded` as its root (`None`: a new
/// index), belongs to another folder than `root`: `Some(`[`IndexError::OtherRoot`]`)`
/// then, which indexing refuses without `--force` and search refuses outright (it would
/// answer with another folder's text under this root's paths).
///
/// An index inside the root's own `.folio` folder that records another root came with
/// the folder when it was moved or copied: its paths are relative to the root, so it is
/// this root's, and the next index run takes it over and brings it up to date like any
/// other (content hashes decide what is read again; the vectors of unchanged text
/// stay). Only an index kept elsewhere (`--db`) can belong to another folder. The root's
/// `.folio` must be a folder of its own (not a link to another root's) holding the file,
/// however the path to it is spelt.
pub fn foreign_index(root: &Path, db_path: &Path, recorded: Option<&str>) -> Option<IndexError> {
    let root_str = root.to_string_lossy();
    let recorded = recorded.filter(|r| *r != root_str)?;
    let own = root.join(".folio");
    let moved_with_root = std::fs::symlink_metadata(&own).is_ok_and(|m| m.is_dir())
        && db_path.parent().and_then(|p| p.canonicalize().ok()) == own.canonicalize().ok();
    (!moved_with_root).then(|| IndexError::OtherRoot {
        db: db_path.display().to_string(),
        recorded: recorded.to_owned(),
        root: root_str.into_owned(),
    })
}

/// What an index run did.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct IndexSummary {
    /// Documents found by the walk: Markdown files, and files of the formats
    /// `[parsers].enabled` turns on.
    pub files: usize,
    /// Documents parsed and written.
    pub indexed: usize,
    /// Documents whose content hash matched the index (not written).
    pub unchanged: usize,
    /// Documents removed from the index (vanished or now skipped).
    pub removed: usize,
    /// Files skipped, with reasons.
    pub skipped: Vec<Skipped>,
    /// Regular files of a format folio can read whose extension `[parsers].enabled`
    /// does not list (source code, by default), KB-relative, sorted: not indexed.
    pub not_enabled: Vec<String>,
    /// Documents indexed that are not valid UTF-8: (path, byte offset of the first invalid
    /// sequence), sorted by path; read with U+FFFD replacements, and read-only
    /// ([`crate::workspace::read_markdown_lossy_in`]).
    pub replaced: Vec<(String, usize)>,
    /// Chunks written.
    pub chunks: usize,
    /// Every indexed note whose frontmatter did not parse, as `(path, why)`, sorted by
    /// path (changed in this pass or not): its title, tags, aliases and date are not read,
    /// so filters miss it.
    pub frontmatter_unparsed: Vec<(String, String)>,
    /// True when the database had an incompatible schema and was rebuilt.
    pub rebuilt: bool,
    /// Wall-clock time in milliseconds.
    pub elapsed_ms: u64,
    /// The database file.
    pub db_path: PathBuf,
}

/// Progress of a run: `done` of `total` files read.
pub type ProgressFn<'a> = &'a (dyn Fn(usize, usize) + Sync);

/// The index file for `root`: `index.db` in its state folder
/// ([`crate::workspace::state_dir`]).
///
/// Creates nothing; [`Store::open`] creates the folder when the index is first written.
pub fn default_db_path(root: &Path) -> PathBuf {
    crate::workspace::state_dir(root).join("index.db")
}

/// Category and topic from a KB-relative path: the first folder, and the first two folders.
pub fn path_category_topic(path: &str) -> (Option<String>, Option<String>) {
    let folders: Vec<&str> = path.split('/').collect();
    let folders = &folders[..folders.len().saturating_sub(1)];
    let category = folders.first().map(|s| s.to_string());
    let topic = (folders.len() >= 2).then(|| folders[..2].join("/"));
    (category, topic)
}

fn frontmatter_str(fm: Option<&serde_json::Value>, key: &str) -> Option<String> {
    fm?.get(key).and_then(|v| match v {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        _ => None,
    })
}

/// Builds the store records of one document (`vault`: the root is an Obsidian vault,
/// whose notes are titled by their file names: [`crate::parse::Parsed::title_for`]).
pub fn records(
    path: &str,
    text: &str,
    size: u64,
    mtime_ms: i64,
    chunk_bytes: usize,
    vault: bool,
) -> (DocRecord, Vec<ChunkRecord>) {
    let parsed = parse(text);
    let fm = parsed.frontmatter.as_ref();
    let (category, topic) = path_category_topic(path);
    // Frontmatter and inline tags (`parse` reads both), each name once.
    let mut seen = std::collections::HashSet::new();
    let tags: Vec<String> = parsed
        .tags
        .iter()
        .filter(|t| seen.insert(t.name.as_str()))
        .map(|t| t.name.clone())
        .collect();
    // YAML reads an unquoted 2024-01-31 as a string; keep only well-formed dates.
    let date = frontmatter_str(fm, "date")
        .map(|d| d.chars().take(10).collect::<String>())
        .filter(|d| crate::search::filter::validate_date("date", d).is_ok());
    let title = Some(parsed.title_for(path, vault));
    let doc = DocRecord {
        path: path.to_string(),
        source_hash: hex(hash_bytes(text.as_bytes())),
        size,
        mtime_ms,
        title,
        category: frontmatter_str(fm, "category").or(category),
        topic: frontmatter_str(fm, "topic").or(topic),
        tags,
        date,
        frontmatter_json: fm.map(|f| f.to_string()),
        quality: quality_score(text, &parsed),
        format: None,
        frontmatter_error: parsed.frontmatter_problem().map(|p| p.message.clone()),
    };
    let chunk_records = chunks(text, &parsed, chunk_bytes)
        .into_iter()
        .map(|c| ChunkRecord {
            seq: c.seq,
            pointer: c.pointer,
            heading_path: c.heading_path,
            start_line: c.start_line,
            end_line: c.end_line,
            text: c.text,
            citation: Default::default(),
        })
        .collect();
    (doc, chunk_records)
}

/// Body words at which a document counts as complete (quality 1.0).
pub const FULL_QUALITY_WORDS: usize = 100;

/// A document's quality score in `[0, 1]`, for `min_quality` filters.
///
/// A frontmatter `quality` number in `[0, 1]` wins. Otherwise the score grows with the
/// words of the body — everything but headings, frontmatter and HTML, a CJK character
/// counting as half a word — reaching 1.0 at [`FULL_QUALITY_WORDS`] words; a body of
/// fewer than 30 words holding a placeholder (`TODO`, `TBD`, `WIP`, `FIXME`,
/// "coming soon") is a stub and scores at most 0.1.
pub fn quality_score(text: &str, parsed: &crate::parse::Parsed) -> f64 {
    use crate::parse::ElementKind;
    if let Some(q) = parsed
        .frontmatter
        .as_ref()
        .and_then(|f| f.get("quality"))
        .and_then(serde_json::Value::as_f64)
        && (0.0..=1.0).contains(&q)
    {
        return q;
    }
    let mut words = 0.0f64;
    let mut body = String::new();
    for e in &parsed.elements {
        let top = e
            .parent
            .is_none_or(|p| parsed.elements[p].kind == ElementKind::Heading);
        if !top
            || matches!(
                e.kind,
                ElementKind::Document
                    | ElementKind::Heading
                    | ElementKind::Frontmatter
                    | ElementKind::Html
            )
        {
            continue;
        }
        let range = if e.kind == ElementKind::ListItem {
            e.subtree.clone()
        } else {
            e.range.clone()
        };
        let chunk = &text[range];
        for token in chunk.split_whitespace() {
            let cjk = token
                .chars()
                .filter(|&c| crate::store::cjk::is_cjk(c))
                .count();
            words += if cjk > 0 { cjk as f64 / 2.0 } else { 1.0 };
        }
        body.push_str(chunk);
        body.push('\n');
    }
    let lower = body.to_lowercase();
    let placeholder = ["todo", "tbd", "wip", "fixme", "coming soon"]
        .iter()
        .any(|p| lower.contains(p));
    let score = (words / FULL_QUALITY_WORDS as f64).min(1.0);
    if placeholder && words < 30.0 {
        score.min(0.1)
    } else {
        score
    }
}

enum FileOutcome {
    Unchanged,
    Changed(Box<(DocRecord, Vec<ChunkRecord>)>),
    Skipped(Skipped),
    /// A document whose text could not be extracted from bytes hashing to the `String`;
    /// `true` when this pass found it (else the index had recorded it).
    Unextracted(Skipped, String, bool),
}

/// A file's outcome, with the offset of its first invalid UTF-8 sequence when it has one.
type Outcome = (FileOutcome, Option<usize>);

/// The paths a file watcher reported changed, for an incremental pass
/// ([`index_changes`]): KB-relative paths of documents, and folders (or paths of unknown kind)
/// under which every file counts as changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Changed {
    /// KB-relative documents: Markdown files, files of a registered format.
    pub files: std::collections::BTreeSet<String>,
    /// KB-relative folders (`""` is the whole root).
    pub folders: std::collections::BTreeSet<String>,
}

impl Changed {
    /// True when nothing changed.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.folders.is_empty()
    }

    /// How many paths it names.
    pub fn len(&self) -> usize {
        self.files.len() + self.folders.len()
    }

    /// Adds everything of `other`.
    pub fn extend(&mut self, other: Changed) {
        self.files.extend(other.files);
        self.folders.extend(other.folders);
    }

    /// Whether `path` (KB-relative) may have changed.
    pub fn covers(&self, path: &str) -> bool {
        self.files.contains(path)
            || self.folders.iter().any(|f| {
                f.is_empty()
                    || path
                        .strip_prefix(f.as_str())
                        .is_some_and(|rest| rest.starts_with('/'))
            })
    }
}

/// Indexes `root` into the database at `db_path`.
///
/// Errors: the root is missing, the configuration is invalid, or the database fails.
/// Files that cannot be indexed are listed in [`IndexSummary::skipped`].
pub fn index_root(
    root: &Path,
    config: &Config,
    db_path: &Path,
    force: bool,
    progress: Option<ProgressFn<'_>>,
) -> Result<IndexSummary, IndexError> {
    index_pass(root, config, db_path, force, None, progress)
}

/// The incremental pass after a file watcher's report: walks `root` as
/// [`index_root`] does (so files that appeared or went are found whatever was reported,
/// and ignore files apply), but reads only the files `changed` covers and the files the
/// index does not hold yet; every other indexed file counts as unchanged without being
/// read. A file's new text is then written only when its content hash differs from the
/// indexed one, so a change folio wrote itself (and indexed as it wrote it) costs a read.
///
/// Errors: as [`index_root`].
pub fn index_changes(
    root: &Path,
    config: &Config,
    db_path: &Path,
    changed: &Changed,
    progress: Option<ProgressFn<'_>>,
) -> Result<IndexSummary, IndexError> {
    index_pass(root, config, db_path, false, Some(changed), progress)
}

fn index_pass(
    root: &Path,
    config: &Config,
    db_path: &Path,
    force: bool,
    changed: Option<&Changed>,
    progress: Option<ProgressFn<'_>>,
) -> Result<IndexSummary, IndexError> {
    let started = Instant::now();
    let scan = scan(root, config)?;
    // Temporary files of writers that were killed before their rename.
    crate::write::atomic::remove_stale_temp_files(root, scan.other.iter().map(String::as_str));
    if let Some(parent) = db_path.parent().filter(|p| !p.as_os_str().is_empty()) {
        crate::workspace::prepare_state_dir(parent).map_err(|source| IndexError::Lock {
            path: parent.display().to_string(),
            source,
        })?;
    }
    // One indexer at a time per database: a second run waits, then finds the work done.
    let lock_path = db_path.with_extension("lock");
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .and_then(|f| f.lock().map(|()| f))
        .map_err(|source| IndexError::Lock {
            path: lock_path.display().to_string(),
            source,
        })?;
    let mut store = Store::open(db_path)?;
    let root_str = root.to_string_lossy().into_owned();
    let recorded = store.meta("root")?;
    if !force && let Some(err) = foreign_index(root, db_path, recorded.as_deref()) {
        return Err(err);
    }
    let indexed = store.documents()?;
    // Failures found under other budgets are tried again (a budget raised in folio.toml).
    let limits_key = extracted::limits_key(config);
    let limits_changed =
        store.meta(extracted::LIMITS_META)?.as_deref() != Some(limits_key.as_str());
    let unextracted = if limits_changed {
        Default::default()
    } else {
        store.unextracted()?
    };
    // After a schema migration that changed what a document's records hold, or when the
    // root became an Obsidian vault or stopped being one (the titles change).
    let vault = crate::workspace::is_vault(root, config);
    let title_rule = if vault { "vault" } else { "notes" };
    let recorded_rule = store.meta(crate::store::schema::TITLE_RULE)?;
    let record_again = store.meta(crate::store::schema::RECORD_AGAIN)?.is_some()
        || recorded_rule.as_deref().is_some_and(|r| r != title_rule);
    let candidates = documents_of(root, &scan, config);
    let total = candidates.len();
    let done = AtomicUsize::new(0);
    let cap = config.index.max_file_size;
    let chunk_bytes = config.index.chunk_budget();
    // Notes chunked under another rule or budget are chunked again (an index without
    // the key predates it).
    let chunk_rule = format!("{}:{chunk_bytes}", crate::chunk::RULE_VERSION);
    let recorded_chunk_rule = store.meta(crate::store::schema::CHUNK_RULE)?;
    let rechunk = recorded_chunk_rule.as_deref() != Some(chunk_rule.as_str());
    let mut outcomes: Vec<Outcome> = parallel_map(&candidates, |(path, format)| {
        let abs = root.join(path);
        let record_again = record_again || (rechunk && format.is_none());
        let unread = !force
            && !record_again
            && indexed.contains_key(path)
            && changed.is_some_and(|c| !c.covers(path));
        // Not reported changed and indexed: its recorded outcome stands, unread.
        let outcome = if unread {
            (FileOutcome::Unchanged, None)
        } else if let Some(format) = *format {
            let again = force || record_again;
            (
                read_other(
                    root,
                    path,
                    format,
                    config,
                    indexed.get(path).filter(|_| !again),
                    unextracted.get(path).filter(|_| !again),
                ),
                None,
            )
        } else {
            match read_markdown_lossy_in(root, path, cap) {
                Err(reason) => (
                    FileOutcome::Skipped(Skipped {
                        path: path.clone(),
                        reason,
                    }),
                    None,
                ),
                Ok((text, invalid_at)) => {
                    let hash = hex(hash_bytes(text.as_bytes()));
                    let outcome = if !force && !record_again && indexed.get(path) == Some(&hash) {
                        FileOutcome::Unchanged
                    } else {
                        FileOutcome::Changed(Box::new(records(
                            path,
                            &text,
                            text.len() as u64,
                            mtime_ms(&abs),
                            chunk_bytes,
                            vault,
                        )))
                    };
                    (outcome, invalid_at)
                }
            }
        };
        let n = done.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(p) = progress
            && (n.is_multiple_of(256) || n == total)
        {
            p(n, total);
        }
        outcome
    });

    let mut summary = IndexSummary {
        files: total,
        not_enabled: not_enabled(root, &scan, config),
        skipped: scan.skipped,
        rebuilt: store.was_rebuilt(),
        db_path: db_path.to_path_buf(),
        ..IndexSummary::default()
    };
    let seen: std::collections::HashSet<&str> = candidates
        .iter()
        .zip(&outcomes)
        .filter(|(_, (o, _))| !matches!(o, FileOutcome::Skipped(_) | FileOutcome::Unextracted(..)))
        .map(|((p, _), _)| p.as_str())
        .collect();
    let vanished: Vec<&String> = indexed
        .keys()
        .filter(|p| !seen.contains(p.as_str()))
        .collect();
    let still_unextracted: Vec<String> = outcomes
        .iter()
        .filter_map(|(o, _)| match o {
            FileOutcome::Unextracted(s, ..) => Some(s.path.clone()),
            _ => None,
        })
        .collect();
    let unextracted_changed = unextracted.len() != still_unextracted.len()
        || outcomes
            .iter()
            .any(|(o, _)| matches!(o, FileOutcome::Unextracted(_, _, true)));
    let root_changed = recorded.as_deref() != Some(root_str.as_str());
    let any_change = force
        || record_again
        || root_changed
        || !vanished.is_empty()
        || unextracted_changed
        || limits_changed
        || outcomes
            .iter()
            .any(|(o, _)| matches!(o, FileOutcome::Changed(_)));
    if any_change {
        // Under the root's write lock, a document written by a folio writer since it was
        // read here is left out: that writer indexed its new text, which this pass must
        // not overwrite with the old. Without the lock (a root nobody can write) there is
        // no such writer.
        let writer = crate::write::Writer::new(root);
        // Only waited for: a read-only server indexes too, and must not finish a killed
        // writer's move (that is for a process that may write).
        let _write_lock = writer.lock_to_read().ok();
        let mut batch = store.batch()?;
        if root_changed {
            batch.set_meta("root", &root_str)?;
        }
        if record_again {
            batch.delete_meta(crate::store::schema::RECORD_AGAIN)?;
        }
        if recorded_rule.as_deref() != Some(title_rule) {
            batch.set_meta(crate::store::schema::TITLE_RULE, title_rule)?;
        }
        if rechunk {
            batch.set_meta(crate::store::schema::CHUNK_RULE, &chunk_rule)?;
        }
        for (outcome, _) in &mut outcomes {
            if let FileOutcome::Changed(records) = outcome {
                let other = records.0.format.is_some();
                let now = crate::workspace::beneath::read(root, &records.0.path, u64::MAX)
                    .ok()
                    // As read for indexing: a document of another format by its bytes, a
                    // note that is not UTF-8 with U+FFFD replacements.
                    .map(|bytes| match other {
                        true => extracted::source_hash(&bytes),
                        false => hex(hash_bytes(String::from_utf8_lossy(&bytes).as_bytes())),
                    });
                if now.as_deref() != Some(records.0.source_hash.as_str()) {
                    tracing::info!(path = %records.0.path, "changed while indexed; left to its writer or the next pass");
                    *outcome = FileOutcome::Unchanged;
                    continue;
                }
                batch.upsert_document(&records.0, &records.1)?;
            }
        }
        for path in &vanished {
            if batch.remove_document(path)? {
                summary.removed += 1;
            }
        }
        for (outcome, _) in &outcomes {
            if let FileOutcome::Unextracted(s, hash, true) = outcome
                && let crate::workspace::SkipReason::NotExtracted { message } = &s.reason
            {
                batch.set_unextracted(&s.path, hash, message)?;
            }
        }
        batch.keep_unextracted(&still_unextracted)?;
        if limits_changed {
            batch.set_meta(extracted::LIMITS_META, &limits_key)?;
        }
        batch.commit()?;
    }
    for ((path, _), (outcome, invalid_at)) in candidates.iter().zip(outcomes) {
        if let Some(at) = invalid_at {
            summary.replaced.push((path.clone(), at));
        }
        match outcome {
            FileOutcome::Unchanged => summary.unchanged += 1,
            FileOutcome::Changed(records) => {
                summary.indexed += 1;
                summary.chunks += records.1.len();
            }
            FileOutcome::Skipped(s) | FileOutcome::Unextracted(s, ..) => summary.skipped.push(s),
        }
    }
    summary.skipped.sort_by(|a, b| a.path.cmp(&b.path));
    summary.replaced.sort();
    summary.frontmatter_unparsed = store.frontmatter_errors()?;
    summary.elapsed_ms = started.elapsed().as_millis() as u64;
    drop(lock);
    Ok(summary)
}

/// The documents of a pass: the scan's Markdown files, and its other files whose format
/// `[parsers].enabled` turns on (regular files only), sorted by path.
fn documents_of(
    root: &Path,
    scan: &crate::workspace::Scan,
    config: &Config,
) -> Vec<(String, Option<Format>)> {
    let mut documents: Vec<(String, Option<Format>)> =
        scan.markdown.iter().map(|p| (p.clone(), None)).collect();
    documents.extend(scan.other.iter().filter_map(|path| {
        let format = config.parsers.format_of(path)?;
        std::fs::symlink_metadata(root.join(path))
            .is_ok_and(|m| m.is_file())
            .then(|| (path.clone(), Some(format)))
    }));
    documents.sort_by(|a, b| a.0.cmp(&b.0));
    documents
}

/// The scan's regular files of a registered format whose parser `[parsers].enabled`
/// leaves off, sorted by path.
fn not_enabled(root: &Path, scan: &crate::workspace::Scan, config: &Config) -> Vec<String> {
    let mut paths: Vec<String> = scan
        .other
        .iter()
        .filter(|path| Format::of_path(path).is_some() && config.parsers.format_of(path).is_none())
        .filter(|path| std::fs::symlink_metadata(root.join(path)).is_ok_and(|m| m.is_file()))
        .cloned()
        .collect();
    paths.sort();
    paths
}

/// The outcome of a document of `format` at `path`: unchanged when its bytes hash to
/// `indexed`; skipped without extracting it again when they hash to the `unextracted`
/// record's (its hash, why); else its records, or why it was skipped.
fn read_other(
    root: &Path,
    path: &str,
    format: Format,
    config: &Config,
    indexed: Option<&String>,
    unextracted: Option<&(String, String)>,
) -> FileOutcome {
    let skipped = |reason| {
        FileOutcome::Skipped(Skipped {
            path: path.to_string(),
            reason,
        })
    };
    let bytes = match extracted::read_bytes(root, path, format, config) {
        Ok(bytes) => bytes,
        Err(reason) => return skipped(reason),
    };
    let hash = extracted::source_hash(&bytes);
    if indexed == Some(&hash) {
        return FileOutcome::Unchanged;
    }
    let unextracted_skip = |message: String, new: bool| {
        FileOutcome::Unextracted(
            Skipped {
                path: path.to_string(),
                reason: crate::workspace::SkipReason::NotExtracted { message },
            },
            hash.clone(),
            new,
        )
    };
    if let Some((failed, why)) = unextracted
        && *failed == hash
    {
        return unextracted_skip(why.clone(), false);
    }
    match extracted::records(path, format, bytes, mtime_ms(&root.join(path)), config) {
        Ok(records) => FileOutcome::Changed(Box::new(records)),
        Err(crate::workspace::SkipReason::NotExtracted { message }) => {
            unextracted_skip(message, true)
        }
        Err(reason) => skipped(reason),
    }
}

/// A file's modification time in milliseconds since the Unix epoch (0 when unknown).
fn mtime_ms(abs: &Path) -> i64 {
    std::fs::metadata(abs)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis() as i64)
}

#[cfg(test)]
mod tests;
