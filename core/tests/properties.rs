//! Property tests (proptest, stable Rust) of the rules everything else stands on: the
//! parser, pointers and re-anchoring, incremental against full parses, patch planning,
//! slugs and link resolution.
//!
//! Each property runs `PROPTEST_CASES` cases (256 by default, the bounded CI run). The
//! long run of docs/reliability.md is
//! `PROPTEST_CASES=100000 cargo test --release -p folio-md-core --test properties`.
//! A failing case is shrunk and printed; proptest keeps it in
//! `core/tests/properties.proptest-regressions` so that it runs first from then on.

use std::path::PathBuf;

use folio_core::config::Config;
use folio_core::edit::{PatchKind, PatchOp, apply_patch};
use folio_core::links::{diagnostics, resolve_link};
use folio_core::parse::incremental::IncrementalParser;
use folio_core::parse::slug::slug;
use folio_core::parse::{ElementKind, Resolution, parse, resolve_pointer};
use folio_core::pointer::Pointer;
use folio_core::workspace::{DocEntry, Origin, Workspace};
use proptest::prelude::*;

/// Pieces that make Markdown structure; random text built from them reaches the parser's
/// corners (fences, lists in quotes, tables, setext lines, HTML, definitions, frontmatter,
/// wiki links, block ids) far more often than random characters do.
const PIECES: &[&str] = &[
    "# ",
    "## ",
    "### ",
    "\n",
    "\n\n",
    "\r\n",
    "- ",
    "* ",
    "1. ",
    "  ",
    "    ",
    "\t",
    "> ",
    "```",
    "~~~",
    "```rust\n",
    "| a | b |\n",
    "|---|---|\n",
    "---\n",
    "===\n",
    "<div>",
    "</div>",
    "<!-- ",
    " -->",
    "[",
    "]",
    "(",
    ")",
    "[[",
    "]]",
    "#",
    "|",
    "\\|",
    "^block",
    "![",
    "[x]: ",
    "<",
    ">",
    "*",
    "_",
    "`",
    "$$\n",
    "Word",
    "über",
    "日本語の文",
    "😀",
    "\u{301}",
    "e\u{301}",
    "[[Note#Head|alias]]",
    "[t](other.md#sec)",
    "[r][lbl]",
    "[lbl]: other.md",
    "x",
    " ",
    "&amp;",
    "https://example.com/a_(b)",
    "title: T\n",
    "tags: [a]\n",
    "#tag",
    " #a/b/",
    "#1",
];

/// Markdown-like text of up to `max` pieces.
fn markdown(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..max).prop_map(|v| v.concat())
}

/// Any Unicode text, for inputs that must simply never break anything.
fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![markdown(80), ".{0,200}"]
}

/// The largest char boundary of `text` at or below `at`.
fn floor_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

proptest! {
    /// Any text parses; every range lies on char boundaries inside the text; elements
    /// come in source order with their subtree enclosing their own range; line numbers
    /// are within the text's lines; tags are where they say.
    #[test]
    fn parse_is_total_and_ranges_are_sound(text in any_text()) {
        let parsed = parse(&text);
        // CommonMark's line endings: `\r\n`, `\n` and a lone `\r`.
        let lines = u32::try_from(text.replace("\r\n", "\n").replace('\r', "\n").split('\n').count()).unwrap();
        let mut last_start = 0;
        for e in &parsed.elements {
            prop_assert!(e.range.start <= e.range.end && e.range.end <= text.len(), "{e:?}");
            prop_assert!(text.is_char_boundary(e.range.start) && text.is_char_boundary(e.range.end));
            prop_assert!(e.subtree.start <= e.range.start && e.range.end <= e.subtree.end, "{e:?}");
            prop_assert!(e.subtree.end <= text.len());
            prop_assert!(e.range.start >= last_start, "elements out of order: {e:?}");
            last_start = e.range.start;
            prop_assert!(e.start_line >= 1 && e.start_line <= e.end_line && e.end_line <= lines, "{e:?}");
            if let Some(p) = e.parent {
                prop_assert!(p < parsed.elements.len());
            }
        }
        for l in &parsed.links {
            prop_assert!(l.range.end <= text.len() && text.is_char_boundary(l.range.start) && text.is_char_boundary(l.range.end), "{l:?}");
            for r in [&l.dest_range, &l.fragment_range].into_iter().flatten() {
                prop_assert!(l.range.start <= r.start && r.end <= l.range.end, "{l:?}");
            }
        }
        // An inline tag's bytes are `#` and its name, outside every link; a frontmatter
        // tag lies in the frontmatter.
        for t in &parsed.tags {
            prop_assert!(t.range.end <= text.len() && text.is_char_boundary(t.range.start) && text.is_char_boundary(t.range.end), "{t:?}");
            if t.in_frontmatter {
                prop_assert!(parsed.elements.iter().any(|e| e.kind == ElementKind::Frontmatter && e.range.start <= t.range.start && t.range.end <= e.range.end), "{t:?}");
            } else {
                prop_assert_eq!(&text[t.range.clone()], format!("#{}", t.name));
                prop_assert!(!parsed.links.iter().any(|l| l.range.start < t.range.end && t.range.start < l.range.end), "{t:?}");
            }
        }
    }

    /// Parsing is deterministic: the same text gives the same parse.
    #[test]
    fn parse_is_deterministic(text in markdown(80)) {
        prop_assert!(parse(&text).same_content(&parse(&text)));
    }

    /// Every element's pointer prints, parses back to itself and resolves exactly to that
    /// element (with its subtree checked).
    #[test]
    fn every_pointer_round_trips_and_resolves(text in markdown(80)) {
        let parsed = parse(&text);
        for (i, e) in parsed.elements.iter().enumerate() {
            let pointer = e.pointer();
            let printed = pointer.to_string();
            let back = Pointer::parse(&printed).unwrap();
            prop_assert_eq!(back.to_string(), printed.clone());
            let found = resolve_pointer(&parsed, &back, true);
            // Two elements can share kind, logical address and hashes only if they are
            // the same element; the first match is the one asked for.
            prop_assert!(matches!(found, Ok(Resolution::Exact(j)) if j == i), "{printed}: {found:?}");
        }
    }

    /// A pointer taken before an edit at the start of the document still finds its
    /// element after it: exactly when the logical address held, re-anchored (same kind,
    /// same bytes) when it moved, and never a different element's bytes.
    #[test]
    fn pointers_reanchor_after_an_edit_above(text in markdown(60), prefix in markdown(12)) {
        let before = parse(&text);
        let edited = format!("{prefix}\n\n{text}");
        let after = parse(&edited);
        for e in &before.elements {
            let own = &text[e.range.clone()];
            // Gone (the prefix changed how the text parses) or ambiguous: an error, never a
            // wrong element.
            if let Ok(r) = resolve_pointer(&after, &e.pointer(), false) {
                let found = &after.elements[r.index()];
                prop_assert_eq!(found.kind, e.kind);
                prop_assert_eq!(found.self_hash, e.self_hash);
                prop_assert_eq!(&edited[found.range.clone()], own);
            }
        }
    }

    /// Incremental parsing after any edit equals a whole-document parse of the new text.
    #[test]
    fn incremental_parse_equals_full_parse(
        text in markdown(120),
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0usize..40, markdown(6)), 1..8),
    ) {
        let (mut parser, mut parsed) = IncrementalParser::new(&text);
        let mut text = text;
        for (at, len, insert) in edits {
            let start = floor_boundary(&text, at.index(text.len() + 1));
            let end = floor_boundary(&text, start + len);
            let mut next = text.clone();
            next.replace_range(start..end, &insert);
            let incremental = parser.update(&text, &next, &parsed);
            prop_assert!(incremental.same_content(&parse(&next)), "edit {start}..{end} -> {insert:?} of {text:?}");
            text = next;
            parsed = incremental;
        }
    }

    /// Any patch either applies or is refused. Applied: the edits it reports, applied to
    /// the old text, give exactly the new text; each pointer it returns resolves exactly
    /// in the new text; every element before the first edit keeps its bytes.
    #[test]
    fn patches_apply_consistently_or_are_refused(
        text in markdown(60),
        picks in prop::collection::vec((0usize..7, any::<prop::sample::Index>(), markdown(8)), 1..4),
    ) {
        let parsed = parse(&text);
        let kinds = [
            PatchKind::ReplaceElement, PatchKind::ReplaceSection, PatchKind::DeleteSection,
            PatchKind::ReplaceSubtree, PatchKind::InsertBefore, PatchKind::InsertAfter, PatchKind::Delete,
        ];
        let ops: Vec<PatchOp> = picks
            .into_iter()
            .map(|(k, which, markdown)| PatchOp {
                kind: kinds[k],
                pointer: if parsed.elements.is_empty() {
                    "document".to_owned()
                } else {
                    parsed.elements[which.index(parsed.elements.len())].pointer().to_string()
                },
                markdown: Some(markdown),
                key: None,
                value: None,
            })
            .collect();
        let Ok(outcome) = apply_patch(&text, &ops) else {
            return Ok(());
        };
        let mut rebuilt = text.clone();
        let mut last_end = usize::MAX;
        for edit in outcome.edits.iter().rev() {
            prop_assert!(edit.range.end <= last_end, "edits overlap or are unsorted");
            last_end = edit.range.start;
            rebuilt.replace_range(edit.range.clone(), &edit.new_text);
        }
        prop_assert_eq!(&rebuilt, &outcome.text);
        let new = parse(&outcome.text);
        for p in outcome.new_pointers.iter().flatten() {
            let resolved = resolve_pointer(&new, &Pointer::parse(p).unwrap(), true);
            prop_assert!(matches!(resolved, Ok(Resolution::Exact(_))), "{p}: {resolved:?}");
        }
        let first = outcome.edits.first().map_or(text.len(), |e| e.range.start);
        for e in parsed.elements.iter().filter(|e| e.subtree.end < first) {
            prop_assert_eq!(&outcome.text[e.range.clone()], &text[e.range.clone()]);
        }
    }

    /// A slug is a fixed point of itself, has no upper-case letters or spaces, and is
    /// empty only for text without letters, marks, digits, `-` or `_`. Letters, marks and
    /// digits are the general categories L, M and N (GitHub's rule; from the
    /// unicode-properties tables here, the regex crate's in the rule): not Rust's
    /// `is_alphanumeric`, whose Alphabetic property also takes symbols such as Ⓐ (U+24B6,
    /// category So), which GitHub drops. A character the regex crate's older tables leave
    /// unassigned (U+323B0, CJK Extension J, Unicode 17) is not one either, as for a
    /// GitHub whose tables are older too.
    #[test]
    fn slugs_are_stable(text in any_text()) {
        let s = slug(&text);
        prop_assert_eq!(slug(&s), s.clone());
        prop_assert!(!s.contains(' '), "{s:?}");
        prop_assert_eq!(s.to_lowercase(), s.clone());
        if s.is_empty() {
            let unassigned = regex::Regex::new(r"\p{Cn}").unwrap();
            let letter = |c: char| {
                use unicode_properties::{GeneralCategoryGroup as G, UnicodeGeneralCategory};
                matches!(c.general_category_group(), G::Letter | G::Mark | G::Number)
                    && !unassigned.is_match(c.encode_utf8(&mut [0; 4]))
            };
            prop_assert!(!text.chars().any(|c| letter(c) || c == '-' || c == '_'), "{text:?}");
        }
    }

    /// Link resolution and diagnostics never fail on any document in a workspace of
    /// several, and each diagnostic's range lies inside its document.
    #[test]
    fn links_resolve_and_diagnose_without_failing(
        docs in prop::collection::vec(markdown(40), 1..5),
        names in prop::collection::vec("[a-zA-Z0-9 ._/#-]{1,16}", 5),
    ) {
        let mut ws = Workspace::new(PathBuf::from("/kb"), Config::default());
        let mut paths = Vec::new();
        for (i, doc) in docs.iter().enumerate() {
            // Link to the other documents by several spellings, then the random text.
            let name = names[i % names.len()].trim_matches('/').replace("//", "/");
            let path = if name.is_empty() || name.ends_with('.') { format!("n{i}.md") } else { format!("{name}{i}.md") };
            let text = format!("[[{name}]] [a]({name}.md) [b](../{name}#x) [[#{name}]]\n\n{doc}");
            ws.insert(path.clone(), DocEntry::new(&text, 0, Origin::Disk));
            paths.push((path, text));
        }
        for (path, text) in &paths {
            for link in &parse(text).links {
                let _ = resolve_link(&ws, path, link);
            }
            for d in diagnostics(&ws, path) {
                prop_assert!(d.range.end <= text.len(), "{d:?}");
            }
        }
    }
}
