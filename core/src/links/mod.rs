//! Link resolution across the workspace and the link diagnostics.
//!
//! Diagnostic codes are stable (DESIGN.md "Diagnostics"): the LSP, `folio check` and
//! MCP `kb_links` all report these names.

pub mod graph;
pub mod navigate;
pub mod rewrite;

use std::collections::HashSet;
use std::ops::Range;

pub use crate::codes::{DiagnosticCode, Severity};
use crate::parse::{Link, LinkKind, Parsed, slug};
use crate::workspace::Workspace;

/// One link problem in one document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Stable code.
    pub code: DiagnosticCode,
    /// Severity.
    pub severity: Severity,
    /// Bytes of the offending link or definition.
    pub range: Range<usize>,
    /// Human-readable explanation.
    pub message: String,
}

/// Where a link leads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A URL with a scheme; not checked.
    External,
    /// A path outside the workspace root; not checked.
    OutsideRoot,
    /// A Markdown document of the workspace (KB-relative path), with the fragment if any.
    Document {
        /// KB-relative path.
        path: String,
        /// Fragment, if the link has one.
        fragment: Option<String>,
    },
    /// Another file or a folder of the workspace.
    File(String),
    /// A reference to a link reference definition or footnote of the same document.
    Definition(String),
    /// Nothing matches.
    Missing,
    /// Several documents match a wiki link.
    Ambiguous(Vec<String>),
}

/// Joins `rel` onto the folder of `from` (or the root when `rel` starts with `/`) and
/// normalises `.` and `..`; `None` when the result would leave the root.
pub fn join_relative(from: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    let rel = if let Some(abs) = rel.strip_prefix('/') {
        abs
    } else {
        parts.extend(from.split('/'));
        parts.pop();
        rel
    };
    for seg in rel.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

/// Resolves one link of document `from`.
pub fn resolve_link(ws: &Workspace, from: &str, link: &Link) -> Target {
    if link.external {
        return Target::External;
    }
    match link.kind {
        LinkKind::Reference
        | LinkKind::ImageReference
        | LinkKind::Footnote
        | LinkKind::UndefinedReference => {
            return Target::Definition(link.label.clone().unwrap_or_default());
        }
        LinkKind::Wiki | LinkKind::WikiEmbed => return resolve_wiki(ws, from, link),
        _ => {}
    }
    if link.dest.is_empty() {
        return Target::Document {
            path: from.to_string(),
            fragment: link.fragment.clone(),
        };
    }
    let Some(path) = join_relative(from, &link.dest) else {
        // Outside the root only the file system can tell (a `docs/` root may link to
        // `../README.md`). A page of the rendered site (`../std/index.html` from an mdBook
        // book) is not a source file and is not checked.
        let site_page = link.dest.ends_with(".html") || link.dest.ends_with(".htm");
        return if site_page
            || outside_root_path(ws.root(), from, &link.dest).is_some_and(|p| p.exists())
        {
            Target::OutsideRoot
        } else {
            Target::Missing
        };
    };
    if ws.contains_document(&path) {
        return Target::Document {
            path,
            fragment: link.fragment.clone(),
        };
    }
    if ws.contains_other_path(&path) || path.is_empty() {
        return Target::File(path);
    }
    // An extension-less link to a Markdown file (wikis, static site generators), or a
    // link to the `.html` page a book generator such as mdBook renders from `x.md`.
    let stem = path
        .strip_suffix(".html")
        .or_else(|| path.strip_suffix(".htm"))
        .unwrap_or(&path);
    for ext in [".md", ".markdown"] {
        let with_ext = format!("{stem}{ext}");
        if ws.contains_document(&with_ext) {
            return Target::Document {
                path: with_ext,
                fragment: link.fragment.clone(),
            };
        }
    }
    // Files the walk left out (ignored, excluded, symbolic links) still exist.
    if !ws.root().as_os_str().is_empty() && std::fs::symlink_metadata(ws.root().join(&path)).is_ok()
    {
        return Target::File(path);
    }
    Target::Missing
}

/// The file-system path of a destination that leaves the root, joined lexically onto
/// the root; `None` when it climbs above the file system's root.
fn outside_root_path(root: &std::path::Path, from: &str, dest: &str) -> Option<std::path::PathBuf> {
    let mut parts: Vec<String> = root
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let base = parts.len();
    let rel = match dest.strip_prefix('/') {
        Some(abs) => abs,
        None => {
            parts.extend(from.split('/').map(str::to_string));
            parts.pop();
            dest
        }
    };
    for seg in rel.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if parts.len() <= 1 {
                    return None;
                }
                parts.pop();
            }
            s => parts.push(s.to_string()),
        }
    }
    let _ = base;
    Some(parts.iter().collect())
}

fn resolve_wiki(ws: &Workspace, from: &str, link: &Link) -> Target {
    if link.dest.is_empty() {
        return Target::Document {
            path: from.to_string(),
            fragment: link.fragment.clone(),
        };
    }
    let candidates = ws.wiki_candidates(from, &link.dest);
    match candidates.len() {
        0 => {
            // A definition with the wiki target's label (Foam's compatibility definitions) decides.
            let key = crate::parse::normalize_label(&link.dest);
            let parsed = ws.parsed(from);
            let definition = parsed.as_ref().and_then(|p| {
                let def = p.definitions.iter().find(|d| d.key == key)?;
                p.links
                    .iter()
                    .find(|l| l.kind == LinkKind::Definition && l.range == def.range)
                    .cloned()
            });
            match definition {
                Some(def_link) => match resolve_link(ws, from, &def_link) {
                    Target::Document { path, .. } => Target::Document {
                        path,
                        fragment: link.fragment.clone(),
                    },
                    other => other,
                },
                None => Target::Missing,
            }
        }
        1 => {
            let path = candidates.into_iter().next().expect("one candidate");
            if ws.contains_document(&path) {
                Target::Document {
                    path,
                    fragment: link.fragment.clone(),
                }
            } else {
                Target::File(path)
            }
        }
        _ => Target::Ambiguous(candidates),
    }
}

/// Does `fragment` name a heading, anchor or block id of `target`?
///
/// Markdown links compare against GitHub slugs and HTML ids; wiki links also accept the
/// heading text itself (`[[page#Some Heading]]`) and block ids (`[[page#^id]]`). An empty
/// fragment and `top` always match (HTML: scroll to the top).
pub fn fragment_matches(target: &Parsed, fragment: &str, wiki: bool, case_sensitive: bool) -> bool {
    if fragment.is_empty() || fragment == "top" {
        return true;
    }
    let names = target.fragment_names();
    let has = |exact: &std::collections::HashSet<String>,
               lower: &std::collections::HashSet<String>,
               s: &str| {
        if case_sensitive {
            exact.contains(s)
        } else {
            lower.contains(&s.to_lowercase())
        }
    };
    if let Some(block) = fragment.strip_prefix('^') {
        return has(&names.blocks, &names.blocks_lower, block);
    }
    has(&names.ids, &names.ids_lower, fragment)
        || (wiki
            && (has(&names.texts, &names.texts_lower, fragment)
                || has(&names.texts, &names.texts_lower, &slug::slug(fragment))))
}

/// All link diagnostics of document `path`, in source order, after silencing rules.
pub fn diagnostics(ws: &Workspace, path: &str) -> Vec<Diagnostic> {
    let Some(parsed) = ws.parsed(path) else {
        return Vec::new();
    };
    let config = &ws.config().diagnostics;
    let mut out = Vec::new();
    let mut push =
        |code: DiagnosticCode, range: Range<usize>, message: String, target: Option<&str>| {
            if config.is_silenced(code, target) {
                return;
            }
            out.push(Diagnostic {
                code,
                severity: code.severity(),
                range,
                message,
            });
        };

    // Labels the links use, once, so each definition is checked in constant time.
    // Foam writes a definition for each wiki link so other renderers can follow it:
    // `[[daily]]` uses `[daily]: daily.md`.
    let mut used_labels: HashSet<String> = HashSet::new();
    let mut used_footnotes: HashSet<&str> = HashSet::new();
    for l in &parsed.links {
        match l.kind {
            LinkKind::Reference | LinkKind::ImageReference => used_labels.extend(l.label.clone()),
            LinkKind::Wiki | LinkKind::WikiEmbed => {
                used_labels.extend(l.label.clone());
                used_labels.insert(crate::parse::normalize_label(&l.dest));
            }
            LinkKind::Footnote => used_footnotes.extend(l.label.as_deref()),
            _ => {}
        }
    }
    let defined: HashSet<&str> = parsed.definitions.iter().map(|d| d.key.as_str()).collect();
    let defined_footnotes: HashSet<&str> = parsed
        .footnote_definitions
        .iter()
        .map(|(l, _)| l.as_str())
        .collect();

    // Definitions: duplicates and unused ones.
    let mut seen: HashSet<&str> = HashSet::new();
    for def in &parsed.definitions {
        if !seen.insert(def.key.as_str()) {
            push(
                DiagnosticCode::DuplicateDefinition,
                def.label_range.clone(),
                format!(
                    "duplicate definition of `[{}]`; the first one is used (CommonMark 4.7)",
                    def.label
                ),
                None,
            );
            continue;
        }
        if !used_labels.contains(&def.key) {
            push(
                DiagnosticCode::UnusedDefinition,
                def.label_range.clone(),
                format!("link reference definition `[{}]` is not used", def.label),
                None,
            );
        }
    }
    for (label, range) in &parsed.footnote_definitions {
        if !used_footnotes.contains(label.as_str()) {
            push(
                DiagnosticCode::UnusedDefinition,
                range.clone(),
                format!("footnote `[^{label}]` is not used"),
                None,
            );
        }
    }

    for link in &parsed.links {
        if link.kind == LinkKind::UndefinedReference {
            let label = link.label.as_deref().unwrap_or("");
            let is_defined = match label.strip_prefix('^') {
                Some(f) => defined_footnotes.contains(f),
                None => defined.contains(label),
            };
            if !is_defined {
                push(
                    DiagnosticCode::UndefinedReference,
                    link.range.clone(),
                    format!("no definition for reference `[{label}]`"),
                    None,
                );
            }
            continue;
        }
        let range = link.dest_range.clone().unwrap_or(link.range.clone());
        let wiki = matches!(link.kind, LinkKind::Wiki | LinkKind::WikiEmbed);
        match resolve_link(ws, path, link) {
            Target::Missing if wiki => push(
                DiagnosticCode::MissingWikiTarget,
                range,
                format!("no document or file matches wiki link `[[{}]]`", link.dest),
                Some(&link.dest),
            ),
            Target::Missing => {
                // The path only: a fragment is not what is missing.
                let range = match &link.fragment_range {
                    Some(f) if f.start > range.start => range.start..f.start - 1,
                    _ => range,
                };
                let resolved = join_relative(path, &link.dest)
                    .unwrap_or_else(|| "a path outside the root".to_string());
                push(
                    DiagnosticCode::MissingFile,
                    range,
                    format!(
                        "file `{}` does not exist (resolved to `{resolved}`)",
                        link.dest
                    ),
                    Some(&resolved),
                );
            }
            Target::Ambiguous(paths) => push(
                DiagnosticCode::AmbiguousWikiTarget,
                range,
                format!(
                    "wiki link `[[{}]]` matches {} documents: {}",
                    link.dest,
                    paths.len(),
                    paths.join(", ")
                ),
                Some(&link.dest),
            ),
            Target::Document {
                path: target_path,
                fragment: Some(fragment),
            } => {
                let Some(target) = ws.parsed(&target_path) else {
                    continue;
                };
                if !fragment_matches(&target, &fragment, wiki, config.fragment_case_sensitive) {
                    let frag_range = link.fragment_range.clone().unwrap_or(range);
                    let where_ = if target_path == path {
                        "this document".to_string()
                    } else {
                        format!("`{target_path}`")
                    };
                    let target_desc = format!("{target_path}#{fragment}");
                    push(
                        DiagnosticCode::MissingHeading,
                        frag_range,
                        format!("no heading or anchor `#{fragment}` in {where_}"),
                        Some(&target_desc),
                    );
                }
            }
            _ => {}
        }
    }
    out.sort_by_key(|d| (d.range.start, d.code));
    out
}

#[cfg(test)]
mod tests;
