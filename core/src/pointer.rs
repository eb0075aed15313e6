//! Hashed semantic pointers, the value: `logical~selfHash~subtreeHash`, the hash that
//! makes them, and the element kinds their logical addresses name.
//!
//! Both hashes are XxHash64 (seed 0) of an element's exact UTF-8 source bytes, written
//! as 16 lowercase hex digits (docs/architecture.md, "Pointers"). This module
//! is a leaf: resolving a pointer in a document's elements is
//! [`crate::parse::resolve_pointer`].

use std::fmt;

/// XxHash64 (seed 0) of `bytes`.
pub fn hash_bytes(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh64::xxh64(bytes, 0)
}

/// A hash as 16 lowercase hex digits.
pub fn hex(hash: u64) -> String {
    format!("{hash:016x}")
}

/// A concrete pointer to an element.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Pointer {
    /// Logical address, e.g. `1.2.p3`, `li1`, `frontmatter`, `document`.
    pub logical: String,
    /// Hash of the element's own bytes.
    pub self_hash: u64,
    /// Hash of the bytes the element owns (its section or descendants).
    pub subtree_hash: u64,
}

impl fmt::Display for Pointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}~{:016x}~{:016x}",
            self.logical, self.self_hash, self.subtree_hash
        )
    }
}

/// Why a pointer string could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PointerParseError {
    /// Not of the form `logical~selfHash~subtreeHash`.
    #[error(
        "pointer `{0}` is not of the form logical~selfHash~subtreeHash (hashes: 16 lowercase hex digits)"
    )]
    Malformed(String),
    /// The logical address names no element kind.
    #[error("pointer `{0}` has an unknown logical address")]
    UnknownAddress(String),
}

impl Pointer {
    /// Parses `logical~selfHash~subtreeHash`.
    ///
    /// Errors: [`PointerParseError::Malformed`] when a part is missing or a hash is not
    /// 16 lowercase hex digits; [`PointerParseError::UnknownAddress`] when the last segment
    /// of the logical address is not a known element kind.
    pub fn parse(s: &str) -> Result<Pointer, PointerParseError> {
        let mut parts = s.split('~');
        let (Some(logical), Some(h1), Some(h2), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(PointerParseError::Malformed(s.to_string()));
        };
        let parse_hash = |h: &str| {
            if h.len() == 16
                && h.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
            {
                u64::from_str_radix(h, 16).ok()
            } else {
                None
            }
        };
        let (Some(self_hash), Some(subtree_hash)) = (parse_hash(h1), parse_hash(h2)) else {
            return Err(PointerParseError::Malformed(s.to_string()));
        };
        if logical.is_empty() || kind_of_logical(logical).is_none() {
            return Err(PointerParseError::UnknownAddress(s.to_string()));
        }
        Ok(Pointer {
            logical: logical.to_string(),
            self_hash,
            subtree_hash,
        })
    }

    /// The element kind named by the logical address.
    pub fn kind(&self) -> Option<ElementKind> {
        kind_of_logical(&self.logical)
    }
}

fn kind_of_logical(logical: &str) -> Option<ElementKind> {
    let mut segments = logical.split('.');
    let last = segments.next_back()?;
    // Every earlier segment must itself be a heading number or a list item.
    for seg in segments {
        match ElementKind::from_segment(seg) {
            Some(ElementKind::Heading | ElementKind::ListItem) => {}
            _ => return None,
        }
    }
    ElementKind::from_segment(last)
}

/// The kind of a block element (docs/architecture.md, "Pointers").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ElementKind {
    /// The whole document; its logical address is `document`.
    Document,
    /// YAML (`---`) or TOML (`+++`) frontmatter at the start of the file.
    Frontmatter,
    /// An ATX or setext heading (CommonMark 4.2, 4.3).
    Heading,
    /// A paragraph (CommonMark 4.8).
    Paragraph,
    /// A list item (CommonMark 5.2), nested lists included in its subtree.
    ListItem,
    /// A GFM table.
    Table,
    /// A block quote (CommonMark 5.1).
    BlockQuote,
    /// A fenced or indented code block (CommonMark 4.4, 4.5).
    Code,
    /// An HTML block (CommonMark 4.6).
    Html,
    /// A thematic break (CommonMark 4.1).
    ThematicBreak,
    /// A link reference definition (CommonMark 4.7).
    Definition,
    /// A GFM footnote definition.
    FootnoteDefinition,
    /// A math block (`$$`).
    Math,
}

impl ElementKind {
    /// The prefix of this kind's segment in a logical address (`p` in `1.p3`);
    /// headings have none (`1.2`).
    pub fn prefix(self) -> &'static str {
        match self {
            ElementKind::Document => "document",
            ElementKind::Frontmatter => "frontmatter",
            ElementKind::Heading => "",
            ElementKind::Paragraph => "p",
            ElementKind::ListItem => "li",
            ElementKind::Table => "t",
            ElementKind::BlockQuote => "q",
            ElementKind::Code => "code",
            ElementKind::Html => "html",
            ElementKind::ThematicBreak => "hr",
            ElementKind::Definition => "def",
            ElementKind::FootnoteDefinition => "fn",
            ElementKind::Math => "math",
        }
    }

    /// The kind named by the last segment of a logical address, if any.
    pub fn from_segment(segment: &str) -> Option<ElementKind> {
        if segment == "document" {
            return Some(ElementKind::Document);
        }
        if segment == "frontmatter" {
            return Some(ElementKind::Frontmatter);
        }
        let digits = segment.trim_start_matches(|c: char| c.is_ascii_lowercase());
        let prefix = &segment[..segment.len() - digits.len()];
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        ALL_KINDS
            .iter()
            .copied()
            .find(|k| k.prefix() == prefix && *k != ElementKind::Document)
    }

    /// The snake_case name used on the wire (`list_item`).
    pub fn as_str(self) -> &'static str {
        match self {
            ElementKind::Document => "document",
            ElementKind::Frontmatter => "frontmatter",
            ElementKind::Heading => "heading",
            ElementKind::Paragraph => "paragraph",
            ElementKind::ListItem => "list_item",
            ElementKind::Table => "table",
            ElementKind::BlockQuote => "block_quote",
            ElementKind::Code => "code",
            ElementKind::Html => "html",
            ElementKind::ThematicBreak => "thematic_break",
            ElementKind::Definition => "definition",
            ElementKind::FootnoteDefinition => "footnote_definition",
            ElementKind::Math => "math",
        }
    }
}

pub(crate) const ALL_KINDS: [ElementKind; 13] = [
    ElementKind::Document,
    ElementKind::Frontmatter,
    ElementKind::Heading,
    ElementKind::Paragraph,
    ElementKind::ListItem,
    ElementKind::Table,
    ElementKind::BlockQuote,
    ElementKind::Code,
    ElementKind::Html,
    ElementKind::ThematicBreak,
    ElementKind::Definition,
    ElementKind::FootnoteDefinition,
    ElementKind::Math,
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{Resolution, ResolveError, parse, resolve_pointer as resolve};

    fn pointers(text: &str) -> Vec<String> {
        parse(text)
            .elements
            .iter()
            .map(|e| e.pointer().to_string())
            .collect()
    }

    #[test]
    fn pointer_strings_are_logical_and_two_hex_hashes() {
        let text = "# A\n\npara\n";
        let p = pointers(text);
        assert_eq!(p.len(), 3);
        assert_eq!(
            p[0],
            format!("document~{0}~{0}", hex(hash_bytes(text.as_bytes())))
        );
        assert_eq!(
            p[1],
            format!(
                "1~{}~{}",
                hex(hash_bytes(b"# A")),
                hex(hash_bytes(b"# A\n\npara"))
            )
        );
        assert_eq!(p[2], format!("1.p1~{0}~{0}", hex(hash_bytes(b"para"))));
        // Checked against the Python `xxhash` package: xxhash.xxh64(b"para").hexdigest().
        assert_eq!(hex(hash_bytes(b"para")), "d260ea3b3234fde8");
    }

    #[test]
    fn parse_rejects_malformed_pointers() {
        assert!(Pointer::parse("1.p1~d5b5e3a3fa6b6fa8~d5b5e3a3fa6b6fa8").is_ok());
        assert_eq!(
            Pointer::parse("1.p1~D5B5E3A3FA6B6FA8~d5b5e3a3fa6b6fa8"),
            Err(PointerParseError::Malformed(
                "1.p1~D5B5E3A3FA6B6FA8~d5b5e3a3fa6b6fa8".into()
            ))
        );
        assert_eq!(
            Pointer::parse("1.p1~abc~def"),
            Err(PointerParseError::Malformed("1.p1~abc~def".into()))
        );
        assert_eq!(
            Pointer::parse("1.zz1~d5b5e3a3fa6b6fa8~d5b5e3a3fa6b6fa8"),
            Err(PointerParseError::UnknownAddress(
                "1.zz1~d5b5e3a3fa6b6fa8~d5b5e3a3fa6b6fa8".into()
            ))
        );
        assert_eq!(
            Pointer::parse("p1.p2~d5b5e3a3fa6b6fa8~d5b5e3a3fa6b6fa8"),
            Err(PointerParseError::UnknownAddress(
                "p1.p2~d5b5e3a3fa6b6fa8~d5b5e3a3fa6b6fa8".into()
            ))
        );
    }

    #[test]
    fn pointers_are_stable_under_unrelated_edits() {
        let before = "# Intro\n\nFirst.\n\n## Setup\n\nInstall it.\n\n- a\n- b\n";
        let after = "# Intro\n\nFirst, edited.\n\n## Setup\n\nInstall it.\n\n- a\n- b\n";
        let (b, a) = (pointers(before), pointers(after));
        // The edited paragraph and the sections containing it change; everything else keeps its pointer.
        let changed: Vec<(&String, &String)> = b.iter().zip(&a).filter(|(x, y)| x != y).collect();
        assert_eq!(
            changed.len(),
            3,
            "document, section 1 and 1.p1 change: {changed:?}"
        );
        assert!(changed[0].0.starts_with("document~"));
        assert!(changed[1].0.starts_with("1~"));
        assert!(changed[2].0.starts_with("1.p1~"));
        assert_eq!(b[3..], a[3..]);
    }

    #[test]
    fn reanchors_by_kind_and_self_hash_after_an_insertion_above() {
        let before = parse("# A\n\nalpha\n\nbeta\n");
        let beta = before
            .elements
            .iter()
            .find(|e| e.logical == "1.p2")
            .unwrap()
            .pointer();
        let after = parse("# A\n\nnew\n\nalpha\n\nbeta\n");
        let r = resolve(&after, &beta, true).unwrap();
        assert_eq!(r, Resolution::Reanchored(4));
        assert_eq!(after.elements[4].logical, "1.p3");
        // The same text twice makes a moved pointer ambiguous.
        let twice = parse("# A\n\nnew\n\nalpha\n\nbeta\n\nbeta\n");
        assert_eq!(
            resolve(&twice, &beta, false),
            Err(ResolveError::Ambiguous {
                pointer: beta.to_string(),
                kind: "paragraph",
                count: 2
            })
        );
        // A changed element is a conflict.
        let changed = parse("# A\n\nalpha\n\nbeta!\n");
        assert!(matches!(
            resolve(&changed, &beta, false),
            Err(ResolveError::Changed { .. })
        ));
    }

    #[test]
    fn subtree_check_fails_when_the_section_changed() {
        let before = parse("# A\n\nalpha\n\n# B\n");
        let a = before.elements[1].pointer();
        let after = parse("# A\n\nalpha!\n\n# B\n");
        assert_eq!(resolve(&after, &a, false), Ok(Resolution::Exact(1)));
        assert!(matches!(
            resolve(&after, &a, true),
            Err(ResolveError::SubtreeChanged { .. })
        ));
    }
}
