//! The `folio` command line: index, search, eval, check, outline, status, bench, lsp, bench-lsp and mcp.
//!
//! Exit codes: 0 success; 1 `folio check` found errors; 2 a fatal error (bad root,
//! unreadable configuration, database failure, bad arguments); 3 the run completed but
//! some files were skipped (each is listed on stderr with its reason).

mod bench;
mod bench_lsp;
mod eval_cmd;

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand, ValueEnum};
use folio_core::config::DEFAULT_MAX_FILE_SIZE;
use folio_core::config::user::UserConfig;
use folio_core::document::Encoding;
use folio_core::embed::Embedder;
use folio_core::embed::pass::{EmbedProgress, EmbedSummary, embed_db, probe};
use folio_core::embed::settings::{EmbedSettings, ProviderKind, SettingSource, make_embedder};
use folio_core::host::ErrorCode;
use folio_core::host::search::{SearchRequest, SearchResponse, search_error};
use folio_core::index::{IndexSummary, default_db_path, index_root};
use folio_core::links::{Severity, diagnostics};
use folio_core::parse::parse;
use folio_core::search::pipeline::SearchMode;
use folio_core::store::Store;
use folio_core::workspace::{Config, Workspace, find_root, read_markdown};

#[derive(Parser)]
#[command(
    name = "folio",
    version,
    about = "A live knowledge base over a folder of Markdown."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Args, Clone)]
struct RootArgs {
    /// Workspace root (default: the nearest folder above the current one with `folio.toml` or `.git`, else the current folder).
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// Index database file (default: `<root>/.folio/index.db`, or a cache folder when the root is read-only).
    #[arg(long, value_name = "FILE")]
    db: Option<PathBuf>,
}

#[derive(clap::Args, Clone, Copy)]
struct EmbedArgs {
    /// Allow an embedding endpoint that is not on this machine (also allowed by `[embed] allow_remote = true`
    /// in your ~/.config/folio/config.toml; a workspace's folio.toml cannot allow it).
    #[arg(long)]
    allow_remote_embeddings: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Index the Markdown files under the root (incremental by content hash).
    Index {
        #[command(flatten)]
        root: RootArgs,
        /// Re-parse and rewrite every document, and embed every chunk again. With an embedding provider,
        /// the provider is probed first: if it does not answer, nothing is changed.
        #[arg(long)]
        force: bool,
        /// Skip the embedding pass (lexical index only).
        #[arg(long)]
        no_embed: bool,
        #[command(flatten)]
        embed: EmbedArgs,
        /// Print the summary as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Search the index (hybrid by default: BM25 and embeddings fused by Reciprocal Rank
    /// Fusion); indexes changed files first.
    Search {
        /// Query: words, "quoted phrases", -excluded words.
        query: String,
        #[command(flatten)]
        root: RootArgs,
        /// Maximum number of hits (1–100, as in kb_search and folio/search).
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..=100))]
        limit: u16,
        /// Path glob to include; prefix with `!` to exclude. Repeatable.
        #[arg(long = "path", value_name = "GLOB")]
        path_globs: Vec<String>,
        /// Only documents of this category (first folder, or frontmatter `category`).
        #[arg(long)]
        category: Option<String>,
        /// Only documents of this topic (first two folders, or frontmatter `topic`).
        #[arg(long)]
        topic: Option<String>,
        /// Only documents whose quality score is at least this (0–1; stubs score low).
        #[arg(long, value_name = "SCORE")]
        min_quality: Option<f64>,
        /// Search mode (default hybrid: BM25 and embeddings fused by Reciprocal Rank Fusion; lexical until the
        /// index has vectors — `folio index` computes them).
        #[arg(long, value_enum)]
        mode: Option<eval_cmd::ModeArg>,
        /// Diversify the hits with Maximal Marginal Relevance.
        #[arg(long)]
        mmr: bool,
        /// MMR balance in [0, 1]: 1 is pure relevance (default 0.7).
        #[arg(long, value_name = "LAMBDA")]
        mmr_lambda: Option<f64>,
        /// MMR penalty in [0, 1] for a second hit from an already picked document (default 0).
        #[arg(long, value_name = "PENALTY")]
        mmr_same_doc_penalty: Option<f64>,
        /// Collapse two or more hits of one section into the section.
        #[arg(long)]
        parent_retriever: bool,
        /// Low confidence when the best score is under this many times the mean (default 1.5; 0 disables).
        #[arg(long, value_name = "RATIO")]
        min_confidence_ratio: Option<f64>,
        /// Re-score with a cross-encoder (none is available in this build: fails with "not configured").
        #[arg(long)]
        rerank: bool,
        #[command(flatten)]
        embed: EmbedArgs,
        /// Skip the incremental reindex (and embedding) before searching.
        #[arg(long)]
        no_reindex: bool,
        /// Print results as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Measure retrieval quality on a golden file (recall@k, MRR, nDCG; single- and
    /// multi-answer queries apart) and compare with the previous run.
    Eval(eval_cmd::EvalArgs),
    /// Print the elements of one Markdown file with their pointers.
    Outline {
        /// The Markdown file.
        file: PathBuf,
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Check every link of the workspace and print diagnostics.
    Check {
        #[command(flatten)]
        root: RootArgs,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Show what the index holds.
    Status {
        #[command(flatten)]
        root: RootArgs,
        #[command(flatten)]
        embed: EmbedArgs,
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Serve the knowledge base to AI agents over MCP (stdio): search, read, structural edits, links, prompts, resources.
    Mcp {
        #[command(flatten)]
        root: RootArgs,
        /// Enable the writing tools (kb_patch, kb_edit_table, kb_create, kb_move, kb_delete). Also on when
        /// `[mcp] allow_writes = true` is in the user's ~/.config/folio/config.toml; a workspace's folio.toml cannot turn it on.
        #[arg(long)]
        allow_writes: bool,
        #[command(flatten)]
        embed: EmbedArgs,
    },
    /// Measure cold index, no-op reindex and search latency on one or more roots.
    Bench {
        /// Roots to measure (each is indexed into a temporary database).
        #[arg(required = true)]
        roots: Vec<PathBuf>,
        /// Number of timed runs of each search query (1–10000).
        #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u16).range(1..=10000))]
        repeat: u16,
        /// Also embed every chunk with the configured embedder (the built-in model by default) and measure
        /// embedding throughput, the cold semantic index, hybrid search latency (query embedding included)
        /// and peak memory.
        #[arg(long)]
        semantic: bool,
        /// Print the figures as JSON.
        #[arg(long)]
        json: bool,
        /// Index into this file and keep it (one root only), instead of a temporary
        /// database. A later run reuses it: its index and embedding figures are then
        /// incremental, and marked "reused index"; the search figures are as usual.
        #[arg(long, value_name = "FILE")]
        db: Option<PathBuf>,
    },
    /// Measure the language server: initialize → first workspace/symbol, RSS, and didChange → publishDiagnostics.
    BenchLsp {
        /// Root for the startup figures (workspace/symbol and RSS).
        #[arg(long, value_name = "DIR")]
        symbols_root: PathBuf,
        /// The workspace/symbol query.
        #[arg(long, default_value = "tar")]
        query: String,
        /// Root for the keystroke figures.
        #[arg(long, value_name = "DIR")]
        edit_root: PathBuf,
        /// The document edited (absolute, or relative to --edit-root).
        #[arg(long, value_name = "FILE")]
        edit_file: PathBuf,
        /// Number of timed edits.
        #[arg(long, default_value_t = 40)]
        edits: usize,
        /// Number of startup runs.
        #[arg(long, default_value_t = 3)]
        repeat: usize,
    },
    /// Run the language server over stdin/stdout (for VS Code, Neovim and other LSP clients).
    Lsp {
        /// Accepted for clients that pass it; stdio is the only transport.
        #[arg(long)]
        stdio: bool,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// `path:line:col: code: message` (1-based line; 1-based column in characters).
    Text,
    /// One JSON array of diagnostics.
    Json,
    /// GitHub Actions workflow commands (`::error file=…,line=…,col=…,title=…::…`).
    Github,
}

fn main() -> ExitCode {
    use tracing_subscriber::prelude::*;
    // rmcp logs whole requests and responses (document text) at debug level: never below info.
    let no_wire = tracing_subscriber::filter::filter_fn(|meta| {
        !(meta.target().starts_with("rmcp") && *meta.level() > tracing::Level::INFO)
    });
    tracing_subscriber::registry()
        .with(tracing_subscriber::EnvFilter::from_env("FOLIO_LOG"))
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_ansi(std::io::stderr().is_terminal())
                .with_filter(no_wire),
        )
        .init();
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        // A closed pipe (`folio search … | head`) is the reader's choice, not an error.
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("folio: error: {}", error_chain(&err));
            ExitCode::from(2)
        }
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The error and its causes joined with `: `, leaving out a cause whose text the message
/// already contains (library errors often repeat their source).
fn error_chain(err: &anyhow::Error) -> String {
    let mut message = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if message.contains(&text) {
            continue;
        }
        if !message.is_empty() {
            message.push_str(": ");
        }
        message.push_str(&text);
    }
    message
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Index {
            root,
            force,
            no_embed,
            embed,
            json,
        } => cmd_index(&root, force, no_embed, embed, json),
        Command::Search {
            query,
            root,
            limit,
            path_globs,
            category,
            topic,
            min_quality,
            mode,
            mmr,
            mmr_lambda,
            mmr_same_doc_penalty,
            parent_retriever,
            min_confidence_ratio,
            rerank,
            embed,
            no_reindex,
            json,
        } => {
            let request = SearchRequest {
                query,
                limit: Some(usize::from(limit)),
                path_globs,
                category,
                topic,
                min_quality,
                mode: mode.map(|m| SearchMode::from(m).as_str().to_string()),
                mmr: Some(mmr),
                mmr_lambda,
                mmr_same_doc_penalty,
                parent_retriever: Some(parent_retriever),
                min_confidence_ratio,
                rerank: Some(rerank),
                ..SearchRequest::default()
            };
            cmd_search(&root, &request, embed, no_reindex, json)
        }
        Command::Eval(args) => eval_cmd::run(&args),
        Command::Outline { file, json } => cmd_outline(&file, json),
        Command::Check { root, format } => cmd_check(&root, format),
        Command::Status { root, embed, json } => cmd_status(&root, embed, json),
        Command::Bench {
            roots,
            repeat,
            semantic,
            json,
            db,
        } => bench::run(&roots, usize::from(repeat), semantic, json, db.as_deref()),
        Command::BenchLsp {
            symbols_root,
            query,
            edit_root,
            edit_file,
            edits,
            repeat,
        } => bench_lsp::run(&symbols_root, &query, &edit_root, &edit_file, edits, repeat),
        Command::Lsp { stdio: _ } => {
            folio_lsp::run_stdio()?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Mcp {
            root,
            allow_writes,
            embed,
        } => cmd_mcp(&root, allow_writes, embed),
    }
}

fn cmd_mcp(args: &RootArgs, allow_writes: bool, embed: EmbedArgs) -> Result<ExitCode> {
    let r = resolve_root(args)?;
    let user = folio_core::config::user::UserConfig::load().map_err(anyhow::Error::msg)?;
    // Settings that cannot be resolved (a refused remote endpoint, say) leave embeddings
    // off with the reason in kb_status; the server still starts.
    let embed = EmbedSettings::resolve(&r.config.embed, &user.embed, embed.allow_remote_embeddings);
    if let Err(reason) = &embed {
        tracing::warn!(%reason, "embeddings are off");
    }
    let options = folio_mcp::Options {
        root: r.root,
        db: Some(r.db),
        allow_writes: allow_writes || user.mcp.allow_writes,
        embed,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(folio_mcp::serve_stdio(options))?;
    Ok(ExitCode::SUCCESS)
}

struct Resolved {
    root: PathBuf,
    config: Config,
    db: PathBuf,
}

fn resolve_root(args: &RootArgs) -> Result<Resolved> {
    let root = match &args.root {
        Some(dir) => {
            if !dir.is_dir() {
                bail!("root `{}` does not exist or is not a folder", dir.display());
            }
            dir.canonicalize()
                .with_context(|| format!("cannot resolve `{}`", dir.display()))?
        }
        None => find_root(&std::env::current_dir().context("cannot read the current folder")?),
    };
    let config = Config::load(&root)?;
    let db = args.db.clone().unwrap_or_else(|| default_db_path(&root));
    Ok(Resolved { root, config, db })
}

fn run_index(r: &Resolved, force: bool, show_progress: bool) -> Result<IndexSummary> {
    let bar = (show_progress && std::io::stderr().is_terminal()).then(|| {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} indexing {pos}/{len} files [{bar:30}] {elapsed}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        bar
    });
    let progress = |done: usize, total: usize| {
        if let Some(bar) = &bar {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        }
    };
    let summary = index_root(&r.root, &r.config, &r.db, force, Some(&progress))
        .with_context(|| format!("indexing `{}`", r.root.display()))?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    Ok(summary)
}

fn report_skipped(summary: &IndexSummary) {
    for s in &summary.skipped {
        eprintln!("folio: skipped {}: {}", s.path, s.reason);
    }
    if summary.files == 0 {
        eprintln!(
            "folio: warning: no Markdown files (.md, .markdown) found; check .gitignore, .ignore, .folioignore and [index].exclude"
        );
    }
}

/// What `folio index` does about embeddings.
enum EmbedPlan {
    /// `--no-embed`.
    Skipped,
    /// Provider `none`, or the provider cannot be built (the reason); `chosen` when a
    /// config file named the provider (then a failure to build it is worth a note).
    Off {
        provider: ProviderKind,
        reason: String,
        chosen: bool,
    },
    /// An embedder to run the pass with.
    Ready(Arc<dyn Embedder>),
}

/// The embedding settings of `r`: its folio.toml, the user's config and the flag.
fn embed_settings(r: &Resolved, embed: EmbedArgs) -> Result<EmbedSettings> {
    let user = UserConfig::load().map_err(anyhow::Error::msg)?;
    EmbedSettings::resolve(&r.config.embed, &user.embed, embed.allow_remote_embeddings)
        .map_err(anyhow::Error::msg)
}

fn plan_embedding(r: &Resolved, embed: EmbedArgs) -> Result<EmbedPlan> {
    let settings = embed_settings(r, embed)?;
    let chosen = settings.provider_source != SettingSource::Default;
    Ok(match make_embedder(&settings) {
        Ok(Some(embedder)) => EmbedPlan::Ready(embedder),
        Ok(None) => EmbedPlan::Off {
            provider: settings.provider,
            reason: format!(
                "provider `none`, set by {}",
                settings.provider_source.describe()
            ),
            chosen,
        },
        Err(reason) => EmbedPlan::Off {
            provider: settings.provider,
            reason,
            chosen,
        },
    })
}

fn run_embed(r: &Resolved, embedder: &dyn Embedder) -> Result<EmbedSummary> {
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} embedding {pos}/{len} chunks [{bar:30}] {elapsed}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        bar
    });
    let listener_bar = bar.clone();
    let progress = EmbedProgress::with_listener(move |done, total| {
        if let Some(bar) = &listener_bar {
            bar.set_length(total);
            bar.set_position(done);
        }
    });
    let summary = embed_db(&r.db, embedder, &progress, &AtomicBool::new(false))
        .with_context(|| format!("embedding the chunks of `{}`", r.root.display()))?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    Ok(summary)
}

fn cmd_index(
    args: &RootArgs,
    force: bool,
    no_embed: bool,
    embed: EmbedArgs,
    json: bool,
) -> Result<ExitCode> {
    let r = resolve_root(args)?;
    let plan = if no_embed {
        EmbedPlan::Skipped
    } else {
        plan_embedding(&r, embed)?
    };
    if force && let EmbedPlan::Ready(embedder) = &plan {
        // A rebuild must not throw away vectors it cannot compute again.
        probe(embedder.as_ref()).map_err(|err| {
            anyhow::anyhow!(
                "the embedding provider did not answer the probe before `--force` ({err}); nothing was changed \
                 (fix the provider, or use --no-embed to rebuild the lexical index only)"
            )
        })?;
    }
    let summary = run_index(&r, force, true)?;
    report_skipped(&summary);
    let embed_summary = match &plan {
        EmbedPlan::Ready(embedder) => {
            if force {
                Store::open(&r.db)
                    .with_context(|| format!("opening the index `{}`", r.db.display()))?
                    .clear_vectors()?;
            }
            Some(run_embed(&r, embedder.as_ref())?)
        }
        _ => None,
    };
    if let Some(es) = &embed_summary {
        for s in &es.skipped_files {
            eprintln!("folio: skipped {} (embedding): {}", s.path, s.reason);
        }
        if let Some(reason) = &es.unavailable {
            eprintln!(
                "folio: warning: embeddings incomplete, the provider is unavailable: {reason}"
            );
        }
    }
    if let EmbedPlan::Off {
        provider,
        reason,
        chosen: true,
    } = &plan
        && *provider != ProviderKind::None
    {
        eprintln!("folio: note: semantic search is off ({reason}); search is lexical");
    }
    let mut out = std::io::stdout().lock();
    if json {
        let mut value = serde_json::to_value(&summary)?;
        let embed_json = match (&plan, &embed_summary) {
            (EmbedPlan::Skipped, _) => serde_json::json!({"state": "skipped"}),
            (
                EmbedPlan::Off {
                    provider, reason, ..
                },
                _,
            ) => {
                serde_json::json!({"state": "off", "provider": provider, "reason": reason})
            }
            (EmbedPlan::Ready(_), Some(es)) => {
                let mut v = serde_json::to_value(es)?;
                v["state"] = serde_json::json!(if es.unavailable.is_some() {
                    "unavailable"
                } else {
                    "done"
                });
                v
            }
            (EmbedPlan::Ready(_), None) => serde_json::Value::Null,
        };
        value["embed"] = embed_json;
        writeln!(out, "{}", serde_json::to_string_pretty(&value)?)?;
    } else {
        writeln!(
            out,
            "indexed {} files ({} changed, {} unchanged, {} skipped, {} removed, {} chunks) in {} ms\nindex: {}",
            summary.files,
            summary.indexed,
            summary.unchanged,
            summary.skipped.len(),
            summary.removed,
            summary.chunks,
            summary.elapsed_ms,
            summary.db_path.display()
        )?;
        if summary.rebuilt {
            writeln!(
                out,
                "note: the index had an incompatible schema and was rebuilt"
            )?;
        }
        if let Some(es) = &embed_summary {
            writeln!(
                out,
                "embedded {} chunks ({} reused, {} files skipped) with {} in {} ms",
                es.embedded,
                es.reused,
                es.skipped_files.len(),
                es.model_id,
                es.elapsed_ms
            )?;
        }
    }
    let any_skipped = !summary.skipped.is_empty()
        || embed_summary
            .as_ref()
            .is_some_and(|es| !es.skipped_files.is_empty());
    Ok(if any_skipped {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    })
}

/// The embedder for a search or an eval in `mode`, with the index's vectors brought
/// up to date first (only chunks that lack one are embedded).
///
/// `None` for `lexical`, and for `hybrid` when no embedder can be built or the index has
/// no vectors of its model yet (a first embedding of a whole folder is `folio index`'s job,
/// unless `embed_all`). Errors: `semantic` without an embedder.
fn search_embedder(
    r: &Resolved,
    embed: EmbedArgs,
    mode: SearchMode,
    refresh: bool,
    embed_all: bool,
) -> Result<Option<Arc<dyn Embedder>>> {
    if mode == SearchMode::Lexical {
        return Ok(None);
    }
    let embedder = match plan_embedding(r, embed)? {
        EmbedPlan::Ready(embedder) => embedder,
        EmbedPlan::Off { reason, .. } => {
            if mode == SearchMode::Semantic {
                bail!(
                    "not configured: semantic search needs embeddings ({reason}); use --mode lexical"
                );
            }
            return Ok(None);
        }
        EmbedPlan::Skipped => return Ok(None),
    };
    let store =
        Store::open(&r.db).with_context(|| format!("opening the index `{}`", r.db.display()))?;
    let has_vectors = store
        .vector_status()?
        .model
        .is_some_and(|m| m.model_id == embedder.model_id());
    drop(store);
    if refresh && (has_vectors || embed_all || mode == SearchMode::Semantic) {
        let summary = run_embed(r, embedder.as_ref())?;
        if let Some(reason) = &summary.unavailable {
            eprintln!("folio: warning: embedding provider unavailable: {reason}");
        }
    } else if !has_vectors && mode == SearchMode::Hybrid {
        eprintln!(
            "folio: note: the index has no vectors yet, so this search is lexical; `folio index` computes them"
        );
        return Ok(None);
    }
    Ok(Some(embedder))
}

fn cmd_search(
    args: &RootArgs,
    request: &SearchRequest,
    embed: EmbedArgs,
    no_reindex: bool,
    json: bool,
) -> Result<ExitCode> {
    let (search, options) = request.plan().map_err(|e| anyhow::anyhow!(e.message))?;
    let r = resolve_root(args)?;
    if !no_reindex || !r.db.exists() {
        let summary = run_index(&r, false, true)?;
        report_skipped(&summary);
    }
    let embedder = search_embedder(&r, embed, options.mode, !no_reindex, false)?;
    let store =
        Store::open(&r.db).with_context(|| format!("opening the index `{}`", r.db.display()))?;
    let results =
        folio_core::search::semantic::search(&store, embedder.as_deref(), &search, &options)
            .map_err(|e| {
                let e = search_error(e);
                match e.code {
                    ErrorCode::NotConfigured => anyhow::anyhow!("not configured: {}", e.message),
                    _ => anyhow::anyhow!(e.message),
                }
            })?;
    let results = SearchResponse::from_pipeline(&r.root, results, false, false);
    let mut out = std::io::stdout().lock();
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&results)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    if results.results.is_empty() {
        let shown: String = search.text.chars().take(80).collect();
        let ellipsis = if shown.len() < search.text.len() {
            "…"
        } else {
            ""
        };
        writeln!(out, "no results for `{shown}{ellipsis}`")?;
    }
    for hit in &results.results {
        let heading = if hit.heading_path.is_empty() {
            String::new()
        } else {
            format!(" — {}", hit.heading_path.join(" > "))
        };
        writeln!(
            out,
            "{}:{}-{}{}  (score {:.4})",
            hit.path, hit.start_line, hit.end_line, heading, hit.score
        )?;
        writeln!(out, "    {}", hit.snippet)?;
        writeln!(out, "    {}", hit.pointer)?;
        if let Some(expanded_from) = &hit.expanded_from {
            writeln!(out, "    (section: {} hits collapsed)", expanded_from.len())?;
        }
    }
    if results.mode != options.mode.as_str() {
        if folio_core::search::semantic::query_embedding_text(&search.text)
            .trim()
            .is_empty()
        {
            // Nothing to embed (no letters or digits, or only -excluded terms): vectors are not the reason.
            writeln!(
                out,
                "note: searched in {} mode (the query has no words to embed)",
                results.mode
            )?;
        } else {
            writeln!(
                out,
                "note: searched in {} mode ({} needs vectors; see `folio status`)",
                results.mode, options.mode
            )?;
        }
    }
    if results.low_confidence && !results.results.is_empty() {
        writeln!(
            out,
            "note: low confidence — the best hit does not stand out from the rest"
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

fn cmd_outline(file: &Path, json: bool) -> Result<ExitCode> {
    // The same checks as indexing: a regular file, under the size cap, UTF-8 text, no NUL bytes.
    let text = read_markdown(file, DEFAULT_MAX_FILE_SIZE)
        .map_err(|reason| anyhow::anyhow!("cannot outline `{}`: {reason}", file.display()))?;
    let parsed = parse(&text);
    let mut out = std::io::stdout().lock();
    if json {
        let elements: Vec<serde_json::Value> = parsed
            .elements
            .iter()
            .map(|e| {
                serde_json::json!({
                    "pointer": e.pointer().to_string(),
                    "logical": e.logical,
                    "kind": e.kind.as_str(),
                    "level": e.level,
                    "start_line": e.start_line,
                    "end_line": e.end_line,
                    "preview": preview(&text[e.range.clone()]),
                })
            })
            .collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&elements)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    for e in &parsed.elements {
        let depth = e.logical.matches('.').count();
        writeln!(
            out,
            "{:>5}-{:<5} {}{:<16} {}  {}",
            e.start_line,
            e.end_line,
            "  ".repeat(depth),
            e.kind.as_str(),
            e.pointer(),
            preview(&text[e.range.clone()])
        )?;
    }
    for p in &parsed.problems {
        eprintln!(
            "folio: {}:{}: {}",
            file.display(),
            parsed.line_of(p.range.start),
            p.message
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// First line of an element, at most 60 characters.
fn preview(text: &str) -> String {
    let line = text.lines().next().unwrap_or("").trim();
    if line.chars().count() > 60 {
        format!("{}…", line.chars().take(59).collect::<String>())
    } else {
        line.to_string()
    }
}

fn cmd_check(args: &RootArgs, format: Format) -> Result<ExitCode> {
    let r = resolve_root(args)?;
    let (ws, report) = Workspace::load(&r.root, r.config.clone())?;
    for s in &report.skipped {
        eprintln!("folio: skipped {}: {}", s.path, s.reason);
    }
    if ws.is_empty() {
        eprintln!(
            "folio: warning: no Markdown files (.md, .markdown) found; check .gitignore, .ignore, .folioignore and [index].exclude"
        );
    }
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let (mut n_errors, mut n_warnings, mut n_files) = (0usize, 0usize, 0usize);
    let mut json_items = Vec::new();
    for path in ws.document_paths() {
        let diags = diagnostics(&ws, path);
        if diags.is_empty() {
            continue;
        }
        n_files += 1;
        let doc = &ws.get(path).expect("listed document exists").doc;
        for d in diags {
            let lc = doc.offset_to_line_col(d.range.start, Encoding::Utf32);
            // Editors do not show a byte order mark, so it is not a column.
            let bom = u32::from(lc.line == 0 && doc.slice(0..3).as_deref() == Some("\u{feff}"));
            let (line, col) = (lc.line + 1, lc.col + 1 - bom);
            let severity = match d.severity {
                Severity::Error => {
                    n_errors += 1;
                    "error"
                }
                Severity::Warning => {
                    n_warnings += 1;
                    "warning"
                }
            };
            match format {
                Format::Text => writeln!(out, "{path}:{line}:{col}: {}: {}", d.code, d.message)?,
                Format::Github => writeln!(
                    out,
                    "::{severity} file={path},line={line},col={col},title={}::{}",
                    d.code,
                    d.message
                        .replace('%', "%25")
                        .replace('\r', "%0D")
                        .replace('\n', "%0A")
                )?,
                Format::Json => json_items.push(serde_json::json!({
                    "path": path, "line": line, "column": col, "code": d.code.as_str(),
                    "severity": severity, "message": d.message,
                })),
            }
        }
    }
    if let Format::Json = format {
        writeln!(out, "{}", serde_json::to_string_pretty(&json_items)?)?;
    }
    out.flush()?;
    eprintln!(
        "folio: checked {} documents: {n_errors} errors, {n_warnings} warnings in {n_files} files{}",
        ws.len(),
        if report.skipped.is_empty() {
            String::new()
        } else {
            format!(", {} files skipped", report.skipped.len())
        }
    );
    Ok(if n_errors > 0 {
        ExitCode::from(1)
    } else if !report.skipped.is_empty() {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    })
}

fn cmd_status(args: &RootArgs, embed: EmbedArgs, json: bool) -> Result<ExitCode> {
    let r = resolve_root(args)?;
    // Never loads a model or calls an endpoint: it reports the settings, whether the built-in
    // model's file is in place, and what the index holds.
    let settings = embed_settings(&r, embed);
    // For the built-in model: are its files installed and intact (read and hashed, not loaded)?
    let model_error = settings
        .as_ref()
        .ok()
        .and_then(|s| folio_core::embed::settings::check_builtin(s).err());
    let settings_json = match &settings {
        Ok(s) => serde_json::json!({
            "provider": s.provider, "model": s.model, "endpoint": s.endpoint, "settings_error": null,
            "model_error": model_error,
        }),
        Err(err) => serde_json::json!({"settings_error": error_chain(err)}),
    };
    let mut out = std::io::stdout().lock();
    if !r.db.exists() {
        if json {
            writeln!(
                out,
                "{}",
                serde_json::json!({"root": r.root, "db_path": r.db, "indexed": false, "embed": settings_json})
            )?;
        } else {
            writeln!(
                out,
                "root: {}\nindex: none yet (run `folio index`)",
                r.root.display()
            )?;
            write_embed_settings(&mut out, &settings)?;
            if let Some(err) = &model_error {
                writeln!(out, "built-in model: not usable: {err}")?;
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    let store =
        Store::open(&r.db).with_context(|| format!("opening the index `{}`", r.db.display()))?;
    let st = store.status()?;
    let vs = store.vector_status()?;
    if json {
        let mut embed_json = settings_json;
        embed_json["model_id"] = serde_json::json!(vs.model.as_ref().map(|m| &m.model_id));
        embed_json["dims"] = serde_json::json!(vs.model.as_ref().map(|m| m.dims));
        embed_json["embedded_chunks"] = serde_json::json!(vs.embedded_chunks);
        embed_json["total_chunks"] = serde_json::json!(vs.total_chunks);
        embed_json["vectors"] = serde_json::json!(vs.vectors);
        embed_json["last_unavailable"] = serde_json::json!(vs.last_unavailable);
        writeln!(
            out,
            "{}",
            serde_json::json!({
                "root": r.root, "db_path": r.db, "indexed": true, "documents": st.n_documents,
                "chunks": st.n_chunks, "db_size_bytes": st.db_size_bytes, "schema_version": st.schema_version,
                "embed": embed_json,
            })
        )?;
    } else {
        writeln!(
            out,
            "root: {}\nindex: {}\ndocuments: {}\nchunks: {}\nsize: {} bytes\nschema version: {}",
            r.root.display(),
            r.db.display(),
            st.n_documents,
            st.n_chunks,
            st.db_size_bytes,
            st.schema_version
        )?;
        write_embed_settings(&mut out, &settings)?;
        if let Some(err) = &model_error {
            writeln!(out, "built-in model: not usable: {err} (search is lexical)")?;
        }
        match &vs.model {
            Some(m) => writeln!(
                out,
                "embedded: {} of {} chunks ({} vectors, model {}, {} dimensions)",
                vs.embedded_chunks, vs.total_chunks, vs.vectors, m.model_id, m.dims
            )?,
            None => writeln!(out, "embedded: none yet")?,
        }
        if let Some(reason) = &vs.last_unavailable {
            writeln!(out, "last embedding pass stopped early: {reason}")?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn write_embed_settings(out: &mut impl Write, settings: &Result<EmbedSettings>) -> Result<()> {
    match settings {
        Ok(s) => {
            let mut line = format!("embedding provider: {}", s.provider.as_str());
            if let Some(model) = &s.model {
                line.push_str(&format!(", model {model}"));
            }
            if let Some(endpoint) = &s.endpoint {
                line.push_str(&format!(" at {endpoint}"));
            }
            writeln!(out, "{line}")?;
        }
        Err(err) => writeln!(out, "embedding settings: error: {}", error_chain(err))?,
    }
    Ok(())
}
