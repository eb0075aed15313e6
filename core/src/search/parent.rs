//! Parent retrieval: several hits inside one section come back as that section.
//!
//! GrooveSeek's parent retriever widens each hit's *content* (sibling merge, whole
//! document under 100 tokens, capped at `max_expanded_tokens = 2000`) and keeps
//! the hit list as it was. folio returns line ranges and pointers rather than
//! content, so the same idea takes this form: when at least
//! [`DEFAULT_MIN_HITS`] (2) selected hits of one document lie in one section, they
//! are replaced by a single hit for that section — its heading's pointer, its whole
//! line range — carrying `expanded_from` (the pointers of the hits it absorbed, best
//! first). The collapsed hit takes the place and score of its best member, so the
//! ranking is unchanged apart from the absorbed hits leaving the list; the list can
//! therefore be shorter than `limit`.
//!
//! **Sections.** A section is a heading path `P` of a document (`["Guide",
//! "Install"]`): every chunk whose heading path starts with `P`. Its lines run from
//! the first such chunk's first line (the heading line) to the last such chunk's last
//! line; its pointer is that first chunk's pointer (the heading element's).
//!
//! **Choice.** Hits are visited best first. For a hit not yet absorbed, its own
//! section is tried first, then each enclosing section outwards up to its top-level
//! heading; the first (deepest) section holding ≥ `min_hits` not-yet-absorbed hits of
//! the document and no larger than `max_section_bytes` (sum of its chunks' text,
//! default 8000 bytes ≈ GrooveSeek's 2000-token cap at its 4 bytes/token estimate)
//! absorbs them all. Hits before the first heading (empty heading path) never collapse.
//! A collapse that would only rename a single chunk cannot happen (it needs ≥ 2 hits).

use std::collections::HashMap;

/// Hits needed in one section before it replaces them.
pub const DEFAULT_MIN_HITS: usize = 2;
/// Largest section (bytes of chunk text) a collapse may return.
pub const DEFAULT_MAX_SECTION_BYTES: usize = 8000;

/// What parent retrieval needs to know of a selected hit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HitLocation<'a> {
    /// Document path.
    pub path: &'a str,
    /// The chunk's heading path, outermost first.
    pub heading_path: &'a [String],
}

/// What parent retrieval needs to know of a document's chunks (in document order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SectionChunk<'a> {
    /// The chunk's pointer (its first element's).
    pub pointer: &'a str,
    /// The chunk's heading path, outermost first.
    pub heading_path: &'a [String],
    /// First line, 1-based.
    pub start_line: u32,
    /// Last line, 1-based, inclusive.
    pub end_line: u32,
    /// Bytes of the chunk's text.
    pub bytes: usize,
}

/// A section that replaces several hits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The section's heading path.
    pub heading_path: Vec<String>,
    /// The pointer of the section's first chunk (its heading).
    pub pointer: String,
    /// First line, 1-based.
    pub start_line: u32,
    /// Last line, 1-based, inclusive.
    pub end_line: u32,
}

/// One entry of the collapsed list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// Indices of the hits it stands for, best first; one index when not collapsed.
    pub members: Vec<usize>,
    /// The section, when `members` collapsed into one.
    pub section: Option<Section>,
}

/// Parent-retrieval settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParentOptions {
    /// Hits needed in one section (≥ 2).
    pub min_hits: usize,
    /// Largest section, in bytes of chunk text.
    pub max_section_bytes: usize,
}

impl Default for ParentOptions {
    fn default() -> ParentOptions {
        ParentOptions {
            min_hits: DEFAULT_MIN_HITS,
            max_section_bytes: DEFAULT_MAX_SECTION_BYTES,
        }
    }
}

/// The section `prefix` of a document, from its chunks; `None` when no chunk is in it.
pub fn section_of(chunks: &[SectionChunk<'_>], prefix: &[String]) -> Option<(Section, usize)> {
    let inside: Vec<&SectionChunk> = chunks
        .iter()
        .filter(|c| c.heading_path.starts_with(prefix))
        .collect();
    let first = inside.first()?;
    let end_line = inside.iter().map(|c| c.end_line).max()?;
    let start_line = inside.iter().map(|c| c.start_line).min()?;
    let bytes = inside.iter().map(|c| c.bytes).sum();
    Some((
        Section {
            heading_path: prefix.to_vec(),
            pointer: first.pointer.to_string(),
            start_line,
            end_line,
        },
        bytes,
    ))
}

/// Groups `hits` (best first) into sections; see the module docs. `chunks_of` gives a
/// document's chunks (it is asked only for documents with at least `min_hits` hits).
/// The groups come in the order of their best member.
pub fn collapse<'a>(
    hits: &[HitLocation<'a>],
    chunks_of: &dyn Fn(&str) -> Vec<SectionChunk<'a>>,
    options: ParentOptions,
) -> Vec<Group> {
    let min_hits = options.min_hits.max(2);
    let mut per_doc: HashMap<&str, usize> = HashMap::new();
    for h in hits {
        *per_doc.entry(h.path).or_default() += 1;
    }
    let mut docs: HashMap<&str, Vec<SectionChunk<'a>>> = HashMap::new();
    let mut absorbed = vec![false; hits.len()];
    let mut groups = Vec::new();
    for i in 0..hits.len() {
        if absorbed[i] {
            continue;
        }
        absorbed[i] = true;
        let hit = &hits[i];
        let mut group = Group {
            members: vec![i],
            section: None,
        };
        if per_doc[hit.path] >= min_hits && !hit.heading_path.is_empty() {
            let chunks = docs.entry(hit.path).or_insert_with(|| chunks_of(hit.path));
            for depth in (1..=hit.heading_path.len()).rev() {
                let prefix = &hit.heading_path[..depth];
                let others: Vec<usize> = (i + 1..hits.len())
                    .filter(|&j| {
                        !absorbed[j]
                            && hits[j].path == hit.path
                            && hits[j].heading_path.starts_with(prefix)
                    })
                    .collect();
                if others.len() + 1 < min_hits {
                    continue;
                }
                let Some((section, bytes)) = section_of(chunks, prefix) else {
                    continue;
                };
                if bytes > options.max_section_bytes {
                    continue;
                }
                for &j in &others {
                    absorbed[j] = true;
                }
                group.members.extend(others);
                group.section = Some(section);
                break;
            }
        }
        groups.push(group);
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hp(parts: &[&str]) -> Vec<String> {
        parts.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn two_hits_in_one_section_collapse_into_it() {
        // doc.md:
        //  1-4   # Guide            (intro chunk)
        //  5-9   ## Install         (chunk p-install)
        // 10-14  ### Linux          (p-linux)
        // 15-20  ### macOS          (p-mac)
        // 21-30  ## Usage           (p-usage)
        let paths = [
            hp(&["Guide"]),
            hp(&["Guide", "Install"]),
            hp(&["Guide", "Install", "Linux"]),
            hp(&["Guide", "Install", "macOS"]),
            hp(&["Guide", "Usage"]),
        ];
        let spans = [
            (1, 4, "p-guide"),
            (5, 9, "p-install"),
            (10, 14, "p-linux"),
            (15, 20, "p-mac"),
            (21, 30, "p-usage"),
        ];
        let owned: Vec<SectionChunk> = paths
            .iter()
            .zip(spans)
            .map(|(p, (s, e, ptr))| SectionChunk {
                pointer: ptr,
                heading_path: p,
                start_line: s,
                end_line: e,
                bytes: 500,
            })
            .collect();
        let chunks_of = |path: &str| -> Vec<SectionChunk> {
            assert_eq!(path, "doc.md", "only documents with ≥ 2 hits are loaded");
            owned.clone()
        };
        // Hits best first: Linux, other.md, macOS, Usage.
        let other = hp(&["Other"]);
        let hits = [
            HitLocation {
                path: "doc.md",
                heading_path: &paths[2],
            },
            HitLocation {
                path: "other.md",
                heading_path: &other,
            },
            HitLocation {
                path: "doc.md",
                heading_path: &paths[3],
            },
            HitLocation {
                path: "doc.md",
                heading_path: &paths[4],
            },
        ];
        let groups = collapse(&hits, &chunks_of, ParentOptions::default());
        // Linux alone has 1 hit; its parent "Install" (lines 5-20) holds Linux and macOS → collapse.
        // Usage stays alone (the remaining hits of doc.md under "Guide" are just Usage).
        assert_eq!(
            groups,
            vec![
                Group {
                    members: vec![0, 2],
                    section: Some(Section {
                        heading_path: hp(&["Guide", "Install"]),
                        pointer: "p-install".into(),
                        start_line: 5,
                        end_line: 20
                    })
                },
                Group {
                    members: vec![1],
                    section: None
                },
                Group {
                    members: vec![3],
                    section: None
                },
            ]
        );
        // A byte cap under the Install section (1500 bytes): "Guide" (2500 bytes) is larger
        // still, so nothing collapses.
        let groups = collapse(
            &hits,
            &chunks_of,
            ParentOptions {
                min_hits: 2,
                max_section_bytes: 1000,
            },
        );
        assert_eq!(
            groups.iter().map(|g| g.members.clone()).collect::<Vec<_>>(),
            vec![vec![0], vec![1], vec![2], vec![3]]
        );
        // Three hits needed: Install has 2, Guide has all 3 (2500 bytes ≤ 8000) → the whole Guide.
        let groups = collapse(
            &hits,
            &chunks_of,
            ParentOptions {
                min_hits: 3,
                max_section_bytes: 8000,
            },
        );
        assert_eq!(groups[0].members, vec![0, 2, 3]);
        assert_eq!(
            groups[0].section,
            Some(Section {
                heading_path: hp(&["Guide"]),
                pointer: "p-guide".into(),
                start_line: 1,
                end_line: 30
            })
        );
        assert_eq!(groups.len(), 2);
    }

    #[test]
    fn two_chunks_of_one_section_and_headless_hits() {
        let sec = hp(&["Long"]);
        let none: Vec<String> = Vec::new();
        let owned = vec![
            SectionChunk {
                pointer: "p0",
                heading_path: &none,
                start_line: 1,
                end_line: 2,
                bytes: 10,
            },
            SectionChunk {
                pointer: "p1",
                heading_path: &sec,
                start_line: 3,
                end_line: 10,
                bytes: 10,
            },
            SectionChunk {
                pointer: "p2",
                heading_path: &sec,
                start_line: 11,
                end_line: 19,
                bytes: 10,
            },
        ];
        let chunks_of = |_: &str| owned.clone();
        let hits = [
            HitLocation {
                path: "a.md",
                heading_path: &sec,
            },
            HitLocation {
                path: "a.md",
                heading_path: &none,
            },
            HitLocation {
                path: "a.md",
                heading_path: &sec,
            },
        ];
        let groups = collapse(&hits, &chunks_of, ParentOptions::default());
        assert_eq!(groups[0].members, vec![0, 2]);
        assert_eq!(
            groups[0]
                .section
                .as_ref()
                .map(|s| (s.start_line, s.end_line, s.pointer.as_str())),
            Some((3, 19, "p1"))
        );
        assert_eq!(
            groups[1],
            Group {
                members: vec![1],
                section: None
            }
        );
    }
}
