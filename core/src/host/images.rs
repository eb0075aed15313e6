//! `kb_list_images`, `kb_load_image`, `kb_save_image`, `kb_delete_image` and
//! `kb_move_image`.
//!
//! Every path goes through the path policy; every file is read without following links
//! ([`crate::workspace::beneath`]) and checked by [`crate::media::check_image`] before it
//! is trusted; downloads go through [`crate::fetch`] (HTTPS, public addresses, 25 MiB);
//! writes take the root's write lock and never replace a file. Only a move with
//! `update_links` changes Markdown, through the link-rewrite engine of `kb_move`
//! ([`crate::links::rewrite::move_edits`]), journaled with the move as one operation.

use base64::Engine;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::digest::sha256_hex;
use crate::media::list::{DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE};
use crate::media::names::{clean_name, markdown_alt, markdown_destination, suffixed, url_name};
use crate::media::{
    DEFAULT_FOLDER, ImageError, ImageFormat, MAX_IMAGE_BYTES, SUPPORTED, check_image,
    first_frame_png,
};
use crate::path_policy::{PathError, check_syntax, resolve_existing, resolve_new};
use crate::workspace::scan;
use crate::write::{Step, WriteError};

use super::{ErrorCode, Host, HostError, HostResult};

/// How many numeric suffixes a save under `images/` tries (`name-9999.ext`).
pub const MAX_SUFFIX: usize = 9999;

/// `kb_list_images` arguments.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[schemars(transform = crate::host::portable_schema)]
#[serde(deny_unknown_fields)]
pub struct ListImagesArgs {
    /// `nextCursor` of the previous page; omit it for the first page. A cursor stays valid when the image it ends on is deleted.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Images per page, 1–200 (default 50).
    #[serde(default, rename = "pageSize")]
    #[schemars(range(min = 1, max = 200))]
    pub page_size: Option<usize>,
}

/// One listed image.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ImageListEntry {
    /// KB-relative path.
    pub path: String,
    /// MIME type from the extension: image/png, image/jpeg, image/webp or image/gif.
    #[serde(rename = "mimeType")]
    pub mime_type: String,
    /// Size in bytes.
    pub bytes: u64,
}

/// `kb_list_images` output.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ListImagesOutput {
    /// Images ordered by path, case-insensitively, then by the exact spelling.
    pub images: Vec<ImageListEntry>,
    /// Pass as `cursor` for the next page; null on the last page.
    #[serde(rename = "nextCursor")]
    pub next_cursor: Option<String>,
}

/// `kb_load_image` arguments.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(transform = crate::host::portable_schema)]
#[serde(deny_unknown_fields)]
pub struct LoadImageArgs {
    /// KB-relative path of a .png, .jpg/.jpeg, .webp or .gif file (at most 25 MiB).
    pub path: String,
}

/// Metadata of an image file: what `kb_load_image` returns after the image block.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ImageMetadata {
    /// KB-relative path.
    pub path: String,
    /// The file's MIME type (for a GIF still image/gif, though the block shows a PNG frame).
    #[serde(rename = "mimeType")]
    pub mime_type: String,
    /// The file's size in bytes.
    pub bytes: u64,
    /// SHA-256 of the file's bytes, lowercase hex.
    pub sha256: String,
}

/// A loaded image: the bytes to show and the file's metadata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadedImage {
    /// Metadata of the file.
    pub meta: ImageMetadata,
    /// The bytes to show: the file's own for PNG, JPEG and WebP; a GIF's first frame as PNG.
    pub display: Vec<u8>,
    /// MIME type of `display`.
    pub display_mime_type: String,
}

/// A file the client uploaded, as OpenAI's file parameters pass it (`openai/fileParams`).
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(inline, transform = crate::host::portable_schema)]
pub struct FileReference {
    /// Temporary HTTPS URL of the file, provided by the client.
    pub download_url: String,
    /// The client's id of the file.
    pub file_id: String,
    /// The file's MIME type, when the client knows it.
    #[serde(default)]
    pub mime_type: Option<String>,
    /// The file's name, when the client knows it.
    #[serde(default)]
    pub file_name: Option<String>,
}

/// Image bytes sent with the call, as MCP image content carries them.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(inline, transform = crate::host::portable_schema)]
#[serde(deny_unknown_fields)]
pub struct InlineImage {
    /// The image's bytes, base64 (standard alphabet; padding optional).
    pub data: String,
    /// image/png, image/jpeg, image/webp or image/gif.
    #[serde(rename = "mimeType")]
    pub mime_type: String,
}

/// `kb_save_image` arguments.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(transform = crate::host::portable_schema)]
#[serde(deny_unknown_fields)]
pub struct SaveImageArgs {
    /// The uploaded file (a client file reference with a download URL); downloaded over HTTPS only, from public addresses. Give this or `image`.
    #[serde(default)]
    pub file: Option<FileReference>,
    /// The image inline (base64 data and MIME type), for clients without file references. Give this or `file`.
    #[serde(default)]
    pub image: Option<InlineImage>,
    /// File name under images/ (e.g. cover.png; the extension is added when missing). A taken name gets a suffix: cover-2.png. Not with targetPath.
    #[serde(default, rename = "fileName")]
    pub file_name: Option<String>,
    /// Alternative text of the returned Markdown reference (default: the file name without extension).
    #[serde(default, rename = "altText")]
    pub alt_text: Option<String>,
    /// Full KB-relative path of the new file with its extension (e.g. chapters/01/fig1.png); missing folders are created; an existing file is never replaced (ALREADY_EXISTS). Not with fileName.
    #[serde(default, rename = "targetPath")]
    pub target_path: Option<String>,
}

/// `kb_save_image` output.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SaveImageOutput {
    /// KB-relative path of the new file.
    pub path: String,
    /// Its MIME type (from its signature).
    #[serde(rename = "mimeType")]
    pub mime_type: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// SHA-256 of its bytes, lowercase hex.
    pub sha256: String,
    /// A Markdown image reference, relative to the root (`![alt](images/cover.png)`); from a document in a folder, make the path relative to it.
    pub markdown: String,
}

/// `kb_delete_image` arguments.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(transform = crate::host::portable_schema)]
#[serde(deny_unknown_fields)]
pub struct DeleteImageArgs {
    /// KB-relative path of the image to delete.
    pub path: String,
}

/// `kb_delete_image` output.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct DeleteImageOutput {
    /// The deleted image.
    pub path: String,
    /// Always true on success.
    pub deleted: bool,
}

/// `kb_move_image` arguments.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(transform = crate::host::portable_schema)]
#[serde(deny_unknown_fields)]
pub struct MoveImageArgs {
    /// KB-relative path of the image.
    #[serde(rename = "sourcePath")]
    pub source_path: String,
    /// New KB-relative path with the same format's extension; must not exist (missing folders are created).
    #[serde(rename = "targetPath")]
    pub target_path: String,
    /// sha256 from kb_load_image or kb_save_image; the move fails with CONFLICT if the file's bytes differ.
    #[serde(default, rename = "expectedSha256")]
    pub expected_sha256: Option<String>,
    /// Also rewrite Markdown references to the image (the same rewriting as kb_move), in one all-or-nothing operation. Default false: Markdown is not touched.
    #[serde(default)]
    pub update_links: Option<bool>,
}

/// Links rewritten in one document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ImageLinksUpdated {
    /// The document.
    pub path: String,
    /// Number of references rewritten.
    pub links: usize,
}

/// `kb_move_image` output.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct MoveImageOutput {
    /// The old path.
    #[serde(rename = "previousPath")]
    pub previous_path: String,
    /// The new path.
    pub path: String,
    /// SHA-256 of the image's bytes, lowercase hex.
    pub sha256: String,
    /// With update_links: the documents whose references were rewritten.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_links: Option<Vec<ImageLinksUpdated>>,
    /// With update_links: true when the search index already reflects the rewritten documents.
    #[serde(rename = "indexSynchronized", skip_serializing_if = "Option::is_none")]
    pub index_synchronized: Option<bool>,
}

impl From<ImageError> for HostError {
    fn from(err: ImageError) -> HostError {
        HostError::new(err.code(), err.to_string())
    }
}

impl From<crate::fetch::FetchError> for HostError {
    fn from(err: crate::fetch::FetchError) -> HostError {
        HostError::new(err.code(), err.to_string())
    }
}

/// The largest base64 text that can hold 25 MiB.
const MAX_BASE64_LEN: usize = (MAX_IMAGE_BYTES as usize).div_ceil(3) * 4;

/// Decodes `image.data`: standard alphabet, padding optional, whitespace ignored.
fn decode_base64(data: &str) -> HostResult<Vec<u8>> {
    let compact: String = data.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    if compact.len() > MAX_BASE64_LEN {
        return Err(HostError::invalid(format!(
            "`image.data` holds more than 25 MiB ({} base64 characters)",
            compact.len()
        )));
    }
    let engine = base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
    );
    engine
        .decode(compact.as_bytes())
        .map_err(|e| HostError::invalid(format!("`image.data` is not base64: {e}")))
}

/// Checks an `expectedSha256` argument: 64 hex digits (either case).
fn expected_hash(expected: Option<&str>) -> HostResult<Option<String>> {
    match expected {
        None => Ok(None),
        Some(h) if h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()) => {
            Ok(Some(h.to_ascii_lowercase()))
        }
        Some(h) => Err(HostError::invalid(format!(
            "`expectedSha256` must be 64 hexadecimal digits (got `{h}`)"
        ))),
    }
}

/// The format a target name's extension names; `UNSUPPORTED_FORMAT` when it names none.
fn target_format(path: &str, what: &str) -> HostResult<ImageFormat> {
    ImageFormat::from_path(path).ok_or_else(|| {
        HostError::new(
            ErrorCode::UnsupportedFormat,
            format!("{what} `{path}` must end with the image's extension ({SUPPORTED})"),
        )
    })
}

/// Refuses a file name whose name part is missing or blank (`.png`, ` .png`, `..png`) or
/// that starts with `.` (a hidden file, which file managers and most tools do not show).
fn check_visible_name(name: &str, what: &str) -> HostResult<()> {
    let stem = name.rsplit_once('.').map_or(name, |(stem, _)| stem);
    if name.starts_with('.')
        || stem
            .trim_matches(|c: char| c == '.' || c.is_whitespace())
            .is_empty()
    {
        return Err(HostError::invalid(format!(
            "{what} `{name}` has no name before its extension or starts with `.` (a hidden file); give a name such as `chart.png`"
        )));
    }
    Ok(())
}

/// A declared MIME type against the format of the bytes: a generic or non-image type
/// (a server's `application/octet-stream` or `text/html`) leaves the decision to the
/// signature; another image type, or an unsupported one, is refused.
fn check_declared(mime: &str, actual: ImageFormat, label: &str) -> HostResult<()> {
    match ImageFormat::from_mime(mime) {
        Some(said) if said == actual => Ok(()),
        Some(said) => Err(ImageError::Mismatch {
            label: label.to_string(),
            said: "declared",
            named: said,
            actual,
        }
        .into()),
        None if mime.to_ascii_lowercase().starts_with("image/") => Err(HostError::new(
            ErrorCode::UnsupportedFormat,
            format!("{label} is declared as {mime}; the image tools take {SUPPORTED}"),
        )),
        None => Ok(()),
    }
}

impl Host {
    /// An existing image file: path policy, a supported extension, at most 25 MiB, and
    /// bytes that [`check_image`] accepts as that format. Returns the bytes and format.
    fn read_image(&self, path: &str) -> HostResult<(Vec<u8>, ImageFormat)> {
        let abs = resolve_existing(&self.root, path)?;
        let Some(named) = ImageFormat::from_path(path) else {
            return Err(HostError::new(
                ErrorCode::UnsupportedFormat,
                format!("`{path}` is not an image file name (the image tools take {SUPPORTED})"),
            ));
        };
        let size = std::fs::symlink_metadata(&abs)
            .map_err(HostError::internal)?
            .len();
        let label = format!("`{path}`");
        if size > MAX_IMAGE_BYTES {
            return Err(ImageError::TooLarge { label, bytes: size }.into());
        }
        let bytes = crate::workspace::beneath::read(&self.root, path, MAX_IMAGE_BYTES + 1)
            .map_err(|e| HostError::new(ErrorCode::NotFound, format!("`{path}`: {e}")))?;
        let format = check_image(&bytes, Some(named), &label)?;
        Ok((bytes, format))
    }

    /// `kb_list_images`.
    pub fn list_images(&self, args: &ListImagesArgs) -> HostResult<ListImagesOutput> {
        let page_size = args.page_size.unwrap_or(DEFAULT_PAGE_SIZE);
        if !(1..=MAX_PAGE_SIZE).contains(&page_size) {
            return Err(HostError::invalid(format!(
                "`pageSize` must be between 1 and {MAX_PAGE_SIZE} (got {page_size})"
            )));
        }
        let after = match args.cursor.as_deref() {
            None => None,
            Some(cursor) => Some(crate::media::list::parse_cursor(cursor).ok_or_else(|| {
                HostError::invalid(format!(
                    "`{cursor}` is not a cursor from kb_list_images; omit it to start from the first page"
                ))
            })?),
        };
        let scanned = scan(&self.root, &self.config).map_err(HostError::internal)?;
        let mut sizes = std::collections::HashMap::new();
        for path in &scanned.other {
            let Some(format) = ImageFormat::from_path(path) else {
                continue;
            };
            // Symbolic links and hard-linked files are left out, as the path policy
            // refuses them.
            let Ok(meta) = std::fs::symlink_metadata(self.root.join(path)) else {
                continue;
            };
            if !meta.is_file() || hard_linked(&meta) {
                continue;
            }
            sizes.insert(path.clone(), (format, meta.len()));
        }
        let (paths, next_cursor) =
            crate::media::list::page(sizes.keys().cloned().collect(), after.as_deref(), page_size);
        let images = paths
            .into_iter()
            .map(|path| {
                let (format, bytes) = sizes[&path];
                ImageListEntry {
                    path,
                    mime_type: format.mime_type().into(),
                    bytes,
                }
            })
            .collect();
        Ok(ListImagesOutput {
            images,
            next_cursor,
        })
    }

    /// `kb_load_image`.
    pub fn load_image(&self, args: &LoadImageArgs) -> HostResult<LoadedImage> {
        let (bytes, format) = self.read_image(&args.path)?;
        let meta = ImageMetadata {
            path: args.path.clone(),
            mime_type: format.mime_type().into(),
            bytes: bytes.len() as u64,
            sha256: sha256_hex(&bytes),
        };
        let (display, display_mime_type) = match format {
            ImageFormat::Gif => (
                first_frame_png(&bytes, &format!("`{}`", args.path))?,
                ImageFormat::Png.mime_type(),
            ),
            _ => (bytes, format.mime_type()),
        };
        Ok(LoadedImage {
            meta,
            display,
            display_mime_type: display_mime_type.into(),
        })
    }

    /// `kb_save_image`. Checks the arguments, then downloads (without the write lock) or
    /// decodes, checks the bytes, and creates the file under the lock. Nothing is written
    /// when any check fails.
    pub fn save_image(&self, args: &SaveImageArgs) -> HostResult<SaveImageOutput> {
        self.require_writes()?;
        if args.target_path.is_some() && args.file_name.is_some() {
            return Err(HostError::invalid(
                "give either `targetPath` (the full path with the file name) or `fileName` (a name under images/), not both",
            ));
        }
        if let Some(target) = &args.target_path {
            check_syntax(target)?;
            target_format(target, "`targetPath`")?;
            check_visible_name(target.rsplit('/').next().unwrap_or(target), "`targetPath`")?;
        }
        if let Some(name) = &args.file_name {
            if name.contains('/') {
                return Err(HostError::invalid(format!(
                    "`fileName` `{name}` is a name, not a path; use `targetPath` to choose a folder"
                )));
            }
            check_syntax(&format!("{DEFAULT_FOLDER}/{name}"))?;
            check_visible_name(name, "`fileName`")?;
        }
        let (bytes, declared, label, derived_name) = match (&args.file, &args.image) {
            (Some(file), None) => {
                let fetcher = self.fetcher.as_ref().map_err(HostError::internal)?;
                let downloaded = fetcher.get(&file.download_url)?;
                let mut declared: Vec<String> = file.mime_type.iter().cloned().collect();
                declared.extend(downloaded.content_type.clone());
                let name = file
                    .file_name
                    .as_deref()
                    .map(|n| n.rsplit('/').next().unwrap_or(n).to_string())
                    .or_else(|| url_name(&file.download_url));
                (downloaded.bytes, declared, "the downloaded file", name)
            }
            (None, Some(image)) => {
                if ImageFormat::from_mime(&image.mime_type).is_none() {
                    return Err(HostError::new(
                        ErrorCode::UnsupportedFormat,
                        format!(
                            "`image.mimeType` `{}` is not image/png, image/jpeg, image/webp or image/gif",
                            image.mime_type
                        ),
                    ));
                }
                let bytes = decode_base64(&image.data)?;
                (
                    bytes,
                    vec![image.mime_type.clone()],
                    "the inline image",
                    None,
                )
            }
            _ => {
                return Err(HostError::invalid(
                    "give exactly one of `file` (an uploaded file reference) and `image` (inline base64 data with its mimeType)",
                ));
            }
        };
        let format = check_image(&bytes, None, label)?;
        for mime in &declared {
            check_declared(mime, format, label)?;
        }
        let saved_path = match &args.target_path {
            Some(target) => {
                let named = target_format(target, "`targetPath`")?;
                if named != format {
                    return Err(ImageError::Mismatch {
                        label: format!("`targetPath` `{target}`"),
                        said: "named",
                        named,
                        actual: format,
                    }
                    .into());
                }
                let guard = self.writer.lock()?;
                resolve_new(&self.root, target)?;
                guard.create(target, &bytes)?;
                target.clone()
            }
            None => {
                let name = match &args.file_name {
                    Some(name) => Some(name.clone()),
                    // A download's own name that is hidden or blank gives way to `image`.
                    None => derived_name
                        .as_deref()
                        .and_then(clean_name)
                        .filter(|n| check_visible_name(n, "").is_ok()),
                };
                let name = name.unwrap_or_else(|| "image".to_string());
                let name = match ImageFormat::from_path(&name) {
                    Some(named) if named != format => {
                        return Err(ImageError::Mismatch {
                            label: format!("`fileName` `{name}`"),
                            said: "named",
                            named,
                            actual: format,
                        }
                        .into());
                    }
                    Some(_) => name,
                    None => format!("{name}.{}", format.extension()),
                };
                let guard = self.writer.lock()?;
                let mut created = None;
                for n in 1..=MAX_SUFFIX {
                    let candidate = format!("{DEFAULT_FOLDER}/{}", suffixed(&name, n));
                    check_syntax(&candidate)?;
                    let taken = |abs: &std::path::Path| std::fs::symlink_metadata(abs).is_ok();
                    match resolve_new(&self.root, &candidate) {
                        Ok(abs) if taken(&abs) => continue,
                        Ok(_) => {}
                        // Another spelling of the name, a link or a hard-linked file: taken.
                        Err(PathError::Collides { .. }) => continue,
                        Err(_) if taken(&self.root.join(&candidate)) => continue,
                        Err(e) => return Err(e.into()),
                    }
                    match guard.create(&candidate, &bytes) {
                        Ok(()) => {
                            created = Some(candidate);
                            break;
                        }
                        Err(WriteError::AlreadyExists { .. }) => continue,
                        Err(e) => return Err(e.into()),
                    }
                }
                created.ok_or_else(|| {
                    HostError::new(
                        ErrorCode::AlreadyExists,
                        format!(
                            "`{DEFAULT_FOLDER}/{name}` and its {MAX_SUFFIX} numbered variants all exist"
                        ),
                    )
                })?
            }
        };
        tracing::info!(path = %saved_path, bytes = bytes.len(), "image saved");
        let stem = saved_path
            .rsplit('/')
            .next()
            .and_then(|n| n.rsplit_once('.').map(|(s, _)| s))
            .unwrap_or("image")
            .to_string();
        let alt = markdown_alt(args.alt_text.as_deref().unwrap_or(&stem));
        let markdown = format!("![{alt}]({})", markdown_destination(&saved_path));
        Ok(SaveImageOutput {
            mime_type: format.mime_type().into(),
            bytes: bytes.len() as u64,
            sha256: sha256_hex(&bytes),
            path: saved_path,
            markdown,
        })
    }

    /// `kb_delete_image`: Markdown that shows the image is not changed.
    pub fn delete_image(&self, args: &DeleteImageArgs) -> HostResult<DeleteImageOutput> {
        self.require_writes()?;
        let guard = self.writer.lock()?;
        let (bytes, _) = self.read_image(&args.path)?;
        guard.remove(&args.path, &bytes)?;
        tracing::info!(path = %args.path, "image deleted");
        Ok(DeleteImageOutput {
            path: args.path.clone(),
            deleted: true,
        })
    }

    /// `kb_move_image`. With `update_links`, a document open in an editor that refers to
    /// the image is not rewritten behind the editor's back: the move is refused with
    /// `CONFLICT`.
    pub fn move_image(&self, args: &MoveImageArgs) -> HostResult<MoveImageOutput> {
        self.require_writes()?;
        let (from, to) = (&args.source_path, &args.target_path);
        let expected = expected_hash(args.expected_sha256.as_deref())?;
        check_syntax(from)?;
        check_syntax(to)?;
        let target = target_format(to, "`targetPath`")?;
        let guard = self.writer.lock()?;
        let (bytes, format) = self.read_image(from)?;
        if target != format {
            return Err(HostError::new(
                ErrorCode::UnsupportedFormat,
                format!(
                    "`{to}` names a {} file but `{from}` is {}; keep the format's extension",
                    target.name(),
                    format.name()
                ),
            ));
        }
        let to_abs = resolve_new(&self.root, to)?;
        if std::fs::symlink_metadata(&to_abs).is_ok() {
            return Err(HostError::new(
                ErrorCode::AlreadyExists,
                format!("`{to}` already exists"),
            ));
        }
        let sha256 = sha256_hex(&bytes);
        if let Some(expected) = expected
            && expected != sha256
        {
            return Err(HostError::new(
                ErrorCode::Conflict,
                format!(
                    "`{from}` changed since it was read: its sha256 is now {sha256}, not {expected}; nothing was moved"
                ),
            ));
        }
        if !args.update_links.unwrap_or(false) {
            guard.rename(from, to, &bytes)?;
            tracing::info!(from = %from, to = %to, "image moved");
            return Ok(MoveImageOutput {
                previous_path: from.clone(),
                path: to.clone(),
                sha256,
                updated_links: None,
                index_synchronized: None,
            });
        }
        let moves = [(from.clone(), to.clone())];
        let planned = self.with_workspace(|ws| {
            let edits =
                super::edit::link_edits_keeping_every_link(ws, &moves, "update_links: false")?;
            let mut out = Vec::new();
            for (doc, edits) in edits {
                let Some(entry) = ws.get(&doc) else { continue };
                out.push((doc, entry.doc.text(), edits));
            }
            Ok(out)
        })?;
        let open = self.buffers()?;
        let mut steps = Vec::new();
        let mut updated = Vec::new();
        for (doc, known, edits) in planned {
            if let Some(buffer) = open.get(&doc) {
                return Err(HostError::new(
                    ErrorCode::Conflict,
                    format!(
                        "`{doc}` refers to the image and is open in {}; update_links does not write behind an editor. Close it, or move without update_links and fix the reference with kb_patch. Nothing was changed",
                        buffer.editor
                    ),
                ));
            }
            let new = crate::edit::apply_edits(&known, &edits)?;
            self.check_writable(&doc, &new)?;
            updated.push(ImageLinksUpdated {
                path: doc.clone(),
                links: edits.len(),
            });
            steps.push((doc, known, new));
        }
        let mut journal: Vec<Step> = steps
            .iter()
            .map(|(path, old, new)| Step::Replace {
                path: path.clone(),
                old: old.clone(),
                new: new.clone(),
            })
            .collect();
        journal.push(Step::MoveBinary {
            from: from.clone(),
            to: to.clone(),
            sha256: sha256.clone(),
        });
        guard.run_journaled(&journal)?;
        tracing::info!(from = %from, to = %to, documents = steps.len(), "image moved with its references");
        let mut synced = true;
        for (path, _, new) in &steps {
            synced &= self.sync_document(path, Some(new));
        }
        drop(guard);
        Ok(MoveImageOutput {
            previous_path: from.clone(),
            path: to.clone(),
            sha256,
            updated_links: Some(updated),
            index_synchronized: Some(synced),
        })
    }
}

#[cfg(unix)]
fn hard_linked(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    meta.nlink() > 1
}

#[cfg(not(unix))]
fn hard_linked(_meta: &std::fs::Metadata) -> bool {
    false
}
