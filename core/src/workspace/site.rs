//! How a workspace's pages are published: which site generator builds them
//! ([`SiteGenerator`]), and for Docusaurus, the folders it looks a Markdown file link up
//! from.

use std::path::Path;

use crate::config::{CONVENTIONAL_SITE_ROOTS, Config, SiteGenerator};

/// The names Docusaurus reads its configuration from, in a site's folder.
const DOCUSAURUS_CONFIGS: &[&str] = &[
    "docusaurus.config.js",
    "docusaurus.config.ts",
    "docusaurus.config.mjs",
    "docusaurus.config.cjs",
    "docusaurus.config.mts",
];

/// The site generator of a workspace and what it implies for link lookup.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Site {
    /// `[links].generator`, else detected ([`Site::of`]).
    pub generator: SiteGenerator,
    /// Docusaurus only: the folders (KB-relative, `""` for the root) a link to a Markdown
    /// file is looked up from when the linking page's folder has no such file, in order:
    /// the content folders, then the site's folder. Empty for other generators.
    pub lookup_folders: Vec<String>,
    /// Docusaurus only: the site's folder (KB-relative), which `@site/…` names.
    pub site_folder: Option<String>,
    /// Docusaurus only: the URL path the docs are published under, without slashes: the
    /// configuration's `routeBasePath: '…'`, else `docs`.
    pub route_base: String,
    /// Docusaurus only: the configuration sets `trailingSlash: true`, so every page's URL
    /// ends with `/` and relative links start at the page itself.
    pub trailing_slash: bool,
}

impl Site {
    /// The site of the workspace at `root`. The generator is `[links].generator`, else:
    /// MkDocs when the root has an `mkdocs.yml` or `mkdocs.yaml`; VitePress when the root
    /// or one of the [`CONVENTIONAL_SITE_ROOTS`] has a `.vitepress/` folder; Docusaurus
    /// when one of them has a `docusaurus.config.{js,ts,mjs,cjs,mts}`; else none.
    ///
    /// A Docusaurus site's content folders are the `path: '…'` values its configuration
    /// file gives its plugins (`docs: { path: '../docs' }`) that name folders of the
    /// workspace, and its `docs/` folder (the docs plugin's default). Reads nothing for an
    /// empty root (single-file mode).
    pub fn of(root: &Path, config: &Config) -> Site {
        if root.as_os_str().is_empty() {
            return Site {
                generator: config.links.generator.unwrap_or_default(),
                ..Site::default()
            };
        }
        let folders = || std::iter::once("").chain(CONVENTIONAL_SITE_ROOTS.iter().copied());
        let docusaurus = folders().find_map(|dir| {
            DOCUSAURUS_CONFIGS
                .iter()
                .map(|name| root.join(dir).join(name))
                .find(|file| file.is_file())
                .map(|file| (dir, file))
        });
        let generator = config.links.generator.unwrap_or_else(|| {
            if root.join("mkdocs.yml").is_file() || root.join("mkdocs.yaml").is_file() {
                SiteGenerator::Mkdocs
            } else if folders().any(|dir| root.join(dir).join(".vitepress").is_dir()) {
                SiteGenerator::Vitepress
            } else if docusaurus.is_some() {
                SiteGenerator::Docusaurus
            } else {
                SiteGenerator::None
            }
        });
        if generator != SiteGenerator::Docusaurus {
            return Site {
                generator,
                ..Site::default()
            };
        }
        let site_folder = docusaurus.as_ref().map_or("", |(dir, _)| dir).to_string();
        let source = docusaurus
            .and_then(|(_, file)| std::fs::read_to_string(file).ok())
            .unwrap_or_default();
        let mut lookup_folders: Vec<String> = Vec::new();
        for path in configured_paths(&source).into_iter().chain(["docs"]) {
            if let Some(folder) = super::path_policy::join_onto_folder(&site_folder, path)
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
        Site {
            generator,
            lookup_folders,
            site_folder: Some(site_folder),
            route_base,
            trailing_slash,
        }
    }
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
    let rel = match content_folder {
        "" => path,
        folder => path
            .strip_prefix(folder)
            .and_then(|p| p.strip_prefix('/'))
            .unwrap_or(path),
    };
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
                super::path_policy::join_relative(
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
        let site = Site::of(root, &Config::default());
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
            Site::of(root, &Config::default()).generator,
            SiteGenerator::Mkdocs
        );
        let set = Config::from_toml("[links]\ngenerator = \"docusaurus\"\n").unwrap();
        assert_eq!(Site::of(root, &set).lookup_folders, vec!["docs", "website"]);
        let none = Config::from_toml("[links]\ngenerator = \"none\"\n").unwrap();
        assert_eq!(Site::of(root, &none), Site::default());
    }
}
