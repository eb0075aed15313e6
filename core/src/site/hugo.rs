//! Hugo: where a site is and how it is configured (content folders, module mounts,
//! `autoDefinitionTermID`), and the URL and logical path it publishes a page under.
//! How a link is looked up in a Hugo site (`ref`/`relref`, logical paths, `include`
//! shortcodes) is [`crate::links`]' (`links/hugo.rs`), over these rules.

use std::collections::HashMap;
use std::path::Path;

use crate::config::{CONVENTIONAL_SITE_ROOTS, SiteGenerator};

use super::{Layout, Pages, url_key};

/// The names Hugo 0.110 and later read a site's configuration from, in the site's folder
/// or in its `config/_default/`.
const HUGO_CONFIGS: &[&str] = &["hugo.toml", "hugo.yaml", "hugo.yml", "hugo.json"];

/// The names older Hugo releases read, which also other tools use: they count only when
/// the file sets `baseURL` and a `content/` folder lies beside it.
const HUGO_LEGACY_CONFIGS: &[&str] = &["config.toml", "config.yaml", "config.yml", "config.json"];

/// The site of a workspace at `root` built by Hugo: its content folders (the
/// `contentDir` values of its configuration files that name folders, one per language,
/// and content mounts; else `content/`), then its site folder; its mounts; whether
/// definition terms have ids.
pub(super) fn site(root: &Path) -> Layout {
    let (site_folder, sources) = find(root).unwrap_or_default();
    let mut lookup_folders: Vec<String> = Vec::new();
    for source in &sources {
        for dir in content_dirs(source) {
            if let Some(folder) = crate::path_policy::join_onto_folder(&site_folder, &dir)
                && root.join(&folder).is_dir()
                && !lookup_folders.contains(&folder)
            {
                lookup_folders.push(folder);
            }
        }
    }
    if lookup_folders.is_empty() {
        lookup_folders.push(
            crate::path_policy::join_onto_folder(&site_folder, "content")
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
            let source = crate::path_policy::join_onto_folder(&site_folder, &source)
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
            let source = crate::path_policy::join_onto_folder(&site_folder, &source)
                .filter(|s| root.join(s).is_dir())?;
            Some((target.to_ascii_lowercase(), source))
        })
        .collect();
    Layout {
        generator: SiteGenerator::Hugo,
        lookup_folders,
        site_folder: Some(site_folder),
        definition_term_ids,
        content_mounts,
        static_mounts,
        ..Layout::default()
    }
}

/// The Hugo site under `root`: its folder (KB-relative) and its configuration files, read
/// ([`read_config`]) (the main one, and every file of `config/_default/`), or `None` when no folder
/// tried has one ([`Layout::of`]: the root, the conventional site folders, then each folder
/// at the root, in name order).
pub(super) fn find(root: &Path) -> Option<(String, Vec<serde_json::Value>)> {
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

/// The `slug` of the section page (`_index.md`) or bundle page (`index.md`) of folder
/// `rel` of the content folder `content_folder`, which Hugo publishes that folder (and
/// what lies below it) under.
fn section_slug(pages: &dyn Pages, content_folder: &str, rel: &str) -> Option<String> {
    ["_index.md", "index.md"].iter().find_map(|name| {
        let path = match content_folder {
            "" => format!("{rel}/{name}"),
            folder => format!("{folder}/{rel}/{name}"),
        };
        let slug = pages.frontmatter(&path)?.get("slug")?.as_str()?;
        Some(slug.to_string())
    })
}

/// The URL path of the page with frontmatter `front` were it at `at`, in the content
/// folder `folder` ([`hugo_page_url`] with its `slug`, `url` and its sections' slugs).
pub(super) fn permalink(
    pages: &dyn Pages,
    folder: &str,
    at: &str,
    front: Option<&serde_json::Value>,
) -> String {
    let value = |key: &str| front.and_then(|f| f.get(key)?.as_str());
    let section = |rel: &str| section_slug(pages, folder, rel);
    hugo_page_url(folder, at, value("slug"), value("url"), &section).0
}

/// The page index of a Hugo site: `content_folder|key` → path, where the keys are each
/// page's URL, then its logical path, then its `aliases`; the first page (in path order)
/// to claim a key keeps it.
pub(super) fn page_index(layout: &Layout, pages: &dyn Pages) -> HashMap<String, String> {
    let mut index = HashMap::new();
    let mut logical = Vec::new();
    let mut aliases = Vec::new();
    for (path, front) in pages.pages() {
        let Some(folder) = layout.docs_folder_of(path) else {
            continue;
        };
        let value = |key: &str| front.and_then(|f| f.get(key)?.as_str());
        let section = |rel: &str| section_slug(pages, folder, rel);
        let (url, logical_path) =
            hugo_page_url(folder, path, value("slug"), value("url"), &section);
        let key = |url: &str| format!("{folder}|{}", url_key(url));
        index.entry(key(&url)).or_insert_with(|| path.to_string());
        logical.push((key(&logical_path), path));
        let listed = front.and_then(|f| f.get("aliases")).map(|v| match v {
            serde_json::Value::Array(items) => items.iter().filter_map(|i| i.as_str()).collect(),
            serde_json::Value::String(one) => vec![one.as_str()],
            _ => Vec::new(),
        });
        for alias in listed.unwrap_or_default() {
            if alias.starts_with('/') {
                aliases.push((key(alias), path));
            }
        }
    }
    for (key, path) in logical.into_iter().chain(aliases) {
        index.entry(key).or_insert_with(|| path.to_string());
    }
    index
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
    let rel = crate::path_policy::within_folder(content_folder, path);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

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
        assert_eq!(Layout::of(root, &Config::default()), Layout::default());
        write("config.toml", "baseurl = 'https://example.org/'\n");
        let site = Layout::of(root, &Config::default());
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
        let site = Layout::of(root, &Config::default());
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
