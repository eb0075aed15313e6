//! The external links of a workspace: every `http://` and `https://` destination of its
//! documents, one entry per URL without its fragment, with every place that uses it.

use std::collections::BTreeMap;
use std::ops::Range;

use crate::document::Encoding;
use crate::parse::LinkSyntax;
use crate::workspace::Workspace;

/// One URL the documents link to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExternalLink {
    /// The URL without its fragment, as the `url` crate writes it (scheme and host in
    /// lowercase, `https://example.org` as `https://example.org/`); a destination that
    /// does not parse as a URL is kept as written, up to its `#`.
    pub url: String,
    /// Every link that names it, in the order of the documents' paths, then of the text.
    pub uses: Vec<LinkUse>,
}

/// One link to an [`ExternalLink`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkUse {
    /// The document's KB-relative path.
    pub path: String,
    /// Bytes of the destination as written (of the whole link when it has none).
    pub range: Range<usize>,
    /// 1-based line of the destination's start.
    pub line: u32,
    /// 1-based column of the destination's start, in characters (a byte order mark is
    /// not one), as `folio check` counts them.
    pub column: u32,
}

/// Whether `dest` starts with `http://` or `https://` (any letter case).
pub fn is_http(dest: &str) -> bool {
    let lower = |n: usize| dest.get(..n).map(str::to_ascii_lowercase);
    lower(7).as_deref() == Some("http://") || lower(8).as_deref() == Some("https://")
}

/// The key of a destination: the URL without its fragment ([`ExternalLink::url`]).
pub fn url_key(dest: &str) -> String {
    match url::Url::parse(dest) {
        Ok(mut url) => {
            url.set_fragment(None);
            url.to_string()
        }
        Err(_) => dest.split('#').next().unwrap_or(dest).to_string(),
    }
}

/// Every `http(s)` link of the workspace's documents, sorted by URL.
///
/// Links written as paths are read: Markdown links and images, autolinks, link reference
/// definitions (a reference link is its definition's use, so it is not counted twice) and
/// raw HTML's `href` and `src`. A destination holding a template expression (`{{…}}`,
/// `{%…%}`, `<%…%>`) is left out: only the template engine knows the URL. A document
/// kept as an outline is parsed again, since an outline keeps no external links.
pub fn collect(ws: &Workspace) -> Vec<ExternalLink> {
    let mut by_url: BTreeMap<String, Vec<LinkUse>> = BTreeMap::new();
    for path in ws.document_paths() {
        let Some(entry) = ws.get(path) else {
            continue;
        };
        let parsed = entry.full_parsed();
        let bom = entry.doc.slice(0..3).as_deref() == Some("\u{feff}");
        for link in &parsed.links {
            if link.kind.syntax() != LinkSyntax::Path
                || !link.external
                || !is_http(&link.dest)
                || crate::links::is_template_placeholder(&link.dest)
            {
                continue;
            }
            let range = link.dest_range.clone().unwrap_or(link.range.clone());
            let lc = entry.doc.offset_to_line_col(range.start, Encoding::Utf32);
            let column = lc.col + 1 - u32::from(bom && lc.line == 0);
            by_url
                .entry(url_key(&link.dest))
                .or_default()
                .push(LinkUse {
                    path: path.to_string(),
                    range,
                    line: lc.line + 1,
                    column,
                });
        }
    }
    by_url
        .into_iter()
        .map(|(url, uses)| ExternalLink { url, uses })
        .collect()
}
