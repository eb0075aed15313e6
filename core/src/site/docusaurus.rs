//! Docusaurus: where a site is and how it is configured (its docs folders, the route
//! its docs are published under, `trailingSlash`), and the URL it publishes a page
//! under (the docs plugin's `getSlug`, number prefixes stripped).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::config::{CONVENTIONAL_SITE_ROOTS, SiteGenerator};

use super::{Layout, Pages, url_key};

/// The names Docusaurus reads its configuration from, in a site's folder.
const DOCUSAURUS_CONFIGS: &[&str] = &[
    "docusaurus.config.js",
    "docusaurus.config.ts",
    "docusaurus.config.mjs",
    "docusaurus.config.cjs",
    "docusaurus.config.mts",
];

/// The Docusaurus configuration file of the site under `root`: the folder it is in
/// (`""` for the root, else one of the [`CONVENTIONAL_SITE_ROOTS`]) and its path.
pub(super) fn config_file(root: &Path) -> Option<(&'static str, PathBuf)> {
    std::iter::once("")
        .chain(CONVENTIONAL_SITE_ROOTS.iter().copied())
        .find_map(|dir| {
            DOCUSAURUS_CONFIGS
                .iter()
                .map(|name| root.join(dir).join(name))
                .find(|file| file.is_file())
                .map(|file| (dir, file))
        })
}

/// The site of a workspace at `root` built by Docusaurus: its docs folders (the `path`
/// its configuration gives the docs plugin, and `docs/`), then its site folder; the
/// route its docs are published under; `trailingSlash`.
pub(super) fn site(root: &Path) -> Layout {
    let docusaurus = config_file(root);
    let site_folder = docusaurus.as_ref().map_or("", |(dir, _)| dir).to_string();
    let source = docusaurus
        .and_then(|(_, file)| std::fs::read_to_string(file).ok())
        .unwrap_or_default();
    let mut lookup_folders: Vec<String> = Vec::new();
    for path in configured_paths(&source).into_iter().chain(["docs"]) {
        if let Some(folder) = crate::path_policy::join_onto_folder(&site_folder, path)
            && root.join(&folder).is_dir()
            && !lookup_folders.contains(&folder)
        {
            lookup_folders.push(folder);
        }
    }
    lookup_folders.push(site_folder.clone());
    let route_base = route_base_path(&source)
        .unwrap_or("docs")
        .trim_matches('/')
        .to_string();
    let trailing_slash = regex::Regex::new(r"\btrailingSlash\s*:\s*true\b")
        .expect("valid regex")
        .is_match(&source);
    Layout {
        generator: SiteGenerator::Docusaurus,
        lookup_folders,
        site_folder: Some(site_folder),
        route_base,
        trailing_slash,
        definition_term_ids: false,
        content_mounts: Vec::new(),
        static_mounts: Vec::new(),
    }
}

/// The URL path of the page with frontmatter `front` were it at `at`, in the docs folder
/// `folder` ([`page_url`] with its `slug` and `id`), ending with `/` on a site with
/// `trailingSlash: true`.
pub(super) fn page_url_at(
    layout: &Layout,
    folder: &str,
    at: &str,
    front: Option<&serde_json::Value>,
) -> Option<String> {
    let value = |key: &str| front.and_then(|f| f.get(key)?.as_str());
    let url = page_url(&layout.route_base, folder, at, value("slug"), value("id"))?;
    Some(if layout.trailing_slash && !url.ends_with('/') {
        url + "/"
    } else {
        url
    })
}

/// The page index of a Docusaurus site: URL key → the page published there, for every
/// document of its docs folders (in path order: the first to claim a URL keeps it), then
/// every `.mdx` file of them (sorted).
pub(super) fn page_index(layout: &Layout, pages: &dyn Pages) -> HashMap<String, String> {
    let mut urls = HashMap::new();
    for (path, front) in pages.pages() {
        if let Some(folder) = layout.docs_folder_of(path)
            && let Some(url) = page_url_at(layout, folder, path, front)
        {
            urls.entry(url_key(&url))
                .or_insert_with(|| path.to_string());
        }
    }
    let mut mdx: Vec<&str> = pages
        .other_paths()
        .filter(|p| p.to_ascii_lowercase().ends_with(".mdx"))
        .collect();
    mdx.sort_unstable();
    for path in mdx {
        if let Some(folder) = layout.docs_folder_of(path)
            && let Some(url) = page_url(&layout.route_base, folder, path, None, None)
        {
            urls.entry(url_key(&url))
                .or_insert_with(|| path.to_string());
        }
    }
    urls
}

/// The URL path (lowercased) Docusaurus publishes the page at `path` under: `path` lies
/// in the docs folder `content_folder` (KB-relative), the docs are under `/route_base`,
/// and `slug` and `id` are the page's frontmatter values. A URL ends with `/` where the
/// site's does (an index page, a slug written so), which is where relative links start.
///
/// Rule (the docs plugin's `getSlug`): an absolute `slug` is the page's path under the
/// route; a relative one is resolved as a URL against the page's folder (its path
/// relative to the docs folder, each segment without its number prefix); else the folder
/// plus the `id`, else plus the file name without its extension and number prefix; an
/// index page (`index`, `README`, or named as its folder) is its folder's URL with a
/// trailing `/`. `docs/guide/01-intro.md` → `/docs/guide/intro`;
/// `docs/releases/releases.md` → `/docs/releases/`. `None` when a relative slug climbs
/// above the site's root.
pub fn page_url(
    route_base: &str,
    content_folder: &str,
    path: &str,
    slug: Option<&str>,
    id: Option<&str>,
) -> Option<String> {
    let rel = crate::path_policy::within_folder(content_folder, path);
    let (folder, _) = rel.rsplit_once('/').unwrap_or(("", rel));
    let mut base = String::new();
    if !route_base.is_empty() {
        base.push('/');
        base.push_str(route_base);
    }
    if let Some(slug) = slug.filter(|s| s.starts_with('/')) {
        return Some(format!("{base}{slug}").to_lowercase());
    }
    for segment in folder.split('/').filter(|s| !s.is_empty()) {
        base.push('/');
        base.push_str(without_number_prefix(segment));
    }
    let url = match (slug, id) {
        // `base/_` so that the slug resolves against the folder's URL, as a URL does.
        (Some(slug), _) => {
            format!(
                "/{}",
                crate::path_policy::join_relative(
                    &format!("{}/_", base.trim_start_matches('/')),
                    slug
                )?
            ) + if slug.ends_with('/') { "/" } else { "" }
        }
        _ if is_index_page(path) => format!("{base}/"),
        (None, id) => format!("{base}/{}", page_id(path, id)),
    };
    Some(url.replace("//", "/").to_lowercase())
}

/// The last segment of the URL of the page at `path` that has no `slug` and is no index
/// page: its frontmatter `id`, else its file name without the extension and a number
/// prefix (`01-intro.md` → `intro`).
pub fn page_id<'a>(path: &'a str, id: Option<&'a str>) -> &'a str {
    id.unwrap_or_else(|| {
        let name = path.rsplit('/').next().unwrap_or(path);
        without_number_prefix(name.rsplit_once('.').map_or(name, |(stem, _)| stem))
    })
}

/// True for a page Docusaurus publishes at its folder's URL (its category index):
/// `index.md`, `README.md` (any letter case), or a file named as its folder
/// (`releases/releases.md`).
pub fn is_index_page(path: &str) -> bool {
    let (folder, name) = path.rsplit_once('/').unwrap_or(("", path));
    let stem = name.rsplit_once('.').map_or(name, |(stem, _)| stem);
    let parent = folder.rsplit('/').next().unwrap_or("");
    stem.eq_ignore_ascii_case("index")
        || stem.eq_ignore_ascii_case("readme")
        || (!parent.is_empty() && stem.eq_ignore_ascii_case(parent))
}

/// A file or folder name without the number prefix Docusaurus strips from ids and URLs
/// (its default `numberPrefixParser`): digits, optional spaces, one or more of `-`, `_`,
/// `.`, optional spaces, then the name (`01-intro` → `intro`, `2. Setup` → `Setup`). A
/// date or version is no prefix (`2021-05-10-release`, `1.0-changes`, `01-02-thing`), nor
/// are digits that run into the name (`3d-models`).
pub fn without_number_prefix(stem: &str) -> &str {
    use std::sync::OnceLock;
    static RE: OnceLock<(regex::Regex, regex::Regex)> = OnceLock::new();
    let (version_like, prefix) = RE.get_or_init(|| {
        (
            regex::Regex::new(r"^\d+[-_.]\d+").expect("valid regex"),
            regex::Regex::new(r"^\d+\s*[-_.]+\s*([^-_.\s].*)$").expect("valid regex"),
        )
    });
    if version_like.is_match(stem) {
        return stem;
    }
    prefix
        .captures(stem)
        .and_then(|c| c.get(1))
        .map_or(stem, |m| m.as_str())
}

/// The first `routeBasePath: '…'` of a Docusaurus configuration (the docs plugin's; a
/// text match, like [`configured_paths`]).
fn route_base_path(source: &str) -> Option<&str> {
    use std::sync::OnceLock;
    static RE: OnceLock<regex::Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(r#"\brouteBasePath\s*:\s*['"`]([^'"`\r\n]*)['"`]"#).expect("valid regex")
    });
    Some(re.captures(source)?.get(1)?.as_str())
}

/// The relative folder paths a Docusaurus configuration gives as `path: '…'` (or `"…"`,
/// `` `…` ``): the content folders of its docs, blog and pages plugins. A text match, not
/// a JavaScript parse: a path computed at run time is not seen.
fn configured_paths(source: &str) -> Vec<&str> {
    use std::sync::OnceLock;
    static RE: OnceLock<regex::Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(r#"\bpath\s*:\s*['"`]([^'"`\r\n]+)['"`]"#).expect("valid regex")
    });
    static PLUGIN: OnceLock<regex::Regex> = OnceLock::new();
    let plugin =
        PLUGIN.get_or_init(|| regex::Regex::new(r"\b(docs|blog|pages)\b").expect("valid regex"));
    re.captures_iter(source)
        .filter_map(|c| c.get(1))
        // The nearest plugin named before it (`blog: { path: 'blog' }`,
        // `'@docusaurus/plugin-content-blog', { path: … }`) must be the docs plugin.
        .filter(|m| {
            let mut from = m.start().saturating_sub(300);
            while !source.is_char_boundary(from) {
                from += 1;
            }
            plugin
                .find_iter(&source[from..m.start()])
                .last()
                .is_none_or(|k| k.as_str() == "docs")
        })
        .map(|m| m.as_str())
        .filter(|p| !p.starts_with('/') && !p.contains("://"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    #[test]
    fn docusaurus_content_folders_come_from_its_configuration() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("website/src/pages")).unwrap();
        std::fs::create_dir_all(root.join("docs")).unwrap();
        std::fs::write(
            root.join("website/docusaurus.config.ts"),
            "presets: [['classic', { docs: { path: '../docs', sidebarPath: './sidebars.js' },\n\
             blog: { path: \"blog\" } }]],\nplugins: [{ path: `/abs` }, { path: 'https://x.dev/a' }]\n",
        )
        .unwrap();
        let site = Layout::of(root, &Config::default());
        assert_eq!(site.generator, SiteGenerator::Docusaurus);
        // `blog` and `sidebars.js` name no folder; `../docs` is the root's `docs/`.
        assert_eq!(site.lookup_folders, vec!["docs", "website"]);
        assert_eq!(site.site_folder.as_deref(), Some("website"));
        assert_eq!(site.route_base, "docs");
        assert_eq!(route_base_path("docs: { routeBasePath: '/' }"), Some("/"));
        let url = |path, slug, id| page_url("docs", "docs", path, slug, id).unwrap();
        for (path, slug, id, expected) in [
            ("docs/01-guide/02-Intro.md", None, None, "/docs/guide/intro"),
            ("docs/guide/a.md", None, Some("setup"), "/docs/guide/setup"),
            (
                "docs/guide/a.md",
                Some("custom"),
                Some("x"),
                "/docs/guide/custom",
            ),
            ("docs/ref/x.md", Some("../lifted"), None, "/docs/lifted"),
            (
                "docs/ref/x.md",
                Some("./dotted/"),
                None,
                "/docs/ref/dotted/",
            ),
            (
                "docs/guide/a.md",
                Some("/glossary/"),
                None,
                "/docs/glossary/",
            ),
            ("docs/guide/a.md", Some("/"), None, "/docs/"),
            ("docs/releases/releases.md", None, None, "/docs/releases/"),
            ("docs/guide/README.md", None, Some("x"), "/docs/guide/"),
            ("docs/index.md", None, None, "/docs/"),
            (
                "docs/2021-05-10-release.md",
                None,
                None,
                "/docs/2021-05-10-release",
            ),
        ] {
            assert_eq!(url(path, slug, id), expected, "{path} {slug:?}");
        }
        assert_eq!(
            page_url("", "docs", "docs/index.md", None, None).as_deref(),
            Some("/")
        );
        assert_eq!(
            page_url("", "docs", "docs/a.md", Some("../../up"), None),
            None
        );
        for (name, expected) in [
            ("01-intro", "intro"),
            ("2. Setup", "Setup"),
            ("2024", "2024"),
            ("3d-models", "3d-models"),
            ("2021-05-10-release", "2021-05-10-release"),
            ("1.0-changes", "1.0-changes"),
            ("01-02-thing", "01-02-thing"),
            ("01 spaced", "01 spaced"),
        ] {
            assert_eq!(without_number_prefix(name), expected);
        }
        // Only the docs plugin's `path` names a docs folder.
        assert_eq!(
            configured_paths(
                "presets: [['classic', { docs: { path: 'guides' }, blog: { path: 'news' } }]],\n\
                 plugins: [['@docusaurus/plugin-content-docs', { id: 'api', path: 'api' }],\n\
                 ['@docusaurus/plugin-content-blog', { path: 'changelog' }]]"
            ),
            vec!["guides", "api"]
        );
        // An MkDocs file wins; a setting wins over both.
        std::fs::write(root.join("mkdocs.yml"), "site_name: x\n").unwrap();
        assert_eq!(
            Layout::of(root, &Config::default()).generator,
            SiteGenerator::Mkdocs
        );
        let set = Config::from_toml("[links]\ngenerator = \"docusaurus\"\n").unwrap();
        assert_eq!(
            Layout::of(root, &set).lookup_folders,
            vec!["docs", "website"]
        );
        let none = Config::from_toml("[links]\ngenerator = \"none\"\n").unwrap();
        assert_eq!(Layout::of(root, &none), Layout::default());
    }
}
