//! The workspace: its root, configuration, files on disk and the parsed model of every
//! Markdown document in it.
//!
//! Walking honours `.gitignore`, `.ignore` and `.folioignore` (the `ignore` crate) and
//! never enters `.git/` or `.folio/`. Markdown files are `.md` and `.markdown`. A file
//! that is not valid UTF-8, looks binary, is over the size cap or cannot be read is
//! skipped and reported with its reason — never a crash.

pub mod beneath;
pub mod outline_cache;
use crate::path_policy;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

pub use crate::config::Config;
pub use crate::config::SiteGenerator;

use crate::document::{Document, LineIndex};
use crate::parse::{Parsed, parse};
use crate::pointer::hash_bytes;
use outline_cache::OutlineCache;

/// Why a file was not loaded (a Markdown file, or another document [`crate::formats`] reads).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "reason", rename_all = "kebab-case")]
pub enum SkipReason {
    /// Larger than the configured cap.
    TooLarge {
        /// Size in bytes.
        size: u64,
        /// The cap in bytes.
        cap: u64,
    },
    /// Not valid UTF-8.
    InvalidUtf8 {
        /// Byte offset of the first invalid sequence.
        at: usize,
    },
    /// Contains NUL bytes: a binary file with a Markdown name.
    Binary,
    /// A symbolic link; folio does not follow links.
    Symlink,
    /// Nested too deeply or too crowded to parse safely (see [`crate::parse::nesting_problem`]).
    TooComplex {
        /// Where and how.
        detail: String,
    },
    /// Reading failed.
    Unreadable {
        /// The operating system's message.
        message: String,
    },
    /// A document other than Markdown whose text could not be extracted: too large,
    /// over the decompression or time budget, encrypted, malformed
    /// ([`crate::formats::ExtractError`]).
    NotExtracted {
        /// Why, as [`crate::formats::ExtractError`] says it.
        message: String,
    },
}

impl std::fmt::Display for SkipReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SkipReason::TooLarge { size, cap } => {
                write!(f, "too large ({size} bytes; the cap is {cap} bytes)")
            }
            SkipReason::InvalidUtf8 { at } => {
                write!(f, "not valid UTF-8 (first invalid byte at offset {at})")
            }
            SkipReason::Binary => write!(f, "binary content (NUL bytes)"),
            SkipReason::Symlink => write!(f, "symbolic link (not followed)"),
            SkipReason::TooComplex { detail } => {
                write!(f, "too complex to parse safely: {detail}")
            }
            SkipReason::Unreadable { message } => write!(f, "unreadable: {message}"),
            SkipReason::NotExtracted { message } => write!(f, "text not extracted: {message}"),
        }
    }
}

/// A skipped file and why.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Skipped {
    /// KB-relative path.
    pub path: String,
    /// The reason.
    #[serde(flatten)]
    pub reason: SkipReason,
}

/// Errors that stop a workspace from loading at all.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    /// The root does not exist or is not a folder.
    #[error("`{0}` does not exist or is not a folder")]
    NoRoot(String),
    /// `folio.toml` is unreadable or invalid.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
}

/// The result of walking a root.
#[derive(Clone, Debug, Default)]
pub struct Scan {
    /// KB-relative paths of Markdown files, sorted.
    pub markdown: Vec<String>,
    /// KB-relative paths of every other file and of every folder (the root is `""`).
    pub other: Vec<String>,
    /// Files skipped during the walk (symbolic links).
    pub skipped: Vec<Skipped>,
}

/// True for `.md` and `.markdown` file names (ASCII case-insensitive).
pub fn is_markdown(path: &str) -> bool {
    let lower = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    lower.ends_with(".md") || lower.ends_with(".markdown")
}

/// The folder of folio's derived data for `root` (the index, the write lock, the journal
/// of multi-file writes): `<root>/.folio`, unless that folder does not exist and the root
/// is read-only (no write permission bit set, so this holds even for root); then a folder
/// under the user's cache, `$XDG_CACHE_HOME/folio/<XxHash64 of the root path>`, else
/// `~/.cache/folio/...`.
///
/// Creates nothing.
pub fn state_dir(root: &Path) -> PathBuf {
    let local = root.join(".folio");
    let read_only = std::fs::metadata(root)
        .map(|m| is_read_only(&m))
        .unwrap_or(false);
    if local.is_dir() || !read_only {
        return local;
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    let key = crate::pointer::hex(hash_bytes(root.to_string_lossy().as_bytes()));
    cache.join("folio").join(key)
}

/// Creates `dir` (a state folder, [`state_dir`], or the folder of an index given with
/// `--db`) with its missing parents; a folder named `.folio` also gets a `.gitignore`
/// holding `*` unless it has one, so git never sees derived data. A user's own folder
/// is never hidden from git.
///
/// `dir` itself is created with mode `0700` (its parents as the umask says): the index in
/// it holds the text of every note, the journal plans of moves. An existing folder keeps
/// its mode (docs/reliability.md "Permissions").
pub fn prepare_state_dir(dir: &Path) -> std::io::Result<()> {
    if !dir.is_dir() {
        if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)?;
        }
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        match builder.create(dir) {
            Ok(()) => {}
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists && dir.is_dir() => {}
            Err(err) => return Err(err),
        }
    }
    if dir.file_name().is_some_and(|n| n == ".folio") {
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(dir.join(".gitignore"))
        {
            Ok(mut file) => {
                use std::io::Write;
                file.write_all(b"*\n")?;
            }
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(err) => return Err(err),
        }
    }
    Ok(())
}

#[cfg(unix)]
fn is_read_only(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o222 == 0
}

#[cfg(not(unix))]
fn is_read_only(meta: &std::fs::Metadata) -> bool {
    meta.permissions().readonly()
}

/// The workspace root for `start`: the folder itself if given a folder that holds
/// `folio.toml` or `.git`, else the nearest ancestor that does, else `start`'s folder.
pub fn find_root(start: &Path) -> PathBuf {
    let start_dir = if start.is_file() {
        start.parent().unwrap_or(start)
    } else {
        start
    };
    let start_dir = start_dir
        .canonicalize()
        .unwrap_or_else(|_| start_dir.to_path_buf());
    for dir in start_dir.ancestors() {
        if dir.join(crate::config::CONFIG_FILE).is_file() || dir.join(".git").exists() {
            return dir.to_path_buf();
        }
    }
    start_dir
}

/// `path` relative to `root`, `/`-separated; `None` outside it or not UTF-8 (`""` for
/// the root itself).
pub(crate) fn relative(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
    Some(parts?.join("/"))
}

/// Walks `root`, honouring ignore files and `[index].exclude`.
///
/// `.gitignore` files count only inside a git repository, as git scopes them;
/// `.ignore` and `.folioignore` count everywhere.
pub fn scan(root: &Path, config: &Config) -> Result<Scan, WorkspaceError> {
    if !root.is_dir() {
        return Err(WorkspaceError::NoRoot(root.display().to_string()));
    }
    let mut overrides = ignore::overrides::OverrideBuilder::new(root);
    for glob in &config.index.exclude {
        // An override glob prefixed with `!` excludes; `Config` validated the globs.
        let _ = overrides.add(&format!("!{glob}"));
    }
    let _ = overrides.add("!.git/");
    let _ = overrides.add("!.folio/");
    let overrides = overrides
        .build()
        .unwrap_or_else(|_| ignore::overrides::Override::empty());
    let walker = ignore::WalkBuilder::new(root)
        .hidden(false)
        .git_global(false)
        .add_custom_ignore_filename(".folioignore")
        .overrides(overrides)
        .follow_links(false)
        .build_parallel();
    let found = Mutex::new(Scan::default());
    walker.run(|| {
        Box::new(|entry| {
            let Ok(entry) = entry else {
                return ignore::WalkState::Continue;
            };
            let Some(rel) = relative(root, entry.path()) else {
                return ignore::WalkState::Continue;
            };
            if rel == ".git" || rel == ".folio" {
                return ignore::WalkState::Skip;
            }
            let Some(ft) = entry.file_type() else {
                return ignore::WalkState::Continue;
            };
            let mut scan = found.lock().expect("scan lock poisoned");
            if ft.is_symlink() {
                // A link to a document folio would read is named, never followed.
                if is_markdown(&rel) || config.parsers.format_of(&rel).is_some() {
                    scan.skipped.push(Skipped {
                        path: rel,
                        reason: SkipReason::Symlink,
                    });
                }
            } else if ft.is_file() && is_markdown(&rel) {
                scan.markdown.push(rel);
            } else {
                scan.other.push(rel);
            }
            ignore::WalkState::Continue
        })
    });
    let mut scan = found.into_inner().expect("scan lock poisoned");
    scan.markdown.sort();
    scan.other.sort();
    scan.skipped.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(scan)
}

/// Reads one Markdown file by its path under the size cap, checking it is a regular file
/// without NUL bytes that is not too complex to parse, as indexing reads a note: text
/// that is not UTF-8 is read with U+FFFD for each invalid sequence, and the offset of the
/// first (bytes) comes with it. For a file the user names on the command line; a file of
/// a root is read with [`read_markdown_in`] or [`read_markdown_lossy_in`].
pub fn read_markdown_lossy(abs: &Path, cap: u64) -> Result<(String, Option<usize>), SkipReason> {
    let meta = std::fs::metadata(abs).map_err(|e| SkipReason::Unreadable {
        message: e.to_string(),
    })?;
    if !meta.is_file() {
        return Err(SkipReason::Unreadable {
            message: "not a regular file".into(),
        });
    }
    if meta.len() > cap {
        return Err(SkipReason::TooLarge {
            size: meta.len(),
            cap,
        });
    }
    let bytes = std::fs::read(abs).map_err(|e| SkipReason::Unreadable {
        message: e.to_string(),
    })?;
    let (text, invalid_at) = decode(bytes, cap)?;
    checked_nesting(text).map(|text| (text, invalid_at))
}

/// Reads the Markdown file at KB-relative `path` of `root` under the size cap, checking
/// it is a regular file of UTF-8 text without NUL bytes that is not too complex to parse,
/// never through a symbolic link ([`beneath`]): a link anywhere on the way, or swapped in
/// after the path policy checked the path, is [`SkipReason::Symlink`].
pub fn read_markdown_in(root: &Path, path: &str, cap: u64) -> Result<String, SkipReason> {
    markdown_text(read_bytes_in(root, path, cap)?, cap)
}

/// A Markdown file read as [`read_markdown_lossy_in`] reads it: its text and the byte
/// offset of its first invalid UTF-8 sequence, or why it was skipped.
pub type LossyRead = Result<(String, Option<usize>), SkipReason>;

/// A file's size in bytes, modification time and (on Unix) status-change time in
/// nanoseconds since the epoch, to notice a change without reading it. The status-change
/// time cannot be set by a program, so a same-size edit that puts the old modification
/// time back (`cp -p`, `rsync -t`, `touch -r`) is still noticed.
pub type FileStamp = (u64, Option<SystemTime>, Option<i128>);

/// The [`FileStamp`] of `meta`.
fn stamp_of(meta: &std::fs::Metadata) -> FileStamp {
    #[cfg(unix)]
    let changed = {
        use std::os::unix::fs::MetadataExt;
        Some(i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()))
    };
    #[cfg(not(unix))]
    let changed = None;
    (meta.len(), meta.modified().ok(), changed)
}

/// The [`FileStamp`] of the file at `path` (not following a symbolic link at the end);
/// `None` when it cannot be read.
pub fn file_stamp(path: &Path) -> Option<FileStamp> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    Some(stamp_of(&meta))
}

/// The bytes of the file at KB-relative `path`, read as [`read_markdown_in`] reads them.
fn read_bytes_in(root: &Path, path: &str, cap: u64) -> Result<Vec<u8>, SkipReason> {
    read_bytes_stamped_in(root, path, cap, &mut None)
}

/// [`read_bytes_in`], which also sets `stamp` to the open file's [`FileStamp`], taken
/// before its bytes are read: a change made during or after the read leaves the file
/// with another stamp, so it is noticed. `stamp` stays `None` when the file could not
/// be opened.
fn read_bytes_stamped_in(
    root: &Path,
    path: &str,
    cap: u64,
    stamp: &mut Option<FileStamp>,
) -> Result<Vec<u8>, SkipReason> {
    use std::io::Read;
    let unreadable = |e: std::io::Error| SkipReason::Unreadable {
        message: e.to_string(),
    };
    let (folder, name) = beneath::parent(root, path, false).map_err(|e| {
        if e.kind() == std::io::ErrorKind::InvalidInput {
            SkipReason::Symlink
        } else {
            unreadable(e)
        }
    })?;
    let (file, _) = folder.open_file(name).map_err(|e| {
        if e.kind() == std::io::ErrorKind::InvalidInput && e.to_string().contains("symbolic") {
            SkipReason::Symlink
        } else {
            unreadable(e)
        }
    })?;
    let meta = file.metadata().map_err(unreadable)?;
    let size = meta.len();
    *stamp = Some(stamp_of(&meta));
    if size > cap {
        return Err(SkipReason::TooLarge { size, cap });
    }
    let mut bytes = Vec::with_capacity(size as usize);
    file.take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    Ok(bytes)
}

/// [`read_markdown_in`] for reading only: a file that is not valid UTF-8 (a note saved as
/// Windows-1252, say) is read with each invalid sequence replaced by U+FFFD, and the
/// offset of the first one is returned with the text. Such a file is indexed, checked and
/// shown, never written: writes read it with [`read_markdown_in`], which refuses it, so
/// its bytes are never rewritten.
pub fn read_markdown_lossy_in(
    root: &Path,
    path: &str,
    cap: u64,
) -> Result<(String, Option<usize>), SkipReason> {
    read_markdown_stamped_in(root, path, cap).1
}

/// [`read_markdown_lossy_in`] with the file's [`FileStamp`] as it was when the read
/// began (`None` when the file could not be opened), for a model that later compares
/// stamps to find what changed since ([`DiskState`]).
pub fn read_markdown_stamped_in(
    root: &Path,
    path: &str,
    cap: u64,
) -> (Option<FileStamp>, LossyRead) {
    let mut stamp = None;
    let read = read_bytes_stamped_in(root, path, cap, &mut stamp).and_then(|bytes| {
        let (text, invalid_at) = decode(bytes, cap)?;
        checked_nesting(text).map(|text| (text, invalid_at))
    });
    (stamp, read)
}

/// Whether `text`, written as a note, would pass the checks a note is read with (the
/// size cap of `cap` bytes, no NUL bytes, not nested too deeply to parse): writers call
/// it before they write, so nothing folio writes is a note it then refuses to read.
///
/// Errors: the [`SkipReason`] a read of the written file would give.
pub fn check_writable_markdown(text: &str, cap: u64) -> Result<(), SkipReason> {
    markdown_text(text.as_bytes().to_vec(), cap).map(drop)
}

/// The checks of a Markdown file's bytes: the size cap (`cap` bytes), no NUL bytes,
/// UTF-8, not nested too deeply to parse. Returns the text, or why the file is not read
/// as a document.
pub fn markdown_text(bytes: Vec<u8>, cap: u64) -> Result<String, SkipReason> {
    match decode(bytes, cap)? {
        (text, None) => checked_nesting(text),
        (_, Some(at)) => Err(SkipReason::InvalidUtf8 { at }),
    }
}

/// The size cap and the NUL check, then the text: as it is when it is UTF-8, else with
/// U+FFFD for each invalid sequence and the offset of the first.
fn decode(bytes: Vec<u8>, cap: u64) -> Result<(String, Option<usize>), SkipReason> {
    if bytes.len() as u64 > cap {
        return Err(SkipReason::TooLarge {
            size: bytes.len() as u64,
            cap,
        });
    }
    if bytes.contains(&0) {
        return Err(SkipReason::Binary);
    }
    Ok(match String::from_utf8(bytes) {
        Ok(text) => (text, None),
        Err(e) => (
            String::from_utf8_lossy(e.as_bytes()).into_owned(),
            Some(e.utf8_error().valid_up_to()),
        ),
    })
}

/// `text`, unless it is nested too deeply or too crowded to parse safely.
fn checked_nesting(text: String) -> Result<String, SkipReason> {
    match crate::parse::nesting_problem(&text) {
        Some(detail) => Err(SkipReason::TooComplex { detail }),
        None => Ok(text),
    }
}

/// The Markdown files of a root walked and read into memory, not parsed yet: the first
/// half of [`Workspace::load`], so a caller can use the texts (a line scan such as
/// [`crate::parse::outline`]) before the parse, which costs about fifty times the read.
#[derive(Debug)]
pub struct Preread {
    /// The walk.
    pub scan: Scan,
    /// For each of `scan.markdown`, in order: the text and the byte offset of its first
    /// invalid UTF-8 sequence ([`read_markdown_lossy_in`]), or why it was skipped.
    pub texts: Vec<LossyRead>,
    /// For each of `scan.markdown`, in order: its [`FileStamp`] when the read began
    /// (`None` when it could not be opened).
    pub stamps: Vec<Option<FileStamp>>,
}

impl Preread {
    /// Walks `root` and reads every Markdown file (in parallel).
    ///
    /// Errors: the root is missing. Unreadable files are in `texts` with the reason.
    pub fn read(root: &Path, config: &Config) -> Result<Preread, WorkspaceError> {
        let scan = scan(root, config)?;
        let cap = config.index.max_file_size;
        let (stamps, texts) = parallel_map(&scan.markdown, |rel| {
            read_markdown_stamped_in(root, rel, cap)
        })
        .into_iter()
        .unzip();
        Ok(Preread {
            scan,
            texts,
            stamps,
        })
    }
}

/// A root as it is on disk, walked without reading any file: its [`Scan`] and the
/// [`FileStamp`] of each Markdown file. A model compares it with the stamps it took when
/// it read the files to find what changed since, without watching.
#[derive(Debug)]
pub struct DiskState {
    /// The walk.
    pub scan: Scan,
    /// For each of `scan.markdown`, in order: its stamp now (`None`: gone or unreadable).
    pub stamps: Vec<Option<FileStamp>>,
}

impl DiskState {
    /// Walks `root` and takes the stamp of every Markdown file (in parallel, one
    /// `lstat` each).
    ///
    /// Errors: the root is missing.
    pub fn read(root: &Path, config: &Config) -> Result<DiskState, WorkspaceError> {
        let scan = scan(root, config)?;
        let stamps = parallel_map(&scan.markdown, |rel| file_stamp(&root.join(rel)));
        Ok(DiskState { scan, stamps })
    }
}

/// Where a document's current text comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The file on disk.
    Disk,
    /// An editor buffer that overrides the disk copy while open.
    Editor,
}

/// One Markdown document of the workspace.
#[derive(Clone, Debug)]
pub struct DocEntry {
    /// The live text.
    pub doc: Document,
    /// The parse of the current text.
    pub parsed: Arc<Parsed>,
    /// XxHash64 of the current text's bytes.
    pub source_hash: u64,
    /// Where the text comes from.
    pub origin: Origin,
}

impl DocEntry {
    /// The parse with every block element: [`DocEntry::parsed`] itself, or a new parse of
    /// the text when the entry is kept as an outline ([`Parsed::keep_outline`]). For
    /// what reads the elements a closed document's outline drops (folding, code blocks,
    /// list items, pointers).
    pub fn full_parsed(&self) -> Arc<Parsed> {
        if self.parsed.outline_only {
            Arc::new(parse(&self.doc.text()))
        } else {
            Arc::clone(&self.parsed)
        }
    }

    /// Parses `text` into a new entry; its compact [`Document`] shares the parse's line index.
    pub fn new(text: &str, version: i32, origin: Origin) -> DocEntry {
        DocEntry::with_parse(text, parse(text), version, origin, false)
    }

    /// An entry of `text` with its parse `parsed` (made from `text`); with `pack`, its
    /// text is packed ([`Document::pack`]) without a compact copy first.
    pub fn with_parse(
        text: &str,
        parsed: Parsed,
        version: i32,
        origin: Origin,
        pack: bool,
    ) -> DocEntry {
        let lines = parsed.lines.clone().unwrap_or_else(|| LineIndex::new(text));
        let doc = if pack {
            Document::packed_with_lines(text, lines, version)
        } else {
            Document::with_lines(text, lines, version)
        };
        DocEntry {
            doc,
            parsed: Arc::new(parsed),
            source_hash: hash_bytes(text.as_bytes()),
            origin,
        }
    }
}

/// Counts from loading a workspace.
#[derive(Clone, Debug, Default)]
pub struct LoadReport {
    /// Markdown documents loaded.
    pub loaded: usize,
    /// Files skipped, with reasons.
    pub skipped: Vec<Skipped>,
    /// Documents loaded that are not valid UTF-8: (path, byte offset of the first invalid
    /// sequence), sorted by path. They were read with U+FFFD replacements and are read-only
    /// ([`read_markdown_lossy_in`]).
    pub replaced: Vec<(String, usize)>,
    /// Documents whose outline came from the outline cache instead of a parse
    /// ([`outline_cache::OutlineCache`]).
    pub from_cache: usize,
}

/// The live model of every Markdown document under one root.
#[derive(Clone, Debug)]
pub struct Workspace {
    root: PathBuf,
    config: Config,
    docs: BTreeMap<String, DocEntry>,
    other: HashSet<String>,
    /// Lowercased file stem → Markdown paths.
    by_stem: HashMap<String, Vec<String>>,
    /// Lowercased file name → other file paths.
    by_name: HashMap<String, Vec<String>>,
    /// Folded frontmatter alias ([`Parsed::aliases`], [`path_policy::folded`]) →
    /// documents that give it.
    by_alias: HashMap<String, Vec<String>>,
    /// Folded path ([`path_policy::folded`]: NFC, lowercased) → documents and other paths
    /// spelled that way, for links that differ in letter case or Unicode normalisation.
    by_folded: HashMap<String, Vec<String>>,
    /// Lowercased file extension → how many files and folders of the workspace have it.
    extensions: HashMap<String, usize>,
    /// Lowercased extension → how many folders holding something have it
    /// (`version-0.81/`), which [`Workspace::has_extension`] leaves out.
    folder_extensions: HashMap<String, usize>,
    /// Folder (KB-relative) → how many documents and other paths lie under it.
    under: HashMap<String, usize>,
    /// Markdown links resolve as in an Obsidian vault ([`crate::config::LinksConfig::obsidian`]).
    vault: bool,
    /// The site generator, its layout and what its rules built from the pages
    /// ([`crate::config::LinksConfig::generator`], [`crate::site`]).
    site: crate::site::Site,
}

/// The site rules read the workspace's documents, their frontmatter and its other files.
impl crate::site::Pages for Workspace {
    fn pages(&self) -> Box<dyn Iterator<Item = (&str, Option<&serde_json::Value>)> + '_> {
        Box::new(
            self.docs
                .iter()
                .map(|(path, entry)| (path.as_str(), entry.parsed.frontmatter.as_ref())),
        )
    }

    fn frontmatter(&self, path: &str) -> Option<&serde_json::Value> {
        self.docs.get(path)?.parsed.frontmatter.as_ref()
    }

    fn other_paths(&self) -> Box<dyn Iterator<Item = &str> + '_> {
        Box::new(self.other.iter().map(String::as_str))
    }
}

impl Workspace {
    /// An empty workspace (for tests and single-file mode).
    pub fn new(root: PathBuf, config: Config) -> Workspace {
        let vault = is_vault(&root, &config);
        let site = crate::site::Site::new(&root, &config);
        Workspace {
            root,
            config,
            docs: BTreeMap::new(),
            other: HashSet::new(),
            by_stem: HashMap::new(),
            by_name: HashMap::new(),
            by_alias: HashMap::new(),
            by_folded: HashMap::new(),
            extensions: HashMap::new(),
            folder_extensions: HashMap::new(),
            under: HashMap::new(),
            vault,
            site,
        }
    }

    /// Forgets the redirections read from a docfx site's redirection files, after one of
    /// them changed; true on a docfx site (the caller then checks every document again).
    pub fn redirections_changed(&mut self) -> bool {
        self.site.redirections_changed()
    }

    /// On a docfx site, the URL the page at KB-relative `path` redirects to
    /// ([`crate::site::Site::docfx_redirect`]). `None` elsewhere.
    pub fn docfx_redirect(&self, path: &str) -> Option<&str> {
        self.site.docfx_redirect(&self.root, self, path)
    }

    /// True when Markdown links resolve as in an Obsidian vault: `[links].obsidian`, else
    /// an `.obsidian/` folder at the root.
    pub fn is_vault(&self) -> bool {
        self.vault
    }

    /// The site generator whose heading ids also name headings
    /// ([`crate::site::Layout::of`]: `[links].generator`, else detected).
    pub fn generator(&self) -> SiteGenerator {
        self.site.layout().generator
    }

    /// For a Docusaurus or Hugo site, the folders (KB-relative) a link to a Markdown file
    /// is also looked up from: its docs or content folders, then its site folder. Empty
    /// for other generators.
    pub fn site_lookup_folders(&self) -> &[String] {
        &self.site.layout().lookup_folders
    }

    /// For a Docusaurus site, the URL path its docs are published under, without slashes
    /// (`docs` unless its configuration sets `routeBasePath`); `""` for other generators.
    pub fn site_route_base(&self) -> &str {
        &self.site.layout().route_base
    }

    /// For a Docusaurus site, the document or `.mdx` file published at URL path `url`
    /// ([`crate::site::Site::page_at_url`]). `None` elsewhere.
    pub fn page_at_url(&self, url: &str) -> Option<&str> {
        self.site.page_at_url(self, url)
    }

    /// True for a Hugo site whose configuration sets `autoDefinitionTermID`: definition
    /// terms have ids ([`crate::parse::definition_term_ids`]).
    pub fn definition_term_ids(&self) -> bool {
        self.site.layout().definition_term_ids
    }

    /// For a Hugo site, its module mounts into the content: (target's logical path without
    /// slashes, `docs/specs`; the source, KB-relative, when the workspace has it).
    pub fn hugo_content_mounts(&self) -> &[(String, Option<String>)] {
        &self.site.layout().content_mounts
    }

    /// For a Hugo site, the pages that include each snippet (KB paths), as `build` finds
    /// them over the whole workspace ([`crate::site::Site::includers`]).
    pub fn includers(
        &self,
        build: impl FnOnce(&Workspace) -> HashMap<String, Vec<String>>,
    ) -> &HashMap<String, Vec<String>> {
        self.site.includers(self, build)
    }

    /// For a Hugo site, its module mounts into `static/` whose source it has: (target under
    /// `static/`, lowercased, `""` for `static/` itself; source folder, KB-relative).
    pub fn hugo_static_mounts(&self) -> &[(String, String)] {
        &self.site.layout().static_mounts
    }

    /// For a Hugo site, the document whose logical path or URL path is `url` among the
    /// pages of the content folder `content_folder` ([`crate::site::Site::hugo_page`]).
    /// `None` elsewhere.
    pub fn hugo_page(&self, content_folder: &str, url: &str) -> Option<&str> {
        self.site.hugo_page(self, content_folder, url)
    }

    /// For a Docusaurus site, the URL path of the page at `path` when it lies in one of
    /// its docs folders; for a Hugo site, when it lies in a content folder
    /// ([`crate::site::Site::page_url_as`]). `None` elsewhere.
    pub fn page_url_of(&self, path: &str) -> Option<String> {
        self.page_url_as(path, path)
    }

    /// The URL path the page at `path` (its frontmatter) would have at `at`, where a move
    /// takes it ([`crate::site::Site::page_url_as`]).
    pub fn page_url_as(&self, path: &str, at: &str) -> Option<String> {
        self.site.page_url_as(self, path, at)
    }

    /// For a Docusaurus site, the docs folder `path` lies in; for a Hugo site, the content
    /// folder ([`crate::site::Layout::docs_folder_of`]). `None` elsewhere.
    pub fn docs_folder_of(&self, path: &str) -> Option<&str> {
        self.site.layout().docs_folder_of(path)
    }

    /// For a Docusaurus or Hugo site, its folder (KB-relative): where `@site/…` links
    /// start, and Hugo's `static/` and `assets/` lie.
    pub fn site_folder(&self) -> Option<&str> {
        self.site.layout().site_folder.as_deref()
    }

    /// Documents and other paths whose spelling folds ([`path_policy::folded`]) to the
    /// same as `path`'s: the same file on a case-insensitive or normalising file system.
    pub fn folded_matches(&self, path: &str) -> &[String] {
        self.by_folded
            .get(&path_policy::folded(path))
            .map_or(&[], Vec::as_slice)
    }

    /// True when some file of the workspace has extension `ext` (compared lowercased); a
    /// folder's name does not count (`version-0.81/` gives no `81` files).
    pub fn has_extension(&self, ext: &str) -> bool {
        let ext = ext.to_lowercase();
        let folders = self.folder_extensions.get(&ext).copied().unwrap_or(0);
        self.extensions.get(&ext).is_some_and(|&n| n > folders)
    }

    fn index_spelling(&mut self, path: &str) {
        self.by_folded
            .entry(path_policy::folded(path))
            .or_default()
            .push(path.to_string());
        if let Some(ext) = extension_of(path) {
            *self.extensions.entry(ext).or_default() += 1;
        }
        for (i, _) in path.match_indices('/') {
            let n = self.under.entry(path[..i].to_string()).or_default();
            *n += 1;
            if *n == 1
                && let Some(ext) = extension_of(&path[..i])
            {
                *self.folder_extensions.entry(ext).or_default() += 1;
            }
        }
    }

    fn unindex_spelling(&mut self, path: &str) {
        if let Some(list) = self.by_folded.get_mut(&path_policy::folded(path)) {
            list.retain(|p| p != path);
        }
        if let Some(n) = extension_of(path).and_then(|e| self.extensions.get_mut(&e)) {
            *n = n.saturating_sub(1);
        }
        for (i, _) in path.match_indices('/') {
            if let Some(n) = self.under.get_mut(&path[..i]) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    self.under.remove(&path[..i]);
                    if let Some(m) = extension_of(&path[..i])
                        .and_then(|ext| self.folder_extensions.get_mut(&ext))
                    {
                        *m = m.saturating_sub(1);
                    }
                }
            }
        }
    }

    /// Walks `root`, reads and parses every Markdown file (in parallel).
    ///
    /// Errors: the root is missing, or `folio.toml` is invalid. Unreadable files are skipped and reported.
    pub fn load(root: &Path, config: Config) -> Result<(Workspace, LoadReport), WorkspaceError> {
        let pre = Preread::read(root, &config)?;
        Ok(Workspace::from_preread(root, config, &pre, false))
    }

    /// [`Workspace::load`] keeping each document as an outline ([`Parsed::keep_outline`]:
    /// headings, links other than external ones, definitions, anchors, tags), taken from
    /// the root's outline cache where it holds the document's exact text and parsed
    /// otherwise, then the cache written when the load changed what it should hold
    /// ([`outline_cache`]; a write that fails is logged, never an error). For reads that
    /// need no more than outlines give: link diagnostics (`folio check`).
    ///
    /// Errors: as [`Workspace::load`].
    pub fn load_outlines(
        root: &Path,
        config: Config,
    ) -> Result<(Workspace, LoadReport), WorkspaceError> {
        let pre = Preread::read(root, &config)?;
        let cache = OutlineCache::for_preread(root, &pre);
        let (ws, report) = Workspace::from_preread_with(root, config, &pre, true, &cache);
        if let Some(save) = cache.save(ws.disk_outlines())
            && let Err(e) = save.write()
        {
            tracing::debug!("outline cache not written: {e}");
        }
        Ok((ws, report))
    }

    /// Parses the texts of `pre` (in parallel) into a workspace: the second half of
    /// [`Workspace::load`]. With `outlines`, each parse is kept as an outline
    /// ([`Parsed::keep_outline`]) as soon as it is made, so the elements it drops never
    /// accumulate (dropped after the whole load, they leave the heap in pieces that
    /// cannot be handed back).
    pub fn from_preread(
        root: &Path,
        config: Config,
        pre: &Preread,
        outlines: bool,
    ) -> (Workspace, LoadReport) {
        Workspace::from_preread_with(root, config, pre, outlines, &OutlineCache::none())
    }

    /// [`Workspace::from_preread`] taking each outline `cache` holds for a document's
    /// exact text instead of parsing it (with `outlines` only: the cache holds outlines).
    pub fn from_preread_with(
        root: &Path,
        config: Config,
        pre: &Preread,
        outlines: bool,
        cache: &OutlineCache,
    ) -> (Workspace, LoadReport) {
        let entries = parallel_map(&pre.texts, |result| {
            result
                .as_ref()
                .map(|(text, invalid_at)| {
                    let parsed = outlines.then(|| cache.get(text)).flatten();
                    let parsed = parsed.unwrap_or_else(|| {
                        let mut parsed = parse(text);
                        if outlines {
                            parsed.keep_outline();
                        }
                        parsed
                    });
                    let entry = DocEntry::with_parse(text, parsed, 0, Origin::Disk, outlines);
                    (entry, *invalid_at)
                })
                .map_err(SkipReason::clone)
        });
        let mut ws = Workspace::new(root.to_path_buf(), config);
        let mut report = LoadReport {
            loaded: 0,
            skipped: pre.scan.skipped.clone(),
            replaced: Vec::new(),
            from_cache: 0,
        };
        for path in &pre.scan.other {
            ws.add_other(path);
        }
        for (path, entry) in pre.scan.markdown.iter().zip(entries) {
            match entry {
                Ok((entry, invalid_at)) => {
                    if let Some(at) = invalid_at {
                        report.replaced.push((path.clone(), at));
                    }
                    ws.insert(path.clone(), entry);
                    report.loaded += 1;
                }
                Err(reason) => {
                    // A skipped Markdown file still exists on disk: links to it are not broken.
                    ws.add_other(path);
                    report.skipped.push(Skipped {
                        path: path.clone(),
                        reason,
                    });
                }
            }
        }
        report.skipped.sort_by(|a, b| a.path.cmp(&b.path));
        report.from_cache = cache.hits();
        (ws, report)
    }

    /// The root folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The outline of every document read from disk and kept as an outline, with its
    /// source hash and text length in bytes: what the outline cache holds
    /// ([`outline_cache::OutlineCache::save`]).
    pub fn disk_outlines(&self) -> Vec<(u64, u64, Arc<Parsed>)> {
        self.docs
            .values()
            .filter(|e| e.origin == Origin::Disk && e.parsed.outline_only)
            .map(|e| {
                let len = e.doc.len_bytes() as u64;
                (e.source_hash, len, Arc::clone(&e.parsed))
            })
            .collect()
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Replaces the configuration.
    pub fn set_config(&mut self, config: Config) {
        self.vault = is_vault(&self.root, &config);
        self.site = crate::site::Site::new(&self.root, &config);
        self.config = config;
    }

    /// Inserts or replaces a document.
    pub fn insert(&mut self, path: String, entry: DocEntry) {
        self.site.pages_changed();
        if !self.docs.contains_key(&path) {
            self.by_stem
                .entry(stem_key(&path))
                .or_default()
                .push(path.clone());
            self.index_spelling(&path);
        }
        if self.other.remove(&path) {
            self.unindex_other_name(&path);
        }
        let aliases = entry.parsed.aliases();
        if let Some(old) = self.docs.insert(path.clone(), entry) {
            self.unindex_aliases(&path, &old.parsed.aliases());
        }
        for alias in aliases {
            let list = self
                .by_alias
                .entry(path_policy::folded(&alias))
                .or_default();
            if !list.contains(&path) {
                list.push(path.clone());
            }
        }
    }

    fn unindex_aliases(&mut self, path: &str, aliases: &[String]) {
        for alias in aliases {
            if let Some(list) = self.by_alias.get_mut(&path_policy::folded(alias)) {
                list.retain(|p| p != path);
            }
        }
    }

    /// Whether `name` (a wiki link's written target) is one of the frontmatter aliases of
    /// document `path` ([`Parsed::aliases`]; letter case and Unicode normalisation aside).
    pub fn is_alias_of(&self, path: &str, name: &str) -> bool {
        self.by_alias
            .get(&path_policy::folded(name))
            .is_some_and(|paths| paths.iter().any(|p| p == path))
    }

    /// Removes a document; returns it if it was there.
    pub fn remove(&mut self, path: &str) -> Option<DocEntry> {
        self.site.pages_changed();
        let entry = self.docs.remove(path)?;
        if let Some(list) = self.by_stem.get_mut(&stem_key(path)) {
            list.retain(|p| p != path);
        }
        self.unindex_aliases(path, &entry.parsed.aliases());
        self.unindex_spelling(path);
        Some(entry)
    }

    /// Records a non-Markdown file or a folder (link targets that are not documents).
    pub fn add_other(&mut self, path: &str) {
        self.site.pages_changed();
        if crate::site::docfx::is_redirection_file(path) {
            self.site.redirections_changed();
        }
        if self.other.insert(path.to_string()) && !path.is_empty() {
            let name = name_key(path);
            self.by_name.entry(name).or_default().push(path.to_string());
            self.index_spelling(path);
        }
    }

    /// Forgets a non-Markdown file or a folder that no longer exists; returns true if it was known.
    pub fn remove_other(&mut self, path: &str) -> bool {
        self.site.pages_changed();
        if crate::site::docfx::is_redirection_file(path) {
            self.site.redirections_changed();
        }
        if !self.other.remove(path) {
            return false;
        }
        self.unindex_other_name(path);
        true
    }

    fn unindex_other_name(&mut self, path: &str) {
        if path.is_empty() {
            return;
        }
        if let Some(list) = self.by_name.get_mut(&name_key(path)) {
            list.retain(|p| p != path);
        }
        self.unindex_spelling(path);
    }

    /// The document at `path`.
    pub fn get(&self, path: &str) -> Option<&DocEntry> {
        self.docs.get(path)
    }

    /// The parse of the document at `path`.
    pub fn parsed(&self, path: &str) -> Option<Arc<Parsed>> {
        self.docs.get(path).map(|e| Arc::clone(&e.parsed))
    }

    /// Keeps the parse of every document read from disk as an outline
    /// ([`Parsed::keep_outline`]) and its text packed ([`Document::pack`]); documents
    /// from an editor keep theirs whole.
    pub fn keep_disk_documents_as_outlines(&mut self) {
        for entry in self.docs.values_mut() {
            if entry.origin == Origin::Disk {
                if !entry.parsed.outline_only {
                    Arc::make_mut(&mut entry.parsed).keep_outline();
                }
                entry.doc.pack();
            }
        }
    }

    /// True when `path` is a Markdown document of the workspace.
    pub fn contains_document(&self, path: &str) -> bool {
        self.docs.contains_key(path)
    }

    /// True when `path` is another file or a folder of the workspace.
    pub fn contains_other_path(&self, path: &str) -> bool {
        self.other.contains(path)
    }

    /// The other files and folders (KB-relative; the root is `""`), in no given order.
    pub fn other_paths(&self) -> impl Iterator<Item = &str> {
        self.other.iter().map(String::as_str)
    }

    /// True when `path` (KB-relative) is a folder the workspace knows: a document or
    /// another path lies under it.
    pub fn is_folder(&self, path: &str) -> bool {
        self.under.contains_key(path)
    }

    /// Document paths in sorted order.
    pub fn document_paths(&self) -> impl Iterator<Item = &str> {
        self.docs.keys().map(String::as_str)
    }

    /// The documents directly in folder `folder` (KB-relative, `""` for the root), in
    /// sorted order; a range of the sorted paths, not a scan of every document.
    pub fn documents_in_folder<'a>(&'a self, folder: &'a str) -> impl Iterator<Item = &'a str> {
        let prefix = if folder.is_empty() {
            String::new()
        } else {
            format!("{folder}/")
        };
        let len = prefix.len();
        self.docs
            .range::<str, _>((
                std::ops::Bound::Included(prefix.as_str()),
                std::ops::Bound::Unbounded,
            ))
            .map(|(path, _)| path.as_str())
            .take_while(move |path| path.starts_with(&prefix))
            .filter(move |path| !path[len..].contains('/'))
    }

    /// Number of documents.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// True when there are no documents.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// Paths a wiki link target may mean, best first; several means ambiguous.
    ///
    /// In order: a KB-relative path (with or without `.md`), a path relative to the linking
    /// document's folder, then every document whose file stem matches the target's last
    /// segment case-insensitively (and whose path ends with the target's folders, if it has
    /// any), then other files by name (embeds of images), then documents whose frontmatter
    /// gives the target as an alias, then (wiki style `title`) titles.
    pub fn wiki_candidates(&self, from: &str, target: &str) -> Vec<String> {
        let target = target.trim_start_matches('/');
        let from_dir = from.rsplit_once('/').map_or("", |(d, _)| d);
        for base in ["", from_dir] {
            let joined = if base.is_empty() {
                target.to_string()
            } else {
                format!("{base}/{target}")
            };
            for candidate in [
                joined.clone(),
                format!("{joined}.md"),
                format!("{joined}.markdown"),
            ] {
                if self.docs.contains_key(&candidate) {
                    return vec![candidate];
                }
            }
        }
        let lower = path_policy::folded(target);
        let stem = stem_key(&lower);
        let no_ext = lower
            .strip_suffix(".md")
            .or_else(|| lower.strip_suffix(".markdown"))
            .unwrap_or(&lower);
        let mut found: Vec<String> = self
            .by_stem
            .get(&stem)
            .map(|paths| {
                paths
                    .iter()
                    .filter(|p| {
                        let p_lower = path_policy::folded(p);
                        let p_no_ext = p_lower
                            .rsplit_once('.')
                            .map_or(p_lower.as_str(), |(a, _)| a);
                        !no_ext.contains('/')
                            || p_no_ext == no_ext
                            || p_no_ext.ends_with(&format!("/{no_ext}"))
                    })
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        if found.is_empty() {
            // Other files by name (embeds), including Markdown files that were skipped.
            let name = lower.rsplit('/').next().unwrap_or(&lower);
            for candidate in [
                name.to_string(),
                format!("{name}.md"),
                format!("{name}.markdown"),
            ] {
                if let Some(paths) = self.by_name.get(&candidate) {
                    found.extend(paths.iter().cloned());
                }
            }
        }
        if found.is_empty()
            && let Some(paths) = self.by_alias.get(&lower)
        {
            // A frontmatter alias, as Obsidian resolves `[[alias]]`.
            found.extend(paths.iter().cloned());
        }
        if found.is_empty() && self.config.wiki.style == crate::config::WikiStyle::Title {
            found = self
                .docs
                .iter()
                .filter(|(p, e)| e.parsed.title_for(p, self.vault).to_lowercase() == lower)
                .map(|(p, _)| p.clone())
                .collect();
        }
        found.sort();
        found
    }
}

/// Whether `root` is an Obsidian vault: `[links].obsidian`, else an `.obsidian/` folder at
/// the root. Its links then resolve as in a vault, and its notes are titled by their
/// file names ([`crate::parse::Parsed::title_for`]).
pub fn is_vault(root: &Path, config: &Config) -> bool {
    config
        .links
        .obsidian
        .unwrap_or_else(|| !root.as_os_str().is_empty() && root.join(".obsidian").is_dir())
}

/// The lowercased extension of a path's file name, if it has one.
fn extension_of(path: &str) -> Option<String> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let (stem, ext) = name.rsplit_once('.')?;
    (!stem.is_empty() && !ext.is_empty()).then(|| ext.to_lowercase())
}

/// The key of a file name in `by_name`: folded (NFC, lowercased).
fn name_key(path: &str) -> String {
    path_policy::folded(path.rsplit('/').next().unwrap_or(path))
}

fn stem_key(path: &str) -> String {
    let name = name_key(path);
    match name.rsplit_once('.') {
        Some((stem, ext)) if ext == "md" || ext == "markdown" => stem.to_string(),
        _ => name,
    }
}

/// Maps `f` over `items` on all cores, keeping order.
pub fn parallel_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(items.len().max(1));
    if threads <= 1 {
        return items.iter().map(f).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut slots: Vec<Option<R>> = Vec::with_capacity(items.len());
    slots.resize_with(items.len(), || None);
    let slots = Mutex::new(slots);
    std::thread::scope(|s| {
        for _ in 0..threads {
            // Parsing recurses per nesting level; give workers the main thread's stack size.
            let builder = std::thread::Builder::new().stack_size(8 * 1024 * 1024);
            let spawned = builder.spawn_scoped(s, || {
                let mut local = Vec::new();
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if i >= items.len() {
                        break;
                    }
                    local.push((i, f(&items[i])));
                    if local.len() >= 64 {
                        let mut guard = slots.lock().expect("slots lock poisoned");
                        for (i, r) in local.drain(..) {
                            guard[i] = Some(r);
                        }
                    }
                }
                let mut guard = slots.lock().expect("slots lock poisoned");
                for (i, r) in local.drain(..) {
                    guard[i] = Some(r);
                }
            });
            spawned.expect("spawning a worker thread");
        }
    });
    let results = slots
        .into_inner()
        .expect("slots lock poisoned")
        .into_iter()
        .map(|r| r.expect("every slot filled"))
        .collect();
    crate::heap::release_free_heap();
    results
}
