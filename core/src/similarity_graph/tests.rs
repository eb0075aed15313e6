//! The walk on hand-made two-dimensional vectors: a chunk at angle θ has the
//! vector (cos θ, sin θ), so the cosine similarity of two chunks is the cosine
//! of the angle between them and every expected score can be worked out by hand.

use super::*;

struct Plane {
    /// (path, angle in degrees), chunk ids are positions + 1.
    chunks: Vec<(&'static str, f32)>,
}

fn vector(degrees: f32) -> Vec<f32> {
    let r = degrees.to_radians();
    vec![r.cos(), r.sin()]
}

impl Plane {
    fn chunk(&self, i: usize) -> GraphChunk {
        let (path, angle) = self.chunks[i];
        GraphChunk {
            chunk_id: i as i64 + 1,
            path: path.to_owned(),
            pointer: format!("p{}", i + 1),
            heading_path: vec![format!("at {angle}")],
            start_line: i as u32 + 1,
            end_line: i as u32 + 1,
            text: format!("chunk {}", i + 1),
        }
    }
}

impl VectorSource for Plane {
    type Error = String;

    fn document_chunks(
        &self,
        path: &str,
        limit: usize,
    ) -> Result<(Vec<(GraphChunk, Vec<f32>)>, bool), String> {
        let all: Vec<usize> = (0..self.chunks.len())
            .filter(|&i| self.chunks[i].0 == path)
            .collect();
        let more = all.len() > limit;
        Ok((
            all.into_iter()
                .take(limit)
                .map(|i| (self.chunk(i), vector(self.chunks[i].1)))
                .collect(),
            more,
        ))
    }

    fn nearest(
        &self,
        query: &[f32],
        k: usize,
        category: Option<&str>,
        topic: Option<&str>,
    ) -> Result<Vec<(GraphChunk, Vec<f32>, f32)>, String> {
        assert!(topic.is_none(), "no test uses topic");
        let mut hits: Vec<(GraphChunk, Vec<f32>, f32)> = (0..self.chunks.len())
            .filter(|&i| category.is_none_or(|c| self.chunks[i].0.split('/').next() == Some(c)))
            .map(|i| {
                let v = vector(self.chunks[i].1);
                let cos = v[0] * query[0] + v[1] * query[1];
                (self.chunk(i), v, cos)
            })
            .collect();
        hits.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.chunk_id.cmp(&b.0.chunk_id)));
        hits.truncate(k);
        Ok(hits)
    }
}

fn plane() -> Plane {
    Plane {
        chunks: vec![
            ("notes/start.md", 0.0),  // 1
            ("notes/start.md", 10.0), // 2
            ("notes/a.md", 20.0),     // 3
            ("notes/b.md", 40.0),     // 4
            ("notes/b.md", 45.0),     // 5
            ("ref/c.md", 80.0),       // 6
            ("ref/d.md", 180.0),      // 7
        ],
    }
}

/// (parent, depth, path, pointer) of every node, and scores separately.
fn shape(graph: &ConnectionGraph) -> Vec<(Option<usize>, u32, &str, &str)> {
    graph
        .nodes
        .iter()
        .map(|n| (n.parent, n.depth, n.path.as_str(), n.pointer.as_str()))
        .collect()
}

fn assert_scores(graph: &ConnectionGraph, degrees: &[f32]) {
    assert_eq!(graph.nodes.len(), degrees.len());
    for (node, d) in graph.nodes.iter().zip(degrees) {
        let expected = d.to_radians().cos();
        assert!(
            (node.score - expected).abs() < 1e-5,
            "node {} score {} expected cos({d}°) = {expected}",
            node.id,
            node.score
        );
    }
}

#[test]
fn all_chunks_walk_adds_nearest_new_chunks_per_node() {
    let options = GraphOptions {
        fan_out: 2,
        ..GraphOptions::default()
    };
    let graph = connection_graph(&plane(), "notes/start.md", &options).unwrap();
    assert_eq!(
        shape(&graph),
        vec![
            (None, 0, "notes/start.md", "p1"),
            (None, 0, "notes/start.md", "p2"),
            (Some(0), 1, "notes/a.md", "p3"),
            (Some(0), 1, "notes/b.md", "p4"),
            (Some(1), 1, "notes/b.md", "p5"),
            (Some(1), 1, "ref/c.md", "p6"),
        ]
    );
    // Seeds score 1; a.md is 20° from the first seed, b.md 40°; from the
    // second seed (10°) b.md's second chunk is 35° away and c.md 70°.
    assert_scores(&graph, &[0.0, 0.0, 20.0, 40.0, 35.0, 70.0]);
    // Every node below depth 2 was expanded once; d.md (≥ 100° from all) never passes 0.3.
    assert_eq!(graph.knn_queries, 6);
    assert_eq!(graph.max_depth_reached, 1);
    assert!(!graph.truncated);
    assert!(graph.truncation.is_empty());
}

#[test]
fn dedup_by_path_keeps_one_node_per_document_and_asks_again_when_skips_eat_the_neighbours() {
    let options = GraphOptions {
        fan_out: 2,
        dedup_by_path: true,
        ..GraphOptions::default()
    };
    let graph = connection_graph(&plane(), "notes/start.md", &options).unwrap();
    assert_eq!(
        shape(&graph),
        vec![
            (None, 0, "notes/start.md", "p1"),
            (None, 0, "notes/start.md", "p2"),
            (Some(0), 1, "notes/a.md", "p3"),
            (Some(0), 1, "notes/b.md", "p4"),
            (Some(1), 1, "ref/c.md", "p6"),
        ]
    );
    // The second seed's first query (k = 2 + 4 seen) yields only c.md as new, so it
    // asks once more with k = 24 before reaching d.md under the floor: 2 queries.
    // a.md, b.md and c.md each need one.
    assert_eq!(graph.knn_queries, 1 + 2 + 3);
}

#[test]
fn centroid_makes_one_seed_and_the_node_budget_truncates() {
    let options = GraphOptions {
        fan_out: 2,
        seed_strategy: SeedStrategy::Centroid,
        max_nodes: 3,
        ..GraphOptions::default()
    };
    let graph = connection_graph(&plane(), "notes/start.md", &options).unwrap();
    assert_eq!(
        shape(&graph),
        vec![
            (None, 0, "notes/start.md", "p1"),
            (Some(0), 1, "notes/a.md", "p3"),
            (Some(0), 1, "notes/b.md", "p4")
        ]
    );
    // The centroid of 0° and 10° points at 5°.
    assert_scores(&graph, &[0.0, 15.0, 35.0]);
    assert!(graph.truncated);
    assert_eq!(graph.truncation.len(), 1);
    assert_eq!(graph.truncation[0].reason, TruncationReason::NodeBudget);
    assert_eq!(graph.truncation[0].limit, 3);
    assert_eq!(
        graph.truncation[0].detail,
        "the graph reached max_nodes = 3 before the walk ended; raise max_nodes (at most 2000), or use seed_strategy centroid, a lower fan_out or a higher min_similarity"
    );
}

#[test]
fn max_seed_chunks_cuts_the_start_document_and_says_so() {
    let options = GraphOptions {
        fan_out: 1,
        depth: 1,
        max_seed_chunks: 1,
        ..GraphOptions::default()
    };
    let graph = connection_graph(&plane(), "notes/start.md", &options).unwrap();
    // The second chunk of the start document is never a node, not even as a neighbour.
    assert_eq!(
        shape(&graph),
        vec![
            (None, 0, "notes/start.md", "p1"),
            (Some(0), 1, "notes/a.md", "p3")
        ]
    );
    assert!(graph.truncated);
    assert_eq!(graph.truncation[0].reason, TruncationReason::SeedChunks);
    assert_eq!(graph.truncation[0].limit, 1);
}

#[test]
fn category_exclude_paths_and_similarity_floor_filter_neighbours() {
    let only_ref = GraphOptions {
        category: Some("ref".into()),
        ..GraphOptions::default()
    };
    // c.md is 80° (cos 0.17) from the first seed and 70° (cos 0.34) from the second.
    let graph = connection_graph(&plane(), "notes/start.md", &only_ref).unwrap();
    assert_eq!(
        shape(&graph),
        vec![
            (None, 0, "notes/start.md", "p1"),
            (None, 0, "notes/start.md", "p2"),
            (Some(1), 1, "ref/c.md", "p6")
        ]
    );

    let options = GraphOptions {
        fan_out: 2,
        depth: 1,
        exclude_paths: vec!["notes/a.md".into()],
        ..GraphOptions::default()
    };
    let graph = connection_graph(&plane(), "notes/start.md", &options).unwrap();
    assert_eq!(
        shape(&graph),
        vec![
            (None, 0, "notes/start.md", "p1"),
            (None, 0, "notes/start.md", "p2"),
            (Some(0), 1, "notes/b.md", "p4"),
            (Some(0), 1, "notes/b.md", "p5"),
            (Some(1), 1, "ref/c.md", "p6"),
        ]
    );
}

#[test]
fn depth_follows_a_chain_and_stops_at_the_limit() {
    let chain = Plane {
        chunks: vec![
            ("s.md", 0.0),
            ("x.md", 50.0),
            ("y.md", 100.0),
            ("z.md", 150.0),
        ],
    };
    let options = GraphOptions {
        fan_out: 1,
        min_similarity: 0.6,
        ..GraphOptions::default()
    };
    let graph = connection_graph(&chain, "s.md", &options).unwrap();
    assert_eq!(
        shape(&graph),
        vec![
            (None, 0, "s.md", "p1"),
            (Some(0), 1, "x.md", "p2"),
            (Some(1), 2, "y.md", "p3")
        ]
    );
    assert_scores(&graph, &[0.0, 50.0, 50.0]);
    assert_eq!(graph.max_depth_reached, 2);
    let deeper = GraphOptions {
        depth: 3,
        ..options.clone()
    };
    let graph = connection_graph(&chain, "s.md", &deeper).unwrap();
    assert_eq!(graph.nodes.len(), 4);
    assert_eq!(graph.nodes[3].path, "z.md");
    let seeds_only = GraphOptions {
        fan_out: 0,
        ..options
    };
    let graph = connection_graph(&chain, "s.md", &seeds_only).unwrap();
    assert_eq!(graph.nodes.len(), 1);
    assert_eq!(graph.knn_queries, 0);
}

#[test]
fn bad_options_and_unknown_documents_are_errors() {
    let err = connection_graph(
        &plane(),
        "notes/start.md",
        &GraphOptions {
            depth: 4,
            ..GraphOptions::default()
        },
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid argument: depth must be 0..=3, got 4"
    );
    let err = connection_graph(
        &plane(),
        "notes/start.md",
        &GraphOptions {
            fan_out: 21,
            ..GraphOptions::default()
        },
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid argument: fan_out must be 0..=20, got 21"
    );
    let err = connection_graph(
        &plane(),
        "notes/start.md",
        &GraphOptions {
            max_seed_chunks: 0,
            ..GraphOptions::default()
        },
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid argument: max_seed_chunks must be 1..=1000, got 0"
    );
    let err = connection_graph(&plane(), "nope.md", &GraphOptions::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "`nope.md` has no embedded chunks: it is not indexed, or embedding has not reached it yet"
    );
    assert_eq!(
        SeedStrategy::parse("all-chunks"),
        Some(SeedStrategy::AllChunks)
    );
    assert_eq!(
        SeedStrategy::parse("all_chunks"),
        Some(SeedStrategy::AllChunks)
    );
    assert_eq!(
        SeedStrategy::parse("centroid"),
        Some(SeedStrategy::Centroid)
    );
    assert_eq!(SeedStrategy::parse("mean"), None);
}

#[test]
fn snippets_keep_200_characters() {
    let long = "日".repeat(201);
    assert_eq!(snippet(&long), format!("{}…", "日".repeat(200)));
    assert_eq!(snippet(&"a".repeat(200)), "a".repeat(200));
}

/// The walk over a real index file: three documents embedded with the
/// bag-of-words test embedder (dimensions install, linux, deploy, other).
#[test]
fn walk_over_the_store() {
    use std::sync::atomic::AtomicBool;

    use crate::embed::Embedder;
    use crate::embed::pass::{EmbedProgress, embed_pending};
    use crate::embed::testing::VocabEmbedder;
    use crate::store::Store;

    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("kb");
    std::fs::create_dir_all(root.join("ops")).unwrap();
    std::fs::write(root.join("start.md"), "install linux\n").unwrap();
    std::fs::write(root.join("ops/near.md"), "linux deploy\n").unwrap();
    std::fs::write(root.join("ops/far.md"), "deploy deploy\n").unwrap();
    let db = root.join(".folio/index.db");
    crate::index::index_root(
        &root,
        &crate::workspace::Config::default(),
        &db,
        false,
        None,
    )
    .unwrap();
    let e = VocabEmbedder::new("test:vocab", &["install", "linux", "deploy"]);
    let mut store = Store::open(&db).unwrap();
    embed_pending(
        &mut store,
        &e,
        &EmbedProgress::new(),
        &AtomicBool::new(false),
    )
    .unwrap();

    let source = StoreGraph::new(&store, e.model_id());
    let options = GraphOptions {
        fan_out: 1,
        min_similarity: 0.4,
        ..GraphOptions::default()
    };
    let graph = connection_graph(&source, "start.md", &options).unwrap();
    // start (install+linux)/√2 · near (linux+deploy)/√2 = 1/2; near · far (deploy) = 1/√2.
    assert_eq!(
        graph
            .nodes
            .iter()
            .map(|n| (n.parent, n.depth, n.path.as_str(), n.snippet.as_str()))
            .collect::<Vec<_>>(),
        vec![
            (None, 0, "start.md", "install linux"),
            (Some(0), 1, "ops/near.md", "linux deploy"),
            (Some(1), 2, "ops/far.md", "deploy deploy")
        ]
    );
    assert!((graph.nodes[1].score - 0.5).abs() < 1e-6);
    assert!((graph.nodes[2].score - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6);
    // A category with none of the neighbours leaves the seed alone.
    let graph = connection_graph(
        &source,
        "start.md",
        &GraphOptions {
            category: Some("guide".into()),
            ..options
        },
    )
    .unwrap();
    assert_eq!(graph.nodes.len(), 1);
    let err = connection_graph(&source, "missing.md", &GraphOptions::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "`missing.md` has no embedded chunks: it is not indexed, or embedding has not reached it yet"
    );
}

#[test]
fn a_spent_time_budget_stops_the_walk_and_says_so() {
    let options = GraphOptions {
        fan_out: 2,
        time_budget_ms: 0,
        ..GraphOptions::default()
    };
    let graph = connection_graph(&plane(), "notes/start.md", &options).unwrap();
    // The seeds are placed; no expansion starts.
    assert_eq!(graph.nodes.len(), 2);
    assert_eq!(graph.knn_queries, 0);
    assert_eq!(graph.truncation.len(), 1);
    assert_eq!(graph.truncation[0].reason, TruncationReason::TimeBudget);
    assert_eq!(
        graph.truncation[0].detail,
        "the walk stopped after its time budget of 0 ms with nodes left to expand; use a lower depth, fan_out or max_seed_chunks, seed_strategy centroid, or a higher min_similarity"
    );
}
