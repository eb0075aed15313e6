//! How a workspace's pages are published: which site generator builds them
//! ([`SiteGenerator`]), and for Docusaurus and Hugo, the folders it looks a link up from
//! and the URL it publishes each page at.

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

/// The names Hugo 0.110 and later read a site's configuration from, in the site's folder
/// or in its `config/_default/`.
const HUGO_CONFIGS: &[&str] = &["hugo.toml", "hugo.yaml", "hugo.yml", "hugo.json"];

/// The names older Hugo releases read, which also other tools use: they count only when
/// the file sets `baseURL` and a `content/` folder lies beside it.
const HUGO_LEGACY_CONFIGS: &[&str] = &["config.toml", "config.yaml", "config.yml", "config.json"];

/// The site generator of a workspace and what it implies for link lookup.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Site {
    /// `[links].generator`, else detected ([`Site::of`]).
    pub generator: SiteGenerator,
    /// Docusaurus and Hugo: the content folders (KB-relative, `""` for the root), then
    /// the site's folder. Docusaurus looks a link to a Markdown file up from each when the
    /// linking page's folder has no such file; Hugo looks a page up in the content folder
    /// of the linking page (one per language). Empty for other generators.
    pub lookup_folders: Vec<String>,
    /// Docusaurus and Hugo: the site's folder (KB-relative), which `@site/…` names and
    /// Hugo's `static/` and `assets/` lie in.
    pub site_folder: Option<String>,
    /// Docusaurus only: the URL path the docs are published under, without slashes: the
    /// configuration's `routeBasePath: '…'`, else `docs`.
    pub route_base: String,
    /// Docusaurus only: the configuration sets `trailingSlash: true`, so every page's URL
    /// ends with `/` and relative links start at the page itself.
    pub trailing_slash: bool,
    /// Hugo only: the configuration sets `markup.goldmark.parser.autoDefinitionTermID`, so
    /// definition terms have ids ([`crate::parse::definition_term_ids`]).
    pub definition_term_ids: bool,
    /// Hugo only: module mounts into a folder or file of the content (`target:
    /// content/docs/specs`): the target's logical path (`docs/specs`, without `.md`) and
    /// the source (KB-relative) when it is in the workspace, else `None` (a submodule or a
    /// folder made at build time).
    pub content_mounts: Vec<(String, Option<String>)>,
    /// Hugo only: module mounts into `static/` whose source the workspace has: the
    /// target's path under `static/` (lowercased, `""` for `static` itself) and the source
    /// (KB-relative).
    pub static_mounts: Vec<(String, String)>,
}

impl Site {
    /// The site of the workspace at `root`. The generator is `[links].generator`, else:
    /// MkDocs when the root has an `mkdocs.yml` or `mkdocs.yaml`; VitePress when the root
    /// or one of the [`CONVENTIONAL_SITE_ROOTS`] has a `.vitepress/` folder; Docusaurus
    /// when one of them has a `docusaurus.config.{js,ts,mjs,cjs,mts}`; Hugo when one of
    /// them or a folder at the root has a `hugo.{toml,yaml,yml,json}` (also in
    /// `config/_default/`), or a `config.{toml,yaml,yml,json}` that sets `baseURL` beside a
    /// `content/` folder; docfx when the root has `.openpublishing.publish.config.json` or it
    /// or a folder at the root has a `docfx.json`; else none.
    ///
    /// A Hugo site's content folders are the `contentDir` values of its configuration files
    /// (one per language: `content/en`) that name folders, else its `content/`.
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
        let hugo = || hugo_site(root);
        let generator = config.links.generator.unwrap_or_else(|| {
            if root.join("mkdocs.yml").is_file() || root.join("mkdocs.yaml").is_file() {
                SiteGenerator::Mkdocs
            } else if folders().any(|dir| root.join(dir).join(".vitepress").is_dir()) {
                SiteGenerator::Vitepress
            } else if docusaurus.is_some() {
                SiteGenerator::Docusaurus
            } else if hugo().is_some() {
                SiteGenerator::Hugo
            } else if crate::site::docfx::is_docfx_root(root) {
                SiteGenerator::Docfx
            } else {
                SiteGenerator::None
            }
        });
        if generator == SiteGenerator::Hugo {
            let (site_folder, sources) = hugo().unwrap_or_default();
            let mut lookup_folders: Vec<String> = Vec::new();
            for source in &sources {
                for dir in content_dirs(source) {
                    if let Some(folder) = super::path_policy::join_onto_folder(&site_folder, &dir)
                        && root.join(&folder).is_dir()
                        && !lookup_folders.contains(&folder)
                    {
                        lookup_folders.push(folder);
                    }
                }
            }
            if lookup_folders.is_empty() {
                lookup_folders.push(
                    super::path_policy::join_onto_folder(&site_folder, "content")
                        .unwrap_or_else(|| "content".to_string()),
                );
            }
            lookup_folders.push(site_folder.clone());
            let definition_term_ids = sources
                .iter()
                .any(|source| sets_true(source, "autodefinitiontermid"));
            let content_mounts = sources
                .iter()
                .flat_map(mounts)
                .filter_map(|(source, target)| {
                    let target = target.trim_matches('/').strip_prefix("content/")?;
                    let target = target.strip_suffix(".md").unwrap_or(target);
                    let target = target
                        .strip_suffix("/_index")
                        .or_else(|| target.strip_suffix("/index"))
                        .unwrap_or(target)
                        .to_lowercase();
                    let source = super::path_policy::join_onto_folder(&site_folder, &source)
                        .filter(|s| root.join(s).exists());
                    Some((target, source))
                })
                .collect();
            let static_mounts = sources
                .iter()
                .flat_map(mounts)
                .filter_map(|(source, target)| {
                    let target = target.trim_matches('/');
                    let target = match target {
                        "static" => "",
                        other => other.strip_prefix("static/")?,
                    };
                    let source = super::path_policy::join_onto_folder(&site_folder, &source)
                        .filter(|s| root.join(s).is_dir())?;
                    Some((target.to_ascii_lowercase(), source))
                })
                .collect();
            return Site {
                generator,
                lookup_folders,
                site_folder: Some(site_folder),
                definition_term_ids,
                content_mounts,
                static_mounts,
                ..Site::default()
            };
        }
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
            definition_term_ids: false,
            content_mounts: Vec::new(),
            static_mounts: Vec::new(),
        }
    }
}

/// The Hugo site under `root`: its folder (KB-relative) and its configuration files, read
/// ([`read_config`]) (the main one, and every file of `config/_default/`), or `None` when no folder
/// tried has one ([`Site::of`]: the root, the conventional site folders, then each folder
/// at the root, in name order).
fn hugo_site(root: &Path) -> Option<(String, Vec<serde_json::Value>)> {
    let mut children: Vec<String> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|name| !name.starts_with('.') && !CONVENTIONAL_SITE_ROOTS.contains(&name.as_str()))
        .collect();
    children.sort();
    let read = |file: &Path| std::fs::read_to_string(file).ok();
    let tried = std::iter::once(String::new())
        .chain(CONVENTIONAL_SITE_ROOTS.iter().map(|d| d.to_string()))
        .chain(children);
    for dir in tried {
        let folder = root.join(&dir);
        let defaults = folder.join("config").join("_default");
        let main = HUGO_CONFIGS
            .iter()
            .map(|name| folder.join(name))
            .find(|f| f.is_file())
            .or_else(|| {
                HUGO_LEGACY_CONFIGS
                    .iter()
                    .map(|name| folder.join(name))
                    .find(|f| {
                        folder.join("content").is_dir()
                            && read(f).is_some_and(|text| sets_base_url(&text))
                    })
            });
        let has_defaults = HUGO_CONFIGS
            .iter()
            .chain(HUGO_LEGACY_CONFIGS)
            .any(|name| defaults.join(name).is_file());
        if main.is_none() && !has_defaults {
            continue;
        }
        let mut files: Vec<std::path::PathBuf> = main.into_iter().collect();
        let mut more: Vec<std::path::PathBuf> = std::fs::read_dir(&defaults)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect();
        more.sort();
        files.extend(more);
        return Some((dir, files.iter().filter_map(|f| read_config(f)).collect()));
    }
    None
}

/// True when a Hugo configuration's text sets `baseURL` (any letter case, TOML, YAML or
/// JSON).
fn sets_base_url(text: &str) -> bool {
    use std::sync::OnceLock;
    static RE: OnceLock<regex::Regex> = OnceLock::new();
    RE.get_or_init(|| {
        regex::Regex::new(r#"(?im)^\s*["']?baseurl["']?\s*[=:]"#).expect("valid regex")
    })
    .is_match(text)
}

/// The content folders (relative to the site's folder) a Hugo configuration names, in
/// order: every `contentDir` value (top level or per language), and the `source` of every
/// module mount whose `target` is `content` (`[[module.mounts]] source = 'content/en'`).
/// `config` is the parsed file (TOML, YAML or JSON); keys compare without letter case.
fn content_dirs(config: &serde_json::Value) -> Vec<String> {
    use serde_json::Value;
    fn walk(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (key, value) in map {
                    match (key.to_ascii_lowercase().as_str(), value) {
                        ("contentdir", Value::String(dir)) => out.push(dir.clone()),
                        ("mounts", Value::Array(_)) => {}
                        _ => walk(value, out),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|item| walk(item, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(config, &mut out);
    out.extend(
        mounts(config)
            .into_iter()
            .filter(|(_, target)| target.trim_matches('/') == "content")
            .map(|(source, _)| source),
    );
    out.into_iter()
        .map(|dir| dir.trim_end_matches('/').to_string())
        .filter(|dir| !dir.is_empty() && !dir.starts_with('/'))
        .collect()
}

/// Every module mount of a Hugo configuration, at any depth (`module.mounts`, or `mounts`
/// in `config/_default/module.toml`): (`source`, `target`), as written.
fn mounts(config: &serde_json::Value) -> Vec<(String, String)> {
    use serde_json::Value;
    fn walk(value: &Value, out: &mut Vec<(String, String)>) {
        match value {
            Value::Object(map) => {
                for (key, value) in map {
                    match (key.eq_ignore_ascii_case("mounts"), value) {
                        (true, Value::Array(mounts)) => {
                            for mount in mounts {
                                let field = |name: &str| mount.get(name).and_then(Value::as_str);
                                if let (Some(source), Some(target)) =
                                    (field("source"), field("target"))
                                {
                                    out.push((source.to_string(), target.to_string()));
                                }
                            }
                        }
                        _ => walk(value, out),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|item| walk(item, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(config, &mut out);
    out
}

/// True when some table of `config`, at any depth, sets `key` (compared lowercased) to
/// `true`: a Hugo option read wherever a configuration file or `config/_default/` file
/// puts its table.
fn sets_true(config: &serde_json::Value, key: &str) -> bool {
    use serde_json::Value;
    match config {
        Value::Object(map) => map.iter().any(|(k, v)| {
            (k.eq_ignore_ascii_case(key) && v == &Value::Bool(true)) || sets_true(v, key)
        }),
        Value::Array(items) => items.iter().any(|item| sets_true(item, key)),
        _ => false,
    }
}

/// A Hugo configuration file read as a value by its extension (`.toml`, `.yaml`, `.yml`,
/// `.json`); `None` for another kind or text that does not parse.
fn read_config(file: &Path) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(file).ok()?;
    match file.extension()?.to_str()? {
        "toml" => toml::from_str(&text).ok(),
        "yaml" | "yml" => serde_norway::from_str(&text).ok(),
        "json" => serde_json::from_str(&text).ok(),
        _ => None,
    }
}

/// The URL path (lowercased) Hugo publishes the page at `path` under, which lies in the
/// content folder `content_folder` (KB-relative), with the frontmatter values `url` and
/// `slug`, and the page's logical path, which `GetPage` and links name it by.
/// `section_slug` gives the `slug` of the section or bundle page (`_index.md`, `index.md`)
/// of a folder, named by its path relative to the content folder (`sec/deep`).
///
/// Rule (Hugo's default permalinks, `uglyURLs = false`; checked with Hugo 0.168): the
/// path relative to the content folder without its extension, each segment lowercased
/// with spaces made `-`; a bundle's `index.md` or a section's `_index.md` is its folder;
/// the URL ends with `/`. A folder whose section or bundle page has a `slug` is published
/// under that slug, for that page and every page below it (`sec/_index.md` with
/// `slug: sx` puts `sec/deep/p.md` at `/sx/deep/p/`); a page's own `slug` replaces its
/// last segment; a `url` is the whole URL. The logical path ignores slugs.
/// `content/en/methods/site/Title.md` → (`/methods/site/title/`, `/methods/site/title`);
/// `content/en/about/_index.md` → (`/about/`, `/about`).
pub fn hugo_page_url(
    content_folder: &str,
    path: &str,
    slug: Option<&str>,
    url: Option<&str>,
    section_slug: &dyn Fn(&str) -> Option<String>,
) -> (String, String) {
    let rel = super::path_policy::within_folder(content_folder, path);
    let stem = rel.rsplit_once('.').map_or(rel, |(stem, _)| stem);
    let (folder, name) = stem.rsplit_once('/').unwrap_or(("", stem));
    let clean = |s: &str| s.trim().trim_matches('/').to_lowercase().replace(' ', "-");
    let index = name == "index" || name == "_index";
    let mut logical = String::new();
    let mut published = String::new();
    let mut folder_path = String::new();
    let segments: Vec<&str> = folder.split('/').filter(|s| !s.is_empty()).collect();
    for (i, segment) in segments.iter().enumerate() {
        if !folder_path.is_empty() {
            folder_path.push('/');
        }
        folder_path.push_str(segment);
        logical.push('/');
        logical.push_str(&clean(segment));
        let own = index && i + 1 == segments.len();
        let slugged = match slug {
            Some(slug) if own && !slug.trim().is_empty() => Some(slug.to_string()),
            _ => section_slug(&folder_path).filter(|s| !s.trim().is_empty()),
        };
        published.push('/');
        published.push_str(&clean(slugged.as_deref().unwrap_or(segment)));
    }
    if !index {
        logical.push('/');
        logical.push_str(&clean(name));
    }
    if logical.is_empty() {
        logical.push('/');
    }
    let permalink = match (url, slug) {
        (Some(url), _) if !url.trim().is_empty() => {
            let url = url.trim();
            if url.starts_with('/') {
                url.to_lowercase()
            } else {
                format!("/{}", url.to_lowercase())
            }
        }
        _ if index => format!("{published}/"),
        (_, Some(slug)) if !slug.trim().is_empty() => format!("{published}/{}/", clean(slug)),
        _ => format!("{published}/{}/", clean(name)),
    };
    (permalink, logical)
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
    let rel = super::path_policy::within_folder(content_folder, path);
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

    /// Hugo is found from `hugo.toml` at the root, `config/_default/` in a folder at the
    /// root, or an older `config.toml` that sets `baseURL` beside `content/`; its content
    /// folders come from `contentDir` and content mounts; `autoDefinitionTermID` is read
    /// wherever its table is.
    #[test]
    fn hugo_sites_and_content_folders_come_from_its_configuration() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let write =
            |path: &str, text: &str| crate::fixture::on_disk(root, &format!("//- /{path}\n{text}"));
        // `config.toml` without `baseURL` is some other tool's.
        write("config.toml", "title = 'x'\n");
        std::fs::create_dir_all(root.join("content")).unwrap();
        assert_eq!(Site::of(root, &Config::default()), Site::default());
        write("config.toml", "baseurl = 'https://example.org/'\n");
        let site = Site::of(root, &Config::default());
        assert_eq!(site.generator, SiteGenerator::Hugo);
        assert_eq!(site.lookup_folders, vec!["content", ""]);
        assert!(!site.definition_term_ids);
        std::fs::remove_file(root.join("config.toml")).unwrap();
        // A site in a folder at the root, configured in `config/_default/`: languages'
        // `contentDir` (YAML) and a module mount (TOML).
        write(
            "www/config/_default/hugo.yaml",
            "languages:\n  en:\n    contentDir: content/en\n  ja:\n    contentDir: content/ja/\n\
             markup:\n  goldmark:\n    parser:\n      autoDefinitionTermID: true\n",
        );
        write(
            "www/config/_default/module.toml",
            "[[mounts]]\nsource = 'shared'\ntarget = 'content'\n\
             [[mounts]]\nsource = 'assets'\ntarget = 'assets'\n",
        );
        for folder in [
            "www/content/en",
            "www/content/ja",
            "www/shared",
            "www/assets",
        ] {
            std::fs::create_dir_all(root.join(folder)).unwrap();
        }
        let site = Site::of(root, &Config::default());
        assert_eq!(site.generator, SiteGenerator::Hugo);
        assert_eq!(
            site.lookup_folders,
            vec!["www/content/en", "www/content/ja", "www/shared", "www"]
        );
        assert_eq!(site.site_folder.as_deref(), Some("www"));
        assert!(site.definition_term_ids);
        for (path, slug, url, expected) in [
            (
                "content/en/methods/site/Title.md",
                None,
                None,
                ("/methods/site/title/", "/methods/site/title"),
            ),
            (
                "content/en/about/_index.md",
                None,
                None,
                ("/about/", "/about"),
            ),
            (
                "content/en/about/index.md",
                Some("x"),
                None,
                ("/x/", "/about"),
            ),
            ("content/en/_index.md", None, None, ("/", "/")),
            (
                "content/en/posts/My Post.md",
                Some("Hello World"),
                None,
                ("/posts/hello-world/", "/posts/my-post"),
            ),
            (
                "content/en/posts/a.md",
                Some("x"),
                Some("elsewhere/a/"),
                ("/elsewhere/a/", "/posts/a"),
            ),
        ] {
            let (permalink, logical) = hugo_page_url("content/en", path, slug, url, &|_| None);
            assert_eq!((permalink.as_str(), logical.as_str()), expected, "{path}");
        }
        // A section's `slug` (its `_index.md`) is where the section and what lies below it
        // are published, as Hugo 0.168 builds them.
        let sections = |rel: &str| match rel {
            "sec" => Some("sx".to_string()),
            "sec/deep" => Some("Deep X".to_string()),
            _ => None,
        };
        assert_eq!(
            hugo_page_url("content", "content/sec/deep/p.md", None, None, &sections),
            ("/sx/deep-x/p/".to_string(), "/sec/deep/p".to_string())
        );
        assert_eq!(
            hugo_page_url(
                "content",
                "content/sec/_index.md",
                Some("sx"),
                None,
                &sections
            ),
            ("/sx/".to_string(), "/sec".to_string())
        );
    }
}
