//! Running a golden file: each query is searched, its hits ranked as documents and
//! scored, and the scores averaged into an [`EvalReport`].
//!
//! Metrics are averaged separately over **single-answer** queries (`|E| = 1`) and
//! **multi-answer** queries (`|E| ≥ 2`), and over all queries: with two right answers
//! the best recall@1 is 0.5, so mixing the groups would blur both (the reason the
//! GrooveSeek corpus reports them apart). Each tag gets the same three averages over
//! the queries that carry it.

use std::collections::BTreeMap;

use super::golden::{Golden, GoldenQuery};
use super::metrics::{
    DEFAULT_K, metric_names, ndcg_at_k, rank_documents, recall_at_k, reciprocal_rank,
};
use super::report::{EvalReport, GroupMetrics, QueryOutcome, TagMetrics, Unanswerable};

/// What the search function of [`run_eval`] returns for one query.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SearchOutcome {
    /// The hits' document paths, best first, one per chunk hit (repeats allowed).
    pub paths: Vec<String>,
    /// The search's `low_confidence` flag.
    pub low_confidence: bool,
}

/// Scores one query from its ranked documents.
pub fn score_query(q: &GoldenQuery, ranked: &[String], ks: &[usize]) -> QueryOutcome {
    let max_k = ks.iter().max().copied().unwrap_or(10);
    let mut metrics = BTreeMap::new();
    for &k in ks {
        metrics.insert(format!("recall@{k}"), recall_at_k(&q.expected, ranked, k));
    }
    metrics.insert("mrr".into(), reciprocal_rank(&q.expected, ranked));
    metrics.insert(
        format!("ndcg@{max_k}"),
        ndcg_at_k(&q.expected, ranked, max_k),
    );
    let ranks: Vec<Option<usize>> = q
        .expected
        .iter()
        .map(|e| ranked.iter().position(|d| d == e).map(|i| i + 1))
        .collect();
    QueryOutcome {
        id: q.id.clone(),
        query: q.query.clone(),
        group: match q.expected.len() {
            0 => "none",
            1 => "single",
            _ => "multi",
        }
        .into(),
        expected: q.expected.clone(),
        tags: q.tags.clone(),
        first_rank: ranks.iter().flatten().min().copied(),
        ranks,
        top: ranked.iter().take(max_k).cloned().collect(),
        metrics,
        low_confidence: false,
    }
}

fn average(outcomes: &[&QueryOutcome], names: &[String]) -> GroupMetrics {
    let n = outcomes.len();
    let metrics = names
        .iter()
        .map(|name| {
            let sum: f64 = outcomes
                .iter()
                .map(|o| o.metrics.get(name).copied().unwrap_or(0.0))
                .sum();
            (name.clone(), if n == 0 { 0.0 } else { sum / n as f64 })
        })
        .collect();
    GroupMetrics {
        queries: n,
        metrics,
    }
}

/// Runs every golden query through `search` (which returns the hit paths, best first,
/// chunk by chunk, and the `low_confidence` flag) and builds the report. `indexed` tells whether a path is indexed
/// (for [`EvalReport::missing_expected`]). `ks` is sorted and deduplicated here.
pub fn run_eval<E>(
    golden: &Golden,
    golden_label: &str,
    mode: &str,
    ks: &[usize],
    indexed: &dyn Fn(&str) -> bool,
    search: &mut dyn FnMut(&str) -> Result<SearchOutcome, E>,
) -> Result<EvalReport, E> {
    let mut ks: Vec<usize> = ks.iter().copied().filter(|k| *k > 0).collect();
    ks.sort_unstable();
    ks.dedup();
    if ks.is_empty() {
        ks = DEFAULT_K.to_vec();
    }
    let names = metric_names(&ks);
    let mut outcomes = Vec::new();
    for q in &golden.queries {
        let hits = search(&q.query)?;
        let ranked = rank_documents(hits.paths.iter().map(String::as_str));
        let mut outcome = score_query(q, &ranked, &ks);
        outcome.low_confidence = hits.low_confidence;
        outcomes.push(outcome);
    }
    let split = |of: &[&QueryOutcome]| -> TagMetrics {
        let pick = |group: &str| -> Vec<&QueryOutcome> {
            of.iter().copied().filter(|o| o.group == group).collect()
        };
        let answerable: Vec<&QueryOutcome> =
            of.iter().copied().filter(|o| !o.unanswerable()).collect();
        TagMetrics {
            single: average(&pick("single"), &names),
            multi: average(&pick("multi"), &names),
            all: average(&answerable, &names),
        }
    };
    let none: Vec<&QueryOutcome> = outcomes.iter().filter(|o| o.unanswerable()).collect();
    let unanswerable = Unanswerable {
        queries: none.len(),
        low_confidence: none.iter().filter(|o| o.low_confidence).count(),
    };
    let all: Vec<&QueryOutcome> = outcomes.iter().collect();
    let whole = split(&all);
    let mut by_tag = BTreeMap::new();
    for tag in outcomes.iter().flat_map(|o| o.tags.iter()) {
        if !by_tag.contains_key(tag) {
            let of: Vec<&QueryOutcome> = outcomes.iter().filter(|o| o.tags.contains(tag)).collect();
            by_tag.insert(tag.clone(), split(&of));
        }
    }
    let mut missing: Vec<String> = golden
        .queries
        .iter()
        .flat_map(|q| q.expected.iter())
        .filter(|p| !indexed(p))
        .cloned()
        .collect();
    missing.sort();
    missing.dedup();
    Ok(EvalReport {
        golden: golden_label.to_string(),
        golden_hash: golden.hash.clone(),
        mode: mode.to_string(),
        single: whole.single,
        multi: whole.multi,
        all: whole.all,
        by_tag,
        unanswerable,
        k: ks,
        missing_expected: missing,
        queries: outcomes,
    })
}
