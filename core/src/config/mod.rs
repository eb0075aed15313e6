//! Configuration as plain data: `folio.toml`, the optional per-workspace file (here),
//! and the user's own `config.toml` ([`user`]), with the values they name.
//!
//! A leaf layer: it names only [`crate::codes`] and the registry of [`crate::formats`]. What the values mean at run time lives
//! with the modules that use them (`embed::settings` resolves the embedding provider).
//!
//! Every field has a default, so an empty or missing file is a valid configuration.
//! Unknown keys are rejected so a typo is reported instead of silently ignored.

use std::path::Path;

use crate::serde_wording::{Format, plain};
use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::Deserialize;

use crate::codes::DiagnosticCode;

pub mod tokens;
pub mod user;

/// Default size cap for indexed files: 16 MiB.
pub const DEFAULT_MAX_FILE_SIZE: u64 = 16 * 1024 * 1024;

/// The name of the configuration file at the workspace root.
pub const CONFIG_FILE: &str = "folio.toml";

/// Tables of the user's own configuration ([`user::UserConfig`]) that a workspace's
/// `folio.toml` must not hold: a checked-out repository cannot turn on writes, choose
/// the agent identity, configure the HTTP server or choose the KnowledgePulse registry
/// that receives the user's contributions (docs/configuration.md, "Your own configuration").
pub const USER_ONLY_TABLES: &[&str] = &["mcp", "knowledge"];

/// An embedding provider.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// The built-in offline model (default); lexical only when its files are missing.
    #[default]
    Builtin,
    /// No embeddings: lexical search only.
    None,
    /// An Ollama-compatible endpoint: `POST {endpoint}/api/embed`.
    Ollama,
    /// An OpenAI-compatible endpoint: `POST {endpoint}/v1/embeddings`.
    Openai,
}

impl ProviderKind {
    /// The name used in configuration files.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Builtin => "builtin",
            ProviderKind::None => "none",
            ProviderKind::Ollama => "ollama",
            ProviderKind::Openai => "openai",
        }
    }
}

/// A reranking provider (`[rerank] provider`): a cross-encoder behind an HTTP endpoint
/// that rescored search candidates (`crate::rerank`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RerankProvider {
    /// No reranker (default): a search asking for `rerank` answers `NOT_CONFIGURED`.
    #[default]
    None,
    /// The Cohere rerank API, also spoken by Jina, vLLM, llama.cpp's server, LocalAI
    /// and Infinity (with `--url-prefix /v1`): `POST {endpoint}/v1/rerank`.
    Cohere,
    /// Hugging Face text-embeddings-inference: `POST {endpoint}/rerank`.
    Tei,
}

impl RerankProvider {
    /// The name used in configuration files.
    pub fn as_str(self) -> &'static str {
        match self {
            RerankProvider::None => "none",
            RerankProvider::Cohere => "cohere",
            RerankProvider::Tei => "tei",
        }
    }
}

/// Errors reading `folio.toml`.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists but could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is not valid TOML or has unknown keys or wrong types.
    #[error("invalid {path}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong, from the TOML parser.
        message: String,
    },
}

/// The whole configuration.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// `[index]`: what gets indexed.
    pub index: IndexConfig,
    /// `[diagnostics]`: what gets reported.
    pub diagnostics: DiagnosticsConfig,
    /// `[wiki]`: how wiki links resolve.
    pub wiki: WikiConfig,
    /// `[embed]`: which embedding provider and model semantic search uses.
    pub embed: EmbedConfig,
    /// `[rerank]`: which cross-encoder, if any, reranks search candidates.
    pub rerank: RerankConfig,
    /// `[best_practice]`: where `kb_best_practice` finds its documents (off when empty).
    pub best_practice: BestPracticeConfig,
    /// `[links]`: how Markdown link destinations resolve (Obsidian vaults, docs sites).
    pub links: LinksConfig,
    /// `[search]`: the ranking's numbers for this collection.
    pub search: SearchConfig,
    /// `[parsers]`: which files besides Markdown are read, and their time budget.
    pub parsers: ParsersConfig,
    /// `[notes]`: how new notes are made (from a link to a missing note; daily notes).
    pub notes: NotesConfig,
}

/// `[notes]`: the templates and names of the notes an editor creates
/// ([`crate::features::notes`]).
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct NotesConfig {
    /// KB-relative path of the template of a note created from a link to a missing note;
    /// none: the note is `# {{title}}`.
    pub template: Option<String>,
    /// KB-relative folder of the daily notes (`""`: the root). Default `journal`.
    pub daily_folder: String,
    /// The daily note's file name without `.md`, as a strftime format of the local date
    /// (chrono's specifiers; `/` makes folders). Default `%Y-%m-%d`.
    pub daily_format: String,
    /// KB-relative path of the template of a daily note; none: the note is `# {{date}}`.
    pub daily_template: Option<String>,
}

impl Default for NotesConfig {
    fn default() -> Self {
        NotesConfig {
            template: None,
            daily_folder: "journal".into(),
            daily_format: "%Y-%m-%d".into(),
            daily_template: None,
        }
    }
}

impl NotesConfig {
    /// Refuses a `daily_format` chrono cannot format, or one that formats to no name.
    fn check(&self) -> Result<(), String> {
        use chrono::format::{Item, StrftimeItems};
        let folder = self.daily_folder.trim_end_matches('/');
        if self.daily_folder.starts_with('/')
            || (!folder.is_empty() && crate::path_policy::check_syntax(folder).is_err())
        {
            return Err(format!(
                "[notes].daily_folder `{}` must be a folder of the workspace, relative to its root",
                self.daily_folder
            ));
        }
        let items: Vec<Item> = StrftimeItems::new(&self.daily_format).collect();
        if items.is_empty() || items.iter().any(|i| matches!(i, Item::Error)) {
            return Err(format!(
                "[notes].daily_format `{}` is not a strftime format folio can use (e.g. \"%Y-%m-%d\")",
                self.daily_format
            ));
        }
        // Any date gives a path of the same shape: try one.
        let sample = chrono::NaiveDate::from_ymd_opt(2024, 3, 5)
            .and_then(|d| d.and_hms_opt(9, 7, 0))
            .expect("a valid date");
        self.daily_path(sample).map(|_| ())
    }

    /// The KB-relative path of the daily note of the local date and time `now`:
    /// `daily_folder/<now formatted with daily_format>.md` (a format that ends in `.md`
    /// gets it once).
    ///
    /// Errors: the path is no note path (the format made a `..` segment, a `:`, a name
    /// that is only `.md`, …; [`crate::path_policy::check_syntax`]).
    pub fn daily_path(&self, now: chrono::NaiveDateTime) -> Result<String, String> {
        let name = now.format(&self.daily_format).to_string();
        let name = name.strip_suffix(".md").unwrap_or(&name);
        let folder = self.daily_folder.trim_end_matches('/');
        let path = if folder.is_empty() {
            format!("{name}.md")
        } else {
            format!("{folder}/{name}.md")
        };
        let file_name = path.rsplit('/').next().unwrap_or(&path);
        crate::path_policy::check_syntax(&path)
            .map_err(|e| e.to_string())
            .and_then(|()| match file_name {
                ".md" => Err("the file name is only `.md`".to_owned()),
                _ => Ok(()),
            })
            .map_err(|e| {
                format!(
                    "[notes] daily_folder `{}` and daily_format `{}` give `{path}`, which is no note path: {e}",
                    self.daily_folder, self.daily_format
                )
            })?;
        Ok(path)
    }
}

/// `[parsers]`: the documents besides Markdown that are indexed and read
/// ([`crate::formats`]). Markdown is always read.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct ParsersConfig {
    /// File extensions (without the dot, any case) whose parser is on: any of
    /// [`crate::formats::REGISTERED`]; default [`crate::formats::DEFAULT_ENABLED`] (the
    /// document formats; source code only when listed). `[]` reads Markdown alone.
    pub enabled: Vec<String>,
    /// Milliseconds one document's extraction may take before it is skipped
    /// (100–600,000, default 30,000).
    pub time_budget_ms: u64,
}

impl Default for ParsersConfig {
    fn default() -> Self {
        ParsersConfig {
            enabled: crate::formats::DEFAULT_ENABLED
                .iter()
                .map(|e| e.to_string())
                .collect(),
            time_budget_ms: crate::formats::DEFAULT_TIME_BUDGET.as_millis() as u64,
        }
    }
}

impl ParsersConfig {
    /// The format of a KB-relative path when its extension's parser is on.
    pub fn format_of(&self, path: &str) -> Option<crate::formats::Format> {
        let name = path.rsplit('/').next().unwrap_or(path);
        let (_, ext) = name.rsplit_once('.')?;
        self.enabled
            .iter()
            .any(|e| e.eq_ignore_ascii_case(ext))
            .then(|| crate::formats::Format::of_path(path))
            .flatten()
    }

    /// The budgets of one extraction under these settings and `index`'s size caps.
    pub fn limits(&self, index: &IndexConfig) -> crate::formats::Limits {
        crate::formats::Limits {
            max_text_size: index.max_file_size,
            max_binary_size: index.max_binary_file_size,
            max_decompressed_size: index.max_decompressed_size,
            time_budget: std::time::Duration::from_millis(self.time_budget_ms),
        }
    }
}

/// `[search]` settings: the numbers of the ranking pipeline a collection may need
/// other than the defaults (docs/search.md, "Parameters and defaults"). Every key is
/// optional; an unset key keeps the pipeline's default. The same names are `folio
/// search` and `folio eval` flags, which win over this table.
///
/// The values are checked where the pipeline's options are built
/// (`search::pipeline::PipelineOptions::tuned`): a weight must be finite and at least 0,
/// a factor, floor or centring weight lie in `[0, 1]`.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct SearchConfig {
    /// RRF weight of the lexical (BM25) leg in hybrid mode (default 1.0).
    pub lexical_weight: Option<f64>,
    /// RRF weight of the vector leg in hybrid mode (default 1.0).
    pub vector_weight: Option<f64>,
    /// Factor on the lexical weight when the lexical leg's best hit matches fewer than
    /// half of the query's terms (default 0; 1 turns the rule off).
    pub weak_lexical_factor: Option<f64>,
    /// Factor on the lexical weight when most of the query's letters are CJK (default
    /// 0.25; 1 turns the rule off).
    pub cjk_lexical_factor: Option<f64>,
    /// Weight of the document leg in hybrid mode (default 5; 0 turns it off).
    pub document_weight: Option<f64>,
    /// Weight of the ensemble leg in hybrid mode: a second built-in model's ranking of
    /// whole documents (default 2; 0 turns it off; docs/search.md, "Ensemble leg").
    pub ensemble_weight: Option<f64>,
    /// How far the vector and document legs move the query off the mean of the
    /// collection's chunk vectors (default 0.5; 0 turns it off).
    pub corpus_centering: Option<f64>,
    /// How much of each writing system's offset from the collection's mean the vector and
    /// document legs take off (default 0.5; 0 turns it off: a collection with a small
    /// group of pages in one language, all on one topic, may rank better without it).
    pub writing_system_centering: Option<f64>,
    /// Cosine similarity the best hit must reach when hybrid hits stand on the vector leg
    /// alone, else `low_confidence` (default 0.82, for the built-in model; another model
    /// has its own scale; 0 turns it off).
    pub semantic_only_floor: Option<f64>,
    /// Cosine similarity the best hit must reach when the first hybrid hit was found by
    /// one leg only, else `low_confidence` (default 0.86, for the built-in model; 0 turns
    /// it off).
    pub single_leg_floor: Option<f64>,
    /// Whether lexical queries are widened with the synonym dictionary (default true;
    /// docs/search.md, "Synonyms"); `false` matches the query's words only.
    pub synonyms: Option<bool>,
}

impl SearchConfig {
    /// `self` with every key `over` sets replaced by `over`'s value (command-line flags
    /// over `folio.toml`).
    pub fn overlaid(self, over: &SearchConfig) -> SearchConfig {
        SearchConfig {
            lexical_weight: over.lexical_weight.or(self.lexical_weight),
            vector_weight: over.vector_weight.or(self.vector_weight),
            weak_lexical_factor: over.weak_lexical_factor.or(self.weak_lexical_factor),
            cjk_lexical_factor: over.cjk_lexical_factor.or(self.cjk_lexical_factor),
            document_weight: over.document_weight.or(self.document_weight),
            ensemble_weight: over.ensemble_weight.or(self.ensemble_weight),
            corpus_centering: over.corpus_centering.or(self.corpus_centering),
            writing_system_centering: over
                .writing_system_centering
                .or(self.writing_system_centering),
            semantic_only_floor: over.semantic_only_floor.or(self.semantic_only_floor),
            single_leg_floor: over.single_leg_floor.or(self.single_leg_floor),
            synonyms: over.synonyms.or(self.synonyms),
        }
    }
}

/// `[best_practice]` settings: opt-in path templates for best-practice documents.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct BestPracticeConfig {
    /// KB-relative Markdown paths with a `{target}` placeholder and optionally a
    /// `{category}` one, tried in order, e.g. `docs/best-practice/{target}.md`.
    pub path_templates: Vec<String>,
}

impl BestPracticeConfig {
    /// Checks one template's shape: it has `{target}`, no other placeholder, and names a
    /// Markdown file. (The path policy checks each path filled in from it.)
    pub fn check_template(template: &str) -> Result<(), String> {
        if !template.contains("{target}") {
            return Err("it must contain `{target}`".into());
        }
        let sample = template.replace("{target}", "t").replace("{category}", "c");
        if sample.contains(['{', '}']) {
            return Err("the only placeholders are `{target}` and `{category}`".into());
        }
        let lower = sample.to_ascii_lowercase();
        if !(lower.ends_with(".md") || lower.ends_with(".markdown")) {
            return Err("it must name a Markdown file (.md or .markdown)".into());
        }
        Ok(())
    }
}

/// Folders that static-site generators publish at the site's root by convention
/// (VitePress and MkDocs `docs/`, a VitePress site in `src/`, Hugo `content/`, …), tried in
/// this order for a `/…` link when `[links] site_root` is not set.
pub const CONVENTIONAL_SITE_ROOTS: &[&str] =
    &["docs", "src", "content", "site", "website", "pages"];

/// Folders whose files static-site generators copy to the site's root unchanged: `public/`
/// (VitePress, Vite, Astro, Next.js) and `static/` (Docusaurus, Hugo, SvelteKit), at the
/// root or in one of the [`CONVENTIONAL_SITE_ROOTS`] (VitePress's `docs/public/`).
pub const CONVENTIONAL_ASSET_DIRS: &[&str] = &["public", "static"];

/// The site generator a workspace's pages are published with: its heading ids name
/// headings too, besides GitHub's slugs ([`crate::site::heading_ids`]); its rules are
/// in [`crate::site`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SiteGenerator {
    /// None: GitHub's slugs only.
    #[default]
    None,
    /// MkDocs: Python-Markdown's `toc` ids (`caret-mark-tilde`, `usage_1`, `_1`).
    Mkdocs,
    /// VitePress: its `slugify` (`build-assetsinlinelimit`, `usage-1`).
    Vitepress,
    /// Docusaurus: GitHub's slugs (it uses github-slugger); a link to a Markdown file not
    /// found from the page's folder is looked up from the docs folders and the site folder
    /// ([`crate::workspace::Workspace::site_lookup_folders`]), and `@site/…` from the site folder.
    Docusaurus,
    /// Hugo: GitHub's slugs (goldmark's default `autoHeadingIDType = "github"`); a link
    /// is a page's logical path or URL, looked up as Hugo's `GetPage` and its link render
    /// hook do ([`crate::workspace::Workspace::hugo_page`]).
    Hugo,
    /// docfx (Microsoft Learn): Markdig's heading ids ([`crate::site::docfx::markdig_ids`]);
    /// a link to a page its redirection files name is a link to the redirect's URL
    /// ([`crate::workspace::Workspace::docfx_redirect`]).
    Docfx,
}

impl SiteGenerator {
    /// True when the generator's heading ids are GitHub's slugs (none, Docusaurus, Hugo).
    pub fn uses_github_slugs(self) -> bool {
        match self {
            SiteGenerator::None | SiteGenerator::Docusaurus | SiteGenerator::Hugo => true,
            SiteGenerator::Mkdocs | SiteGenerator::Vitepress | SiteGenerator::Docfx => false,
        }
    }
}

/// What a root-absolute link (`/docs/editor/intellisense`) that names no file means.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SiteAbsolute {
    /// Every `/…` link is a file of the repository (GitHub's rule) and is checked.
    Check,
    /// A `/…` link that names no file and whose last segment has no extension of a file
    /// kind the workspace holds is a page of the published site: not reported (default).
    #[default]
    PagesExternal,
    /// Every `/…` link that names no file is a page of the published site.
    External,
}

/// `[links]` settings.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LinksConfig {
    /// Resolve Markdown links as Obsidian does (note folder, vault root, then unique file
    /// name, `.md` optional). Unset: when the root has an `.obsidian/` folder.
    pub obsidian: Option<bool>,
    /// The site generator that publishes the pages, whose heading ids links may also use
    /// ([`SiteGenerator`]). Unset: detected from the root (`mkdocs.yml`, `.vitepress/`,
    /// `docusaurus.config.js`, `hugo.toml`, `docfx.json`; [`crate::workspace::Workspace::generator`]).
    pub generator: Option<SiteGenerator>,
    /// The folder (KB-relative) the published site serves at `site_base`; `/…` links
    /// under `site_base` resolve into it. Empty: the root.
    pub site_root: String,
    /// The URL path the site root is published at, e.g. `/windows/terminal`. Default `/`.
    pub site_base: String,
    /// Destination prefixes that are pages of the published site, never files, e.g. `/dotnet/api/`.
    pub external_prefixes: Vec<String>,
    /// What an unresolved `/…` link means (default `pages-external`).
    pub site_absolute: SiteAbsolute,
    /// `[links.external]`: how `folio check --external` checks `http(s)` links.
    pub external: ExternalLinksConfig,
}

/// `[links.external]`: the settings of the external link check (`folio check
/// --external`, [`crate::external`]). Every key has a default; [`Config::from_toml`]
/// refuses a value out of its range, naming the key.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ExternalLinksConfig {
    /// Globs over URLs (without their fragment, as the `url` crate writes them: scheme
    /// and host in lowercase, `https://example.org` as `https://example.org/`) that are
    /// not checked; `*` also matches `/`.
    pub exclude: Vec<String>,
    /// Requests in flight at once, over every host: 1–64 (default 8).
    pub max_concurrency: usize,
    /// Requests per second to one host (a name and port): 0.01–100 (default 2).
    /// Requests to a host start at least `1 / per_host_per_second` seconds apart.
    pub per_host_per_second: f64,
    /// Most time one request may take, from connecting to the answer's headers, in
    /// milliseconds: 100–600,000 (default 20,000).
    pub timeout_ms: u64,
    /// How long a success stays in the cache, in seconds (default 86,400, one day;
    /// 0: no cache, nothing read or written).
    pub cache_max_age_s: u64,
    /// Further attempts after an answer that asks to come back later (HTTP 429, or 503
    /// with `Retry-After`): 0–10 (default 2).
    pub retries: u32,
}

/// The default of `[links.external].max_concurrency`.
pub const DEFAULT_EXTERNAL_CONCURRENCY: usize = 8;

impl Default for ExternalLinksConfig {
    fn default() -> Self {
        ExternalLinksConfig {
            exclude: Vec::new(),
            max_concurrency: DEFAULT_EXTERNAL_CONCURRENCY,
            per_host_per_second: 2.0,
            timeout_ms: 20_000,
            cache_max_age_s: 86_400,
            retries: 2,
        }
    }
}

impl ExternalLinksConfig {
    /// Checks every value's range and compiles `exclude`.
    ///
    /// Errors: the first key out of range, or a glob that does not parse, named with
    /// `[links.external]`.
    pub fn exclude_set(&self) -> Result<GlobSet, String> {
        if !(1..=64).contains(&self.max_concurrency) {
            return Err(format!(
                "[links.external].max_concurrency must be between 1 and 64, not {}",
                self.max_concurrency
            ));
        }
        let rate = self.per_host_per_second;
        if !(0.01..=100.0).contains(&rate) {
            return Err(format!(
                "[links.external].per_host_per_second must be between 0.01 and 100, not {rate}"
            ));
        }
        if !(100..=600_000).contains(&self.timeout_ms) {
            return Err(format!(
                "[links.external].timeout_ms must be between 100 and 600000 (milliseconds), not {}",
                self.timeout_ms
            ));
        }
        if self.retries > 10 {
            return Err(format!(
                "[links.external].retries must be between 0 and 10, not {}",
                self.retries
            ));
        }
        let mut builder = GlobSetBuilder::new();
        for glob in &self.exclude {
            builder.add(
                Glob::new(glob).map_err(|e| {
                    format!("invalid glob `{glob}` in [links.external].exclude: {e}")
                })?,
            );
        }
        builder.build().map_err(|e| e.to_string())
    }
}

/// `[embed]` settings of `folio.toml`; every key is optional and falls back to
/// the user's config, then to the defaults (see `crate::embed::settings`).
///
/// A workspace may name a loopback endpoint only: `allow_remote` is accepted
/// in the user's own configuration or as `--allow-remote-embeddings`, never
/// here, and [`Config::from_toml`] rejects it with a message saying so.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct EmbedConfig {
    /// `builtin` (default), `none`, `ollama` or `openai`.
    pub provider: Option<ProviderKind>,
    /// Model name sent to an HTTP provider (required for `ollama` and `openai`).
    pub model: Option<String>,
    /// Base URL of an HTTP provider, e.g. `http://127.0.0.1:11434`.
    pub endpoint: Option<String>,
    /// Passages per request (1–2048, default 32).
    pub batch_size: Option<usize>,
    /// Timeout of one HTTP request in milliseconds (default 30000).
    pub timeout_ms: Option<u64>,
}

/// `[rerank]` settings of `folio.toml`; every key is optional and falls back to the
/// user's config, then to the defaults (see `crate::rerank::settings`). As for
/// `[embed]`, a workspace may name an endpoint on this machine only, and
/// `allow_remote` here is an error.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct RerankConfig {
    /// `none` (default), `cohere` or `tei`.
    pub provider: Option<RerankProvider>,
    /// Model name sent with each request (required for `cohere`).
    pub model: Option<String>,
    /// Base URL of the provider, e.g. `http://127.0.0.1:8080`.
    pub endpoint: Option<String>,
    /// Passages per request (1–1000, default 32, the largest batch text-embeddings-inference
    /// accepts by default).
    pub batch_size: Option<usize>,
    /// Timeout of one request in milliseconds (default 10000).
    pub timeout_ms: Option<u64>,
}

/// `[index]` settings.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IndexConfig {
    /// Text files (Markdown, plain text, CSV, source code) larger than this many bytes are
    /// skipped, and so are documents whose extracted text is larger (default 16 MiB).
    pub max_file_size: u64,
    /// Binary documents (PDF, Office files, workbooks) larger than this many bytes are
    /// skipped (default 50 MiB).
    pub max_binary_file_size: u64,
    /// Bytes the parts of a ZIP container (DOCX, PPTX, XLSX, ODS) may inflate to; a file
    /// declaring more is skipped before anything is inflated (default 50 MiB).
    pub max_decompressed_size: u64,
    /// Extra glob patterns (relative to the root) to leave out, on top of `.gitignore` and `.folioignore`.
    pub exclude: Vec<String>,
    /// Byte budget of one search chunk (default 1500 bytes); code blocks are never split.
    pub chunk_bytes: usize,
    /// How a running server (`folio mcp`, `folio lsp`) follows changes made to the root
    /// by other programs (default `auto`; [`crate::watch`]).
    pub watch: WatchMode,
    /// Milliseconds between two scans of the root when it is polled (`watch = "poll"`,
    /// or `auto` where the system cannot watch it): 200–3,600,000, default 5,000.
    pub poll_interval_ms: u64,
    /// When true, a note whose frontmatter does not parse makes `folio index` exit 1 and
    /// gives the pass's result (`kb_status` `indexing.last.error`) an error; the notes are
    /// indexed either way (default false).
    pub fail_on_frontmatter_error: bool,
}

/// `[index].watch`: how a running server learns of files changed by other programs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WatchMode {
    /// The system's file notifications (inotify, FSEvents, ReadDirectoryChangesW); a
    /// periodic scan where they cannot work: a network file system, or the system's
    /// limit on watches reached (the default).
    #[default]
    Auto,
    /// A periodic scan of the root every `poll_interval_ms` (a walk and one `lstat` per
    /// file; no file is read unless its size or time changed).
    Poll,
    /// No watching: outside changes are seen at the next `folio index` or `kb_reindex`.
    Off,
}

impl WatchMode {
    /// `auto`, `poll` or `off`, as written in `folio.toml`.
    pub fn as_str(self) -> &'static str {
        match self {
            WatchMode::Auto => "auto",
            WatchMode::Poll => "poll",
            WatchMode::Off => "off",
        }
    }
}

impl IndexConfig {
    /// The byte budget chunks are cut to: `chunk_bytes`, at least 200.
    pub fn chunk_budget(&self) -> usize {
        self.chunk_bytes.max(200)
    }
}

/// The default of `[index].poll_interval_ms`.
pub const DEFAULT_POLL_INTERVAL_MS: u64 = 5_000;

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig {
            max_file_size: DEFAULT_MAX_FILE_SIZE,
            max_binary_file_size: crate::formats::DEFAULT_BINARY_BUDGET,
            max_decompressed_size: crate::formats::DEFAULT_BINARY_BUDGET,
            exclude: Vec::new(),
            chunk_bytes: 1500,
            watch: WatchMode::Auto,
            poll_interval_ms: DEFAULT_POLL_INTERVAL_MS,
            fail_on_frontmatter_error: false,
        }
    }
}

/// `[diagnostics]` settings.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DiagnosticsConfig {
    /// Codes never reported, e.g. `["unused-definition"]`.
    pub silence: Vec<DiagnosticCode>,
    /// Globs of link targets (KB-relative paths, `path#fragment` for headings, or wiki
    /// names) whose problems are not reported.
    pub silence_targets: Vec<String>,
    /// Compare fragments with headings case-sensitively (default: case-insensitive, as GitHub).
    pub fragment_case_sensitive: bool,
    /// Which documents `folio lsp` pushes diagnostics for, to a client that does not pull them.
    pub publish: PublishScope,
    #[serde(skip)]
    compiled_targets: Option<GlobSet>,
}

/// Which documents the language server pushes diagnostics for (`[diagnostics].publish`),
/// when the client does not pull them (a pulling client asks for what it shows).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PublishScope {
    /// The documents open in the editor (the default).
    #[default]
    Open,
    /// Every document of the workspace, open or not (for clients that list the
    /// workspace's problems from pushed diagnostics only).
    Workspace,
}

impl DiagnosticsConfig {
    /// Compiles `silence_targets`; an invalid glob is an error naming it.
    pub fn compile(&mut self) -> Result<(), String> {
        let mut builder = GlobSetBuilder::new();
        for glob in &self.silence_targets {
            builder.add(
                Glob::new(glob)
                    .map_err(|e| format!("invalid glob `{glob}` in silence_targets: {e}"))?,
            );
        }
        self.compiled_targets = Some(builder.build().map_err(|e| e.to_string())?);
        Ok(())
    }

    /// True when a problem with `code` on `target` must not be reported.
    pub fn is_silenced(&self, code: DiagnosticCode, target: Option<&str>) -> bool {
        if self.silence.contains(&code) {
            return true;
        }
        match (target, &self.compiled_targets) {
            (Some(t), Some(set)) => set.is_match(t),
            _ => false,
        }
    }
}

/// How wiki link targets are matched.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WikiStyle {
    /// `[[name]]` matches a file whose name without extension is `name` (case-insensitive),
    /// or a KB-relative path without extension.
    #[default]
    FileStem,
    /// Like `file-stem`, and also a document whose title is `name`.
    Title,
}

/// `[wiki]` settings.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WikiConfig {
    /// Matching rule for wiki link targets.
    pub style: WikiStyle,
}

impl Config {
    /// Reads `<root>/folio.toml`; a missing file gives the defaults.
    pub fn load(root: &Path) -> Result<Config, ConfigError> {
        let path = root.join(CONFIG_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(source) => {
                return Err(ConfigError::Io {
                    path: path.display().to_string(),
                    source,
                });
            }
        };
        Config::from_toml(&text).map_err(|message| ConfigError::Invalid {
            path: path.display().to_string(),
            message,
        })
    }

    /// Parses configuration text.
    ///
    /// Errors name the key. Settings only the user may make ([`USER_ONLY_TABLES`],
    /// `[embed].allow_remote` and `[rerank].allow_remote`) get an error saying where
    /// they belong.
    pub fn from_toml(text: &str) -> Result<Config, String> {
        // Keys only the user may set are refused by name before the typed parse, whose
        // "expected one of" list then names only keys a workspace may use.
        if let Ok(table) = text.parse::<toml::Table>() {
            if let Some(name) = USER_ONLY_TABLES.iter().find(|t| table.contains_key(**t)) {
                return Err(format!(
                    "[{name}] cannot be set in a workspace's folio.toml: it holds what only you may allow \
                     (writes, agent identity, HTTP tokens and hosts, the KnowledgePulse registry); put it in your own config \
                     ({})",
                    user::UserConfig::location()
                ));
            }
            if table
                .get("links")
                .and_then(|l| l.get("external"))
                .and_then(toml::Value::as_table)
                .is_some_and(|t| t.contains_key("include_local"))
            {
                return Err(
                    "[links.external].include_local cannot be set in a workspace's folio.toml: a cloned \
                     repository could make the check probe the network it runs in; pass \
                     `folio check --external --external-include-local` yourself"
                        .to_string(),
                );
            }
            for (name, also, purpose) in [
                ("embed", " or --allow-remote-embeddings", "embedding"),
                ("rerank", "", "rerank"),
            ] {
                if table
                    .get(name)
                    .and_then(toml::Value::as_table)
                    .is_some_and(|t| t.contains_key("allow_remote"))
                {
                    return Err(format!(
                        "[{name}].allow_remote cannot be set in a workspace's folio.toml: only your own config \
                         ({}){also} may allow a remote {purpose} endpoint",
                        user::UserConfig::location()
                    ));
                }
            }
        }
        let mut config: Config =
            toml::from_str(text).map_err(|e| plain(&e.to_string(), Format::Toml))?;
        config.diagnostics.compile()?;
        config.notes.check()?;
        for template in &config.best_practice.path_templates {
            BestPracticeConfig::check_template(template).map_err(|reason| {
                format!("invalid [best_practice].path_templates entry `{template}`: {reason}")
            })?;
        }
        for glob in &config.index.exclude {
            Glob::new(glob)
                .map_err(|e| format!("invalid glob `{glob}` in [index].exclude: {e}"))?;
        }
        for ext in &config.parsers.enabled {
            if crate::formats::Format::of_extension(ext).is_none() {
                let known: Vec<&str> = crate::formats::REGISTERED.iter().map(|(e, _)| *e).collect();
                return Err(format!(
                    "[parsers].enabled: no parser reads `{ext}` files; folio reads Markdown and {}",
                    known.join(", ")
                ));
            }
        }
        if !(100..=600_000).contains(&config.parsers.time_budget_ms) {
            return Err(format!(
                "[parsers].time_budget_ms must be between 100 and 600000 (milliseconds), not {}",
                config.parsers.time_budget_ms
            ));
        }
        config.links.external.exclude_set()?;
        if !(200..=3_600_000).contains(&config.index.poll_interval_ms) {
            return Err(format!(
                "[index].poll_interval_ms must be between 200 and 3600000 (milliseconds), not {}",
                config.index.poll_interval_ms
            ));
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects_unknown_keys() {
        let c = Config::from_toml(
            "[index]\nmax_file_size = 1024\n[diagnostics]\nsilence = [\"unused-definition\"]\nsilence_targets = [\"vendor/**\"]\n",
        )
        .unwrap();
        assert_eq!(c.index.max_file_size, 1024);
        assert!(
            c.diagnostics
                .is_silenced(DiagnosticCode::UnusedDefinition, None)
        );
        assert!(
            c.diagnostics
                .is_silenced(DiagnosticCode::MissingFile, Some("vendor/x.md"))
        );
        assert!(
            !c.diagnostics
                .is_silenced(DiagnosticCode::MissingFile, Some("docs/x.md"))
        );
        let c = Config::from_toml("[index]\nwatch = \"poll\"\npoll_interval_ms = 250\n").unwrap();
        assert_eq!(
            (c.index.watch, c.index.poll_interval_ms),
            (WatchMode::Poll, 250)
        );
        let err = Config::from_toml("[index]\nwatch = \"sometimes\"\n").unwrap_err();
        assert!(err.contains("unknown variant `sometimes`"), "{err}");
        let err = Config::from_toml("[index]\npoll_interval_ms = 10\n").unwrap_err();
        assert!(
            err.starts_with("[index].poll_interval_ms must be between 200"),
            "{err}"
        );
        let err = Config::from_toml("[index]\nmax_size = 1\n").unwrap_err();
        assert!(err.contains("unknown field `max_size`"), "{err}");
        let err = Config::from_toml("[index]\nexclude = [\"[\"]\n").unwrap_err();
        assert!(
            err.starts_with("invalid glob `[` in [index].exclude"),
            "{err}"
        );
        let err = Config::from_toml("[diagnostics]\nsilence = [\"nope\"]\n").unwrap_err();
        assert!(err.contains("unknown variant `nope`"), "{err}");
        // The keys offered are those a workspace may set: not `allow_remote`.
        for table in ["embed", "rerank"] {
            let err = Config::from_toml(&format!("[{table}]\nprovder = \"none\"\n")).unwrap_err();
            assert!(
                err.ends_with(
                    "unknown field `provder`, expected one of `provider`, `model`, `endpoint`, `batch_size`, `timeout_ms`\n"
                ),
                "{err}"
            );
        }
    }

    #[test]
    fn the_search_table_sets_the_keys_it_names_and_flags_lie_over_it() {
        let c = Config::from_toml(
            "[search]\ncorpus_centering = 0\ndocument_weight = 3\nsynonyms = false\n",
        )
        .unwrap();
        assert_eq!(
            c.search,
            SearchConfig {
                corpus_centering: Some(0.0),
                document_weight: Some(3.0),
                synonyms: Some(false),
                ..SearchConfig::default()
            }
        );
        let flags = SearchConfig {
            corpus_centering: Some(0.5),
            vector_weight: Some(2.0),
            ..SearchConfig::default()
        };
        assert_eq!(
            c.search.overlaid(&flags),
            SearchConfig {
                corpus_centering: Some(0.5),
                vector_weight: Some(2.0),
                document_weight: Some(3.0),
                synonyms: Some(false),
                ..SearchConfig::default()
            }
        );
        let err = Config::from_toml("[search]\ncentering = 0\n").unwrap_err();
        assert!(err.contains("unknown field `centering`"), "{err}");
        let err = Config::from_toml("[search]\ncorpus_centering = \"off\"\n").unwrap_err();
        assert!(err.contains("invalid type"), "{err}");
    }

    #[test]
    fn the_users_file_refuses_workspace_tables_and_unknown_ones() {
        assert_eq!(
            user::UserConfig::from_toml("[search]\ncorpus_centering = 0\n"),
            Err(
                "[search] is set per workspace: put it in the folio.toml at the workspace's root"
                    .into()
            )
        );
        let err = user::UserConfig::from_toml("[serach]\ncorpus_centering = 0\n").unwrap_err();
        assert!(err.contains("unknown field `serach`"), "{err}");
        assert!(user::UserConfig::from_toml("[mcp]\nallow_writes = true\n").is_ok());
    }

    #[test]
    fn a_workspace_cannot_choose_the_knowledgepulse_registry() {
        let err = Config::from_toml("[knowledge]\nregistry = \"https://evil.example/mcp\"\n")
            .unwrap_err();
        assert_eq!(
            err,
            format!(
                "[knowledge] cannot be set in a workspace's folio.toml: it holds what only you may allow \
                 (writes, agent identity, HTTP tokens and hosts, the KnowledgePulse registry); put it in \
                 your own config ({})",
                user::UserConfig::location()
            )
        );
    }

    #[test]
    fn the_users_knowledge_table_names_a_registry_and_its_token_file() {
        let dir = tempfile::tempdir().unwrap();
        let token = dir.path().join("token");
        std::fs::write(&token, "folio_abc  \nsecond line\n").unwrap();
        let user: user::UserConfig = toml::from_str(&format!(
            "[knowledge]\nregistry = \"http://127.0.0.1:8765/mcp\"\nregistry_token_file = \"{}\"\n",
            token.display()
        ))
        .unwrap();
        assert_eq!(
            user.knowledge.registry.as_deref(),
            Some("http://127.0.0.1:8765/mcp")
        );
        assert!(!user.knowledge.serve_registry);
        if std::env::var_os(user::REGISTRY_TOKEN_ENV).is_none() {
            assert_eq!(
                user.knowledge.registry_token(),
                Ok(Some("folio_abc".to_string()))
            );
        }
        // A byte order mark (Windows editors) is dropped; a character a header cannot carry
        // is refused at start-up, naming the file.
        std::fs::write(&token, "\u{feff}folio_abc\r\n").unwrap();
        if std::env::var_os(user::REGISTRY_TOKEN_ENV).is_none() {
            assert_eq!(
                user.knowledge.registry_token(),
                Ok(Some("folio_abc".to_string()))
            );
        }
        std::fs::write(&token, "folio_a\u{e9}c\n").unwrap();
        if std::env::var_os(user::REGISTRY_TOKEN_ENV).is_none() {
            assert_eq!(
                user.knowledge.registry_token(),
                Err(format!(
                    "[knowledge] registry_token_file: {} holds a token with a character other than visible ASCII (a space, a control or non-ASCII character); folio tokens are `folio_` and letters, digits, `-` and `_`",
                    token.display()
                ))
            );
        }
        std::fs::write(&token, "\n").unwrap();
        if std::env::var_os(user::REGISTRY_TOKEN_ENV).is_none() {
            assert_eq!(
                user.knowledge.registry_token(),
                Err(format!(
                    "[knowledge] registry_token_file: {} holds no token on its first line",
                    token.display()
                ))
            );
        }
        let err = toml::from_str::<user::UserConfig>("[knowledge]\nregistry_url = \"x\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown field `registry_url`"), "{err}");
    }
}
