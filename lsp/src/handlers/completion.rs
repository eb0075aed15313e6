//! `textDocument/completion`: relative paths and `#` anchors inside `](…)`, wiki
//! targets and their headings inside `[[…`, reference labels inside `][…`, and the
//! workspace's tags after a `#` that starts a tag (where the parser reads a tag: not in
//! code, math, HTML, links or the frontmatter).
//!
//! The context is read from the text of the cursor's line before the cursor. Every
//! item carries a text edit that replaces what was typed of the destination, label
//! or anchor, so clients need not guess word boundaries.

use std::collections::BTreeMap;
use std::ops::Range;

use anyhow::Result;
use folio_core::links::join_relative;
use folio_core::links::rewrite::relative_path;
use folio_core::parse::Parsed;
use folio_core::workspace::SiteGenerator;
use tower_lsp_server::ls_types::{
    CompletionItem, CompletionItemKind, CompletionList, CompletionParams, CompletionResponse,
    CompletionTextEdit, Position, TextEdit,
};

use super::cursor;
use crate::convert;
use crate::session::Session;

/// The most items one answer holds; beyond it the list is filtered by the typed text
/// and marked incomplete, so the client asks again as the user types.
pub const MAX_ITEMS: usize = 1000;

/// Characters that open a completion context.
pub const TRIGGER_CHARACTERS: [&str; 4] = ["(", "#", "[", "/"];

struct Item {
    label: String,
    kind: CompletionItemKind,
    detail: Option<String>,
}

/// Completion items at the cursor.
pub fn completion(s: &Session, params: &CompletionParams) -> Result<Option<CompletionResponse>> {
    let p = &params.text_document_position;
    let Some(c) = cursor(s, &p.text_document.uri, p.position) else {
        return Ok(None);
    };
    let ws = &s.roots[c.doc.root].ws();
    let line_start = convert::offset(
        &c.entry.doc,
        Position {
            line: p.position.line,
            character: 0,
        },
        s.encoding,
    );
    let Some(prefix) = c.entry.doc.slice(line_start..c.offset) else {
        return Ok(None);
    };
    let at = |rel: usize| line_start + rel;
    let (replace, items): (Range<usize>, Vec<Item>) =
        if let Some(open) = prefix.rfind("[[").filter(|&i| !prefix[i..].contains("]]")) {
            let inner = &prefix[open + 2..];
            if inner.contains('|') {
                return Ok(None);
            }
            match inner.find('#') {
                Some(hash) => {
                    let target = inner[..hash].trim();
                    let path = if target.is_empty() {
                        Some(c.doc.path.clone())
                    } else {
                        let candidates = ws.wiki_candidates(&c.doc.path, target);
                        if candidates.len() == 1 {
                            candidates.into_iter().next()
                        } else {
                            None
                        }
                    };
                    let Some(parsed) = path.and_then(|p| ws.parsed(&p)) else {
                        return Ok(None);
                    };
                    let items = parsed
                        .headings
                        .iter()
                        .map(|h| Item {
                            label: h.text.clone(),
                            kind: CompletionItemKind::REFERENCE,
                            detail: Some(format!("#{}", h.slug)),
                        })
                        .collect();
                    (at(open + 2 + hash + 1)..c.offset, items)
                }
                None => {
                    // The file stem, or the path without extension when stems repeat.
                    let mut by_stem: BTreeMap<String, Vec<&str>> = BTreeMap::new();
                    for path in ws.document_paths() {
                        by_stem
                            .entry(stem(path).to_string())
                            .or_default()
                            .push(path);
                    }
                    let mut items = Vec::new();
                    for (name, paths) in by_stem {
                        if paths.len() == 1 {
                            items.push(Item {
                                label: name,
                                kind: CompletionItemKind::FILE,
                                detail: Some(paths[0].to_string()),
                            });
                        } else {
                            for path in paths {
                                let no_ext = path.rsplit_once('.').map_or(path, |(a, _)| a);
                                items.push(Item {
                                    label: no_ext.to_string(),
                                    kind: CompletionItemKind::FILE,
                                    detail: Some(path.to_string()),
                                });
                            }
                        }
                    }
                    (at(open + 2)..c.offset, items)
                }
            }
        } else if let Some(open) = prefix
            .rfind("](")
            .filter(|&i| !prefix[i + 2..].contains([')', ' ', '\t']))
        {
            let partial = &prefix[open + 2..];
            match partial.find('#') {
                Some(hash) => {
                    let written = &partial[..hash];
                    let target = if written.is_empty() {
                        Some(c.doc.path.clone())
                    } else {
                        resolve_document(s, c.doc.root, &c.doc.path, written)
                    };
                    let Some(parsed) = target.and_then(|p| ws.parsed(&p)) else {
                        return Ok(None);
                    };
                    (
                        at(open + 2 + hash + 1)..c.offset,
                        anchors(&parsed, ws.generator()),
                    )
                }
                None => {
                    let mut items = Vec::new();
                    for path in ws.document_paths() {
                        if path != c.doc.path {
                            items.push(Item {
                                label: relative_path(&c.doc.path, path),
                                kind: CompletionItemKind::FILE,
                                detail: None,
                            });
                        }
                    }
                    (at(open + 2)..c.offset, items)
                }
            }
        } else if let Some(open) = prefix
            .rfind("][")
            .filter(|&i| !prefix[i + 2..].contains(']'))
        {
            let mut seen = Vec::new();
            let mut items = Vec::new();
            for d in &c.parsed.definitions {
                if !seen.contains(&d.key) {
                    seen.push(d.key.clone());
                    items.push(Item {
                        label: d.label.clone(),
                        kind: CompletionItemKind::REFERENCE,
                        detail: None,
                    });
                }
            }
            (at(open + 2)..c.offset, items)
        } else if let Some(hash) = typed_tag(&prefix) {
            let Some(tags) =
                folio_core::tags::suggestions(ws, &c.parsed, c.offset, &prefix[hash + 1..])
            else {
                return Ok(None);
            };
            let items = tags
                .into_iter()
                .map(|(tag, n)| Item {
                    label: tag,
                    kind: CompletionItemKind::KEYWORD,
                    detail: Some(if n == 1 {
                        "1 note".to_string()
                    } else {
                        format!("{n} notes")
                    }),
                })
                .collect();
            (at(hash + 1)..c.offset, items)
        } else {
            return Ok(None);
        };
    let range = convert::range(&c.entry.doc, &replace, s.encoding);
    // In a large workspace, send only what contains the typed text and let the client ask again.
    let typed = c
        .entry
        .doc
        .slice(replace.clone())
        .unwrap_or_default()
        .to_lowercase();
    let incomplete = items.len() > MAX_ITEMS;
    let mut items = items;
    if incomplete {
        items.retain(|i| i.label.to_lowercase().contains(&typed));
        items.sort_by(|a, b| {
            a.label
                .len()
                .cmp(&b.label.len())
                .then(a.label.cmp(&b.label))
        });
        items.truncate(MAX_ITEMS);
    }
    let mut out: Vec<CompletionItem> = items
        .into_iter()
        .map(|item| CompletionItem {
            label: item.label.clone(),
            kind: Some(item.kind),
            detail: item.detail,
            filter_text: Some(item.label.clone()),
            text_edit: Some(CompletionTextEdit::Edit(TextEdit {
                range,
                new_text: item.label,
            })),
            ..CompletionItem::default()
        })
        .collect();
    out.sort_by(|a, b| a.label.cmp(&b.label));
    if incomplete {
        return Ok(Some(CompletionResponse::List(CompletionList {
            is_incomplete: true,
            items: out,
        })));
    }
    Ok(Some(CompletionResponse::Array(out)))
}

/// Where the tag being typed at the end of `prefix` starts: the byte of its `#`, which
/// begins the line or follows white space, every character after it a tag character
/// ([`folio_core::parse::is_tag_char`]).
fn typed_tag(prefix: &str) -> Option<usize> {
    let hash = prefix.rfind('#')?;
    let opens = prefix[..hash]
        .chars()
        .next_back()
        .is_none_or(char::is_whitespace);
    let typed = &prefix[hash + 1..];
    (opens && typed.chars().all(folio_core::parse::is_tag_char)).then_some(hash)
}

fn stem(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').map_or(name, |(a, _)| a)
}

/// The fragments a Markdown link can name in `parsed`: each heading's GitHub slug, or on a
/// published site the id its generator gives the heading ([`Parsed::heading_anchors`]), then the
/// HTML and attribute-list anchors.
fn anchors(parsed: &Parsed, generator: SiteGenerator) -> Vec<Item> {
    let ids = parsed.heading_anchors(generator);
    let mut items: Vec<Item> = parsed
        .headings
        .iter()
        .zip(ids)
        .map(|(h, id)| Item {
            label: id,
            kind: CompletionItemKind::REFERENCE,
            detail: Some(h.text.clone()),
        })
        .collect();
    items.extend(parsed.anchors.iter().map(|a| Item {
        label: a.id.clone(),
        kind: CompletionItemKind::REFERENCE,
        detail: None,
    }));
    items
}

/// The document a written relative destination names (with or without `.md`).
fn resolve_document(s: &Session, root: usize, from: &str, written: &str) -> Option<String> {
    let ws = &s.roots[root].ws();
    let joined = join_relative(from, &folio_core::parse::percent_decode(written))?;
    [
        joined.clone(),
        format!("{joined}.md"),
        format!("{joined}.markdown"),
    ]
    .into_iter()
    .find(|p| ws.contains_document(p))
}
