//! Link resolution across the workspace and the link diagnostics.
//!
//! Diagnostic codes are stable (docs/diagnostics.md): the LSP, `folio check` and
//! MCP `kb_links` all report these names.

pub mod graph;
mod hugo;
pub mod navigate;
pub mod references;
pub mod rewrite;
mod silence;
mod site_move;

use std::collections::HashSet;
use std::ops::Range;

pub use crate::codes::{DiagnosticCode, Severity};
use crate::config::{
    CONVENTIONAL_ASSET_DIRS, CONVENTIONAL_SITE_ROOTS, SiteAbsolute, SiteGenerator,
};
use crate::parse::{Link, LinkKind, LinkSyntax, Parsed, slug};
use crate::workspace::Workspace;

/// One link problem in one document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Stable code.
    pub code: DiagnosticCode,
    /// Severity.
    pub severity: Severity,
    /// Bytes of the offending link or definition.
    pub range: Range<usize>,
    /// Human-readable explanation.
    pub message: String,
    /// The edit that repairs the link, when there is one obvious repair.
    pub fix: Option<Fix>,
}

/// A repair of one link: an edit of its own document (from [`rewrite::retarget`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fix {
    /// What the edit does, e.g. ``Change link to `About/topic.md` ``.
    pub title: String,
    /// The edit, against the document's current text.
    pub edit: crate::document::TextEdit,
}

/// Where a link leads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A URL with a scheme; not checked.
    External,
    /// A path outside the workspace root; not checked.
    OutsideRoot,
    /// A Markdown document of the workspace (KB-relative path), with the fragment if any.
    Document {
        /// KB-relative path.
        path: String,
        /// Fragment, if the link has one.
        fragment: Option<String>,
    },
    /// Another file or a folder of the workspace.
    File(String),
    /// A reference to a link reference definition or footnote of the same document.
    Definition(String),
    /// Nothing matches.
    Missing,
    /// Nothing matches here, but exactly one file of the workspace has that name (outside
    /// an Obsidian vault, where that file would be the target).
    MissingFoundByName(String),
    /// A document or file whose path differs from the link's only in letter case: found on
    /// Windows and macOS, not on Linux or GitHub.
    CaseMismatch {
        /// KB-relative path as it is spelled on disk.
        path: String,
        /// Fragment, if the link has one.
        fragment: Option<String>,
    },
    /// Several documents match a wiki link (or, in a vault, a Markdown link's file name).
    Ambiguous(Vec<String>),
    /// A page the site redirects elsewhere (a docfx redirection file names it): the URL it
    /// redirects to. The link works on the published site; its fragment is not checked.
    Redirected(String),
}

use crate::path_policy::join_onto_folder;
pub use crate::path_policy::join_relative;
use hugo::{hugo_content_path, hugo_section_link, in_hugo_site, is_hugo_page_link};
pub(crate) use site_move::site_moved_destination;

/// Resolves one link of document `from`.
pub fn resolve_link(ws: &Workspace, from: &str, link: &Link) -> Target {
    if link.external {
        return Target::External;
    }
    match link.kind.syntax() {
        LinkSyntax::Reference | LinkSyntax::Footnote => {
            return Target::Definition(link.label.clone().unwrap_or_default());
        }
        LinkSyntax::Wiki => return resolve_wiki(ws, from, link),
        LinkSyntax::Path => {}
    }
    if link.dest.is_empty() {
        return Target::Document {
            path: from.to_string(),
            fragment: link.fragment.clone(),
        };
    }
    let links = &ws.config().links;
    let site_absolute = link.dest.starts_with('/');
    if site_absolute
        && links
            .external_prefixes
            .iter()
            .any(|p| link.dest.starts_with(p.as_str()))
    {
        return Target::External;
    }
    let dest = site_dest(links, &link.dest);
    let Some(path) = join_relative(from, &dest) else {
        // Outside the root only the file system can tell (a `docs/` root may link to
        // `../README.md`). A page of the rendered site (`../std/index.html` from an mdBook
        // book) is not a source file and is not checked.
        let site_page = dest.ends_with(".html") || dest.ends_with(".htm");
        return if site_page || outside_root_path(ws.root(), from, &dest).is_some_and(|p| p.exists())
        {
            Target::OutsideRoot
        } else {
            Target::Missing
        };
    };
    // A link under a `site_base` of its own (not `/`) that stays in `site_root` is a page
    // of this site, whose file must exist.
    let site_root = links.site_root.trim_matches('/');
    let own_site = site_absolute
        && dest != link.dest
        && !links.site_base.trim_matches('/').is_empty()
        && path.starts_with(&format!("{site_root}/"));
    let fragment = || link.fragment.clone();
    // Docusaurus looks a bare `x.md` link of a docs page up in its docs folders before
    // the page's own (a versioned copy's own folder stays first: its version's folder).
    let docusaurus_first = ws.generator() == SiteGenerator::Docusaurus
        && is_markdown_file_link(&dest)
        && !dest.starts_with("./")
        && !dest.starts_with("../")
        && ws.docs_folder_of(from).is_some();
    if docusaurus_first && let Some(found) = in_docusaurus_folders(ws, from, &dest) {
        return found.into_target(fragment());
    }
    // Hugo looks a page link of a content page up as a page first: `../about/` is the
    // bundle's `about/index.md`, not the folder.
    let hugo_first = ws.generator() == SiteGenerator::Hugo
        && is_hugo_page_link(&dest)
        && ws.docs_folder_of(from).is_some();
    if hugo_first && let Some(found) = in_hugo_site(ws, from, &dest) {
        return found.into_target(fragment());
    }
    if let Some(found) = exact_target(ws, &path) {
        return found.into_target(fragment());
    }
    if let Some(url) = ws.docfx_redirect(&path) {
        return Target::Redirected(url.to_owned());
    }
    let in_site = match ws.generator() {
        SiteGenerator::Hugo if !hugo_first => in_hugo_site(ws, from, &dest),
        SiteGenerator::Hugo => None,
        _ if docusaurus_first => None,
        _ => in_docusaurus_folders(ws, from, &dest),
    }
    .or_else(|| {
        (link.kind == LinkKind::Shortcode && ws.generator() == SiteGenerator::Hugo)
            .then(|| hugo::ref_by_name(ws, from, &dest))
            .flatten()
    });
    if let Some(found) = in_site {
        return found.into_target(fragment());
    }
    // DocFX publishes a YAML page (`faq.yml`, `### YamlMime:…`) at the extension-less URL.
    if own_site
        && let Some(page) = ["yml", "yaml"]
            .iter()
            .map(|ext| format!("{path}.{ext}"))
            .find(|p| ws.contains_other_path(p))
    {
        return Target::File(page);
    }
    // The same name in another Unicode normalisation form (macOS writes NFD) is the same
    // file; one that differs in letter case is found only on some systems (checked before
    // the disk, which on such a system would find it).
    let folded = folded_target(ws, &path);
    if let Some(same) = folded.iter().find(|p| nfc(p) == nfc(&path)) {
        return Found::of(ws, same.clone()).into_target(fragment());
    }
    // In a vault a name found elsewhere wins over a different letter case here (Obsidian
    // looks names up before it would settle for the folder's other spelling).
    let lookup = || by_name(ws, from, &dest);
    if ws.is_vault() {
        match lookup() {
            ByName::One(found) => return Found::of(ws, found).into_target(fragment()),
            ByName::Several(paths) if folded.is_empty() => return Target::Ambiguous(paths),
            _ => {}
        }
    }
    if let Some(other_case) = folded.into_iter().next() {
        return Target::CaseMismatch {
            path: other_case,
            fragment: fragment(),
        };
    }
    // Files the walk left out (ignored, excluded, symbolic links) still exist.
    if !ws.root().as_os_str().is_empty() && std::fs::symlink_metadata(ws.root().join(&path)).is_ok()
    {
        return Target::File(path);
    }
    if site_absolute
        && links.site_root.is_empty()
        && links.site_absolute != SiteAbsolute::Check
        && let Some(found) = in_conventional_site_root(ws, &path)
    {
        return found.into_target(fragment());
    }
    // A Hugo page link under one of the site's sections names a page that must exist.
    let hugo_section = site_absolute && hugo_section_link(ws, from, &path);
    if site_absolute && !own_site && !hugo_section {
        let last = path.rsplit('/').next().unwrap_or(&path);
        let known_ext = last
            .rsplit_once('.')
            .is_some_and(|(stem, ext)| !stem.is_empty() && ws.has_extension(ext));
        match links.site_absolute {
            SiteAbsolute::External => return Target::External,
            SiteAbsolute::PagesExternal if !known_ext => return Target::External,
            _ => {}
        }
    }
    // Outside a vault a unique file of that name is worth naming (and offering as a fix).
    match lookup() {
        ByName::One(found) if !ws.is_vault() => Target::MissingFoundByName(found),
        ByName::None | ByName::One(_) | ByName::Several(_) => Target::Missing,
    }
}

/// True for `[[toc]]` (any letter case, no alias or fragment) that is a paragraph of its
/// own: the table-of-contents marker of markdown-it-toc, VitePress and Typora, replaced by
/// a list of the page's headings when the site is built. Only consulted when no note of
/// that name exists.
fn is_toc_marker(parsed: &crate::parse::Parsed, link: &crate::parse::Link) -> bool {
    link.dest.eq_ignore_ascii_case("toc")
        && link.fragment.is_none()
        && parsed
            .elements
            .iter()
            .any(|e| e.kind == crate::parse::ElementKind::Paragraph && e.range == link.range)
}

/// The file a root-absolute link names when the site is published from one of the
/// [`CONVENTIONAL_SITE_ROOTS`]: `/guide/intro.html` is `src/guide/intro.md` when that note
/// exists (with the same spellings as any link: `.md` optional, `.html` for `.md`); else
/// one of the [`CONVENTIONAL_ASSET_DIRS`]: `/logo.svg` is `docs/public/logo.svg`.
fn in_conventional_site_root(ws: &Workspace, path: &str) -> Option<Found> {
    CONVENTIONAL_SITE_ROOTS
        .iter()
        .find_map(|root| exact_target(ws, &format!("{root}/{path}")))
        .or_else(|| {
            std::iter::once("")
                .chain(CONVENTIONAL_SITE_ROOTS.iter().copied())
                .flat_map(|root| {
                    CONVENTIONAL_ASSET_DIRS
                        .iter()
                        .map(move |assets| match root {
                            "" => format!("{assets}/{path}"),
                            root => format!("{root}/{assets}/{path}"),
                        })
                })
                .find_map(|candidate| exact_target(ws, &candidate))
        })
}

/// Docusaurus's lookup of a link that names nothing from the linking page `from`'s folder
/// (rule: `resolveMarkdownLinkPathname` of `@docusaurus/utils`, and its doc ids):
/// - a link to a Markdown file (`.md`, `.mdx`) is looked up from each of
///   [`Workspace::site_lookup_folders`] (its docs folders, then its site folder), unless it
///   starts with `./` or `../`; `@site/…`, to any file, from the site folder;
/// - a link without `.md` or `.mdx` is a page's URL ([`page_url_target`]):
///   `../reducing-boilerplate` is `../ReducingBoilerplate.md` with
///   `id: reducing-boilerplate`.
fn in_docusaurus_folders(ws: &Workspace, from: &str, dest: &str) -> Option<Found> {
    let site = ws.site_folder()?;
    let in_folder =
        |folder: &str, rel: &str| join_onto_folder(folder, rel).and_then(|p| exact_target(ws, &p));
    if let Some(rel) = dest.strip_prefix("@site/") {
        return in_folder(site, rel);
    }
    if !is_markdown_file_link(dest) {
        return page_url_target(ws, from, dest);
    }
    if dest.starts_with("./") || dest.starts_with("../") {
        return None;
    }
    let rel = dest.trim_start_matches('/');
    ws.site_lookup_folders()
        .iter()
        .find_map(|folder| in_folder(folder, rel))
}

/// True for a link to a `.md` or `.mdx` file (any letter case), which Docusaurus resolves
/// as a file rather than as a page URL.
fn is_markdown_file_link(dest: &str) -> bool {
    let lower = dest.to_ascii_lowercase();
    lower.ends_with(".md") || lower.ends_with(".mdx")
}

/// The document (or `.mdx` file) a Docusaurus page URL names: under the docs route
/// (`/docs/…`), or relative to page `from`'s URL, both looked up among the URLs of the
/// docs folders' pages ([`Workspace::page_at_url`]: slugs, ids, number prefixes, index
/// pages). A page outside the docs folders (a blog post), or a URL no docs page has, is
/// looked up from `from`'s folder ([`page_in`]), so that what folio cannot place is not
/// reported.
fn page_url_target(ws: &Workspace, from: &str, dest: &str) -> Option<Found> {
    let dest = dest.trim_end_matches('/');
    let from_url = ws.page_url_of(from);
    let url = match dest.strip_prefix('/') {
        Some(_) => Some(dest.to_string()),
        // A URL without a trailing `/` is a file's: a relative link starts at its folder.
        None => from_url
            .as_deref()
            .and_then(|base| join_relative(base.trim_start_matches('/'), dest))
            .map(|path| format!("/{path}")),
    };
    if let Some(page) = url.as_deref().and_then(|url| ws.page_at_url(url)) {
        return Some(Found::of(ws, page.to_string()));
    }
    if dest.starts_with('/') {
        return None;
    }
    // An index page (`index.md`, `README.md`, `releases/releases.md`) is published at its
    // folder's URL, so its relative links start one folder up.
    let base = match from.rsplit_once('/') {
        Some((folder, _)) if crate::site::docusaurus::is_index_page(from) => folder,
        _ => from,
    };
    // A docs page's ids are all in the URL index: no folder scan for it.
    page_in(ws, &join_relative(base, dest)?, from_url.is_none())
}

/// The page a URL names when it is read as the KB-relative path `path` (no extension):
/// the file, an `.mdx` page, or (with `scan_ids`) a document of that folder whose id
/// ([`page_url_target`]) is the last segment.
fn page_in(ws: &Workspace, path: &str, scan_ids: bool) -> Option<Found> {
    if let Some(found) = exact_target(ws, path) {
        return Some(found);
    }
    let mdx = format!("{path}.mdx");
    if ws.contains_other_path(&mdx) {
        return Some(Found::File(mdx));
    }
    let (folder, last) = path.rsplit_once('/').unwrap_or(("", path));
    if last.is_empty() || !scan_ids {
        return None;
    }
    ws.documents_in_folder(folder)
        .find(|p| {
            let parsed = ws.parsed(p);
            let front = |key: &str| {
                parsed
                    .as_ref()
                    .and_then(|parsed| parsed.frontmatter.as_ref()?.get(key)?.as_str())
            };
            match front("slug") {
                Some(slug) if !slug.starts_with('/') => slug.eq_ignore_ascii_case(last),
                _ => crate::site::docusaurus::page_id(p, front("id")).eq_ignore_ascii_case(last),
            }
        })
        .map(|p| Found::Document(p.to_string()))
}

/// What a name lookup found.
enum ByName {
    None,
    One(String),
    Several(Vec<String>),
}

/// Obsidian's lookup of a link target that is not a path from the note's folder: from the
/// vault root, else by file name (`.md` optional, trailing folders must match), case-
/// insensitively. Several files are narrowed to those whose name has exactly the link's
/// letter case (`App` is `App.md`, not `Modal/app.md`), then to the one nearest the
/// linking note (the longest shared folder path); a tie left is ambiguous.
fn by_name(ws: &Workspace, from: &str, dest: &str) -> ByName {
    let mut found = ws.wiki_candidates(from, dest.trim_start_matches("./"));
    if found.len() > 1 {
        let wanted = nfc(dest.rsplit('/').next().unwrap_or(dest));
        let exact: Vec<String> = found
            .iter()
            .filter(|p| {
                let name = nfc(p.rsplit('/').next().unwrap_or(p));
                name == wanted
                    || name.strip_suffix(".md") == Some(&wanted)
                    || name.strip_suffix(".markdown") == Some(&wanted)
            })
            .cloned()
            .collect();
        if !exact.is_empty() {
            found = exact;
        }
    }
    if found.len() > 1 {
        // Then the one nearest the linking note: the longest folder path shared with it.
        let shared = |p: &str| {
            from.split('/')
                .zip(p.split('/'))
                .take_while(|(a, b)| a == b)
                .count()
        };
        let best = found.iter().map(|p| shared(p)).max().unwrap_or(0);
        let nearest: Vec<String> = found
            .iter()
            .filter(|p| shared(p) == best)
            .cloned()
            .collect();
        if nearest.len() == 1 {
            found = nearest;
        }
    }
    match found.len() {
        0 => ByName::None,
        1 => ByName::One(found.pop().expect("one")),
        _ => ByName::Several(found),
    }
}

/// A document or another file the workspace holds.
enum Found {
    Document(String),
    File(String),
}

impl Found {
    /// The KB-relative path found.
    fn path(&self) -> &str {
        match self {
            Found::Document(path) | Found::File(path) => path,
        }
    }

    fn of(ws: &Workspace, path: String) -> Found {
        if ws.contains_document(&path) {
            Found::Document(path)
        } else {
            Found::File(path)
        }
    }

    fn into_target(self, fragment: Option<String>) -> Target {
        match self {
            Found::Document(path) => Target::Document { path, fragment },
            Found::File(path) => Target::File(path),
        }
    }
}

/// The Markdown file-name variants a path may mean: as written, then with `.md` or
/// `.markdown` (an extension-less link, or the `.html` page a book generator such as
/// mdBook renders from `x.md`).
fn spellings(path: &str) -> Vec<String> {
    let stem = path
        .strip_suffix(".html")
        .or_else(|| path.strip_suffix(".htm"))
        .unwrap_or(path);
    vec![
        path.to_string(),
        format!("{stem}.md"),
        format!("{stem}.markdown"),
    ]
}

/// The document, file or folder at exactly `path` (or one of its Markdown variants).
fn exact_target(ws: &Workspace, path: &str) -> Option<Found> {
    if ws.contains_document(path) {
        return Some(Found::Document(path.to_string()));
    }
    if ws.contains_other_path(path) || path.is_empty() {
        return Some(Found::File(path.to_string()));
    }
    spellings(path)
        .into_iter()
        .skip(1)
        .find(|p| ws.contains_document(p))
        .map(Found::Document)
}

/// Paths of the workspace spelled like `path` (or one of its Markdown variants) up to
/// letter case and Unicode normalisation, sorted.
fn folded_target(ws: &Workspace, path: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for spelling in spellings(path) {
        out.extend(ws.folded_matches(&spelling).iter().cloned());
        if !out.is_empty() {
            break;
        }
    }
    out.sort();
    out
}

fn nfc(s: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    s.nfc().collect()
}

/// A root-absolute destination under `[links].site_base` mapped into `[links].site_root`.
fn site_dest(links: &crate::config::LinksConfig, dest: &str) -> String {
    if links.site_root.is_empty() || !dest.starts_with('/') {
        return dest.to_string();
    }
    let base = links.site_base.trim_end_matches('/');
    match dest.strip_prefix(base) {
        Some(rest) if rest.starts_with('/') => {
            format!("/{}{rest}", links.site_root.trim_matches('/'))
        }
        _ => dest.to_string(),
    }
}

/// The file-system path of a destination that leaves the root, joined lexically onto
/// the root; `None` when it climbs above the file system's root.
fn outside_root_path(root: &std::path::Path, from: &str, dest: &str) -> Option<std::path::PathBuf> {
    let mut parts: Vec<String> = root
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let base = parts.len();
    let rel = match dest.strip_prefix('/') {
        Some(abs) => abs,
        None => {
            parts.extend(from.split('/').map(str::to_string));
            parts.pop();
            dest
        }
    };
    for seg in rel.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if parts.len() <= 1 {
                    return None;
                }
                parts.pop();
            }
            s => parts.push(s.to_string()),
        }
    }
    let _ = base;
    Some(parts.iter().collect())
}

fn resolve_wiki(ws: &Workspace, from: &str, link: &Link) -> Target {
    if link.dest.is_empty() {
        return Target::Document {
            path: from.to_string(),
            fragment: link.fragment.clone(),
        };
    }
    // Obsidian and Foam resolve a wiki link to a file, never to a folder.
    let candidates: Vec<String> = match by_name(ws, from, &link.dest) {
        ByName::None => Vec::new(),
        ByName::One(p) => vec![p],
        ByName::Several(paths) => paths,
    }
    .into_iter()
    .filter(|p| !ws.is_folder(p))
    .collect();
    match candidates.len() {
        0 => {
            // A definition with the wiki target's label (Foam's compatibility definitions) decides.
            let key = crate::parse::normalize_label(&link.dest);
            let parsed = ws.parsed(from);
            let definition = parsed.as_ref().and_then(|p| {
                let def = p.definitions.iter().find(|d| d.key == key)?;
                p.links
                    .iter()
                    .find(|l| l.kind == LinkKind::Definition && l.range == def.range)
                    .cloned()
            });
            match definition {
                Some(def_link) => match resolve_link(ws, from, &def_link) {
                    Target::Document { path, .. } => Target::Document {
                        path,
                        fragment: link.fragment.clone(),
                    },
                    other => other,
                },
                None => Target::Missing,
            }
        }
        1 => {
            let path = candidates.into_iter().next().expect("one candidate");
            if ws.contains_document(&path) {
                Target::Document {
                    path,
                    fragment: link.fragment.clone(),
                }
            } else {
                Target::File(path)
            }
        }
        _ => Target::Ambiguous(candidates),
    }
}

/// Whether a link target is a template expression, whose value only the template engine
/// knows: it holds `{{…}}` (Obsidian's core templates, Hugo's shortcodes `{{< … >}}` and
/// `{{% … %}}`, Jinja and MkDocs macros), `{%…%}` (Liquid, Jinja) or `<%…%>` (Templater).
pub(crate) fn is_template_placeholder(dest: &str) -> bool {
    (dest.contains("{{") && dest.contains("}}"))
        || (dest.contains("{%") && dest.contains("%}"))
        || (dest.contains("<%") && dest.contains("%>"))
}

/// Does `fragment` name a heading, anchor or block id of `target`?
///
/// Markdown links compare against GitHub slugs and HTML ids; wiki links also accept the
/// heading text itself (`[[page#Some Heading]]`), heading paths (`[[page#Setup#On Linux]]`)
/// and block ids (`[[page#^id]]`). A Markdown link may also name a heading by the id
/// `generator` gives it ([`Workspace::generator`], [`Parsed::heading_anchors`]), and with
/// `term_ids` a definition term by its id ([`Workspace::definition_term_ids`]). An empty
/// fragment and `top` always match (HTML: scroll to the top).
pub fn fragment_matches(
    target: &Parsed,
    fragment: &str,
    wiki: bool,
    case_sensitive: bool,
    generator: SiteGenerator,
    term_ids: bool,
) -> bool {
    if fragment.is_empty() || fragment == "top" {
        return true;
    }
    let names = target.fragment_names();
    let has = |exact: &std::collections::HashSet<String>,
               lower: &std::collections::HashSet<String>,
               s: &str| {
        if case_sensitive {
            exact.contains(s)
        } else {
            lower.contains(&s.to_lowercase())
        }
    };
    if let Some(block) = fragment.strip_prefix('^') {
        return has(&names.blocks, &names.blocks_lower, block);
    }
    let names_it = |ids: Vec<String>| {
        ids.iter().any(|id| {
            if case_sensitive {
                id == fragment
            } else {
                id.to_lowercase() == fragment.to_lowercase()
            }
        })
    };
    has(&names.ids, &names.ids_lower, fragment)
        || (!generator.uses_github_slugs() && !wiki && names_it(target.heading_anchors(generator)))
        || (term_ids
            && !wiki
            && !target.definition_terms.is_empty()
            && names_it(crate::parse::definition_term_ids(
                &target.headings,
                &target.definition_terms,
            )))
        || (wiki
            && (has(&names.texts, &names.texts_lower, fragment)
                || has(&names.texts, &names.texts_lower, &slug::slug(fragment))
                || (fragment.contains('#')
                    && navigate::heading_path(target, fragment, case_sensitive).is_some())))
}

/// All link diagnostics of document `path`, in source order, after silencing rules
/// (`[diagnostics]` settings) and the document's own `<!-- folio-ignore … -->` comments
/// (`silence`).
pub fn diagnostics(ws: &Workspace, path: &str) -> Vec<Diagnostic> {
    let Some(parsed) = ws.parsed(path) else {
        return Vec::new();
    };
    let mut checks = Checks {
        ws,
        path,
        parsed: &parsed,
        config: &ws.config().diagnostics,
        out: Vec::new(),
        fixes: Vec::new(),
    };
    let used = UsedLabels::of(&parsed);
    checks.duplicate_definitions();
    checks.unused_definitions(&used);
    checks.undefined_references();
    checks.link_targets();
    checks.frontmatter();
    let mut out = checks.finish();
    drop_silenced_in_document(ws, path, &mut out);
    out
}

/// Drops from `diags` (of document `path`) those the document silences itself
/// (`<!-- folio-ignore … -->`, [`silence`]): the one rule for every diagnostic, the
/// external link check's too (`crate::external`).
pub(crate) fn drop_silenced_in_document(ws: &Workspace, path: &str, diags: &mut Vec<Diagnostic>) {
    if diags.is_empty() {
        return;
    }
    let Some(entry) = ws.get(path) else {
        return;
    };
    let silences = silence::Silences::of(&entry.doc.text());
    if !silences.is_empty() {
        diags.retain(|d| {
            let line = entry
                .doc
                .offset_to_line_col(d.range.start, crate::document::Encoding::Utf8)
                .line;
            !silences.covers(line as usize, d.code)
        });
    }
}

/// The labels and footnotes the links of a document use, once, so each definition is
/// checked in constant time.
struct UsedLabels<'a> {
    /// Normalized labels of reference and wiki links, and wiki links' destinations.
    labels: HashSet<String>,
    /// Footnote labels.
    footnotes: HashSet<&'a str>,
}

impl<'a> UsedLabels<'a> {
    /// The labels `parsed`'s links use. Foam writes a definition for each wiki link so
    /// other renderers can follow it: `[[daily]]` uses `[daily]: daily.md`.
    fn of(parsed: &'a Parsed) -> UsedLabels<'a> {
        let mut labels: HashSet<String> = HashSet::new();
        let mut footnotes: HashSet<&str> = HashSet::new();
        for l in &parsed.links {
            match l.kind.syntax() {
                LinkSyntax::Reference => labels.extend(l.label.clone()),
                LinkSyntax::Wiki => {
                    labels.extend(l.label.clone());
                    labels.insert(crate::parse::normalize_label(&l.dest));
                }
                LinkSyntax::Footnote => footnotes.extend(l.label.as_deref()),
                LinkSyntax::Path => {}
            }
        }
        UsedLabels { labels, footnotes }
    }
}

/// The diagnostics of one document as the checks find them: silenced ones are dropped,
/// fixes wait apart until every diagnostic is in.
struct Checks<'a> {
    ws: &'a Workspace,
    path: &'a str,
    parsed: &'a Parsed,
    config: &'a crate::config::DiagnosticsConfig,
    out: Vec<Diagnostic>,
    fixes: Vec<(Range<usize>, DiagnosticCode, Fix)>,
}

impl Checks<'_> {
    /// Records a diagnostic unless the configuration silences its code or `target`.
    fn push(
        &mut self,
        code: DiagnosticCode,
        range: Range<usize>,
        message: String,
        target: Option<&str>,
    ) {
        if self.config.is_silenced(code, target) {
            return;
        }
        self.out.push(Diagnostic {
            code,
            severity: code.severity(),
            range,
            message,
            fix: None,
        });
    }

    /// A frontmatter block that does not parse, reported on its opening `---` (or `+++`)
    /// line with the parser's message.
    fn frontmatter(&mut self) {
        if let Some(problem) = self.parsed.frontmatter_problem() {
            let start = problem.range.start;
            let opening = start..(start + 3).min(problem.range.end);
            let message = format!(
                "{}; the note's title, tags, aliases and dates are not read from it",
                problem.message
            );
            self.push(DiagnosticCode::InvalidFrontmatter, opening, message, None);
        }
    }

    /// Offers `edit` as the fix of the `code` diagnostic at `range`.
    fn offer_fix(
        &mut self,
        range: Range<usize>,
        code: DiagnosticCode,
        edit: crate::document::TextEdit,
    ) {
        self.fixes.push((
            range,
            code,
            Fix {
                title: format!("Change link to `{}`", edit.new_text),
                edit,
            },
        ));
    }

    /// Each fix joins the diagnostic of the link it repairs (a silenced one has none);
    /// the diagnostics in source order.
    fn finish(mut self) -> Vec<Diagnostic> {
        for (range, code, fix) in self.fixes {
            if let Some(d) = self
                .out
                .iter_mut()
                .find(|d| d.range == range && d.code == code)
            {
                d.fix = Some(fix);
            }
        }
        self.out.sort_by_key(|d| (d.range.start, d.code));
        self.out
    }

    /// `duplicate-definition`: a second definition of a label. A comment
    /// (`[//]: # (note)`) is no definition.
    fn duplicate_definitions(&mut self) {
        let mut seen: HashSet<&str> = HashSet::new();
        for def in self.parsed.definitions.iter().filter(|d| !d.comment) {
            if !seen.insert(def.key.as_str()) {
                self.push(
                    DiagnosticCode::DuplicateDefinition,
                    def.label_range.clone(),
                    format!(
                        "duplicate definition of `[{}]`; the first one is used (CommonMark 4.7)",
                        def.label
                    ),
                    None,
                );
            }
        }
    }

    /// `unused-definition`: a definition (the first of its label; not a comment) or a
    /// footnote no link uses.
    fn unused_definitions(&mut self, used: &UsedLabels<'_>) {
        let mut seen: HashSet<&str> = HashSet::new();
        for def in self.parsed.definitions.iter().filter(|d| !d.comment) {
            if seen.insert(def.key.as_str()) && !used.labels.contains(&def.key) {
                self.push(
                    DiagnosticCode::UnusedDefinition,
                    def.label_range.clone(),
                    format!("link reference definition `[{}]` is not used", def.label),
                    None,
                );
            }
        }
        for (label, range) in &self.parsed.footnote_definitions {
            if !used.footnotes.contains(label.as_str()) {
                self.push(
                    DiagnosticCode::UnusedDefinition,
                    range.clone(),
                    format!("footnote `[^{label}]` is not used"),
                    None,
                );
            }
        }
    }

    /// `undefined-reference`: a reference link or footnote whose label has no definition.
    fn undefined_references(&mut self) {
        let parsed = self.parsed;
        let defined: HashSet<&str> = parsed.definitions.iter().map(|d| d.key.as_str()).collect();
        let defined_footnotes: HashSet<&str> = parsed
            .footnote_definitions
            .iter()
            .map(|(l, _)| l.as_str())
            .collect();
        for link in parsed
            .links
            .iter()
            .filter(|l| l.kind == LinkKind::UndefinedReference)
        {
            let label = link.label.as_deref().unwrap_or("");
            let is_defined = match label.strip_prefix('^') {
                Some(f) => defined_footnotes.contains(f),
                None => defined.contains(label),
            };
            if !is_defined {
                self.push(
                    DiagnosticCode::UndefinedReference,
                    link.range.clone(),
                    format!("no definition for reference `[{label}]`"),
                    None,
                );
            }
        }
    }

    /// Every link but an undefined reference, in source order: [`Checks::link_target`].
    fn link_targets(&mut self) {
        let parsed = self.parsed;
        for link in parsed
            .links
            .iter()
            .filter(|l| l.kind != LinkKind::UndefinedReference)
        {
            self.link_target(link);
        }
    }

    /// Resolves `link` and runs the check of what it leads to; a link the document's
    /// templates, table-of-contents marker or Hugo site explain is not checked.
    fn link_target(&mut self, link: &Link) {
        let ws = self.ws;
        let range = link.dest_range.clone().unwrap_or(link.range.clone());
        let wiki = link.kind.is_wiki();
        match resolve_link(ws, self.path, link) {
            // markdown-it's and VitePress's table-of-contents marker, a paragraph of its own.
            Target::Missing if wiki && is_toc_marker(self.parsed, link) => {}
            // A template's placeholder (`[[{{date}}]]`, Templater's `[[<% tp.date.now() %>]]`)
            // becomes a link only in the note made from the template.
            // So does a link whose destination is a template expression (Hugo's
            // `[x]({{% param repo %}}/issues)`, MkDocs macros' `{{ config.repo_url }}`).
            Target::Missing | Target::MissingFoundByName(_)
                if is_template_placeholder(&link.dest) => {}
            // Hugo renders `[[x]]` as text (a TOML table header in a code shortcode), unless
            // the site is also an Obsidian vault.
            Target::Missing | Target::Ambiguous(_)
                if wiki && ws.generator() == SiteGenerator::Hugo && !ws.is_vault() => {}
            Target::Missing if wiki => self.missing_wiki_target(link, range),
            Target::Missing => self.missing_file(link, range),
            Target::MissingFoundByName(found) => {
                self.missing_file_found_by_name(link, range, &found)
            }
            Target::CaseMismatch {
                path: actual,
                fragment: _,
            } => self.case_mismatch(link, range, &actual),
            Target::Ambiguous(paths) if !wiki => self.ambiguous_file(link, range, &paths),
            Target::Ambiguous(paths) => self.ambiguous_wiki_target(link, range, &paths),
            Target::Document {
                path: target_path,
                fragment: Some(fragment),
            } => self.missing_heading(link, range, &target_path, &fragment),
            _ => {}
        }
    }

    /// `missing-wiki-target`: no document or file matches a wiki link.
    fn missing_wiki_target(&mut self, link: &Link, range: Range<usize>) {
        self.push(
            DiagnosticCode::MissingWikiTarget,
            range,
            format!("no document or file matches wiki link `[[{}]]`", link.dest),
            Some(&link.dest),
        );
    }

    /// `missing-file`: a Markdown link's path leads nowhere.
    fn missing_file(&mut self, link: &Link, range: Range<usize>) {
        let (ws, path) = (self.ws, self.path);
        let range = path_range(link, range);
        let resolved = hugo_content_path(ws, path, &link.dest)
            .or_else(|| join_relative(path, &site_dest(&ws.config().links, &link.dest)))
            .unwrap_or_else(|| "a path outside the root".to_string());
        self.push(
            DiagnosticCode::MissingFile,
            range,
            format!(
                "file `{}` does not exist (resolved to `{resolved}`)",
                link.dest
            ),
            Some(&resolved),
        );
    }

    /// `missing-file` with a fix: the path leads nowhere, but one file of that name is at
    /// `found`.
    fn missing_file_found_by_name(&mut self, link: &Link, range: Range<usize>, found: &str) {
        let (ws, path) = (self.ws, self.path);
        let range = path_range(link, range);
        let resolved =
            join_relative(path, &site_dest(&ws.config().links, &link.dest)).unwrap_or_default();
        self.push(
            DiagnosticCode::MissingFile,
            range.clone(),
            format!(
                "file `{}` does not exist (resolved to `{resolved}`); a file of that name is at `{found}`",
                link.dest
            ),
            Some(&resolved),
        );
        if let Some(edit) = rewrite::retarget(ws, path, link, found) {
            self.offer_fix(range, DiagnosticCode::MissingFile, edit);
        }
    }

    /// `case-mismatch`, with a fix: the target exists as `actual`, spelled in other case.
    fn case_mismatch(&mut self, link: &Link, range: Range<usize>, actual: &str) {
        let range = path_range(link, range);
        let edit = rewrite::retarget(self.ws, self.path, link, actual);
        let spelled = edit
            .as_ref()
            .map_or(actual.to_string(), |e| e.new_text.clone());
        self.push(
            DiagnosticCode::CaseMismatch,
            range.clone(),
            format!(
                "`{}` exists as `{spelled}`, which differs only in letter case: the link works on Windows and macOS but breaks on Linux and GitHub",
                link.dest
            ),
            Some(actual),
        );
        if let Some(edit) = edit {
            self.offer_fix(range, DiagnosticCode::CaseMismatch, edit);
        }
    }

    /// `ambiguous-file`: a Markdown link's file name matches several files.
    fn ambiguous_file(&mut self, link: &Link, range: Range<usize>, paths: &[String]) {
        self.push(
            DiagnosticCode::AmbiguousFile,
            range,
            format!(
                "`{}` matches {} files by name: {}",
                link.dest,
                paths.len(),
                paths.join(", ")
            ),
            Some(&link.dest),
        );
    }

    /// `ambiguous-wiki-target`: a wiki link matches several documents.
    fn ambiguous_wiki_target(&mut self, link: &Link, range: Range<usize>, paths: &[String]) {
        self.push(
            DiagnosticCode::AmbiguousWikiTarget,
            range,
            format!(
                "wiki link `[[{}]]` matches {} documents: {}",
                link.dest,
                paths.len(),
                paths.join(", ")
            ),
            Some(&link.dest),
        );
    }

    /// `missing-heading`: the link's fragment names no heading, anchor or block id of the
    /// document it leads to (`target_path`).
    fn missing_heading(
        &mut self,
        link: &Link,
        range: Range<usize>,
        target_path: &str,
        fragment: &str,
    ) {
        let (ws, path) = (self.ws, self.path);
        let Some(target) = ws.parsed(target_path) else {
            return;
        };
        let wiki = link.kind.is_wiki();
        let case_sensitive = self.config.fragment_case_sensitive;
        let found = fragment_matches(
            &target,
            fragment,
            wiki,
            case_sensitive,
            ws.generator(),
            ws.definition_term_ids(),
        ) || (!wiki
            && hugo::included_anchor(ws, target_path, fragment, case_sensitive));
        if !found {
            let frag_range = link.fragment_range.clone().unwrap_or(range);
            let where_ = if target_path == path {
                "this document".to_string()
            } else {
                format!("`{target_path}`")
            };
            let target_desc = format!("{target_path}#{fragment}");
            self.push(
                DiagnosticCode::MissingHeading,
                frag_range,
                format!("no heading or anchor `#{fragment}` in {where_}"),
                Some(&target_desc),
            );
        }
    }
}

/// The bytes of a link's path, without its fragment: a fragment is not what is missing.
fn path_range(link: &Link, range: Range<usize>) -> Range<usize> {
    match &link.fragment_range {
        Some(f) if f.start > range.start => range.start..f.start - 1,
        _ => range,
    }
}

#[cfg(test)]
mod tests;
