//! Retrieval evaluation: golden queries, recall@k, MRR, nDCG@k, and run-to-run diffs.
//!
//! A golden file (YAML) lists queries with the documents that answer them:
//!
//! ```yaml
//! queries:
//!   - id: ja-rollback            # optional; default: the first 32 characters of the query
//!     query: "本番に出した変更を前のバージョンへ戻したい"
//!     expected:
//!       - path: "ops/deploy-rollback.ja.md"   # root-relative
//! ```
//!
//! This is GrooveSeek's `groove eval` format (its optional `heading` is refused: folio
//! ranks documents, see below; a top-level `defaults` is accepted and ignored, as there).
//! A query's optional `tags` (e.g. `[ja]`) put it in named groups: the report then
//! also averages the metrics per tag, so that one file can hold, say, English,
//! Japanese and cross-language questions and be read per language.
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
//!
//! Metrics are averaged separately over **single-answer** queries (`|E| = 1`) and
//! **multi-answer** queries (`|E| ≥ 2`), and over all queries: with two right answers
//! the best recall@1 is 0.5, so mixing the groups would blur both (the reason the
//! GrooveSeek corpus reports them apart). Each tag gets the same three averages over
//! the queries that carry it.

use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// The k values used unless asked otherwise.
pub const DEFAULT_K: [usize; 3] = [1, 5, 10];

/// A failure to read or validate a golden file, or to read/write run history.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// The golden file is not valid; the message says where.
    #[error("invalid golden file: {0}")]
    InvalidGolden(String),
    /// Reading or writing a file failed.
    #[error("{0}: {1}")]
    Io(String, std::io::Error),
    /// A run history file is not valid JSON of the expected shape.
    #[error("invalid eval history `{0}`: {1}")]
    InvalidHistory(String, String),
}

/// One golden query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GoldenQuery {
    /// Its stable identifier (the diff key).
    pub id: String,
    /// The query text.
    pub query: String,
    /// Root-relative paths of the documents that answer it (deduplicated, in file order).
    pub expected: Vec<String>,
    /// Its tags (deduplicated, in file order); the report averages the metrics per tag.
    pub tags: Vec<String>,
}

/// A parsed golden file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Golden {
    /// The queries, in file order.
    pub queries: Vec<GoldenQuery>,
    /// xxh64 of the file's bytes (hex), to tell whether two runs used the same file.
    pub hash: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGolden {
    queries: Option<Vec<RawQuery>>,
    #[serde(default)]
    #[allow(dead_code)]
    defaults: Option<serde_norway::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawQuery {
    id: Option<String>,
    query: Option<String>,
    expected: Option<Vec<RawExpected>>,
    #[serde(default)]
    tags: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExpected {
    path: Option<String>,
    heading: Option<String>,
}

/// Parses and validates a golden file: at least one query; each with a non-empty
/// `query` and at least one `expected` entry with a relative `path` (no `..`, no
/// leading `/`); ids unique (a missing id defaults to the query's first 32 characters).
pub fn parse_golden(text: &str) -> Result<Golden, EvalError> {
    let bad = |m: String| EvalError::InvalidGolden(m);
    let raw: RawGolden = serde_norway::from_str(text).map_err(|e| bad(e.to_string()))?;
    let raw_queries = raw.queries.ok_or_else(|| bad("no `queries` list".into()))?;
    if raw_queries.is_empty() {
        return Err(bad("`queries` is empty".into()));
    }
    let mut queries = Vec::new();
    let mut ids = HashSet::new();
    for (n, q) in raw_queries.into_iter().enumerate() {
        let at = format!("queries[{n}]");
        let query = q
            .query
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty());
        let query = query.ok_or_else(|| bad(format!("{at}: `query` is missing or empty")))?;
        let id = match q.id {
            Some(id) if id.trim().is_empty() => return Err(bad(format!("{at}: `id` is empty"))),
            Some(id) => id,
            None => query.chars().take(32).collect(),
        };
        if !ids.insert(id.clone()) {
            return Err(bad(format!("{at}: duplicate id `{id}`")));
        }
        let raw_expected = q.expected.unwrap_or_default();
        if raw_expected.is_empty() {
            return Err(bad(format!(
                "{at} (`{id}`): `expected` needs at least one entry"
            )));
        }
        let mut expected: Vec<String> = Vec::new();
        for (m, e) in raw_expected.into_iter().enumerate() {
            let at = format!("{at}.expected[{m}]");
            if e.heading.is_some() {
                return Err(bad(format!(
                    "{at}: `heading` is not supported (folio evaluates documents; give only `path`)"
                )));
            }
            let path = e
                .path
                .map(|p| p.trim().to_string())
                .filter(|p| !p.is_empty());
            let path = path.ok_or_else(|| bad(format!("{at}: `path` is missing or empty")))?;
            if path.starts_with('/')
                || path.split('/').any(|seg| seg == "..")
                || path.contains('\\')
            {
                return Err(bad(format!(
                    "{at}: `{path}` must be a root-relative path with `/` separators and no `..`"
                )));
            }
            let path = path.trim_start_matches("./").to_string();
            if !expected.contains(&path) {
                expected.push(path);
            }
        }
        let mut tags: Vec<String> = Vec::new();
        for tag in q.tags {
            let tag = tag.trim().to_string();
            if tag.is_empty() {
                return Err(bad(format!("{at} (`{id}`): a tag is empty")));
            }
            if !tags.contains(&tag) {
                tags.push(tag);
            }
        }
        queries.push(GoldenQuery {
            id,
            query,
            expected,
            tags,
        });
    }
    Ok(Golden {
        queries,
        hash: format!("{:016x}", xxhash_rust::xxh64::xxh64(text.as_bytes(), 0)),
    })
}

/// Reads and parses a golden file.
pub fn load_golden(path: &Path) -> Result<Golden, EvalError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| EvalError::Io(format!("reading `{}`", path.display()), e))?;
    parse_golden(&text)
}

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

/// The outcome of one golden query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryOutcome {
    /// The golden id.
    pub id: String,
    /// The query text.
    pub query: String,
    /// `single` or `multi`.
    pub group: String,
    /// The expected documents.
    pub expected: Vec<String>,
    /// The golden query's tags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// The 1-based document rank of each expected document (same order), `None` when
    /// not among the ranked documents.
    pub ranks: Vec<Option<usize>>,
    /// The rank of the first expected document found.
    pub first_rank: Option<usize>,
    /// The top `max k` ranked documents.
    pub top: Vec<String>,
    /// The query's metrics by name ([`metric_names`]).
    pub metrics: BTreeMap<String, f64>,
    /// The search's `low_confidence` flag.
    #[serde(default)]
    pub low_confidence: bool,
}

/// What the search function of [`run_eval`] returns for one query.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SearchOutcome {
    /// The hits' document paths, best first, one per chunk hit (repeats allowed).
    pub paths: Vec<String>,
    /// The search's `low_confidence` flag.
    pub low_confidence: bool,
}

/// Averages over one group of queries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupMetrics {
    /// Queries in the group.
    pub queries: usize,
    /// Mean of each metric (0 for an empty group).
    pub metrics: BTreeMap<String, f64>,
}

/// The averages of the queries carrying one tag, split as for the whole file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TagMetrics {
    /// The tag's single-answer queries.
    pub single: GroupMetrics,
    /// The tag's multi-answer queries.
    pub multi: GroupMetrics,
    /// All the tag's queries.
    pub all: GroupMetrics,
}

/// One evaluation run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalReport {
    /// The golden file as named on the command line.
    pub golden: String,
    /// [`Golden::hash`].
    pub golden_hash: String,
    /// The search mode (and pipeline options) evaluated, e.g. `lexical` or `hybrid+mmr`.
    pub mode: String,
    /// The k values.
    pub k: Vec<usize>,
    /// Single-answer queries.
    pub single: GroupMetrics,
    /// Multi-answer queries.
    pub multi: GroupMetrics,
    /// All queries.
    pub all: GroupMetrics,
    /// Per tag (see [`GoldenQuery::tags`]), by tag name; empty when no query has a tag.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub by_tag: BTreeMap<String, TagMetrics>,
    /// Expected documents that are not in the index (a golden typo or a missing file).
    pub missing_expected: Vec<String>,
    /// Per query, in golden order.
    pub queries: Vec<QueryOutcome>,
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
        group: if q.expected.len() == 1 {
            "single"
        } else {
            "multi"
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
        TagMetrics {
            single: average(&pick("single"), &names),
            multi: average(&pick("multi"), &names),
            all: average(of, &names),
        }
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
        k: ks,
        missing_expected: missing,
        queries: outcomes,
    })
}

/// The change of one metric of one group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricDelta {
    /// `single`, `multi`, `all`, or `tag:` and a tag (all the tag's queries).
    pub group: String,
    /// The metric name.
    pub metric: String,
    /// The previous value.
    pub before: f64,
    /// The current value.
    pub after: f64,
    /// `after − before`.
    pub delta: f64,
}

/// A query whose first-hit rank changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankChange {
    /// The golden id.
    pub id: String,
    /// Previous first rank (`None`: not found).
    pub before: Option<usize>,
    /// Current first rank.
    pub after: Option<usize>,
    /// Previous per-expected ranks.
    pub ranks_before: Vec<Option<usize>>,
    /// Current per-expected ranks.
    pub ranks_after: Vec<Option<usize>>,
}

/// The difference between two runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalDiff {
    /// True when the golden file changed (aggregate deltas are then left out: they
    /// would compare different question sets).
    pub golden_changed: bool,
    /// Per group and metric (every metric, changed or not), when the golden file is the same.
    pub metrics: Vec<MetricDelta>,
    /// Queries (by id, present in both runs) whose per-expected ranks changed.
    pub queries: Vec<RankChange>,
}

/// Compares `now` with `prev`.
pub fn diff(prev: &EvalReport, now: &EvalReport) -> EvalDiff {
    let golden_changed = prev.golden_hash != now.golden_hash;
    let mut metrics = Vec::new();
    if !golden_changed {
        let mut groups = vec![
            ("single".to_string(), &prev.single, &now.single),
            ("multi".to_string(), &prev.multi, &now.multi),
            ("all".to_string(), &prev.all, &now.all),
        ];
        for (tag, b) in &now.by_tag {
            if let Some(a) = prev.by_tag.get(tag) {
                groups.push((format!("tag:{tag}"), &a.all, &b.all));
            }
        }
        for (group, a, b) in groups {
            for name in metric_names(&now.k) {
                if let (Some(before), Some(after)) = (a.metrics.get(&name), b.metrics.get(&name)) {
                    metrics.push(MetricDelta {
                        group: group.clone(),
                        metric: name,
                        before: *before,
                        after: *after,
                        delta: after - before,
                    });
                }
            }
        }
    }
    let queries = now
        .queries
        .iter()
        .filter_map(|q| {
            let p = prev.queries.iter().find(|p| p.id == q.id)?;
            (p.ranks != q.ranks || p.first_rank != q.first_rank).then(|| RankChange {
                id: q.id.clone(),
                before: p.first_rank,
                after: q.first_rank,
                ranks_before: p.ranks.clone(),
                ranks_after: q.ranks.clone(),
            })
        })
        .collect();
    EvalDiff {
        golden_changed,
        metrics,
        queries,
    }
}

fn rank_str(r: Option<usize>) -> String {
    r.map_or_else(|| "—".to_string(), |r| r.to_string())
}

/// The human-readable report, with deltas when `diff` is given.
pub fn format_text(report: &EvalReport, diff: Option<&EvalDiff>) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "folio eval — {} — mode {} — {} queries ({} single-answer, {} multi-answer)",
        report.golden, report.mode, report.all.queries, report.single.queries, report.multi.queries
    );
    let delta = |group: &str, name: &str| -> String {
        diff.and_then(|d| {
            d.metrics
                .iter()
                .find(|m| m.group == group && m.metric == name)
        })
        .map(|m| {
            if m.delta.abs() < 5e-4 {
                " ".repeat(9)
            } else {
                format!(" ({:+.3})", m.delta)
            }
        })
        .unwrap_or_default()
    };
    let _ = writeln!(s, "{:<11}{:>18}{:>18}{:>18}", "", "single", "multi", "all");
    for name in metric_names(&report.k) {
        let cell = |group: &str, g: &GroupMetrics| {
            format!(
                "{:.3}{}",
                g.metrics.get(&name).copied().unwrap_or(0.0),
                delta(group, &name)
            )
        };
        let _ = writeln!(
            s,
            "{:<11}{:>18}{:>18}{:>18}",
            name,
            cell("single", &report.single),
            cell("multi", &report.multi),
            cell("all", &report.all)
        );
    }
    if !report.by_tag.is_empty() {
        // One column per tag, over all its queries; the JSON report splits each into
        // single- and multi-answer queries as well.
        let _ = write!(s, "{:<11}", "by tag");
        for (tag, m) in &report.by_tag {
            let head = format!(
                "{tag} ({}: {}+{})",
                m.all.queries, m.single.queries, m.multi.queries
            );
            let _ = write!(s, "{head:>18}");
        }
        let _ = writeln!(s);
        for name in metric_names(&report.k) {
            let _ = write!(s, "{name:<11}");
            for (tag, m) in &report.by_tag {
                let value = m.all.metrics.get(&name).copied().unwrap_or(0.0);
                let cell = format!("{value:.3}{}", delta(&format!("tag:{tag}"), &name));
                let _ = write!(s, "{cell:>18}");
            }
            let _ = writeln!(s);
        }
    }
    if !report.missing_expected.is_empty() {
        let _ = writeln!(
            s,
            "warning: expected documents not in the index: {}",
            report.missing_expected.join(", ")
        );
    }
    match diff {
        None => {
            let _ = writeln!(s, "(no previous run to compare with)");
        }
        Some(d) => {
            if d.golden_changed {
                let _ = writeln!(
                    s,
                    "note: the golden file changed since the previous run; metric deltas are left out"
                );
            }
            if d.queries.is_empty() {
                let _ = writeln!(s, "no query changed rank since the previous run");
            } else {
                let _ = writeln!(
                    s,
                    "rank changes since the previous run (first expected document):"
                );
                for c in &d.queries {
                    let arrow = match (c.before, c.after) {
                        (Some(b), Some(a)) if a < b => "better",
                        (None, Some(_)) => "better",
                        (Some(b), Some(a)) if a == b => "same first",
                        _ => "worse",
                    };
                    let _ = writeln!(
                        s,
                        "  {:<28} {} → {}  ({arrow})",
                        c.id,
                        rank_str(c.before),
                        rank_str(c.after)
                    );
                }
            }
        }
    }
    let max_k = report.k.iter().max().copied().unwrap_or(10);
    let low = report.queries.iter().filter(|q| q.low_confidence).count();
    let _ = writeln!(
        s,
        "low_confidence on {low} of {} queries",
        report.queries.len()
    );
    let misses: Vec<&QueryOutcome> = report
        .queries
        .iter()
        .filter(|q| q.ranks.iter().any(|r| r.is_none_or(|r| r > max_k)))
        .collect();
    if !misses.is_empty() {
        let _ = writeln!(s, "expected documents outside the top {max_k}:");
        for q in misses {
            let ranks: Vec<String> = q.ranks.iter().map(|r| rank_str(*r)).collect();
            let _ = writeln!(
                s,
                "  {:<28} ranks [{}]  {}",
                q.id,
                ranks.join(", "),
                q.expected.join(", ")
            );
        }
    }
    s
}

/// Previous runs, keyed by golden file and mode (see [`history_key`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EvalHistory {
    /// The last run per key.
    pub runs: BTreeMap<String, EvalReport>,
}

/// The key of a run in [`EvalHistory`]: the golden file's canonical path and the mode.
pub fn history_key(golden_path: &Path, mode: &str) -> String {
    let p = golden_path
        .canonicalize()
        .unwrap_or_else(|_| golden_path.to_path_buf());
    format!("{}#{mode}", p.display())
}

impl EvalHistory {
    /// Reads a history file; a missing file is an empty history.
    pub fn load(path: &Path) -> Result<EvalHistory, EvalError> {
        match std::fs::read_to_string(path) {
            Ok(text) => serde_json::from_str(&text)
                .map_err(|e| EvalError::InvalidHistory(path.display().to_string(), e.to_string())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(EvalHistory::default()),
            Err(e) => Err(EvalError::Io(format!("reading `{}`", path.display()), e)),
        }
    }

    /// Writes the history atomically (a temporary file renamed over it).
    pub fn save(&self, path: &Path) -> Result<(), EvalError> {
        let io = |e| EvalError::Io(format!("writing `{}`", path.display()), e);
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(io)?;
        let json = serde_json::to_string_pretty(self).map_err(|e| io(std::io::Error::other(e)))?;
        let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(io)?;
        std::io::Write::write_all(&mut tmp, json.as_bytes()).map_err(io)?;
        tmp.persist(path).map_err(|e| io(e.error))?;
        Ok(())
    }
}

/// Reads one report (a `folio eval --json` output or a history entry) as a baseline.
pub fn load_report(path: &Path) -> Result<EvalReport, EvalError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| EvalError::Io(format!("reading `{}`", path.display()), e))?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| EvalError::InvalidHistory(path.display().to_string(), e.to_string()))?;
    // `folio eval --json` prints `{"report": …, "diff": …}`; a bare report is accepted too.
    let report = value.get("report").cloned().unwrap_or(value);
    serde_json::from_value(report)
        .map_err(|e| EvalError::InvalidHistory(path.display().to_string(), e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn eval_metrics_hand_computed() {
        let ranked = s(&["a", "x", "b", "y", "c"]);
        let e = s(&["b", "a"]);
        assert_eq!(recall_at_k(&e, &ranked, 1), 0.5);
        assert_eq!(recall_at_k(&e, &ranked, 3), 1.0);
        assert_eq!(recall_at_k(&e, &ranked, 10), 1.0);
        assert_eq!(reciprocal_rank(&e, &ranked), 1.0);
        assert_eq!(reciprocal_rank(&s(&["c"]), &ranked), 0.2);
        assert_eq!(reciprocal_rank(&s(&["z"]), &ranked), 0.0);
        // DCG = 1/log2(2) + 1/log2(4) = 1 + 0.5 = 1.5; IDCG = 1 + 1/log2(3) = 1.6309297535714575.
        let want = 1.5 / (1.0 + 1.0 / 3f64.log2());
        assert!(close(ndcg_at_k(&e, &ranked, 10), want));
        assert!((want - 0.919_720_8).abs() < 1e-6);
        // Only 'c' at rank 5, k = 10: (1/log2(6)) / 1 = 0.3868528072.
        assert!(close(ndcg_at_k(&s(&["c"]), &ranked, 10), 1.0 / 6f64.log2()));
        assert_eq!(ndcg_at_k(&s(&["c"]), &ranked, 4), 0.0);
        // Perfect ranking is 1.
        assert_eq!(ndcg_at_k(&s(&["a", "x"]), &ranked, 10), 1.0);
        // Three expected, k = 2: IDCG counts min(3, 2) = 2 positions.
        assert!(close(ndcg_at_k(&s(&["a", "x", "q"]), &ranked, 2), 1.0));
    }

    #[test]
    fn eval_ranks_documents_at_first_occurrence() {
        let hits = ["a.md", "a.md", "b.md", "a.md", "c.md"];
        assert_eq!(rank_documents(hits), s(&["a.md", "b.md", "c.md"]));
        let q = GoldenQuery {
            id: "q".into(),
            query: "x".into(),
            expected: s(&["c.md"]),
            tags: Vec::new(),
        };
        let out = score_query(&q, &rank_documents(hits), &[1, 5, 10]);
        assert_eq!(out.first_rank, Some(3));
        assert_eq!(out.metrics["recall@1"], 0.0);
        assert_eq!(out.metrics["recall@5"], 1.0);
        assert!(close(out.metrics["mrr"], 1.0 / 3.0));
        assert!(close(out.metrics["ndcg@10"], 0.5));
    }

    #[test]
    fn eval_groups_and_diff() {
        let golden = parse_golden(
            "queries:\n  - id: one\n    query: alpha\n    expected: [{path: a.md}]\n  - id: two\n    query: beta\n    expected:\n      - path: b.md\n      - path: c.md\n",
        )
        .unwrap();
        let mut results: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        results.insert("alpha", s(&["x.md", "a.md"]));
        results.insert("beta", s(&["c.md", "c.md", "y.md", "b.md"]));
        let mut search = |q: &str| -> Result<SearchOutcome, String> {
            Ok(SearchOutcome {
                paths: results[q].clone(),
                low_confidence: q == "beta",
            })
        };
        let report = run_eval(
            &golden,
            "g.yml",
            "lexical",
            &[10, 1, 5, 5],
            &|p| p != "c.md",
            &mut search,
        )
        .unwrap();
        assert_eq!(report.k, vec![1, 5, 10]);
        assert_eq!(
            (
                report.single.queries,
                report.multi.queries,
                report.all.queries
            ),
            (1, 1, 2)
        );
        assert_eq!(report.single.metrics["recall@1"], 0.0);
        assert_eq!(report.single.metrics["mrr"], 0.5);
        // beta: documents c, y, b → recall@1 = 0.5, recall@5 = 1, RR = 1,
        // nDCG = (1 + 1/log2(4)) / (1 + 1/log2(3)) = 1.5 / 1.6309297535714575.
        assert_eq!(report.multi.metrics["recall@1"], 0.5);
        assert_eq!(report.multi.metrics["recall@5"], 1.0);
        assert!(close(
            report.multi.metrics["ndcg@10"],
            1.5 / (1.0 + 1.0 / 3f64.log2())
        ));
        assert_eq!(report.all.metrics["mrr"], 0.75);
        assert_eq!(report.missing_expected, s(&["c.md"]));
        assert_eq!(report.queries[1].ranks, vec![Some(3), Some(1)]);
        assert!(!report.queries[0].low_confidence && report.queries[1].low_confidence);

        // A second run where alpha finds a.md first.
        results.insert("alpha", s(&["a.md"]));
        let mut search = |q: &str| -> Result<SearchOutcome, String> {
            Ok(SearchOutcome {
                paths: results[q].clone(),
                low_confidence: q == "beta",
            })
        };
        let now = run_eval(
            &golden,
            "g.yml",
            "lexical",
            &[1, 5, 10],
            &|_| true,
            &mut search,
        )
        .unwrap();
        let d = diff(&report, &now);
        assert!(!d.golden_changed);
        let single_r1 = d
            .metrics
            .iter()
            .find(|m| m.group == "single" && m.metric == "recall@1")
            .unwrap();
        assert_eq!(
            (single_r1.before, single_r1.after, single_r1.delta),
            (0.0, 1.0, 1.0)
        );
        assert_eq!(d.queries.len(), 1);
        assert_eq!(
            (
                d.queries[0].id.as_str(),
                d.queries[0].before,
                d.queries[0].after
            ),
            ("one", Some(2), Some(1))
        );
        let text = format_text(&now, Some(&d));
        assert!(text.contains("(+1.000)"), "{text}");
        assert!(text.contains("one") && text.contains("2 → 1"), "{text}");
        // JSON round trip.
        let back: EvalReport = serde_json::from_str(&serde_json::to_string(&now).unwrap()).unwrap();
        assert_eq!(back, now);
    }

    #[test]
    fn eval_rejects_invalid_golden_files() {
        for (text, needle) in [
            ("", "queries"),
            ("queries: []", "empty"),
            ("queries:\n  - query: x\n", "expected"),
            (
                "queries:\n  - query: ''\n    expected: [{path: a.md}]\n",
                "query",
            ),
            (
                "queries:\n  - query: x\n    expected: [{path: /etc/passwd}]\n",
                "root-relative",
            ),
            (
                "queries:\n  - query: x\n    expected: [{path: ../a.md}]\n",
                "root-relative",
            ),
            (
                "queries:\n  - query: x\n    expected: [{path: a.md, heading: H}]\n",
                "heading",
            ),
            (
                "queries:\n  - {id: a, query: x, expected: [{path: a.md}]}\n  - {id: a, query: y, expected: [{path: b.md}]}\n",
                "duplicate",
            ),
            (
                "queries:\n  - query: x\n    expected: [{path: a.md}]\n    bogus: 1\n",
                "bogus",
            ),
            (
                "queries:\n  - query: x\n    tags: ['']\n    expected: [{path: a.md}]\n",
                "a tag is empty",
            ),
            ("queries: [", ""),
        ] {
            let err = parse_golden(text).unwrap_err().to_string();
            assert!(
                err.starts_with("invalid golden file") && err.contains(needle),
                "{text:?}: {err}"
            );
        }
        let g = parse_golden("defaults: {limit: 3}\nqueries:\n  - query: a long query that goes beyond thirty-two characters\n    tags: [x]\n    expected: [{path: ./a.md}, {path: a.md}]\n").unwrap();
        assert_eq!(g.queries[0].id, "a long query that goes beyond th");
        assert_eq!(g.queries[0].tags, s(&["x"]));
        assert_eq!(g.queries[0].expected, s(&["a.md"]));
    }
    #[test]
    fn eval_averages_per_tag() {
        let golden = parse_golden(
            "queries:
  - {id: en-a, tags: [en], query: alpha, expected: [{path: a.md}]}
  - {id: ja-b, tags: [ja, ' ja'], query: beta, expected: [{path: b.md}]}
  - {id: x-c, tags: [cross], query: gamma, expected: [{path: c.md}, {path: d.md}]}
  - {id: en-d, tags: [en], query: delta, expected: [{path: e.md}]}
  - {id: plain, query: eps, expected: [{path: f.md}]}
",
        )
        .unwrap();
        assert_eq!(golden.queries[1].tags, s(&["ja"]));
        assert!(golden.queries[4].tags.is_empty());
        let mut results: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        results.insert("alpha", s(&["a.md"]));
        results.insert("beta", s(&["x.md", "y.md", "b.md"]));
        results.insert("gamma", s(&["d.md", "z.md", "c.md"]));
        results.insert("delta", s(&[]));
        results.insert("eps", s(&["f.md"]));
        let run = |results: &BTreeMap<&str, Vec<String>>| {
            let mut search = |q: &str| -> Result<SearchOutcome, String> {
                Ok(SearchOutcome {
                    paths: results[q].clone(),
                    low_confidence: false,
                })
            };
            run_eval(&golden, "g.yml", "hybrid", &[1, 5], &|_| true, &mut search).unwrap()
        };
        let report = run(&results);
        assert_eq!(
            report.by_tag.keys().collect::<Vec<_>>(),
            vec!["cross", "en", "ja"]
        );
        let en = &report.by_tag["en"];
        assert_eq!(
            (en.all.queries, en.single.queries, en.multi.queries),
            (2, 2, 0)
        );
        // alpha first (1, 1, 1, 1), delta not found (0, 0, 0, 0).
        assert_eq!(en.all.metrics["recall@1"], 0.5);
        assert_eq!(en.all.metrics["recall@5"], 0.5);
        assert_eq!(en.all.metrics["mrr"], 0.5);
        assert_eq!(en.all.metrics["ndcg@5"], 0.5);
        // beta third: recall@1 0, recall@5 1, RR 1/3, nDCG 1/log2(4) = 0.5.
        let ja = &report.by_tag["ja"].all;
        assert_eq!(ja.queries, 1);
        assert_eq!(ja.metrics["recall@1"], 0.0);
        assert_eq!(ja.metrics["recall@5"], 1.0);
        assert!(close(ja.metrics["mrr"], 1.0 / 3.0));
        assert_eq!(ja.metrics["ndcg@5"], 0.5);
        // gamma: d first, c third; the tag's one query is multi-answer.
        let cross = &report.by_tag["cross"];
        assert_eq!((cross.single.queries, cross.multi.queries), (0, 1));
        assert_eq!(cross.multi.metrics["recall@1"], 0.5);
        assert_eq!(cross.all.metrics["mrr"], 1.0);
        assert!(close(
            cross.all.metrics["ndcg@5"],
            1.5 / (1.0 + 1.0 / 3f64.log2())
        ));
        // The untagged query counts in the whole file only.
        assert_eq!(report.all.queries, 5);
        assert_eq!(report.queries[3].tags, s(&["en"]));

        let text = format_text(&report, None);
        let table: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.starts_with("by tag"))
            .take(5)
            .collect();
        assert_eq!(
            table,
            vec![
                "by tag         cross (1: 0+1)       en (2: 2+0)       ja (1: 1+0)",
                "recall@1                0.500             0.500             0.000",
                "recall@5                1.000             0.500             1.000",
                "mrr                     1.000             0.500             0.333",
                "ndcg@5                  0.920             0.500             0.500",
            ],
            "{text}"
        );

        // delta now finds e.md first: only the en tag (and the totals) move.
        results.insert("delta", s(&["e.md"]));
        let now = run(&results);
        let d = diff(&report, &now);
        let en_r1 = d
            .metrics
            .iter()
            .find(|m| m.group == "tag:en" && m.metric == "recall@1")
            .unwrap();
        assert_eq!((en_r1.before, en_r1.after, en_r1.delta), (0.5, 1.0, 0.5));
        let ja_r1 = d
            .metrics
            .iter()
            .find(|m| m.group == "tag:ja" && m.metric == "recall@1")
            .unwrap();
        assert_eq!(ja_r1.delta, 0.0);
        let text = format_text(&now, Some(&d));
        let row = text
            .lines()
            .skip_while(|l| !l.starts_with("by tag"))
            .nth(1)
            .unwrap();
        assert_eq!(
            row,
            "recall@1       0.500             1.000 (+0.500)    0.000         "
        );

        // The tags survive a JSON round trip, and a report written before tags existed
        // (no `by_tag`, no `tags`) still loads.
        let json = serde_json::to_value(&now).unwrap();
        assert_eq!(json["by_tag"]["en"]["all"]["queries"], 2);
        assert_eq!(json["queries"][0]["tags"], serde_json::json!(["en"]));
        assert!(json["queries"][4].get("tags").is_none());
        let back: EvalReport = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(back, now);
        let mut old = json;
        old.as_object_mut().unwrap().remove("by_tag");
        let old: EvalReport = serde_json::from_value(old).unwrap();
        assert!(old.by_tag.is_empty());
    }
}
