//! One rule per feature, whichever front end asks: the heading tree of
//! `textDocument/documentSymbol`, `kb_outline` and the table of contents, and the incoming
//! links of `textDocument/references` and `kb_links`, compared on the fixtures in
//! `lsp/tests/fixtures/agreement` (headings in block quotes, lists and callouts; links of
//! every style, a reference definition and a link of a document to itself).

use std::path::Path;

use folio_core::host::links::LinksArgs;
use folio_core::host::read::OutlineArgs;
use folio_core::host::{Host, Options};
use folio_core::workspace::{Config, SiteGenerator};
use serde_json::{Value, json};

use crate::common::{Client, Enc};

/// The fixture files, as (name, text).
fn fixtures() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agreement");
    let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&path).unwrap())
        })
        .collect();
    files.sort();
    files
}

async fn start() -> Client {
    let files = fixtures();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(n, t)| (n.as_str(), t.as_str()))
        .collect();
    Client::start(&refs, Enc::Utf16, json!({})).await
}

/// A host over the client's root, as `folio mcp` opens one.
fn host(c: &Client) -> Host {
    let root = c.path("");
    let config = Config::load(&root).unwrap();
    Host::open(Options::resolve(
        &root,
        &config,
        Err("no user configuration in tests"),
        false,
    ))
    .unwrap()
}

/// (depth, name) of each document symbol, depth first.
fn symbol_tree(symbols: &Value, depth: usize, out: &mut Vec<(usize, String)>) {
    for s in symbols.as_array().unwrap() {
        out.push((depth, s["name"].as_str().unwrap().to_owned()));
        if let Some(children) = s.get("children") {
            symbol_tree(children, depth + 1, out);
        }
    }
}

/// (depth, text) of each `kb_outline` heading, depth first.
fn outline_tree(
    headings: &[folio_core::host::read::OutlineHeading],
    depth: usize,
    out: &mut Vec<(usize, String)>,
) {
    for h in headings {
        out.push((depth, h.text.clone()));
        outline_tree(&h.children, depth + 1, out);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn document_symbols_kb_outline_and_the_toc_list_one_heading_tree() {
    let mut c = start().await;
    let expected: Vec<(usize, String)> = [
        (0, "Guide"),
        (1, "Install"),
        (2, "On Linux"),
        (2, "On macOS"),
        (0, "Reference"),
        (1, "Options"),
    ]
    .into_iter()
    .map(|(d, n)| (d, n.to_owned()))
    .collect();

    let symbols = c
        .call(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": c.uri("outline.md")}}),
        )
        .await;
    let mut from_lsp = Vec::new();
    symbol_tree(&symbols, 0, &mut from_lsp);
    assert_eq!(from_lsp, expected, "documentSymbol: {symbols}");

    let outline = host(&c)
        .outline(&OutlineArgs {
            path: "outline.md".into(),
        })
        .unwrap();
    let mut from_mcp = Vec::new();
    outline_tree(&outline.headings, 0, &mut from_mcp);
    assert_eq!(from_mcp, expected, "kb_outline");

    // The table of contents lists the same tree (two level-1 headings: no title left out).
    let text = std::fs::read_to_string(c.path("outline.md")).unwrap();
    let parsed = folio_core::parse::parse(&text);
    let toc = folio_core::edit::toc::toc_edit(&text, &parsed, SiteGenerator::default()).unwrap();
    let from_toc: Vec<(usize, String)> = toc
        .edit
        .new_text
        .lines()
        .filter_map(|line| {
            let depth = (line.len() - line.trim_start().len()) / 2;
            let name = line.trim_start().strip_prefix("- [")?.split("](").next()?;
            Some((depth, name.to_owned()))
        })
        .collect();
    assert_eq!(from_toc, expected, "toc: {}", toc.edit.new_text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn references_and_kb_links_list_the_same_incoming_links() {
    let mut c = start().await;
    // The cursor on the target's body text (not on a heading or a link): the references
    // to the document.
    let refs = c
        .call(
            "textDocument/references",
            json!({"textDocument": {"uri": c.uri("target.md")}, "position": {"line": 2, "character": 1},
                   "context": {"includeDeclaration": true}}),
        )
        .await;
    let mut from_lsp: Vec<(String, u64)> = refs
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            let uri = l["uri"].as_str().unwrap();
            let name = uri.rsplit('/').next().unwrap().to_owned();
            (name, l["range"]["start"]["line"].as_u64().unwrap() + 1)
        })
        .collect();
    from_lsp.sort();
    let links = host(&c)
        .links(&LinksArgs {
            path: "target.md".into(),
            direction: Some("incoming".into()),
            depth: None,
            include_external: false,
        })
        .unwrap();
    let mut from_mcp: Vec<(String, u64)> = links
        .incoming
        .iter()
        .map(|l| (l.source.clone(), u64::from(l.line)))
        .collect();
    from_mcp.sort();
    let expected: Vec<(String, u64)> = [
        ("a.md", 3),
        ("a.md", 3),
        ("b.md", 3),
        ("b.md", 3),
        ("c.md", 5),
    ]
    .into_iter()
    .map(|(p, l)| (p.to_owned(), l))
    .collect();
    assert_eq!(from_lsp, expected, "references: {refs}");
    assert_eq!(from_mcp, expected, "kb_links incoming");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_lens_counts_are_the_counts_of_references() {
    let mut c = start().await;
    c.open("target.md").await;
    let lenses = c
        .call(
            "textDocument/codeLens",
            json!({"textDocument": {"uri": c.uri("target.md")}}),
        )
        .await;
    let summary: Vec<(u64, String, usize)> = lenses
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            let command = &l["command"];
            assert_eq!(command["command"], "folio.showReferences", "{l}");
            (
                l["range"]["start"]["line"].as_u64().unwrap(),
                command["title"].as_str().unwrap().to_owned(),
                command["arguments"][2].as_array().unwrap().len(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (0, "5 references to this file".to_owned(), 5),
            (4, "3 references".to_owned(), 3),
        ],
        "{lenses}"
    );
    // The same places as textDocument/references: the document's from its body text, the
    // heading's from the heading.
    let uri = c.uri("target.md");
    let references = |line: u64, character: u64| {
        json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character},
               "context": {"includeDeclaration": false}})
    };
    for (lens, (line, character)) in lenses.as_array().unwrap().iter().zip([(2, 1), (4, 3)]) {
        let found = c
            .call("textDocument/references", references(line, character))
            .await;
        assert_eq!(&lens["command"]["arguments"][2], &found, "{lens}");
    }
}
