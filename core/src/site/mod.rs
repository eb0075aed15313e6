//! Site generators' own rules, one file per generator: what a published site makes of a
//! link, a heading or a page that plain Markdown does not.
//!
//! - [`mkdocs`]: Python-Markdown's heading ids.
//! - [`vitepress`]: markdown-it-anchor's heading ids with VitePress's `slugify`.
//! - [`docusaurus`]: docs folders from its configuration, the URL of a page (`getSlug`).
//! - [`hugo`]: content folders and module mounts from its configuration, a page's URL and
//!   logical path.
//! - [`docfx`]: redirection files, which keep links to removed pages working, and
//!   Markdig's heading ids.
//!
//! [`Site`] is a workspace's site: the [`Layout`] detected from its files and what the
//! rules build from its pages (the page index, Hugo's includers, docfx's redirections),
//! kept until a change drops it. The site reads the workspace through [`Pages`]; link
//! lookup that applies these rules is [`crate::links`]' (`links/hugo.rs` for Hugo's
//! shortcodes, `links/site_move.rs` for a moved page's new address). Obsidian vaults are
//! a lookup rule, not a site: [`crate::workspace::is_vault`].
//!
//! Adding a generator: a variant of [`SiteGenerator`], a file here with its detection
//! (in [`Layout::of`]), its heading ids (in [`heading_ids`]) and, when it publishes pages
//! at URLs of its own, its page URL (in [`Site::page_url_as`] and the page index).

pub mod docfx;
pub mod docusaurus;
pub mod hugo;
pub mod mkdocs;
pub mod vitepress;

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::OnceLock;

use crate::config::{Config, SiteGenerator};

/// The site generator of a workspace and where its folders are, as its configuration
/// files say ([`Layout::of`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    /// `[links].generator`, else detected ([`Layout::of`]).
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

impl Layout {
    /// The layout of the workspace at `root`. The generator is `[links].generator`, else:
    /// MkDocs when the root has an `mkdocs.yml` or `mkdocs.yaml`; VitePress when the root
    /// or one of the [`crate::config::CONVENTIONAL_SITE_ROOTS`] has a `.vitepress/` folder;
    /// Docusaurus when one of them has a `docusaurus.config.{js,ts,mjs,cjs,mts}`; Hugo when
    /// one of them or a folder at the root has a `hugo.{toml,yaml,yml,json}` (also in
    /// `config/_default/`), or a `config.{toml,yaml,yml,json}` that sets `baseURL` beside
    /// a `content/` folder; docfx when the root has `.openpublishing.publish.config.json`
    /// or it or a folder at the root has a `docfx.json`; else none. Docusaurus and Hugo
    /// then read their folders (`docusaurus::site`, `hugo::site`). Reads nothing for
    /// an empty root (single-file mode).
    pub fn of(root: &Path, config: &Config) -> Layout {
        let configured = config.links.generator;
        if root.as_os_str().is_empty() {
            return Layout {
                generator: configured.unwrap_or_default(),
                ..Layout::default()
            };
        }
        match configured.unwrap_or_else(|| detect(root)) {
            SiteGenerator::Docusaurus => docusaurus::site(root),
            SiteGenerator::Hugo => hugo::site(root),
            generator => Layout {
                generator,
                ..Layout::default()
            },
        }
    }

    /// For a Docusaurus site, the docs folder `path` lies in; for a Hugo site, the content
    /// folder (KB-relative, `""` for the root; the deepest when they nest). `None`
    /// elsewhere.
    pub fn docs_folder_of(&self, path: &str) -> Option<&str> {
        let folders = &self.lookup_folders;
        // The site folder that ends the lookup folders is not a docs folder.
        folders[..folders.len().saturating_sub(1)]
            .iter()
            .map(String::as_str)
            .filter(|folder| {
                folder.is_empty()
                    || path
                        .strip_prefix(folder)
                        .is_some_and(|rest| rest.starts_with('/'))
            })
            .max_by_key(|folder| folder.len())
    }
}

/// The generator whose files `root` has, in [`Layout::of`]'s order.
fn detect(root: &Path) -> SiteGenerator {
    if mkdocs::is_site(root) {
        SiteGenerator::Mkdocs
    } else if vitepress::is_site(root) {
        SiteGenerator::Vitepress
    } else if docusaurus::config_file(root).is_some() {
        SiteGenerator::Docusaurus
    } else if hugo::find(root).is_some() {
        SiteGenerator::Hugo
    } else if docfx::is_docfx_root(root) {
        SiteGenerator::Docfx
    } else {
        SiteGenerator::None
    }
}

/// What the site rules read of a workspace.
pub trait Pages {
    /// Every Markdown document (KB-relative path) with its frontmatter, in path order.
    fn pages(&self) -> Box<dyn Iterator<Item = (&str, Option<&serde_json::Value>)> + '_>;
    /// The frontmatter of the document at `path`, when it has one.
    fn frontmatter(&self, path: &str) -> Option<&serde_json::Value>;
    /// Every file and folder that is not a Markdown document (KB-relative), in no order.
    fn other_paths(&self) -> Box<dyn Iterator<Item = &str> + '_>;
}

/// A workspace's site: its [`Layout`] and what the rules built from its pages, each built
/// on first use and dropped by the changes that can move it.
#[derive(Clone, Debug, Default)]
pub struct Site {
    layout: Layout,
    /// Docusaurus: lowercased page URL → the document or `.mdx` file published there;
    /// Hugo: `content_folder|key` → page ([`Site::page_at_url`], [`Site::hugo_page`]).
    page_urls: OnceLock<HashMap<String, String>>,
    /// Hugo only: each snippet → the pages that include it ([`Site::includers`]).
    includers: OnceLock<HashMap<String, Vec<String>>>,
    /// docfx only: the redirected pages ([`Site::docfx_redirect`]).
    redirections: OnceLock<docfx::Redirections>,
}

impl Site {
    /// The site of the workspace at `root` ([`Layout::of`]), nothing built yet.
    pub fn new(root: &Path, config: &Config) -> Site {
        Site {
            layout: Layout::of(root, config),
            ..Site::default()
        }
    }

    /// The detected layout.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Drops what was built from the pages: a document or file came, went or changed.
    pub fn pages_changed(&mut self) {
        self.page_urls = OnceLock::new();
        self.includers = OnceLock::new();
    }

    /// Drops the redirections read from a docfx site's redirection files, after one of
    /// them changed; true on a docfx site (the caller then checks every document again).
    pub fn redirections_changed(&mut self) -> bool {
        self.redirections = OnceLock::new();
        self.layout.generator == SiteGenerator::Docfx
    }

    /// On a docfx site, the URL the page at KB-relative `path` redirects to, when one of
    /// the site's redirection files (among `pages`' other paths, under `root`) names it
    /// (letter case ignored; [`docfx::Redirections`]). `None` elsewhere.
    pub fn docfx_redirect(&self, root: &Path, pages: &dyn Pages, path: &str) -> Option<&str> {
        if self.layout.generator != SiteGenerator::Docfx {
            return None;
        }
        self.redirections
            .get_or_init(|| docfx::Redirections::load(root, pages.other_paths()))
            .target(path)
    }

    /// For a Docusaurus site, the document or `.mdx` file published at URL path `url`
    /// (`/docs/guide/setup`; letter case and a trailing `/` do not matter), by
    /// [`docusaurus::page_url`] over every page of its docs folders. `None` elsewhere.
    pub fn page_at_url(&self, pages: &dyn Pages, url: &str) -> Option<&str> {
        self.page_index(pages)
            .get(&url_key(url))
            .map(String::as_str)
    }

    /// For a Hugo site, the document whose logical path or URL path is `url` among the
    /// pages of the content folder `content_folder` ([`hugo::hugo_page_url`]; letter case
    /// and a trailing `/` do not matter): `/methods/site/title` names
    /// `content/en/methods/site/title.md`, or a page with `url: /methods/site/title/`,
    /// `slug: title` or `aliases: [/methods/site/title/]`, in that order. `None`
    /// elsewhere.
    pub fn hugo_page(&self, pages: &dyn Pages, content_folder: &str, url: &str) -> Option<&str> {
        self.page_index(pages)
            .get(&format!("{content_folder}|{}", url_key(url)))
            .map(String::as_str)
    }

    /// For a Hugo site, the pages that include each snippet (KB paths), as `build` finds
    /// them over the whole workspace (the rule lives with the links: `include`
    /// shortcodes); built on the first call after a change and kept until the next.
    pub fn includers<W>(
        &self,
        workspace: &W,
        build: impl FnOnce(&W) -> HashMap<String, Vec<String>>,
    ) -> &HashMap<String, Vec<String>> {
        self.includers.get_or_init(|| build(workspace))
    }

    /// The URL path the page at `path` (its frontmatter) would have at `at`, where a move
    /// takes it: for a Docusaurus site when `at` lies in one of its docs folders
    /// ([`docusaurus::page_url`], with a trailing `/` under `trailingSlash: true`); for a
    /// Hugo site when it lies in a content folder ([`hugo::hugo_page_url`]). `None`
    /// elsewhere.
    pub fn page_url_as(&self, pages: &dyn Pages, path: &str, at: &str) -> Option<String> {
        let folder = self.layout.docs_folder_of(at)?;
        let front = pages.frontmatter(path);
        match self.layout.generator {
            SiteGenerator::Hugo => Some(hugo::permalink(pages, folder, at, front)),
            _ => docusaurus::page_url_at(&self.layout, folder, at, front),
        }
    }

    fn page_index(&self, pages: &dyn Pages) -> &HashMap<String, String> {
        self.page_urls.get_or_init(|| match &self.layout {
            Layout {
                site_folder: None, ..
            } => HashMap::new(),
            Layout {
                generator: SiteGenerator::Hugo,
                ..
            } => hugo::page_index(&self.layout, pages),
            layout => docusaurus::page_index(layout, pages),
        })
    }
}

/// The key of a URL in the page index: lowercased, without a trailing `/`.
pub(crate) fn url_key(url: &str) -> String {
    match url.trim_end_matches('/') {
        "" => "/".to_string(),
        url => url.to_lowercase(),
    }
}

/// The heading ids a site generator with ids of its own gives a document's headings, in
/// order, from each heading's text and attribute-list id (a heading with an id keeps it);
/// `None` for the generators that use GitHub's slugs (none, Docusaurus with
/// github-slugger, Hugo with goldmark's `github` ids: each heading's own
/// [`crate::parse::Heading::slug`]).
///
/// - MkDocs: `mkdocs::unique_id`, unique against the ids given so far and every
///   attribute-list id of the document.
/// - VitePress (markdown-it-anchor): [`vitepress::vitepress_slug`]; a repeat gets `-1`,
///   `-2`, … (the first free one, [`first_free_id`]).
/// - docfx (Markdig): [`docfx::markdig_ids`].
pub fn heading_ids<'a>(
    generator: SiteGenerator,
    headings: impl Iterator<Item = (&'a str, Option<&'a str>)> + Clone,
) -> Option<Vec<String>> {
    let own = |id: Option<&str>| id.map(str::to_string);
    let reserved =
        || -> HashSet<String> { headings.clone().filter_map(|(_, id)| own(id)).collect() };
    Some(match generator {
        SiteGenerator::None | SiteGenerator::Docusaurus | SiteGenerator::Hugo => return None,
        SiteGenerator::Mkdocs => {
            let mut used = reserved();
            headings
                .map(|(text, id)| own(id).unwrap_or_else(|| mkdocs::unique_id(text, &mut used)))
                .collect()
        }
        SiteGenerator::Vitepress => {
            let mut used = reserved();
            headings
                .map(|(text, id)| {
                    own(id).unwrap_or_else(|| {
                        first_free_id(&vitepress::vitepress_slug(text), &mut used)
                    })
                })
                .collect()
        }
        SiteGenerator::Docfx => docfx::markdig_ids(headings),
    })
}

/// The first of `base`, `base-1`, `base-2`, … not in `used`, added to it: how markdown-it-anchor
/// (VitePress) and Markdig (docfx) make a repeated heading id unique.
pub fn first_free_id(base: &str, used: &mut HashSet<String>) -> String {
    let mut candidate = base.to_owned();
    let mut n = 1;
    while used.contains(&candidate) {
        candidate = format!("{base}-{n}");
        n += 1;
    }
    used.insert(candidate.clone());
    candidate
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn site_ids_are_unique_as_each_generator_numbers_them() {
        let headings = [
            ("Usage", None),
            ("Usage", None),
            ("Custom", Some("usage-2")),
            ("Usage", None),
        ];
        assert_eq!(
            heading_ids(SiteGenerator::Vitepress, headings.iter().copied()),
            Some(
                vec!["usage", "usage-1", "usage-2", "usage-3"]
                    .into_iter()
                    .map(String::from)
                    .collect()
            )
        );
        assert_eq!(
            heading_ids(SiteGenerator::None, headings.iter().copied()),
            None
        );
    }

    #[test]
    fn python_markdown_toc_ids_are_unique() {
        let headings = [
            ("Usage", None),
            ("Usage", None),
            ("Usage", None),
            ("日本語", None),
            ("中文", None),
            ("Custom", Some("usage_3")),
            ("Usage", None),
        ];
        assert_eq!(
            heading_ids(SiteGenerator::Mkdocs, headings.iter().copied()).unwrap(),
            vec![
                "usage", "usage_1", "usage_2", "_1", "_2", "usage_3", "usage_4"
            ]
        );
    }
}
