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
        Site {
            generator,
            lookup_folders,
            site_folder: Some(site_folder),
            route_base,
        }
    }
}

/// The URL path (lowercased, without a trailing `/`) Docusaurus publishes the page at
/// `path` under: `path` lies in the docs folder `content_folder` (KB-relative), the docs
/// are under `/route_base`, and `slug` and `id` are the page's frontmatter values.
///
/// Rule (the docs plugin): an absolute `slug` is the page's path under the route; else
/// the page's folder (relative to the docs folder, each segment without its number
/// prefix) plus a relative `slug`, else plus the `id`, else plus the file name without its
/// extension and number prefix; an index page (`index`, `README`, or named as its folder)
/// is its folder's URL. `docs/guide/01-intro.md` → `/docs/guide/intro`;
/// `docs/releases/releases.md` → `/docs/releases`.
pub fn page_url(
    route_base: &str,
    content_folder: &str,
    path: &str,
    slug: Option<&str>,
    id: Option<&str>,
) -> String {
    let rel = match content_folder {
        "" => path,
        folder => path
            .strip_prefix(folder)
            .and_then(|p| p.strip_prefix('/'))
            .unwrap_or(path),
    };
    let (folder, name) = rel.rsplit_once('/').unwrap_or(("", rel));
    let stem = name.rsplit_once('.').map_or(name, |(stem, _)| stem);
    let mut url = String::new();
    if !route_base.is_empty() {
        url.push('/');
        url.push_str(route_base);
    }
    if let Some(slug) = slug.filter(|s| s.starts_with('/')) {
        url.push_str(slug.trim_end_matches('/'));
        if url.is_empty() {
            url.push('/');
        }
        return url.to_lowercase();
    }
    for segment in folder.split('/').filter(|s| !s.is_empty()) {
        url.push('/');
        url.push_str(without_number_prefix(segment));
    }
    let index = is_index_page(path);
    match (slug, id) {
        (Some(slug), _) => {
            url.push('/');
            url.push_str(slug.trim_end_matches('/'));
        }
        _ if index => {}
        (None, Some(id)) => {
            url.push('/');
            url.push_str(id);
        }
        (None, None) => {
            url.push('/');
            url.push_str(without_number_prefix(stem));
        }
    }
    if url.is_empty() {
        url.push('/');
    }
    url.to_lowercase()
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
/// (`01-intro` → `intro`, `2. Setup` → `Setup`): digits, then `-`, `_`, `.` or spaces.
/// A name that is only a prefix, or whose digits run into letters (`3d-models`), stays.
pub fn without_number_prefix(stem: &str) -> &str {
    let digits = stem.len() - stem.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return stem;
    }
    let rest = stem[digits..].trim_start_matches(['-', '_', '.', ' ']);
    if rest.len() == stem.len() - digits || rest.is_empty() {
        stem
    } else {
        rest
    }
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
    re.captures_iter(source)
        .filter_map(|c| c.get(1).map(|m| m.as_str()))
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
        let url = |path, slug, id| page_url("docs", "docs", path, slug, id);
        assert_eq!(
            url("docs/01-guide/02-Intro.md", None, None),
            "/docs/guide/intro"
        );
        assert_eq!(
            url("docs/guide/a.md", None, Some("setup")),
            "/docs/guide/setup"
        );
        assert_eq!(
            url("docs/guide/a.md", Some("custom"), Some("x")),
            "/docs/guide/custom"
        );
        assert_eq!(
            url("docs/guide/a.md", Some("/glossary/"), None),
            "/docs/glossary"
        );
        assert_eq!(
            url("docs/releases/releases.md", None, None),
            "/docs/releases"
        );
        assert_eq!(url("docs/guide/README.md", None, Some("x")), "/docs/guide");
        assert_eq!(url("docs/index.md", None, None), "/docs");
        assert_eq!(page_url("", "docs", "docs/index.md", None, None), "/");
        assert_eq!(page_url("", "docs", "docs/a.mdx", Some("/"), None), "/");
        assert_eq!(
            super::super::path_policy::join_onto_folder("website", "../docs").as_deref(),
            Some("docs")
        );
        assert_eq!(
            super::super::path_policy::join_onto_folder("", "../docs"),
            None
        );
        assert_eq!(
            configured_paths("docs: { path: '../docs' }, x: { path: `/abs` }"),
            vec!["../docs"]
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
