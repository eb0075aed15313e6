//! Resolving a pointer in a document's elements: by logical address and selfHash, else
//! re-anchored by kind + selfHash when exactly one element matches. A pointer is resolved
//! by content and structure, never by offset, so it survives edits elsewhere in the file.

use crate::parse::{ElementKind, Parsed};
use crate::pointer::Pointer;

/// How a pointer was found in the current text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolution {
    /// The logical address and selfHash match.
    Exact(usize),
    /// The logical address moved; exactly one element of the same kind has the selfHash.
    Reanchored(usize),
}

impl Resolution {
    /// Index of the element in [`Parsed::elements`].
    pub fn index(self) -> usize {
        match self {
            Resolution::Exact(i) | Resolution::Reanchored(i) => i,
        }
    }
}

/// Why a pointer does not resolve.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ResolveError {
    /// No element has the pointer's kind and selfHash: the element changed or is gone.
    #[error(
        "element {pointer} changed or no longer exists (no {kind} with selfHash {self_hash:016x})"
    )]
    Changed {
        /// The pointer as given.
        pointer: String,
        /// Its element kind.
        kind: &'static str,
        /// Its selfHash.
        self_hash: u64,
    },
    /// Several elements of the pointer's kind have its selfHash and its address moved.
    #[error("element {pointer} is ambiguous: {count} elements of kind {kind} have its selfHash")]
    Ambiguous {
        /// The pointer as given.
        pointer: String,
        /// Its element kind.
        kind: &'static str,
        /// How many elements match.
        count: usize,
    },
    /// The subtree (section or nested items) changed although the element itself did not.
    #[error("the subtree of {pointer} changed (subtreeHash is now {current:016x})")]
    SubtreeChanged {
        /// The pointer as given.
        pointer: String,
        /// The current subtreeHash.
        current: u64,
    },
}

/// Resolves `pointer` against a parse result (docs/architecture.md, "Pointers").
///
/// Exact when the element at the logical address has the same kind and selfHash; else
/// re-anchored when exactly one element of that kind has the selfHash; else an error.
/// With `check_subtree`, the found element's subtreeHash must match too (section and
/// subtree operations).
pub fn resolve_pointer(
    parsed: &Parsed,
    pointer: &Pointer,
    check_subtree: bool,
) -> Result<Resolution, ResolveError> {
    let kind = pointer.kind().unwrap_or(ElementKind::Document);
    let found = if let Some(i) = parsed.elements.iter().position(|e| {
        e.logical == pointer.logical && e.kind == kind && e.self_hash == pointer.self_hash
    }) {
        Resolution::Exact(i)
    } else {
        let matches: Vec<usize> = parsed
            .elements
            .iter()
            .enumerate()
            .filter(|(_, e)| e.kind == kind && e.self_hash == pointer.self_hash)
            .map(|(i, _)| i)
            .collect();
        match matches.as_slice() {
            [i] => Resolution::Reanchored(*i),
            [] => {
                return Err(ResolveError::Changed {
                    pointer: pointer.to_string(),
                    kind: kind.as_str(),
                    self_hash: pointer.self_hash,
                });
            }
            many => {
                // Several identical elements: prefer the one whose subtree also matches, if unique.
                let by_subtree: Vec<usize> = many
                    .iter()
                    .copied()
                    .filter(|&i| parsed.elements[i].subtree_hash == pointer.subtree_hash)
                    .collect();
                if let [i] = by_subtree.as_slice() {
                    Resolution::Reanchored(*i)
                } else {
                    return Err(ResolveError::Ambiguous {
                        pointer: pointer.to_string(),
                        kind: kind.as_str(),
                        count: many.len(),
                    });
                }
            }
        }
    };
    let el = &parsed.elements[found.index()];
    if check_subtree && el.subtree_hash != pointer.subtree_hash {
        return Err(ResolveError::SubtreeChanged {
            pointer: pointer.to_string(),
            current: el.subtree_hash,
        });
    }
    Ok(found)
}
