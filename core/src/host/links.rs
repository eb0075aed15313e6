//! `kb_links`: outgoing and incoming links, a depth-limited walk, and broken links.

use std::collections::{BTreeSet, HashMap, VecDeque};

use crate::links::references::{Reference, references_to_document, references_to_documents};
use crate::links::{Target, diagnostics, resolve_link};
use crate::parse::LinkKind;
use crate::path_policy::resolve_existing;
use crate::workspace::Workspace;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Host, HostError, HostResult};

/// `kb_links` arguments.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(transform = crate::host::portable_schema)]
#[serde(deny_unknown_fields)]
pub struct LinksArgs {
    /// KB-relative path of the Markdown document; with `direction` `orphans`, a folder
    /// (`""`, `null` or omitted: the whole knowledge base).
    #[serde(default, deserialize_with = "null_as_empty")]
    pub path: String,
    /// `outgoing`, `incoming`, `both` (default), or `orphans`: the documents under the
    /// folder `path` that no other document links to.
    #[serde(default)]
    pub direction: Option<String>,
    /// Walk depth over resolved document links, 1–3 (default 1: direct links only).
    #[serde(default)]
    pub depth: Option<usize>,
    /// Include links to URLs (default false).
    #[serde(default)]
    pub include_external: bool,
}

/// A string that may be sent as `null`, which reads as `""` (as when it is omitted).
fn null_as_empty<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(deserializer)?.unwrap_or_default())
}

/// One outgoing link.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct OutgoingLink {
    /// Line of the link, 1-based.
    pub line: u32,
    /// inline, image, autolink, reference, image_reference, definition, html (`<img src>`, `<a href>`), wiki, wiki_embed, footnote.
    pub kind: String,
    /// `document`, `file`, `external`, `definition` (a footnote), `outside_root`, `missing`,
    /// `ambiguous`, `case_mismatch` (the file exists under a spelling that differs in
    /// letter case) or `redirected` (a docfx site's redirection files send that page
    /// elsewhere; the link works on the published site). A reference link has its definition's status and target; one with no
    /// definition is `missing`.
    pub status: String,
    /// The resolved KB-relative path (documents and files).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// The fragment after `#`, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fragment: Option<String>,
    /// The destination as written (decoded); for a reference link (`[text][label]`), its
    /// definition's; empty for a reference without a definition.
    pub dest: String,
}

/// One incoming link.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct IncomingLink {
    /// The linking document.
    pub source: String,
    /// Line in the linking document, 1-based.
    pub line: u32,
    /// How the link is written.
    pub kind: String,
    /// The fragment, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fragment: Option<String>,
}

/// A document reached by the walk.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct WalkNode {
    /// The document.
    pub path: String,
    /// Links followed from the start (1 = direct).
    pub depth: usize,
    /// The document it was reached from.
    pub via: String,
    /// `outgoing` (it is linked to) or `incoming` (it links here).
    pub direction: String,
}

/// A broken link or reference problem in the document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct BrokenLink {
    /// Stable diagnostic code (docs/diagnostics.md).
    pub code: crate::codes::DiagnosticCode,
    /// `error` or `warning`.
    pub severity: crate::codes::Severity,
    /// Line, 1-based.
    pub line: u32,
    /// Explanation.
    pub message: String,
}

/// `kb_links` output.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct LinksOutput {
    /// The document.
    pub path: String,
    /// Its links, in source order (with `direction` outgoing or both).
    pub outgoing: Vec<OutgoingLink>,
    /// Links from other documents to it (with `direction` incoming or both).
    pub incoming: Vec<IncomingLink>,
    /// Documents reached within `depth` (depth ≥ 2), breadth first.
    pub walk: Vec<WalkNode>,
    /// Diagnostics of the document's links.
    pub broken: Vec<BrokenLink>,
    /// With `direction` `orphans`: the documents under `path` that no other document
    /// links to (any link style, site rules included), sorted; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub orphans: Option<Vec<String>>,
}

fn kind_name(kind: LinkKind) -> String {
    serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// `references` (links in other documents to one document, core
/// [`crate::links::references`]'s one rule) as `kb_links` lists them.
fn incoming_links(ws: &Workspace, references: Vec<Reference>) -> Vec<IncomingLink> {
    references
        .into_iter()
        .filter_map(|r| {
            let parsed = ws.parsed(&r.path)?;
            let link = parsed.links.iter().find(|l| l.range == r.range)?;
            let fragment = match resolve_link(ws, &r.path, link) {
                Target::Document { fragment, .. } => fragment,
                _ => None,
            };
            Some(IncomingLink {
                line: parsed.line_of(link.range.start),
                kind: kind_name(link.kind),
                fragment,
                source: r.path,
            })
        })
        .collect()
}

/// The documents that document `path`'s links lead to (itself excluded), sorted.
fn linked_documents(ws: &Workspace, path: &str) -> BTreeSet<String> {
    let Some(parsed) = ws.parsed(path) else {
        return BTreeSet::new();
    };
    parsed
        .links
        .iter()
        .filter_map(|l| match resolve_link(ws, path, l) {
            Target::Document { path: to, .. } if to != path => Some(to),
            _ => None,
        })
        .collect()
}

impl Host {
    /// `kb_links`.
    pub fn links(&self, args: &LinksArgs) -> HostResult<LinksOutput> {
        let direction = args.direction.as_deref().unwrap_or("both");
        let (out_on, in_on) = match direction {
            "both" => (true, true),
            "outgoing" => (true, false),
            "incoming" => (false, true),
            "orphans" => return self.orphans(&args.path),
            other => {
                return Err(HostError::invalid(format!(
                    "unknown direction `{other}`; use outgoing, incoming, both or orphans"
                )));
            }
        };
        let depth = args.depth.unwrap_or(1);
        if !(1..=3).contains(&depth) {
            return Err(HostError::invalid("`depth` must be 1, 2 or 3"));
        }
        resolve_existing(&self.root, &args.path)?;
        Host::check_markdown_name(&args.path)?;
        self.with_workspace(|ws| links_in(ws, args, out_on, in_on, depth))
    }
}

impl Host {
    /// The documents under folder `folder` (`""`: all) that no other document links to
    /// ([`crate::features::mentions::orphans`]), as a [`LinksOutput`] with only `orphans`.
    ///
    /// Errors: `INVALID_PATH` for a folder outside the root; `NOT_FOUND` when it is no
    /// folder of the root.
    fn orphans(&self, folder: &str) -> HostResult<LinksOutput> {
        if folder.starts_with('/') {
            // An absolute path: refused as every path from outside is.
            crate::path_policy::check_syntax(folder)?;
        }
        // `.`, `./sub` and `sub/` name folders as a shell user writes them.
        let mut folder = folder;
        while let Some(rest) = folder.strip_prefix("./") {
            folder = rest;
        }
        let folder = folder.strip_suffix('/').unwrap_or(folder);
        let folder = if folder == "." { "" } else { folder };
        if !folder.is_empty() {
            crate::path_policy::check_syntax(folder)?;
        }
        let under = |p: &str| {
            folder.is_empty() || p.strip_prefix(folder).is_some_and(|r| r.starts_with('/'))
        };
        self.with_workspace(|ws| {
            if !folder.is_empty() && !ws.is_folder(folder) && !self.root.join(folder).is_dir() {
                return Err(HostError::new(
                    super::ErrorCode::NotFound,
                    format!("`{folder}` is not a folder of the knowledge base; give one, or \"\" for all of it"),
                ));
            }
            Ok(LinksOutput {
                path: folder.to_string(),
                orphans: Some(
                    crate::features::mentions::orphans(ws)
                        .into_iter()
                        .filter(|p| under(p))
                        .collect(),
                ),
                ..LinksOutput::default()
            })
        })
    }
}

/// Where link `l` of document `from` leads, and its destination as written; a reference
/// link leads where its link reference definition does, with the definition's
/// destination, and one without a definition nowhere ([`Target::Missing`], destination
/// empty).
fn resolve_through_definition(
    ws: &Workspace,
    from: &str,
    l: &crate::parse::Link,
) -> (Target, String) {
    match (l.kind, resolve_link(ws, from, l)) {
        (LinkKind::UndefinedReference, _) => (Target::Missing, String::new()),
        (LinkKind::Reference | LinkKind::ImageReference, Target::Definition(key)) => {
            let Some(parsed) = ws.parsed(from) else {
                return (Target::Missing, String::new());
            };
            let definition = parsed.definitions.iter().find(|d| d.key == key);
            let link = definition.and_then(|d| {
                parsed
                    .links
                    .iter()
                    .find(|x| x.kind == LinkKind::Definition && x.range == d.range)
            });
            match link {
                Some(link) => (resolve_link(ws, from, link), link.dest.clone()),
                None => (Target::Missing, String::new()),
            }
        }
        (_, target) => (target, l.dest.clone()),
    }
}

fn links_in(
    ws: &Workspace,
    args: &LinksArgs,
    out_on: bool,
    in_on: bool,
    depth: usize,
) -> HostResult<LinksOutput> {
    let parsed = ws.parsed(&args.path).ok_or_else(|| {
        HostError::new(
            super::ErrorCode::UnsupportedFormat,
            format!("`{}` could not be loaded as Markdown", args.path),
        )
    })?;
    let mut outgoing = Vec::new();
    if out_on {
        for l in &parsed.links {
            let (resolved, dest) = resolve_through_definition(ws, &args.path, l);
            let (status, target, fragment) = match resolved {
                Target::External => ("external", None, None),
                Target::OutsideRoot => ("outside_root", None, None),
                Target::Document { path, fragment } => ("document", Some(path), fragment),
                Target::File(p) => ("file", Some(p), None),
                Target::Definition(_) => ("definition", None, None),
                Target::Missing | Target::MissingFoundByName(_) => {
                    ("missing", None, l.fragment.clone())
                }
                Target::CaseMismatch { path, fragment } => ("case_mismatch", Some(path), fragment),
                Target::Ambiguous(_) => ("ambiguous", None, l.fragment.clone()),
                Target::Redirected(_) => ("redirected", None, None),
            };
            if status == "external" && !args.include_external {
                continue;
            }
            outgoing.push(OutgoingLink {
                line: parsed.line_of(l.range.start),
                kind: kind_name(l.kind),
                status: status.into(),
                target,
                fragment,
                dest,
            });
        }
    }
    let incoming = if in_on {
        incoming_links(ws, references_to_document(ws, &args.path))
    } else {
        Vec::new()
    };
    let mut walk = Vec::new();
    if depth > 1 {
        let mut incoming_of = if in_on {
            references_to_documents(ws)
        } else {
            HashMap::new()
        };
        let mut seen: BTreeSet<String> = BTreeSet::from([args.path.clone()]);
        let mut queue: VecDeque<(String, usize)> = VecDeque::from([(args.path.clone(), 0)]);
        while let Some((doc, d)) = queue.pop_front() {
            if d == depth {
                continue;
            }
            let mut next: Vec<(String, &str)> = Vec::new();
            if out_on {
                next.extend(
                    linked_documents(ws, &doc)
                        .into_iter()
                        .map(|p| (p, "outgoing")),
                );
            }
            if in_on {
                let sources: BTreeSet<String> = incoming_of
                    .remove(&doc)
                    .into_iter()
                    .flatten()
                    .map(|r| r.path)
                    .collect();
                next.extend(sources.into_iter().map(|p| (p, "incoming")));
            }
            for (p, dir) in next {
                if seen.insert(p.clone()) {
                    walk.push(WalkNode {
                        path: p.clone(),
                        depth: d + 1,
                        via: doc.clone(),
                        direction: dir.into(),
                    });
                    queue.push_back((p, d + 1));
                }
            }
        }
    }
    let broken = diagnostics(ws, &args.path)
        .into_iter()
        .map(|d| BrokenLink {
            code: d.code,
            severity: d.severity,
            line: parsed.line_of(d.range.start),
            message: d.message,
        })
        .collect();
    Ok(LinksOutput {
        path: args.path.clone(),
        outgoing,
        incoming,
        walk,
        broken,
        orphans: None,
    })
}
