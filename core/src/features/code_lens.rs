//! Reference counts shown above a document and its headings (`textDocument/codeLens`):
//! how many links reach the document from other documents, and how many reach each
//! heading. The counts are those of `textDocument/references` at the same place
//! ([`crate::links::references`]), so a lens and the list it opens never disagree.

use std::ops::Range;

use crate::links::references::{Reference, references_to_document_and_headings};
use crate::workspace::Workspace;

/// One lens: where it stands and the references it counts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lens {
    /// What it counts references to.
    pub subject: LensSubject,
    /// Bytes of the document it stands on: `0..0` for the document, the heading's range
    /// for a heading.
    pub range: Range<usize>,
    /// The references, in path then source order.
    pub references: Vec<Reference>,
}

/// What a [`Lens`] counts references to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LensSubject {
    /// The document, from other documents (its own links to its headings are not counted).
    Document,
    /// Heading `i` of the document (in [`crate::parse::Parsed::headings`] order), from any
    /// document, itself included.
    Heading(usize),
}

impl Lens {
    /// The label an editor shows: `1 reference`, `3 references`; for the document
    /// `… to this file`.
    pub fn title(&self) -> String {
        let n = self.references.len();
        let counted = if n == 1 {
            "1 reference".to_string()
        } else {
            format!("{n} references")
        };
        match self.subject {
            LensSubject::Document => format!("{counted} to this file"),
            LensSubject::Heading(_) => counted,
        }
    }
}

/// The lenses of document `path`: first the document's (always, `0 references to this
/// file` included: a note nothing links to says so), then one per heading that at least
/// one link reaches, in heading order. Empty when `path` is not a document of `ws`.
pub fn code_lenses(ws: &Workspace, path: &str) -> Vec<Lens> {
    let Some(parsed) = ws.parsed(path) else {
        return Vec::new();
    };
    let found = references_to_document_and_headings(ws, path);
    let document = Lens {
        subject: LensSubject::Document,
        range: 0..0,
        references: found.document,
    };
    let headings = found
        .headings
        .into_iter()
        .enumerate()
        .filter(|(_, references)| !references.is_empty())
        .map(|(i, references)| Lens {
            subject: LensSubject::Heading(i),
            range: parsed.headings[i].range.clone(),
            references,
        });
    std::iter::once(document).chain(headings).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::references::references_at;

    #[test]
    fn lenses_count_what_references_at_the_same_place_lists() {
        let fixture = "//- /setup.md\n# Setup\n\nIntro.\n\n## Install\n\nSee [below](#usage).\n\n## Usage\n\n## Unused\n\
             //- /a.md\n[s](setup.md) and [i](setup.md#install) and [[setup#Usage]]\n\
             //- /b.md\n[[setup]] [i again](./setup.md#install) [gone](setup.md#nope)\n";
        let ws = crate::fixture::workspace(fixture);
        let lenses = code_lenses(&ws, "setup.md");
        let summary: Vec<(String, Range<usize>)> = lenses
            .iter()
            .map(|l| (l.title(), l.range.clone()))
            .collect();
        let text = &crate::fixture::files(fixture)[0].1;
        let at = |s: &str| text.find(s).unwrap();
        assert_eq!(
            summary,
            vec![
                ("6 references to this file".to_string(), 0..0),
                (
                    "2 references".to_string(),
                    at("## Install")..at("## Install") + 10
                ),
                (
                    "2 references".to_string(),
                    at("## Usage")..at("## Usage") + 8
                ),
            ]
        );
        // The same lists as textDocument/references there: the document's at a paragraph,
        // each heading's at the heading.
        let parsed = ws.parsed("setup.md").unwrap();
        assert_eq!(
            references_at(&ws, "setup.md", &parsed, at("Intro")).references,
            lenses[0].references
        );
        for lens in &lenses[1..] {
            assert_eq!(
                references_at(&ws, "setup.md", &parsed, lens.range.start).references,
                lens.references
            );
        }
        assert_eq!(code_lenses(&ws, "missing.md"), Vec::new());
    }
}
