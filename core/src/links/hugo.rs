//! Hugo's link lookup: pages by logical path or URL in the linking page's content folder
//! (`Page.GetPage` and the link render hook Hugo embeds), module mounts, translations'
//! shared resources, `static/` and `assets/`, and the anchors of included snippets.

use super::{Found, exact_target, is_markdown_file_link, join_relative};
use crate::config::SiteGenerator;
use crate::path_policy::{join_onto_folder, within_folder};
use crate::workspace::Workspace;

/// Hugo's lookup of a link that names nothing from the linking page `from`'s folder
/// (rules: `Page.GetPage` and the link render hook Hugo embeds, which resolves a
/// destination as a page, then as a page or global resource, else leaves it to the
/// browser). In the content folder of `from` ([`Workspace::docs_folder_of`], one per
/// language), a page is named by its logical path or its URL ([`Workspace::hugo_page`]),
/// or is put there by a module mount ([`mounted_page`]):
/// - `/a/b/` or `/a/b.md` from the content folder, then from the other content folders
///   (a link Hugo cannot resolve is left as it is, and `/a/b/` is then the default
///   language's page);
/// - `b/c` from `from`'s folder (a bundle's `index.md` is its own folder), then from the
///   content folder, then as a browser resolves it against `from`'s URL (`../x/` from
///   `/a/b/` is `/a/x/`).
///
/// A file relative to the page is looked up as a browser resolves it against the page's
/// URL (`../x.svg` from `a/b.md`, published at `/a/b/`, is the section's `a/x.svg`), then
/// in the same bundle of the other content folders (a translation shares the resources
/// it does not have). A file (`/images/kitten.jpg`, or `kitten.jpg` relative) is also
/// looked up in the site's `static/` (served at the site's root, with what module mounts
/// put there) and `assets/` (global resources).
pub(super) fn in_hugo_site(ws: &Workspace, from: &str, dest: &str) -> Option<Found> {
    let site = ws.site_folder()?;
    let content_folders = {
        let folders = ws.site_lookup_folders();
        &folders[..folders.len().saturating_sub(1)]
    };
    let own_content = ws.docs_folder_of(from);
    let own = own_content.map(|content| within_folder(content, from));
    // A template or a file outside the content (`layouts/_shortcodes/x.md`, a README)
    // names pages of the default language's content folder, the first.
    let content = own_content.or_else(|| {
        dest.starts_with('/')
            .then(|| content_folders.first().map(String::as_str))
            .flatten()
    });
    let own = own.or(content.map(|_| ""));
    // Where the browser takes a relative link: against the page's URL.
    let by_url = || {
        let base = ws.page_url_of(from)?;
        join_relative(&format!("{}_", base.trim_start_matches('/')), dest)
    };
    if is_hugo_page_link(dest)
        && let (Some(content), Some(own)) = (content, own)
    {
        let page_in = |folder: &str, url: &str| {
            ws.hugo_page(folder, url)
                .map(str::to_string)
                .or_else(|| mounted_page(ws, url))
                .map(|p| Found::of(ws, p))
        };
        let page = |url: &str| page_in(content, url);
        let logical = |rel: &str| {
            let rel = rel.trim_end_matches('/');
            let lower = rel.to_ascii_lowercase();
            let rel = if lower.ends_with(".md") {
                &rel[..rel.len() - 3]
            } else {
                rel
            };
            format!("/{}", rel.trim_start_matches('/'))
        };
        if dest.starts_with('/') {
            let url = logical(dest);
            return page(&url).or_else(|| {
                content_folders
                    .iter()
                    .filter(|other| other.as_str() != content)
                    .find_map(|other| page_in(other, &url))
            });
        }
        return join_relative(own, dest)
            .map(|p| logical(&p))
            .and_then(|p| page(&p))
            .or_else(|| page(&logical(dest)))
            .or_else(|| page(&format!("/{}", by_url()?)));
    }
    if !dest.starts_with('/')
        && let (Some(content), Some(own)) = (content, own)
    {
        // Against the page's URL, then from its folder; in its content folder, then in
        // the same place of the other languages' (a translation shares the resources of
        // its bundle and section that it does not have).
        let candidates: Vec<String> = [by_url(), join_relative(own, dest)]
            .into_iter()
            .flatten()
            .collect();
        let folders = std::iter::once(content).chain(
            content_folders
                .iter()
                .map(String::as_str)
                .filter(|other| *other != content),
        );
        for folder in folders {
            if let Some(found) = candidates
                .iter()
                .find_map(|c| join_onto_folder(folder, c).and_then(|p| exact_target(ws, &p)))
            {
                return Some(found);
            }
        }
    }
    let rel = dest.trim_start_matches('/');
    let folders: &[&str] = if dest.starts_with('/') {
        &["static", "assets"]
    } else {
        &["assets"]
    };
    folders
        .iter()
        .find_map(|assets| {
            let folder = join_onto_folder(site, assets)?;
            join_onto_folder(&folder, rel).and_then(|p| exact_target(ws, &p))
        })
        .or_else(|| {
            // What a module mount puts into `static/` (`source: iconography`,
            // `target: static/img/logos`).
            ws.hugo_static_mounts()
                .iter()
                .filter(|_| dest.starts_with('/'))
                .find_map(|(target, source)| {
                    let rest = match target.as_str() {
                        "" => rel,
                        target => {
                            let head = rel.get(..target.len())?;
                            let after = &rel[target.len()..];
                            if !head.eq_ignore_ascii_case(target) || !after.starts_with('/') {
                                return None;
                            }
                            &after[1..]
                        }
                    };
                    join_onto_folder(source, rest).and_then(|p| exact_target(ws, &p))
                })
        })
}

/// Where a Hugo site's `/…` page link `dest` of content page `from` points in the content
/// folder (`/methods/site/gone/` → `content/en/methods/site/gone`), for messages. `None`
/// for other links and generators.
pub(super) fn hugo_content_path(ws: &Workspace, from: &str, dest: &str) -> Option<String> {
    if ws.generator() != SiteGenerator::Hugo || !dest.starts_with('/') || !is_hugo_page_link(dest) {
        return None;
    }
    join_onto_folder(ws.docs_folder_of(from)?, dest.trim_matches('/'))
}

/// The page a Hugo module mount puts at logical path `url` (`/docs/demo/x` when
/// `content/en/docs` is mounted at `content/docs` for another language): looked up at the
/// mount's source, in the page index of the content folder holding it, else as a file
/// (`x.md`, `x/_index.md`, `x/index.md`), or the mounted file itself.
fn mounted_page(ws: &Workspace, url: &str) -> Option<String> {
    let key = url.trim_matches('/').to_lowercase();
    ws.hugo_content_mounts()
        .iter()
        .filter_map(|(target, source)| Some((target, source.as_deref()?)))
        .find_map(|(target, source)| {
            let rest = key.strip_prefix(target.as_str())?;
            if !rest.is_empty() && !rest.starts_with('/') {
                return None;
            }
            if ws.contains_document(source) {
                return rest.is_empty().then(|| source.to_string());
            }
            if let Some(content) = ws.docs_folder_of(source) {
                let inner = within_folder(content, source);
                let url = format!("/{inner}{rest}");
                if let Some(page) = ws.hugo_page(content, &url) {
                    return Some(page.to_string());
                }
            }
            let base = format!("{source}{rest}");
            [
                format!("{base}.md"),
                format!("{base}/_index.md"),
                format!("{base}/index.md"),
            ]
            .into_iter()
            .find(|p| ws.contains_document(p))
        })
}

/// True for a Hugo link destination that names a page rather than a file: it ends with
/// `/`, its last segment has no extension, or it names a `.md` file.
pub(super) fn is_hugo_page_link(dest: &str) -> bool {
    let last = dest.trim_end_matches('/').rsplit('/').next().unwrap_or("");
    dest.ends_with('/') || !last.contains('.') || is_markdown_file_link(dest)
}

/// True when the root-absolute link whose path is `path` (KB-relative, from the root) is
/// a page of a Hugo site's section: its first segment is a folder of the content folder of
/// `from` (or of the first content folder). Such a link is checked; another `/…` link
/// (a taxonomy's `/tags/x/`, an output format's `/index.xml`) may be a page Hugo makes
/// without a file.
pub(super) fn hugo_section_link(ws: &Workspace, from: &str, path: &str) -> bool {
    if ws.generator() != SiteGenerator::Hugo {
        return false;
    }
    let Some(content) = ws
        .docs_folder_of(from)
        .or_else(|| ws.site_lookup_folders().first().map(String::as_str))
    else {
        return false;
    };
    let first = path.split('/').next().unwrap_or("");
    // What a mount from outside the workspace (a submodule, a folder made at build time)
    // puts there is not known.
    let lower = path.trim_matches('/').to_lowercase();
    let unknown = ws.hugo_content_mounts().iter().any(|(target, source)| {
        source.is_none()
            && lower
                .strip_prefix(target.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    });
    !unknown
        && !first.is_empty()
        && !first.contains('.')
        && join_onto_folder(content, first).is_some_and(|f| ws.is_folder(&f))
}

/// True when `fragment` names an anchor that the Hugo page at `path` shows through
/// snippets: an anchor of a snippet it includes (its headings and ids become the page's),
/// or, when `path` is itself a snippet, an anchor of a page that includes it (a snippet's
/// `#x` names the including page's `x`). A snippet is included by an `include` or
/// `readfile` shortcode (`{{% include "/_common/locale.md" %}}`,
/// `{{< readfile file="x.md" >}}`) outside code blocks, and its file is found as a page
/// link is ([`in_hugo_site`]: from the page's folder, then from the content folder), else
/// in an `_includes/` folder of the page's folder or one above it in the content folder
/// (the two conventions Hugo sites' own `include` shortcodes follow). Snippets in
/// snippets are followed three deep. Always false outside a Hugo site.
pub(super) fn included_anchor(
    ws: &Workspace,
    path: &str,
    fragment: &str,
    case_sensitive: bool,
) -> bool {
    if ws.generator() != SiteGenerator::Hugo {
        return false;
    }
    let matches = |page: &str| {
        ws.parsed(page).is_some_and(|parsed| {
            super::fragment_matches(
                &parsed,
                fragment,
                false,
                case_sensitive,
                SiteGenerator::Hugo,
                ws.definition_term_ids(),
            )
        })
    };
    // The page, the pages that include it (three up), then what each of them includes
    // (three down).
    let includers = ws.includers(build_includers);
    let mut pages = vec![path.to_string()];
    let mut level = vec![path.to_string()];
    for _ in 0..3 {
        level = level
            .iter()
            .flat_map(|p| includers.get(p).into_iter().flatten())
            .filter(|p| !pages.contains(p))
            .cloned()
            .collect();
        if level.is_empty() {
            break;
        }
        if level.iter().any(|p| matches(p)) {
            return true;
        }
        pages.extend(level.iter().cloned());
    }
    let mut seen = pages.clone();
    let mut next = pages;
    for _ in 0..3 {
        let mut found = Vec::new();
        for page in &next {
            for snippet in includes(ws, page) {
                if seen.contains(&snippet) {
                    continue;
                }
                if matches(&snippet) {
                    return true;
                }
                seen.push(snippet.clone());
                found.push(snippet);
            }
        }
        if found.is_empty() {
            return false;
        }
        next = found;
    }
    false
}

/// Each snippet → the pages that include it ([`includes`]), over every document of the
/// content folders whose text names a shortcode.
fn build_includers(ws: &Workspace) -> std::collections::HashMap<String, Vec<String>> {
    let mut map: std::collections::HashMap<String, Vec<String>> = std::collections::HashMap::new();
    for page in ws.document_paths() {
        if ws.docs_folder_of(page).is_none() {
            continue;
        }
        for snippet in includes(ws, page) {
            map.entry(snippet).or_default().push(page.to_string());
        }
    }
    map
}

/// The documents the `include` and `readfile` shortcodes of the page at `path` name
/// ([`included_anchor`]), and the Markdown templates of the shortcodes it calls
/// (`{{% docs/intro %}}` is `layouts/_shortcodes/docs/intro.md`, or `layouts/shortcodes/…`
/// before Hugo 0.146), in order.
fn includes(ws: &Workspace, path: &str) -> Vec<String> {
    use std::sync::OnceLock;
    static RE: OnceLock<regex::Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(
            r#"\{\{[<%]-?\s*(?:include|readfile)\s+(?:file\s*=\s*)?["'`]?([^"'`\s%>}]+)"#,
        )
        .expect("valid regex")
    });
    let Some(entry) = ws.get(path) else {
        return Vec::new();
    };
    static SHORTCODE: OnceLock<regex::Regex> = OnceLock::new();
    let shortcode_re = || regex::Regex::new(r"\{\{%-?\s*([\w][\w./-]*)").expect("valid regex");
    let text = entry.doc.text();
    if !text.contains("{{") {
        return Vec::new();
    }
    let content = ws.docs_folder_of(path);
    let mut out = Vec::new();
    let mut fence: Option<(u8, usize)> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let marker = trimmed.bytes().next().filter(|b| *b == b'`' || *b == b'~');
        if let Some(m) = marker {
            let run = trimmed.bytes().take_while(|b| *b == m).count();
            if run >= 3 {
                match fence {
                    None => fence = Some((m, run)),
                    Some((open, len)) if open == m && run >= len => fence = None,
                    Some(_) => {}
                }
                continue;
            }
        }
        if fence.is_some() {
            continue;
        }
        for c in SHORTCODE.get_or_init(shortcode_re).captures_iter(line) {
            let name = &c[1];
            let template = ["_shortcodes", "shortcodes"].iter().find_map(|dir| {
                let doc = format!("layouts/{dir}/{name}.md");
                let doc = match ws.site_folder() {
                    Some("") | None => doc,
                    Some(site) => format!("{site}/{doc}"),
                };
                ws.contains_document(&doc).then_some(doc)
            });
            if let Some(doc) = template
                && !out.contains(&doc)
            {
                out.push(doc);
            }
        }
        for c in re.captures_iter(line) {
            let name = &c[1];
            let page = is_hugo_page_link(name)
                .then(|| in_hugo_site(ws, path, name))
                .flatten();
            let found = match page {
                Some(Found::Document(doc)) => Some(doc),
                _ => content.and_then(|content| in_includes_folder(ws, path, content, name)),
            };
            if let Some(doc) = found
                && !out.contains(&doc)
            {
                out.push(doc);
            }
        }
    }
    out
}

/// The document `name` (`.md` optional) in an `_includes/` folder of the folder of `path`
/// or of one above it, up to the content folder `content`.
fn in_includes_folder(ws: &Workspace, path: &str, content: &str, name: &str) -> Option<String> {
    let name = name.trim_start_matches("./");
    let mut folder = path.rsplit_once('/').map_or("", |(f, _)| f);
    loop {
        for candidate in [name.to_string(), format!("{name}.md")] {
            let doc = join_onto_folder(&join_onto_folder(folder, "_includes")?, &candidate)?;
            if ws.contains_document(&doc) {
                return Some(doc);
            }
        }
        if folder.len() <= content.len() {
            return None;
        }
        folder = folder.rsplit_once('/').map_or("", |(f, _)| f);
    }
}

/// The page a Hugo `ref` names by its base name alone (`{{< ref "content" >}}`): the one
/// page of `from`'s content folder whose file name without extension is `name` (`.md`
/// optional), or whose folder is `name` for a section or bundle page, as Hugo's ref lookup
/// accepts a name without a `/` when one page has it. `None` when none or several do.
pub(super) fn ref_by_name(ws: &Workspace, from: &str, name: &str) -> Option<Found> {
    if name.contains('/') || name.is_empty() {
        return None;
    }
    let content = ws.docs_folder_of(from)?;
    let name = name.strip_suffix(".md").unwrap_or(name).to_lowercase();
    let prefix = format!("{content}/");
    let mut found = ws.document_paths().filter(|path| {
        if !content.is_empty() && !path.starts_with(&prefix) {
            return false;
        }
        let rel = within_folder(content, path);
        let stem = rel.rsplit_once('.').map_or(rel, |(stem, _)| stem);
        let (folder, last) = stem.rsplit_once('/').unwrap_or(("", stem));
        let base = if last == "index" || last == "_index" {
            folder.rsplit('/').next().unwrap_or("")
        } else {
            last
        };
        base.to_lowercase() == name
    });
    let first = found.next()?;
    found
        .next()
        .is_none()
        .then(|| Found::Document(first.to_string()))
}
