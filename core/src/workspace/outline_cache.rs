//! The outlines of a workspace's documents kept between language-server sessions, so that
//! reopening an unchanged workspace reads its files and skips their parse.
//!
//! A language server keeps closed documents as outlines ([`Parsed::keep_outline`]), and
//! parsing them is most of its start-up (markdown-rs, about 5 MB/s). The cache maps a
//! document's text (its 64-bit xxHash and byte length) to that outline, so a file is
//! parsed again only when its text changed; where the file is and what it is called do
//! not matter. One cache file per root, in the user's cache folder
//! ([`crate::data_dir::cache_dir_from`]`("outlines")`), named by a hash of the root's path.
//!
//! A cache file is used only by the same folio executable that wrote it (folio's version
//! and the executable file's device, inode, size, modification and status-change times
//! are its fingerprint), so a parser that changes cannot read outlines an older one made;
//! a file that is damaged (its checksum), cut short, written for another root or by
//! another build, or that is not a regular file, is ignored as a whole and written again
//! after the load. Reading it never fails a load: the worst case is a full parse.

use std::collections::HashMap;
use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::document::LineIndex;
use crate::le_reader::LeReader;
use crate::parse::Parsed;
use crate::pointer::hash_bytes;

/// The first bytes of a cache file; the last digit is the format's version.
const MAGIC: &[u8; 8] = b"folio-o1";

/// Workspaces with less Markdown than this (bytes) are parsed whole at every start
/// (a fifth of a second at most) and get no cache file.
pub const MIN_MARKDOWN_BYTES: u64 = 1024 * 1024;

/// Cache files not written for this long are deleted when another one is written.
const UNUSED_FOR: std::time::Duration = std::time::Duration::from_secs(30 * 24 * 3600);

/// How many entries of the cache folder one write looks at for pruning.
const PRUNE_AT_MOST: usize = 10_000;

/// A file being written this long ago was left by a writer that was killed.
const HALF_WRITTEN_FOR: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// The key of a text: its xxHash64 (seed 0, as [`crate::workspace::DocEntry::source_hash`])
/// and its length in bytes.
type Key = (u64, u64);

/// Where each outline is in a cache file's body, by key.
type Index = HashMap<Key, Range<usize>>;

/// The outlines read from a root's cache file (or none), looked up by text.
#[derive(Debug, Default)]
pub struct OutlineCache {
    /// Where the cache is written; `None`: no cache for this workspace.
    path: Option<PathBuf>,
    /// The root the file is for.
    root: PathBuf,
    /// The entries' bytes.
    body: Vec<u8>,
    /// Each entry's outline within `body`.
    index: Index,
    /// Lookups answered from the file.
    hits: AtomicUsize,
}

impl OutlineCache {
    /// No cache: every lookup misses and nothing is written.
    pub fn none() -> OutlineCache {
        OutlineCache::default()
    }

    /// The cache of the workspace at `root` (absolute) holding `markdown_bytes` of
    /// Markdown, in the user's cache folder; none when the workspace is smaller than
    /// [`MIN_MARKDOWN_BYTES`] or there is no cache folder. A missing or unusable file
    /// gives an empty cache (logged at debug level), to be written after the load.
    pub fn for_workspace(root: &Path, markdown_bytes: u64) -> OutlineCache {
        if markdown_bytes < MIN_MARKDOWN_BYTES {
            return OutlineCache::none();
        }
        let Some(dir) = crate::data_dir::cache_dir_from(|v| std::env::var_os(v), "outlines") else {
            return OutlineCache::none();
        };
        let name = format!(
            "{}.bin",
            crate::pointer::hex(hash_bytes(root.as_os_str().as_encoded_bytes()))
        );
        OutlineCache::at(dir.join(name), root)
    }

    /// [`OutlineCache::for_workspace`] for the workspace at `root` whose Markdown `pre`
    /// read.
    pub fn for_preread(root: &Path, pre: &super::Preread) -> OutlineCache {
        let bytes = pre
            .texts
            .iter()
            .filter_map(|t| t.as_ref().ok())
            .map(|(text, _)| text.len() as u64)
            .sum();
        OutlineCache::for_workspace(root, bytes)
    }

    /// The cache file at `path` for the workspace at `root`, whatever its size.
    pub fn at(path: PathBuf, root: &Path) -> OutlineCache {
        let mut cache = OutlineCache {
            path: Some(path),
            root: root.to_path_buf(),
            ..OutlineCache::default()
        };
        let path = cache.path.as_deref().expect("set above");
        match read_regular_file(path) {
            Ok(bytes) => match read_file(bytes, root) {
                Ok((body, index)) => {
                    cache.body = body;
                    cache.index = index;
                }
                Err(why) => tracing::debug!("outline cache {} not used: {why}", path.display()),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => tracing::debug!("outline cache {} not read: {e}", path.display()),
        }
        cache
    }

    /// The outlines the file holds.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// True when the file held no outline.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// How many lookups were answered from the file so far.
    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::Relaxed)
    }

    /// The outline of `text` when the file holds one for exactly this text, with its line
    /// index made from the text. Thread-safe: loads look up from every parse thread.
    pub fn get(&self, text: &str) -> Option<Parsed> {
        let range = self.index.get(&key(text))?;
        let mut parsed: Parsed = postcard::from_bytes(&self.body[range.clone()]).ok()?;
        if !parsed.outline_only || !fits(&parsed, text) {
            return None;
        }
        parsed.lines = Some(LineIndex::new(text));
        self.hits.fetch_add(1, Ordering::Relaxed);
        Some(parsed)
    }

    /// What to write after a load that gave `outlines` (each document's source hash, text
    /// length in bytes and outline; one entry per distinct text), or `None` when there is
    /// no cache or the file already holds exactly these texts (then its modification time
    /// is set to now, so that [`OutlineSave::write`]'s pruning keeps a cache in use).
    pub fn save(&self, mut outlines: Vec<(u64, u64, Arc<Parsed>)>) -> Option<OutlineSave> {
        let path = self.path.clone()?;
        // Documents with the same text share one entry.
        outlines.sort_unstable_by_key(|(hash, len, _)| (*hash, *len));
        outlines.dedup_by_key(|(hash, len, _)| (*hash, *len));
        let unchanged = outlines.len() == self.index.len()
            && outlines
                .iter()
                .all(|(hash, len, _)| self.index.contains_key(&(*hash, *len)));
        if unchanged {
            // Read and still right: marked as used, so that pruning keeps it.
            let _ = std::fs::File::options()
                .write(true)
                .open(&path)
                .and_then(|f| f.set_modified(std::time::SystemTime::now()));
            return None;
        }
        Some(OutlineSave {
            path,
            root: self.root.clone(),
            outlines,
        })
    }
}

/// A cache file to write ([`OutlineCache::save`]), on any thread.
#[derive(Debug)]
pub struct OutlineSave {
    path: PathBuf,
    root: PathBuf,
    outlines: Vec<(u64, u64, Arc<Parsed>)>,
}

impl OutlineSave {
    /// How many outlines it holds.
    pub fn len(&self) -> usize {
        self.outlines.len()
    }

    /// True when it holds none.
    pub fn is_empty(&self) -> bool {
        self.outlines.is_empty()
    }

    /// Writes the file whole: a new file renamed over the old, so a reader sees one or
    /// the other and two servers writing at once leave one whole file. Then deletes
    /// other cache files nobody wrote for 30 days.
    ///
    /// Errors: the folder cannot be made or written (nothing else changes).
    pub fn write(self) -> std::io::Result<()> {
        let dir = self
            .path
            .parent()
            .ok_or_else(|| std::io::Error::other("a cache file needs a folder"))?;
        std::fs::create_dir_all(dir)?;
        let mut body = Vec::new();
        body.extend_from_slice(&(self.outlines.len() as u64).to_le_bytes());
        for (hash, len, parsed) in &self.outlines {
            let bytes = postcard::to_allocvec(parsed.as_ref()).map_err(std::io::Error::other)?;
            body.extend_from_slice(&hash.to_le_bytes());
            body.extend_from_slice(&len.to_le_bytes());
            body.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            body.extend_from_slice(&bytes);
        }
        let mut file = tempfile::NamedTempFile::new_in(dir)?;
        file.write_all(&header(&self.root, &body))?;
        file.write_all(&body)?;
        file.persist(&self.path).map_err(|e| e.error)?;
        prune(dir, &self.path);
        Ok(())
    }
}

/// The key of `text`.
fn key(text: &str) -> Key {
    (hash_bytes(text.as_bytes()), text.len() as u64)
}

/// What makes a cache file this build's: the format, folio's version and the identity of
/// the running executable's file (device, inode, size, modification and status-change
/// times), so that a parser that changed in any way never reads another build's
/// outlines. The status-change time (`ctime`) is set by the kernel whenever a file is
/// written, copied in or renamed into place, so a rebuilt or reinstalled executable
/// differs even where packaging normalises modification times (Nix) and the size did not
/// change. `None` when the executable cannot be found: then no cache is read or written.
fn fingerprint() -> Option<u64> {
    static FINGERPRINT: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    *FINGERPRINT.get_or_init(|| {
        let meta = std::fs::metadata(std::env::current_exe().ok()?).ok()?;
        let modified = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        #[cfg(unix)]
        let file = {
            use std::os::unix::fs::MetadataExt;
            (meta.dev(), meta.ino(), meta.ctime(), meta.ctime_nsec())
        };
        #[cfg(not(unix))]
        let file = ();
        let id = format!(
            "{}|{}|{}|{modified}|{file:?}",
            MAGIC.escape_ascii(),
            env!("CARGO_PKG_VERSION"),
            meta.len()
        );
        Some(hash_bytes(id.as_bytes()))
    })
}

/// The header of a file for `root` whose entries are `body`: the magic bytes, the
/// fingerprint, the body's checksum and length, then the root's path and its length.
fn header(root: &Path, body: &[u8]) -> Vec<u8> {
    let root = root.as_os_str().as_encoded_bytes();
    let mut out = Vec::with_capacity(40 + root.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&fingerprint().unwrap_or_default().to_le_bytes());
    out.extend_from_slice(&hash_bytes(body).to_le_bytes());
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(&(root.len() as u64).to_le_bytes());
    out.extend_from_slice(root);
    out
}

/// Cache files larger than this are not read (tldr's 38,430 outlines take 3.7 MB).
const MAX_FILE_BYTES: u64 = 1 << 30;

/// The bytes of the regular file at `path`: opened without blocking (a FIFO or a device
/// put there is refused, never waited on), and refused over [`MAX_FILE_BYTES`].
fn read_regular_file(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() || meta.len() > MAX_FILE_BYTES {
        return Err(std::io::Error::other(
            "not a regular file of a cache's size",
        ));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    std::io::Read::read_to_end(&mut std::io::Read::take(file, MAX_FILE_BYTES), &mut bytes)?;
    Ok(bytes)
}

/// A length stored as a little-endian `u64`.
fn length(r: &mut LeReader) -> Result<usize, String> {
    usize::try_from(r.u64()?).map_err(|_| "a length too large".to_owned())
}

/// The body of a cache file and its index, or why the file is not used.
fn read_file(bytes: Vec<u8>, root: &Path) -> Result<(Vec<u8>, Index), String> {
    let mut at = LeReader::new(&bytes, 0);
    if at.take(MAGIC.len())? != MAGIC {
        return Err("not a cache file of this format".into());
    }
    if Some(at.u64()?) != fingerprint() {
        return Err("written by another folio build".into());
    }
    let checksum = at.u64()?;
    let body_len = length(&mut at)?;
    let root_len = length(&mut at)?;
    if at.take(root_len)? != root.as_os_str().as_encoded_bytes() {
        return Err("written for another root".into());
    }
    let start = at.at;
    let body = at.take(body_len)?;
    if hash_bytes(body) != checksum || at.at != bytes.len() {
        return Err("damaged (its checksum or length is wrong)".into());
    }
    let mut entries = LeReader::new(body, 0);
    let count = length(&mut entries)?;
    let mut index = HashMap::with_capacity(count.min(body.len() / 24));
    for _ in 0..count {
        let hash = entries.u64()?;
        let len = entries.u64()?;
        let size = length(&mut entries)?;
        let from = entries.at;
        entries.take(size)?;
        index.insert((hash, len), from..from + size);
    }
    let mut bytes = bytes;
    bytes.drain(..start);
    Ok((bytes, index))
}

/// True when every range of `parsed` lies within `text` on character boundaries and every
/// parent and heading element index points to an element (a parent before its child): an outline that does not cannot be this text's,
/// whatever the file says.
fn fits(parsed: &Parsed, text: &str) -> bool {
    let ok = |r: &Range<usize>| {
        r.start <= r.end && text.is_char_boundary(r.start) && text.is_char_boundary(r.end)
    };
    let n = parsed.elements.len();
    parsed
        .elements
        .iter()
        .enumerate()
        .all(|(i, e)| ok(&e.range) && ok(&e.subtree) && e.parent.is_none_or(|p| p < i))
        && parsed
            .headings
            .iter()
            .all(|h| h.element.is_none_or(|e| e < n))
        && parsed
            .headings
            .iter()
            .all(|h| ok(&h.range) && ok(&h.text_range))
        && parsed.anchors.iter().all(|a| ok(&a.range))
        && parsed.definition_terms.iter().all(|(_, r)| ok(r))
        && parsed
            .definitions
            .iter()
            .all(|d| ok(&d.range) && ok(&d.label_range))
        && parsed.footnote_definitions.iter().all(|(_, r)| ok(r))
        && parsed.block_ids.iter().all(|(_, r)| ok(r))
        && parsed.tags.iter().all(|t| ok(&t.range))
        && parsed.links.iter().all(|l| {
            ok(&l.range)
                && l.dest_range.as_ref().is_none_or(ok)
                && l.fragment_range.as_ref().is_none_or(ok)
        })
        && parsed.problems.iter().all(|p| ok(&p.range))
}

/// Deletes the cache files in `dir` other than `kept` that were not written for
/// [`UNUSED_FOR`] (a workspace deleted or no longer opened), and files a writer killed
/// half-way left (`.tmp…`) a day old. Errors are ignored.
fn prune(dir: &Path, kept: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let now = std::time::SystemTime::now();
    // A folder filled with other files is not walked whole at every write.
    for entry in entries.flatten().take(PRUNE_AT_MOST) {
        let path = entry.path();
        let Some(age) = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| now.duration_since(t).ok())
        else {
            continue;
        };
        let cache = path.extension().is_some_and(|e| e == "bin") && age > UNUSED_FOR;
        let left_half_written =
            entry.file_name().to_string_lossy().starts_with(".tmp") && age > HALF_WRITTEN_FOR;
        if path != kept && (cache || left_half_written) {
            let _ = std::fs::remove_file(path);
        }
    }
}
