//! Link rewriting for a moved document.
//!
//! When `from` moves to `to`, every Markdown link in other documents that resolves to
//! `from` gets its path part rewritten relative to the linking document, keeping its
//! fragment, query and style (root-relative `/`, `./`, `.html` or no extension).
//! Wiki links are rewritten only when the file's stem changes. The moved document's own
//! relative links are rewritten so they still reach the same targets from the new folder.

use std::collections::BTreeMap;

use crate::document::TextEdit;
use crate::links::{Target, resolve_link};
use crate::parse::{Link, LinkKind};
use crate::workspace::Workspace;

/// The path from the folder of document `from` to `target`, both KB-relative.
pub fn relative_path(from: &str, target: &str) -> String {
    let from_dir: Vec<&str> = from.split('/').collect();
    let from_dir = &from_dir[..from_dir.len() - 1];
    let target_parts: Vec<&str> = target.split('/').collect();
    let common = from_dir
        .iter()
        .zip(&target_parts)
        .take_while(|(a, b)| a == b)
        .count();
    let mut parts: Vec<&str> = vec![".."; from_dir.len() - common];
    parts.extend(&target_parts[common..]);
    parts.join("/")
}

fn stem(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').map_or(name, |(s, _)| s)
}

/// Writes `target` in the style of `old` (the path part of a destination as written).
fn styled(old: &str, linking_doc: &str, target: &str) -> String {
    let mut new = if old.starts_with('/') {
        format!("/{target}")
    } else {
        relative_path(linking_doc, target)
    };
    if old.starts_with("./") && !new.starts_with("../") {
        new = format!("./{new}");
    }
    let old_name = old.rsplit('/').next().unwrap_or(old);
    let md_ext = [".md", ".markdown"].into_iter().find(|e| new.ends_with(e));
    if let Some(ext) = md_ext {
        if old_name.ends_with(".html") || old_name.ends_with(".htm") {
            new = format!("{}.html", &new[..new.len() - ext.len()]);
        } else if !old_name.contains('.') {
            new.truncate(new.len() - ext.len());
        }
    }
    if old.contains("%20") || (new.contains(' ') && !old.contains(' ')) {
        new = new.replace(' ', "%20");
    }
    new
}

/// The bytes of a link's path part (destination without `?query` and `#fragment`).
fn path_part(text: &str, link: &Link) -> Option<std::ops::Range<usize>> {
    let d = link.dest_range.clone()?;
    let s = &text[d.clone()];
    let end = s.find(['#', '?']).unwrap_or(s.len());
    if end == 0 {
        return None;
    }
    Some(d.start..d.start + end)
}

fn rewritable(kind: LinkKind) -> bool {
    matches!(
        kind,
        LinkKind::Inline | LinkKind::Image | LinkKind::Definition
    )
}

/// The edits, per document (KB-relative path, as the workspace holds it before the
/// move), that keep links correct when document `from` becomes `to`.
///
/// The moved document's own edits are listed under `from`.
pub fn move_edits(ws: &Workspace, from: &str, to: &str) -> BTreeMap<String, Vec<TextEdit>> {
    let mut out: BTreeMap<String, Vec<TextEdit>> = BTreeMap::new();
    for doc in ws.document_paths() {
        let Some(entry) = ws.get(doc) else { continue };
        let text = entry.doc.text();
        let mut edits = Vec::new();
        for link in &entry.parsed.links {
            let target = resolve_link(ws, doc, link);
            let target_path = match &target {
                Target::Document { path, .. } => Some(path.as_str()),
                Target::File(path) => Some(path.as_str()),
                _ => None,
            };
            let Some(target_path) = target_path else {
                continue;
            };
            let points_at_moved = target_path == from;
            if doc != from && !points_at_moved {
                continue;
            }
            // In the moved document: links to itself and to others, seen from its new place.
            let new_target = if points_at_moved { to } else { target_path };
            let linking_doc = if doc == from { to } else { doc };
            if rewritable(link.kind) {
                let Some(range) = path_part(&text, link) else {
                    continue;
                };
                let old = &text[range.clone()];
                if link.dest.is_empty() {
                    continue;
                }
                let new = styled(old, linking_doc, new_target);
                if new != old {
                    edits.push(TextEdit {
                        range,
                        new_text: new,
                    });
                }
            } else if matches!(link.kind, LinkKind::Wiki | LinkKind::WikiEmbed)
                && points_at_moved
                && stem(from) != stem(to)
            {
                let Some(d) = link.dest_range.clone() else {
                    continue;
                };
                let old = &text[d.clone()];
                let end = old.find(['#', '|']).unwrap_or(old.len());
                let written = &old[..end];
                let new = if written.contains('/') {
                    let t = to
                        .strip_suffix(".md")
                        .or_else(|| to.strip_suffix(".markdown"))
                        .unwrap_or(to);
                    t.to_string()
                } else {
                    stem(to).to_string()
                };
                edits.push(TextEdit {
                    range: d.start..d.start + end,
                    new_text: new,
                });
            }
        }
        if !edits.is_empty() {
            edits.sort_by_key(|e| e.range.start);
            edits.dedup_by(|a, b| a.range == b.range);
            out.insert(doc.to_string(), edits);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edit::apply_edits;
    use crate::fixture::workspace;

    #[test]
    fn relative_paths() {
        assert_eq!(relative_path("a.md", "b.md"), "b.md");
        assert_eq!(relative_path("docs/a.md", "b.md"), "../b.md");
        assert_eq!(relative_path("docs/x/a.md", "docs/y/b.md"), "../y/b.md");
        assert_eq!(relative_path("a.md", "docs/b.md"), "docs/b.md");
    }

    #[test]
    fn rewrites_links_to_the_moved_file_and_its_own_links() {
        let ws = workspace(
            "//- /index.md\nSee [guide](docs/guide.md#setup) and [again][g].\n\n[g]: ./docs/guide.md\n\
             //- /docs/other.md\n[up](guide) and [[guide]] and [ext](https://x.org/guide.md)\n\
             //- /docs/guide.md\n# Setup\n\nBack to [index](../index.md) and [self](#setup).\n",
        );
        let edits = move_edits(&ws, "docs/guide.md", "manual/start.md");
        let apply =
            |path: &str| apply_edits(&ws.get(path).unwrap().doc.text(), &edits[path]).unwrap();
        assert_eq!(
            apply("index.md"),
            "See [guide](manual/start.md#setup) and [again][g].\n\n[g]: ./manual/start.md\n"
        );
        assert_eq!(
            apply("docs/other.md"),
            "[up](../manual/start) and [[start]] and [ext](https://x.org/guide.md)\n"
        );
        // From manual/ the moved file's `../index.md` still reaches index.md: nothing to change.
        assert!(!edits.contains_key("docs/guide.md"));
        let edits = move_edits(&ws, "docs/guide.md", "guide.md");
        assert_eq!(
            apply_edits(
                &ws.get("docs/guide.md").unwrap().doc.text(),
                &edits["docs/guide.md"]
            )
            .unwrap(),
            "# Setup\n\nBack to [index](index.md) and [self](#setup).\n"
        );
    }
}
