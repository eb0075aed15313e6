//! The retrieval metrics of one query: recall@k, reciprocal rank and nDCG@k over the
//! documents a search ranks.
//!
//! **Ranking by documents.** Each query's hits (chunks) are turned into a list of
//! documents by keeping each path's first occurrence, so two chunks of one document
//! take one rank and a document-level golden set is measured on documents. With
//! `E` the expected documents and `d_1, d_2, …` the ranked documents:
//!
//! - `recall@k = |E ∩ {d_1..d_k}| / |E|`;
//! - `RR = 1 / rank of the first expected document` (0 when none is retrieved), and
//!   MRR is its mean;
//! - `nDCG@k = DCG@k / IDCG@k` with binary relevance:
//!   `DCG@k = Σ_{i ≤ k, d_i ∈ E} 1 / log2(i + 1)`, `IDCG@k = Σ_{i=1..min(|E|, k)} 1 / log2(i + 1)`
//!   (Järvelin and Kekäläinen, 2002).

use std::collections::HashSet;

/// The k values used unless asked otherwise.
pub const DEFAULT_K: [usize; 3] = [1, 5, 10];

/// The documents of a ranked hit list: each path at its first occurrence.
pub fn rank_documents<'a>(hit_paths: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut seen = HashSet::new();
    hit_paths
        .into_iter()
        .filter(|p| seen.insert(*p))
        .map(str::to_string)
        .collect()
}

/// `|E ∩ top k| / |E|` (0 when `expected` is empty).
pub fn recall_at_k(expected: &[String], ranked: &[String], k: usize) -> f64 {
    if expected.is_empty() {
        return 0.0;
    }
    let top = &ranked[..k.min(ranked.len())];
    expected.iter().filter(|e| top.contains(e)).count() as f64 / expected.len() as f64
}

/// `1 / rank` of the first expected document, 0 when none is ranked.
pub fn reciprocal_rank(expected: &[String], ranked: &[String]) -> f64 {
    ranked
        .iter()
        .position(|d| expected.contains(d))
        .map_or(0.0, |i| 1.0 / (i + 1) as f64)
}

/// nDCG@k with binary relevance (see the module docs); 0 when `expected` is empty or k = 0.
pub fn ndcg_at_k(expected: &[String], ranked: &[String], k: usize) -> f64 {
    let ideal = expected.len().min(k);
    if ideal == 0 {
        return 0.0;
    }
    let dcg: f64 = ranked
        .iter()
        .take(k)
        .enumerate()
        .filter(|(_, d)| expected.contains(d))
        .map(|(i, _)| 1.0 / ((i + 2) as f64).log2())
        .sum();
    let idcg: f64 = (1..=ideal).map(|i| 1.0 / ((i + 1) as f64).log2()).sum();
    dcg / idcg
}

/// Metric names in display order for the k values `ks` (sorted, deduplicated).
pub fn metric_names(ks: &[usize]) -> Vec<String> {
    let mut names: Vec<String> = ks.iter().map(|k| format!("recall@{k}")).collect();
    names.push("mrr".into());
    names.push(format!("ndcg@{}", ks.iter().max().copied().unwrap_or(10)));
    names
}
