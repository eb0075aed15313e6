//! `kb_graph`: the connection graph of a document (core `graph`): a
//! breadth-first walk over embedding similarity from its chunks.

use crate::similarity_graph::{
    DEFAULT_DEPTH, DEFAULT_FAN_OUT, DEFAULT_MAX_NODES, DEFAULT_MAX_SEED_CHUNKS,
    DEFAULT_MIN_SIMILARITY, GraphError, GraphOptions, SeedStrategy, StoreGraph, connection_graph,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ErrorCode, Host, HostError, HostResult, doc_uri};

/// `kb_graph` arguments.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[schemars(transform = crate::host::portable_schema)]
#[serde(deny_unknown_fields)]
pub struct GraphArgs {
    /// KB-relative path of the Markdown document to start from.
    pub start: String,
    /// Levels of neighbours, 0–3 (default 2; 0 returns the seeds only).
    #[serde(default)]
    pub depth: Option<u32>,
    /// Neighbours added per expanded node, 0–20 (default 5).
    #[serde(default)]
    pub fan_out: Option<u32>,
    /// Cosine similarity a neighbour needs to its parent node, -1–1 (default 0.3).
    #[serde(default)]
    pub min_similarity: Option<f32>,
    /// `all_chunks` (default: each chunk of the start document is a seed) or `centroid` (one seed: the mean of their vectors, leaving the node budget to neighbours).
    #[serde(default)]
    pub seed_strategy: Option<String>,
    /// At most one node per document (default false).
    #[serde(default)]
    pub dedup_by_path: bool,
    /// Only neighbours in this category (frontmatter `category`, else the first folder; as kb_search's filter).
    #[serde(default)]
    pub category: Option<String>,
    /// Only neighbours in this topic (frontmatter `topic`, else the first two folders, `a/b`).
    #[serde(default)]
    pub topic: Option<String>,
    /// KB-relative paths never added as neighbours (the start document never is).
    #[serde(default)]
    pub exclude_paths: Vec<String>,
    /// Most nodes, seeds included, 0–2000 (default 100).
    #[serde(default)]
    pub max_nodes: Option<u32>,
    /// Most chunks of the start document used as seeds, 1–1000 (default 32).
    #[serde(default)]
    pub max_seed_chunks: Option<u32>,
}

/// One node.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct GraphNodeOut {
    /// Index of this node in `nodes`.
    pub id: usize,
    /// The node it was reached from (absent for seeds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<usize>,
    /// 0 for seeds, parent's depth + 1 otherwise.
    pub depth: u32,
    /// Cosine similarity to the parent (1 for seeds).
    pub score: f32,
    /// KB-relative path of the document.
    pub path: String,
    /// Pointer of the chunk's first element (for kb_read).
    pub pointer: String,
    /// Headings above the chunk, outermost first.
    pub heading_path: Vec<String>,
    /// First line of the chunk, 1-based.
    pub start_line: u32,
    /// Last line of the chunk, 1-based, inclusive.
    pub end_line: u32,
    /// The first 200 characters of the chunk (read the rest with kb_read).
    pub snippet: String,
    /// `kb://doc/<path>` resource of the document.
    pub uri: String,
}

/// A cap that cut the walk.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct TruncationOut {
    /// `seed_chunks`, `node_budget` or `time_budget` (10 s).
    pub reason: String,
    /// The cap's value.
    pub limit: u32,
    /// What was lost and which argument recovers it.
    pub detail: String,
}

/// `kb_graph` output.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct GraphOutput {
    /// The start document.
    pub start: String,
    /// Nodes in breadth-first order.
    pub nodes: Vec<GraphNodeOut>,
    /// True when a cap (max_seed_chunks, max_nodes) cut the walk; see `truncation`.
    pub truncated: bool,
    /// Each cap that cut the walk.
    pub truncation: Vec<TruncationOut>,
    /// Nearest-neighbour queries made.
    pub knn_queries: u32,
    /// Deepest level that received a node.
    pub max_depth_reached: u32,
}

impl Host {
    /// `kb_graph`.
    pub fn graph(&self, args: &GraphArgs) -> HostResult<GraphOutput> {
        let abs = self.resolve_markdown(&args.start)?;
        let start = abs
            .strip_prefix(self.root())
            .map(|p| p.to_string_lossy().replace(std::path::MAIN_SEPARATOR, "/"))
            .map_err(|_| {
                HostError::invalid(format!("`{}` is outside the knowledge base", args.start))
            })?;
        let seed_strategy = match args.seed_strategy.as_deref() {
            None => SeedStrategy::AllChunks,
            Some(s) => SeedStrategy::parse(s).ok_or_else(|| {
                HostError::invalid(format!(
                    "unknown seed_strategy `{s}`; use all_chunks or centroid"
                ))
            })?,
        };
        let options = GraphOptions {
            depth: args.depth.unwrap_or(DEFAULT_DEPTH),
            fan_out: args.fan_out.unwrap_or(DEFAULT_FAN_OUT),
            min_similarity: args.min_similarity.unwrap_or(DEFAULT_MIN_SIMILARITY),
            seed_strategy,
            dedup_by_path: args.dedup_by_path,
            category: args.category.clone(),
            topic: args.topic.clone(),
            exclude_paths: args.exclude_paths.clone(),
            max_nodes: args.max_nodes.unwrap_or(DEFAULT_MAX_NODES),
            max_seed_chunks: args.max_seed_chunks.unwrap_or(DEFAULT_MAX_SEED_CHUNKS),
            ..GraphOptions::default()
        };
        options.validate().map_err(HostError::invalid)?;
        let embedder = self.embedding.embedder();
        // Its own connection: a long walk must not hold the shared read connection that
        // kb_status and kb_search wait for.
        let store = crate::store::Store::open(self.db_path()).map_err(HostError::internal)?;
        let graph = (|store: &crate::store::Store| {
            if let Some(reason) =
                crate::search::semantic::runner_vectors_unavailable(store, Some(&self.embedding))
                    .map_err(HostError::internal)?
            {
                return Err(HostError::new(
                    ErrorCode::NotConfigured,
                    format!("kb_graph needs embeddings: {reason}; see kb_status `embedding`"),
                ));
            }
            let model = embedder
                .as_ref()
                .expect("vectors_unavailable checked it")
                .model_id()
                .to_owned();
            connection_graph(&StoreGraph::new(store, &model), &start, &options).map_err(|e| match e
            {
                GraphError::InvalidArgument(m) => HostError::invalid(m),
                GraphError::NotEmbedded(_) => HostError::new(ErrorCode::NotFound, e.to_string()),
                GraphError::Source(err) => HostError::internal(err),
            })
        })(&store)?;
        Ok(GraphOutput {
            start: graph.start,
            nodes: graph
                .nodes
                .into_iter()
                .map(|n| GraphNodeOut {
                    uri: doc_uri(&n.path),
                    id: n.id,
                    parent: n.parent,
                    depth: n.depth,
                    score: n.score,
                    path: n.path,
                    pointer: n.pointer,
                    heading_path: n.heading_path,
                    start_line: n.start_line,
                    end_line: n.end_line,
                    snippet: n.snippet,
                })
                .collect(),
            truncated: graph.truncated,
            truncation: graph
                .truncation
                .into_iter()
                .map(|t| TruncationOut {
                    reason: serde_json::to_value(t.reason)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default(),
                    limit: t.limit,
                    detail: t.detail,
                })
                .collect(),
            knn_queries: graph.knn_queries,
            max_depth_reached: graph.max_depth_reached,
        })
    }
}
