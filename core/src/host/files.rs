//! `kb_list_files`, `kb_list_topics` and `kb_download_file`.

use std::collections::BTreeMap;

use crate::path_policy::{check_syntax, resolve_existing};
use crate::workspace::scan;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ErrorCode, Host, HostError, HostResult};

/// Largest file `kb_download_file` returns: 25 MiB.
pub const DOWNLOAD_CAP: u64 = 25 * 1024 * 1024;

/// `kb_list_files` arguments.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[schemars(transform = crate::host::portable_schema)]
#[serde(deny_unknown_fields)]
pub struct ListFilesArgs {
    /// A folder (`books` or `books/`: everything under it) or one exact file (`books/a.md`); not a partial name. Default: the whole root.
    #[serde(default, rename = "pathPrefix")]
    pub path_prefix: Option<String>,
    /// Glob on the KB-relative path (`**/*.md`, `qa-*.md` matches names at any depth). Both filters apply when both are given.
    #[serde(default, rename = "includeGlob")]
    pub include_glob: Option<String>,
    /// Maximum entries (default 1000, at most 10000).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// One file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct FileEntry {
    /// KB-relative path.
    pub path: String,
    /// `markdown` (indexed) or `asset` (any other file, not indexed).
    pub kind: String,
    /// Size in bytes.
    pub bytes: u64,
    /// A Markdown file's title as indexed (`Parsed::title_for`: the frontmatter `title`,
    /// else the first level-1 heading, else the file name; in an Obsidian vault the file
    /// name before an H1); absent for assets and for files the index does not hold yet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// `kb_list_files` output.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ListFilesOutput {
    /// Files, sorted by path.
    pub files: Vec<FileEntry>,
    /// True when `limit` cut the list.
    pub truncated: bool,
}

/// A folder below a topic.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TopicNode {
    /// One path segment.
    pub segment: String,
    /// Documents under this prefix (all depths).
    pub file_count: usize,
    /// Folders below.
    pub children: Vec<TopicNode>,
}

/// A category or topic with its document count.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TopicEntry {
    /// `root` (documents at the top), `category` (first folder) or `topic` (first two folders).
    pub kind: String,
    /// The category (empty for root).
    pub category: String,
    /// The topic `category/name` (topics only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
    /// Indexed documents in this group.
    pub document_count: usize,
    /// `kb://topic/<prefix>` resource listing the group's documents.
    pub uri: String,
    /// Folders below a topic, one node per segment (empty for root and categories).
    pub children: Vec<TopicNode>,
}

/// One tag of `kb_list_topics`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TagEntry {
    /// The tag without `#` (`project/alpha`): from frontmatter `tags` or an inline `#tag`.
    pub tag: String,
    /// Indexed documents carrying exactly this tag (not counting nested tags).
    pub document_count: usize,
}

/// `kb_list_topics` output.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ListTopicsOutput {
    /// Root, categories and topics, sorted; use `category` / `topic` as kb_search filters.
    pub topics: Vec<TopicEntry>,
    /// Every tag, sorted; use them as kb_search `tags_any` / `tags_all` (a tag also matches
    /// the tags nested in it).
    pub tags: Vec<TagEntry>,
    /// Indexed documents in all.
    pub total_documents: usize,
}

/// `kb_download_file` arguments.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(transform = crate::host::portable_schema)]
#[serde(deny_unknown_fields)]
pub struct DownloadArgs {
    /// KB-relative path of any regular file in the knowledge base (at most 25 MiB).
    pub path: String,
}

/// `kb_download_file` metadata (the bytes come as an embedded binary resource).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct DownloadOutput {
    /// The file.
    pub path: String,
    /// MIME type from the extension (`application/octet-stream` when unknown).
    #[serde(rename = "mimeType")]
    pub mime_type: String,
    /// Size in bytes.
    pub bytes: u64,
    /// SHA-256 of the bytes, lowercase hex.
    pub sha256: String,
}

/// A downloaded file: metadata and bytes.
pub struct Download {
    /// Metadata.
    pub meta: DownloadOutput,
    /// The file's bytes.
    pub data: Vec<u8>,
}

fn glob_matcher(glob: &str) -> HostResult<globset::GlobMatcher> {
    let pattern = if glob.contains('/') {
        glob.to_string()
    } else {
        format!("**/{glob}")
    };
    globset::GlobBuilder::new(&pattern)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| HostError::invalid(format!("invalid includeGlob `{glob}`: {e}")))
}

/// MIME type by extension.
pub fn mime_type(path: &str) -> &'static str {
    let ext = path
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "md" | "markdown" => "text/markdown",
        "txt" => "text/plain",
        "json" => "application/json",
        "toml" => "application/toml",
        "yaml" | "yml" => "application/yaml",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "csv" => "text/csv",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "svg" => "image/svg+xml",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        _ => "application/octet-stream",
    }
}

impl Host {
    /// `kb_list_files`.
    pub fn list_files(&self, args: &ListFilesArgs) -> HostResult<ListFilesOutput> {
        let prefix = match args.path_prefix.as_deref() {
            None | Some("") => None,
            Some(raw) => {
                // `docs/` is `docs`; `/` alone is an absolute path like any other.
                let p = raw.trim_end_matches('/');
                check_syntax(if p.is_empty() { raw } else { p })?;
                Some(p.to_string())
            }
        };
        let glob = args.include_glob.as_deref().map(glob_matcher).transpose()?;
        let limit = args.limit.unwrap_or(1000);
        if !(1..=10_000).contains(&limit) {
            return Err(HostError::invalid("`limit` must be between 1 and 10000"));
        }
        let scanned = scan(&self.root, &self.config).map_err(HostError::internal)?;
        let mut files = Vec::new();
        let candidates = scanned
            .markdown
            .iter()
            .map(|p| (p, true))
            .chain(scanned.other.iter().map(|p| (p, false)));
        for (path, markdown) in candidates {
            if let Some(prefix) = &prefix
                && !(path == prefix || path.starts_with(&format!("{prefix}/")))
            {
                continue;
            }
            if let Some(g) = &glob
                && !g.is_match(path)
            {
                continue;
            }
            let Ok(meta) = std::fs::symlink_metadata(self.root.join(path)) else {
                continue;
            };
            if !meta.is_file() {
                continue;
            }
            files.push(FileEntry {
                path: path.clone(),
                kind: if markdown { "markdown" } else { "asset" }.into(),
                bytes: meta.len(),
                title: None,
            });
        }
        files.sort_by(|a, b| a.path.cmp(&b.path));
        let truncated = files.len() > limit;
        files.truncate(limit);
        if files.iter().any(|f| f.kind == "markdown") && self.db_path.exists() {
            let catalog = self.with_store(|store| store.catalog().map_err(HostError::internal))?;
            let titles: std::collections::HashMap<String, Option<String>> =
                catalog.into_iter().map(|c| (c.path, c.title)).collect();
            for f in files.iter_mut().filter(|f| f.kind == "markdown") {
                f.title = titles.get(&f.path).cloned().flatten();
            }
        }
        Ok(ListFilesOutput { files, truncated })
    }

    /// `kb_list_topics`.
    pub fn list_topics(&self) -> HostResult<ListTopicsOutput> {
        let (catalog, tag_counts) = self.with_store(|store| {
            Ok((
                store.catalog().map_err(HostError::internal)?,
                store.tag_counts().map_err(HostError::internal)?,
            ))
        })?;
        let mut root_count = 0;
        let mut categories: BTreeMap<String, usize> = BTreeMap::new();
        let mut topics: BTreeMap<String, (String, usize, Vec<Vec<String>>)> = BTreeMap::new();
        for doc in &catalog {
            match &doc.category {
                None => root_count += 1,
                Some(c) => *categories.entry(c.clone()).or_default() += 1,
            }
            if let (Some(c), Some(t)) = (&doc.category, &doc.topic) {
                let entry = topics
                    .entry(t.clone())
                    .or_insert_with(|| (c.clone(), 0, Vec::new()));
                entry.1 += 1;
                // Folders of the document's own path after its second segment.
                let folders: Vec<String> = doc.path.split('/').map(str::to_string).collect();
                if folders.len() > 3 {
                    entry.2.push(folders[2..folders.len() - 1].to_vec());
                }
            }
        }
        let mut out = Vec::new();
        if root_count > 0 {
            out.push(TopicEntry {
                kind: "root".into(),
                category: String::new(),
                topic: None,
                document_count: root_count,
                uri: super::topic_uri(""),
                children: Vec::new(),
            });
        }
        for (c, n) in &categories {
            out.push(TopicEntry {
                kind: "category".into(),
                category: c.clone(),
                topic: None,
                document_count: *n,
                uri: super::topic_uri(c),
                children: Vec::new(),
            });
        }
        for (t, (c, n, dirs)) in topics {
            out.push(TopicEntry {
                kind: "topic".into(),
                category: c,
                uri: super::topic_uri(&t),
                topic: Some(t),
                document_count: n,
                children: tree(&dirs),
            });
        }
        out.sort_by(|a, b| {
            (a.topic.as_deref().unwrap_or(&a.category), &a.kind)
                .cmp(&(b.topic.as_deref().unwrap_or(&b.category), &b.kind))
        });
        Ok(ListTopicsOutput {
            topics: out,
            tags: tag_counts
                .into_iter()
                .map(|(tag, document_count)| TagEntry {
                    tag,
                    document_count,
                })
                .collect(),
            total_documents: catalog.len(),
        })
    }

    /// `kb_download_file`.
    pub fn download(&self, args: &DownloadArgs) -> HostResult<Download> {
        let abs = resolve_existing(&self.root, &args.path)?;
        let size = std::fs::metadata(&abs).map_err(HostError::internal)?.len();
        if size > DOWNLOAD_CAP {
            return Err(HostError::invalid(format!(
                "`{}` is {size} bytes; kb_download_file returns at most 25 MiB",
                args.path
            )));
        }
        let data =
            crate::workspace::beneath::read(&self.root, &args.path, DOWNLOAD_CAP).map_err(|e| {
                HostError::new(super::ErrorCode::NotFound, format!("`{}`: {e}", args.path))
            })?;
        if data.len() as u64 > DOWNLOAD_CAP {
            return Err(HostError::new(
                ErrorCode::InvalidArgument,
                "the file grew past 25 MiB while being read",
            ));
        }
        let sha256 = crate::digest::sha256_hex(&data);
        Ok(Download {
            meta: DownloadOutput {
                path: args.path.clone(),
                mime_type: mime_type(&args.path).into(),
                bytes: data.len() as u64,
                sha256,
            },
            data,
        })
    }
}

/// Builds the folder tree of a topic from the folder lists of its documents.
fn tree(dirs: &[Vec<String>]) -> Vec<TopicNode> {
    let mut groups: BTreeMap<String, Vec<Vec<String>>> = BTreeMap::new();
    for d in dirs {
        if let Some((first, rest)) = d.split_first() {
            groups.entry(first.clone()).or_default().push(rest.to_vec());
        }
    }
    groups
        .into_iter()
        .map(|(segment, rests)| TopicNode {
            segment,
            file_count: rests.len(),
            children: tree(&rests),
        })
        .collect()
}
