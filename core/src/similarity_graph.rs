//! The connection graph: breadth-first expansion from one document over
//! embedding similarity (`kb_graph`).
//!
//! Unlike search, the walk follows no query: it starts from the chunks of a
//! document (the *seeds*) and repeatedly asks the vector index for the nearest
//! chunks of each node, so it reaches documents that share meaning with the
//! start but none of its words.
//!
//! Shape of the walk:
//! - Seeds are the document's first [`GraphOptions::max_seed_chunks`] chunks in
//!   document order. With [`SeedStrategy::AllChunks`] each becomes a node at
//!   depth 0; with [`SeedStrategy::Centroid`] one node stands for the mean of
//!   their vectors (L2-normalised again), so the node budget goes to neighbours.
//! - Nodes are expanded in breadth-first order; each expansion adds at most
//!   [`GraphOptions::fan_out`] new chunks whose cosine similarity to the node
//!   is at least [`GraphOptions::min_similarity`], nearest first, skipping chunks
//!   already in the graph, the start document, excluded paths and (with
//!   [`GraphOptions::dedup_by_path`]) documents already in the graph.
//! - Nodes at [`GraphOptions::depth`] are not expanded. The walk stops when the
//!   graph holds [`GraphOptions::max_nodes`] nodes; [`ConnectionGraph::truncation`]
//!   then says which cap cut it and how to get more.
//!
//! Scores are cosine similarities of L2-normalised vectors (seed nodes: 1.0).
//! The vector index is reached through [`VectorSource`], so the walk is tested
//! without a database.

use std::collections::{HashSet, VecDeque};

use serde::Serialize;

/// Default and ceiling of [`GraphOptions::depth`].
pub const DEFAULT_DEPTH: u32 = 2;
/// Largest accepted [`GraphOptions::depth`].
pub const MAX_DEPTH: u32 = 3;
/// Default of [`GraphOptions::fan_out`].
pub const DEFAULT_FAN_OUT: u32 = 5;
/// Largest accepted [`GraphOptions::fan_out`].
pub const MAX_FAN_OUT: u32 = 20;
/// Default of [`GraphOptions::min_similarity`] (cosine).
pub const DEFAULT_MIN_SIMILARITY: f32 = 0.3;
/// Default of [`GraphOptions::max_nodes`].
pub const DEFAULT_MAX_NODES: u32 = 100;
/// Largest accepted [`GraphOptions::max_nodes`].
pub const MAX_NODES: u32 = 2000;
/// Default of [`GraphOptions::max_seed_chunks`].
pub const DEFAULT_MAX_SEED_CHUNKS: u32 = 32;
/// Largest accepted [`GraphOptions::max_seed_chunks`].
pub const MAX_SEED_CHUNKS: u32 = 1000;
/// Snippets are the first this many characters (Unicode scalar values) of a chunk.
pub const SNIPPET_CHARS: usize = 200;

/// How the start document becomes seed nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SeedStrategy {
    /// Every seed chunk is a node at depth 0 and is expanded.
    #[default]
    AllChunks,
    /// One node at depth 0 stands for the normalised mean of the seed chunks' vectors.
    Centroid,
}

impl SeedStrategy {
    /// Parses `all_chunks`, `all-chunks` or `centroid`; `None` otherwise.
    pub fn parse(text: &str) -> Option<SeedStrategy> {
        match text {
            "all_chunks" | "all-chunks" => Some(SeedStrategy::AllChunks),
            "centroid" => Some(SeedStrategy::Centroid),
            _ => None,
        }
    }
}

/// Options of one walk. [`GraphOptions::validate`] checks the ranges.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphOptions {
    /// Deepest level of nodes, `0..=MAX_DEPTH` (0: seeds only).
    pub depth: u32,
    /// New nodes per expansion, `0..=MAX_FAN_OUT` (0: seeds only).
    pub fan_out: u32,
    /// Cosine similarity floor of a new node to its parent, in `[-1, 1]`.
    pub min_similarity: f32,
    /// How seeds are made.
    pub seed_strategy: SeedStrategy,
    /// At most one node per document (besides the start document's seeds).
    pub dedup_by_path: bool,
    /// Only documents in this category (frontmatter `category`, else the first folder).
    pub category: Option<String>,
    /// Only documents in this topic (frontmatter `topic`, else the first two folders).
    pub topic: Option<String>,
    /// KB-relative paths never added (the start document is always left out).
    pub exclude_paths: Vec<String>,
    /// Most nodes in the graph, seeds included, `0..=MAX_NODES`.
    pub max_nodes: u32,
    /// Most chunks of the start document used as seeds, `1..=MAX_SEED_CHUNKS`.
    pub max_seed_chunks: u32,
    /// Wall-clock budget of the walk in milliseconds (default [`DEFAULT_TIME_BUDGET_MS`]);
    /// when it runs out the walk stops with [`TruncationReason::TimeBudget`].
    pub time_budget_ms: u64,
}

/// Default [`GraphOptions::time_budget_ms`]: a server answers other calls meanwhile, but
/// an agent waiting longer than this is better served by a smaller walk.
pub const DEFAULT_TIME_BUDGET_MS: u64 = 10_000;

impl Default for GraphOptions {
    fn default() -> GraphOptions {
        GraphOptions {
            depth: DEFAULT_DEPTH,
            fan_out: DEFAULT_FAN_OUT,
            min_similarity: DEFAULT_MIN_SIMILARITY,
            seed_strategy: SeedStrategy::AllChunks,
            dedup_by_path: false,
            category: None,
            topic: None,
            exclude_paths: Vec::new(),
            max_nodes: DEFAULT_MAX_NODES,
            max_seed_chunks: DEFAULT_MAX_SEED_CHUNKS,
            time_budget_ms: DEFAULT_TIME_BUDGET_MS,
        }
    }
}

impl GraphOptions {
    /// Checks every range.
    ///
    /// Errors: a message naming the field, its value and the accepted range.
    pub fn validate(&self) -> Result<(), String> {
        if self.depth > MAX_DEPTH {
            return Err(format!("depth must be 0..={MAX_DEPTH}, got {}", self.depth));
        }
        if self.fan_out > MAX_FAN_OUT {
            return Err(format!(
                "fan_out must be 0..={MAX_FAN_OUT}, got {}",
                self.fan_out
            ));
        }
        if !(-1.0..=1.0).contains(&self.min_similarity) {
            return Err(format!(
                "min_similarity must be in [-1, 1], got {}",
                self.min_similarity
            ));
        }
        if self.max_nodes > MAX_NODES {
            return Err(format!(
                "max_nodes must be 0..={MAX_NODES}, got {}",
                self.max_nodes
            ));
        }
        if !(1..=MAX_SEED_CHUNKS).contains(&self.max_seed_chunks) {
            return Err(format!(
                "max_seed_chunks must be 1..={MAX_SEED_CHUNKS}, got {}",
                self.max_seed_chunks
            ));
        }
        Ok(())
    }
}

/// One chunk as the vector index knows it.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphChunk {
    /// Row id of the chunk in the index.
    pub chunk_id: i64,
    /// KB-relative path of its document.
    pub path: String,
    /// Pointer of the chunk's first element.
    pub pointer: String,
    /// Enclosing headings, outermost first.
    pub heading_path: Vec<String>,
    /// First line, 1-based.
    pub start_line: u32,
    /// Last line, 1-based, inclusive.
    pub end_line: u32,
    /// The chunk's Markdown text.
    pub text: String,
}

/// A document's seed chunks with their vectors, and whether it has more.
pub type SeedChunks = (Vec<(GraphChunk, Vec<f32>)>, bool);

/// A neighbour: the chunk, its vector and its cosine similarity to the query vector.
pub type Neighbour = (GraphChunk, Vec<f32>, f32);

/// What the walk needs from the vector index.
pub trait VectorSource {
    /// The error type of the index.
    type Error;

    /// The chunks of `path` in document order with their vectors, at most `limit`,
    /// and whether the document has more. An unknown or unembedded document gives
    /// an empty list.
    fn document_chunks(&self, path: &str, limit: usize) -> Result<SeedChunks, Self::Error>;

    /// The `k` chunks nearest to `vector` (cosine, highest first) among documents in
    /// `category` / `topic` when given, each with its vector and cosine similarity.
    fn nearest(
        &self,
        vector: &[f32],
        k: usize,
        category: Option<&str>,
        topic: Option<&str>,
    ) -> Result<Vec<Neighbour>, Self::Error>;
}

/// Why a walk stopped early.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TruncationReason {
    /// The start document has more chunks than `max_seed_chunks`.
    SeedChunks,
    /// The graph reached `max_nodes` with candidates or unexpanded nodes left.
    NodeBudget,
    /// The walk ran out of its time budget with unexpanded nodes left.
    TimeBudget,
}

/// One cap that cut the walk, with what to change to see more.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Truncation {
    /// Which cap.
    pub reason: TruncationReason,
    /// The value of that cap (chunks or nodes).
    pub limit: u32,
    /// One sentence: what was lost and which option recovers it.
    pub detail: String,
}

/// One node of the graph.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GraphNode {
    /// Index of this node in [`ConnectionGraph::nodes`].
    pub id: usize,
    /// The node it was reached from; `None` for seeds.
    pub parent: Option<usize>,
    /// 0 for seeds, else parent's depth + 1.
    pub depth: u32,
    /// Cosine similarity to the parent (1.0 for seeds).
    pub score: f32,
    /// KB-relative path of the chunk's document.
    pub path: String,
    /// Pointer of the chunk's first element (read it with `kb_read`).
    pub pointer: String,
    /// Enclosing headings, outermost first.
    pub heading_path: Vec<String>,
    /// First line, 1-based.
    pub start_line: u32,
    /// Last line, 1-based, inclusive.
    pub end_line: u32,
    /// The first [`SNIPPET_CHARS`] characters of the chunk, `…` when cut.
    pub snippet: String,
}

/// The result of a walk.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConnectionGraph {
    /// The start document.
    pub start: String,
    /// Nodes in the order they were added (breadth-first).
    pub nodes: Vec<GraphNode>,
    /// True when any cap cut the walk; then [`Self::truncation`] is not empty.
    pub truncated: bool,
    /// Each cap that cut the walk, at most once per reason.
    pub truncation: Vec<Truncation>,
    /// Number of nearest-neighbour queries made.
    pub knn_queries: u32,
    /// Deepest level that received a node.
    pub max_depth_reached: u32,
}

/// A failure of a walk.
#[derive(Debug, thiserror::Error)]
pub enum GraphError<E> {
    /// An option is out of range.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The start document has no embedded chunks (unknown, empty, or not embedded yet).
    #[error("`{0}` has no embedded chunks: it is not indexed, or embedding has not reached it yet")]
    NotEmbedded(String),
    /// The vector index failed.
    #[error(transparent)]
    Source(E),
}

fn snippet(text: &str) -> String {
    let mut out: String = text.chars().take(SNIPPET_CHARS).collect();
    if text.chars().nth(SNIPPET_CHARS).is_some() {
        out.push('…');
    }
    out
}

fn node(id: usize, parent: Option<usize>, depth: u32, score: f32, chunk: &GraphChunk) -> GraphNode {
    GraphNode {
        id,
        parent,
        depth,
        score,
        path: chunk.path.clone(),
        pointer: chunk.pointer.clone(),
        heading_path: chunk.heading_path.clone(),
        start_line: chunk.start_line,
        end_line: chunk.end_line,
        snippet: snippet(&chunk.text),
    }
}

fn push_truncation(
    out: &mut Vec<Truncation>,
    reason: TruncationReason,
    limit: u32,
    options: &GraphOptions,
) {
    if out.iter().any(|t| t.reason == reason) {
        return;
    }
    let detail = match reason {
        TruncationReason::SeedChunks => format!(
            "only the first {limit} chunks of the start document were used as seeds; raise max_seed_chunks (at most {MAX_SEED_CHUNKS}) to cover the rest"
        ),
        TruncationReason::NodeBudget if options.max_nodes >= MAX_NODES => format!(
            "the graph reached max_nodes = {limit}, the ceiling; narrow it with min_similarity, dedup_by_path, category, topic or exclude_paths"
        ),
        TruncationReason::NodeBudget => format!(
            "the graph reached max_nodes = {limit} before the walk ended; raise max_nodes (at most {MAX_NODES}), or use seed_strategy centroid, a lower fan_out or a higher min_similarity"
        ),
        TruncationReason::TimeBudget => format!(
            "the walk stopped after its time budget of {limit} ms with nodes left to expand; use a lower depth, fan_out or max_seed_chunks, seed_strategy centroid, or a higher min_similarity"
        ),
    };
    out.push(Truncation {
        reason,
        limit,
        detail,
    });
}

/// Walks the graph from `start`. See the module documentation for the rules.
///
/// Errors: [`GraphError::InvalidArgument`] for out-of-range options,
/// [`GraphError::NotEmbedded`] when `start` has no vectors, [`GraphError::Source`]
/// when the index fails.
pub fn connection_graph<S: VectorSource>(
    source: &S,
    start: &str,
    options: &GraphOptions,
) -> Result<ConnectionGraph, GraphError<S::Error>> {
    options.validate().map_err(GraphError::InvalidArgument)?;
    let max_nodes = options.max_nodes as usize;
    let (seeds, more) = source
        .document_chunks(start, options.max_seed_chunks as usize)
        .map_err(GraphError::Source)?;
    if seeds.is_empty() {
        return Err(GraphError::NotEmbedded(start.to_owned()));
    }
    let mut truncation = Vec::new();
    if more {
        push_truncation(
            &mut truncation,
            TruncationReason::SeedChunks,
            options.max_seed_chunks,
            options,
        );
    }
    let mut excluded_paths: HashSet<&str> =
        options.exclude_paths.iter().map(String::as_str).collect();
    excluded_paths.insert(start);
    let mut seen_chunks: HashSet<i64> = seeds.iter().map(|(c, _)| c.chunk_id).collect();
    let mut seen_paths: HashSet<String> = HashSet::new();
    let mut nodes: Vec<GraphNode> = Vec::new();
    let mut queue: VecDeque<(usize, Vec<f32>)> = VecDeque::new();

    match options.seed_strategy {
        SeedStrategy::AllChunks => {
            for (chunk, vector) in &seeds {
                if nodes.len() >= max_nodes {
                    push_truncation(
                        &mut truncation,
                        TruncationReason::NodeBudget,
                        options.max_nodes,
                        options,
                    );
                    break;
                }
                nodes.push(node(nodes.len(), None, 0, 1.0, chunk));
                queue.push_back((nodes.len() - 1, vector.clone()));
            }
        }
        SeedStrategy::Centroid => {
            if max_nodes == 0 {
                push_truncation(&mut truncation, TruncationReason::NodeBudget, 0, options);
            } else {
                let mut mean = vec![0f32; seeds[0].1.len()];
                for (_, vector) in &seeds {
                    for (m, v) in mean.iter_mut().zip(vector) {
                        *m += v;
                    }
                }
                let norm = mean.iter().map(|x| x * x).sum::<f32>().sqrt();
                if norm > 0.0 {
                    mean.iter_mut().for_each(|x| *x /= norm);
                }
                nodes.push(node(0, None, 0, 1.0, &seeds[0].0));
                queue.push_back((0, mean));
            }
        }
    }

    let mut knn_queries = 0u32;
    let mut max_depth_reached = 0u32;
    let started = std::time::Instant::now();
    'walk: while let Some((parent, vector)) = queue.pop_front() {
        let depth = nodes[parent].depth;
        if depth >= options.depth || options.fan_out == 0 {
            continue;
        }
        if started.elapsed().as_millis() as u64 >= options.time_budget_ms {
            let limit = u32::try_from(options.time_budget_ms).unwrap_or(u32::MAX);
            push_truncation(
                &mut truncation,
                TruncationReason::TimeBudget,
                limit,
                options,
            );
            break;
        }
        if nodes.len() >= max_nodes {
            push_truncation(
                &mut truncation,
                TruncationReason::NodeBudget,
                options.max_nodes,
                options,
            );
            break;
        }
        // Ask for enough neighbours that `fan_out` new ones survive the skips; ask
        // again with a larger k when the skips ate them, until the index runs out
        // or the similarity floor is passed.
        let mut k = options.fan_out as usize + seen_chunks.len().min(64);
        let mut added = 0u32;
        let mut considered: HashSet<i64> = HashSet::new();
        loop {
            let found = source
                .nearest(
                    &vector,
                    k,
                    options.category.as_deref(),
                    options.topic.as_deref(),
                )
                .map_err(GraphError::Source)?;
            knn_queries += 1;
            let exhausted = found.len() < k;
            let mut below_floor = false;
            for (chunk, next_vector, similarity) in found {
                if !considered.insert(chunk.chunk_id) {
                    continue;
                }
                if similarity < options.min_similarity {
                    below_floor = true;
                    break;
                }
                if seen_chunks.contains(&chunk.chunk_id)
                    || excluded_paths.contains(chunk.path.as_str())
                    || (options.dedup_by_path && seen_paths.contains(&chunk.path))
                {
                    continue;
                }
                if nodes.len() >= max_nodes {
                    push_truncation(
                        &mut truncation,
                        TruncationReason::NodeBudget,
                        options.max_nodes,
                        options,
                    );
                    break 'walk;
                }
                seen_chunks.insert(chunk.chunk_id);
                seen_paths.insert(chunk.path.clone());
                nodes.push(node(
                    nodes.len(),
                    Some(parent),
                    depth + 1,
                    similarity,
                    &chunk,
                ));
                max_depth_reached = max_depth_reached.max(depth + 1);
                queue.push_back((nodes.len() - 1, next_vector));
                added += 1;
                if added == options.fan_out {
                    break;
                }
            }
            if added == options.fan_out || exhausted || below_floor || k >= 4096 {
                break;
            }
            k *= 4;
        }
    }
    Ok(ConnectionGraph {
        start: start.to_owned(),
        nodes,
        truncated: !truncation.is_empty(),
        truncation,
        knn_queries,
        max_depth_reached,
    })
}

/// The index as a [`VectorSource`]: chunks and vectors of one model.
pub struct StoreGraph<'a> {
    store: &'a crate::store::Store,
    model_id: String,
}

impl<'a> StoreGraph<'a> {
    /// Walks `store`'s vectors of `model_id` (the embedder's model).
    pub fn new(store: &'a crate::store::Store, model_id: &str) -> StoreGraph<'a> {
        StoreGraph {
            store,
            model_id: model_id.to_owned(),
        }
    }
}

impl VectorSource for StoreGraph<'_> {
    type Error = crate::search::SearchError;

    fn document_chunks(&self, path: &str, limit: usize) -> Result<SeedChunks, Self::Error> {
        let ids =
            self.store
                .embedded_chunk_ids_of(path, &self.model_id, limit.saturating_add(1))?;
        let more = ids.len() > limit;
        let ids = &ids[..ids.len().min(limit)];
        let rows = self.store.load_chunk_rows(ids)?;
        let mut vectors = self.store.chunk_vectors(ids)?;
        Ok((
            ids.iter()
                .filter_map(|id| Some((graph_chunk(*id, rows.get(id)?), vectors.remove(id)?)))
                .collect(),
            more,
        ))
    }

    fn nearest(
        &self,
        vector: &[f32],
        k: usize,
        category: Option<&str>,
        topic: Option<&str>,
    ) -> Result<Vec<Neighbour>, Self::Error> {
        let filters = crate::search::SearchQuery {
            category: category.map(str::to_owned),
            topic: topic.map(str::to_owned),
            ..crate::search::SearchQuery::default()
        };
        let hits = self
            .store
            .vector_search_ids(&self.model_id, vector, k, &filters)?;
        let ids: Vec<i64> = hits.iter().map(|(id, _)| *id).collect();
        let rows = self.store.load_chunk_rows(&ids)?;
        let mut vectors = self.store.chunk_vectors(&ids)?;
        Ok(hits
            .into_iter()
            .filter_map(|(id, similarity)| {
                Some((
                    graph_chunk(id, rows.get(&id)?),
                    vectors.remove(&id)?,
                    similarity as f32,
                ))
            })
            .collect())
    }
}

fn graph_chunk(chunk_id: i64, row: &crate::search::pipeline::ChunkRow) -> GraphChunk {
    GraphChunk {
        chunk_id,
        path: row.path.clone(),
        pointer: row.pointer.clone(),
        heading_path: row.heading_path.clone(),
        start_line: row.start_line,
        end_line: row.end_line,
        text: row.text.clone(),
    }
}

#[cfg(test)]
mod tests;
