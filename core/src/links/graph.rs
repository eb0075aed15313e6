//! The reverse link index: which documents depend on which link targets.
//!
//! For every document the graph records the set of [`TargetKey`]s its links may
//! resolve through: each candidate path of a relative link (as written, with `.md`,
//! `.markdown`, and the `.md` page of an `.html` link) and the wiki key of each wiki
//! link. The reverse map answers "whose diagnostics can change when this file
//! appears, disappears or changes its headings" without rescanning the workspace.
//!
//! The graph is updated per document from the document's own links, so an edit costs
//! the links of that document only. [`LinkGraph::build`] makes the same graph from
//! scratch; a test compares the two after random edits.

use std::collections::{BTreeMap, BTreeSet};

use crate::links::join_relative;
use crate::parse::{LinkSyntax, Parsed};

/// A name a link may resolve through.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TargetKey {
    /// A KB-relative path (a document, another file or a folder).
    Path(String),
    /// The lowercased file stem a wiki link target ends with (`[[Folder/Page]]` → `page`).
    Wiki(String),
}

/// Forward and reverse maps between documents and the targets their links name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkGraph {
    forward: BTreeMap<String, BTreeSet<TargetKey>>,
    reverse: BTreeMap<TargetKey, BTreeSet<String>>,
}

/// The wiki key of a wiki link target or of a document path: its last segment,
/// folded (NFC, lowercased), without a `.md` or `.markdown` extension. Markdown links
/// carry it too, since they may resolve by name (vaults) or under another spelling.
pub fn wiki_key(name: &str) -> String {
    let last = crate::path_policy::folded(
        name.trim_end_matches('/')
            .rsplit('/')
            .next()
            .unwrap_or(name),
    );
    for ext in [".md", ".markdown"] {
        if let Some(stem) = last.strip_suffix(ext) {
            return stem.to_string();
        }
    }
    last
}

/// The keys the links of document `path` may resolve through.
pub fn target_keys(path: &str, parsed: &Parsed) -> BTreeSet<TargetKey> {
    let mut keys = BTreeSet::new();
    for link in &parsed.links {
        if link.external {
            continue;
        }
        match link.kind.syntax() {
            LinkSyntax::Wiki => {
                if link.dest.is_empty() {
                    keys.insert(TargetKey::Path(path.to_string()));
                } else {
                    keys.insert(TargetKey::Wiki(wiki_key(&link.dest)));
                }
            }
            LinkSyntax::Path => {
                if link.dest.is_empty() {
                    keys.insert(TargetKey::Path(path.to_string()));
                    continue;
                }
                let dest = link.dest.split('?').next().unwrap_or("");
                let Some(joined) = join_relative(path, dest) else {
                    continue;
                };
                let stem = joined
                    .strip_suffix(".html")
                    .or_else(|| joined.strip_suffix(".htm"))
                    .unwrap_or(&joined);
                // A file under another letter case, Unicode form or (by name) folder.
                keys.insert(TargetKey::Wiki(wiki_key(dest)));
                keys.insert(TargetKey::Path(format!("{stem}.md")));
                keys.insert(TargetKey::Path(format!("{stem}.markdown")));
                keys.insert(TargetKey::Path(joined));
            }
            LinkSyntax::Reference | LinkSyntax::Footnote => {}
        }
    }
    keys
}

/// The keys under which a change to the file `path` is seen: the path itself, its
/// wiki key, and its parent folders (a link to a folder resolves while it has files).
pub fn keys_of_file(path: &str) -> Vec<TargetKey> {
    let mut keys = vec![
        TargetKey::Path(path.to_string()),
        TargetKey::Wiki(wiki_key(path)),
    ];
    let mut rest = path;
    while let Some((parent, _)) = rest.rsplit_once('/') {
        keys.push(TargetKey::Path(parent.to_string()));
        rest = parent;
    }
    keys.push(TargetKey::Path(String::new()));
    keys
}

impl LinkGraph {
    /// Builds the graph of every document from scratch.
    pub fn build<'a>(docs: impl IntoIterator<Item = (&'a str, &'a Parsed)>) -> LinkGraph {
        let mut graph = LinkGraph::default();
        for (path, parsed) in docs {
            graph.update(path, parsed);
        }
        graph
    }

    /// Records the links of document `path`; returns true when its key set changed.
    pub fn update(&mut self, path: &str, parsed: &Parsed) -> bool {
        let keys = target_keys(path, parsed);
        if self.forward.get(path) == Some(&keys) {
            return false;
        }
        self.remove(path);
        for key in &keys {
            self.reverse
                .entry(key.clone())
                .or_default()
                .insert(path.to_string());
        }
        self.forward.insert(path.to_string(), keys);
        true
    }

    /// Forgets document `path`'s links.
    pub fn remove(&mut self, path: &str) {
        let Some(old) = self.forward.remove(path) else {
            return;
        };
        for key in old {
            if let Some(set) = self.reverse.get_mut(&key) {
                set.remove(path);
                if set.is_empty() {
                    self.reverse.remove(&key);
                }
            }
        }
    }

    /// Documents with a link that may resolve through `key`.
    pub fn dependents(&self, key: &TargetKey) -> impl Iterator<Item = &str> {
        self.reverse
            .get(key)
            .into_iter()
            .flatten()
            .map(String::as_str)
    }

    /// Documents whose diagnostics may change when the file `path` is created, deleted
    /// or changes its headings, sorted; `path` itself is not included.
    pub fn affected_by(&self, path: &str) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for key in keys_of_file(path) {
            out.extend(
                self.dependents(&key)
                    .filter(|p| *p != path)
                    .map(str::to_string),
            );
        }
        out
    }

    /// The keys recorded for document `path`.
    pub fn keys(&self, path: &str) -> Option<&BTreeSet<TargetKey>> {
        self.forward.get(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse;

    #[test]
    fn reverse_map_follows_updates() {
        let a = parse("[b](sub/b.md#x) [[Page]] [c](c) [self](#h)\n");
        let mut graph = LinkGraph::default();
        assert!(graph.update("a.md", &a));
        assert!(!graph.update("a.md", &a));
        assert_eq!(
            graph
                .affected_by("sub/b.md")
                .into_iter()
                .collect::<Vec<_>>(),
            ["a.md"]
        );
        assert_eq!(
            graph
                .affected_by("notes/page.md")
                .into_iter()
                .collect::<Vec<_>>(),
            ["a.md"]
        );
        assert_eq!(
            graph.affected_by("c.md").into_iter().collect::<Vec<_>>(),
            ["a.md"]
        );
        assert!(graph.affected_by("d.md").is_empty());
        // A file created inside `sub/` can make a link to the folder resolve.
        let folder = parse("[dir](sub)\n");
        graph.update("f.md", &folder);
        assert!(graph.affected_by("sub/new.png").contains("f.md"));
        graph.update("a.md", &parse("nothing\n"));
        // Only the folder link is left.
        assert_eq!(
            graph
                .affected_by("sub/b.md")
                .into_iter()
                .collect::<Vec<_>>(),
            ["f.md"]
        );
        graph.remove("f.md");
        assert_eq!(graph, LinkGraph::build([("a.md", &parse("nothing\n"))]));
    }
}
