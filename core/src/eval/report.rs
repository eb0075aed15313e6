//! The report of one evaluation run: its data (what `folio eval --json` prints and the
//! history keeps) and its text form, with the changes since the previous run.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::diff::EvalDiff;
use super::metrics::metric_names;

/// The outcome of one golden query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryOutcome {
    /// The golden id.
    pub id: String,
    /// The query text.
    pub query: String,
    /// `single`, `multi`, or `none` for an unanswerable query (`expected: []`).
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

impl QueryOutcome {
    /// True for a query nothing answers (`expected: []`, group `none`).
    pub fn unanswerable(&self) -> bool {
        self.expected.is_empty()
    }
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

/// The unanswerable queries of a run (`expected: []`): a search that knows when it has
/// no answer flags `low_confidence` on every one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unanswerable {
    /// Unanswerable queries.
    pub queries: usize,
    /// Of those, the ones whose search set `low_confidence`.
    pub low_confidence: usize,
}

/// One evaluation run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalReport {
    /// The golden file as named on the command line.
    pub golden: String,
    /// [`Golden::hash`](super::Golden::hash).
    pub golden_hash: String,
    /// The search mode (and pipeline options) evaluated, e.g. `lexical` or `hybrid+mmr`.
    pub mode: String,
    /// The k values.
    pub k: Vec<usize>,
    /// Single-answer queries.
    pub single: GroupMetrics,
    /// Multi-answer queries.
    pub multi: GroupMetrics,
    /// All answerable queries (single- and multi-answer).
    pub all: GroupMetrics,
    /// Per tag (see [`GoldenQuery::tags`](super::GoldenQuery::tags)), by tag name; empty when no query has a tag.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub by_tag: BTreeMap<String, TagMetrics>,
    /// The unanswerable queries and how many were flagged (absent from older reports).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unanswerable: Unanswerable,
    /// Expected documents that are not in the index (a golden typo or a missing file).
    pub missing_expected: Vec<String>,
    /// Per query, in golden order.
    pub queries: Vec<QueryOutcome>,
}

fn is_zero(u: &Unanswerable) -> bool {
    u.queries == 0
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
    // A cell without a change is padded so that its number lines up with those that show
    // one; with no change anywhere, nothing is.
    let any_change = diff.is_some_and(|d| d.metrics.iter().any(|m| m.delta.abs() >= 5e-4));
    let delta = |group: &str, name: &str| -> String {
        diff.and_then(|d| {
            d.metrics
                .iter()
                .find(|m| m.group == group && m.metric == name)
        })
        .map(|m| {
            if m.delta.abs() < 5e-4 {
                if any_change {
                    " ".repeat(9)
                } else {
                    String::new()
                }
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
    // How the flag splits between right and wrong first hits: a flag worth reading is
    // set on wrong ones and not on right ones.
    // Unanswerable queries have no right first hit; a flag worth reading is set on them.
    let low = report.queries.iter().filter(|q| q.low_confidence).count();
    let (right, wrong): (Vec<&QueryOutcome>, Vec<&QueryOutcome>) = report
        .queries
        .iter()
        .filter(|q| !q.unanswerable())
        .partition(|q| q.first_rank == Some(1));
    let flagged = |qs: &[&QueryOutcome]| qs.iter().filter(|q| q.low_confidence).count();
    let _ = write!(
        s,
        "low_confidence on {low} of {} queries: {} of {} right first hits, {} of {} wrong ones",
        report.queries.len(),
        flagged(&right),
        right.len(),
        flagged(&wrong),
        wrong.len()
    );
    let u = report.unanswerable;
    if u.queries > 0 {
        let _ = write!(
            s,
            ", {} of {} unanswerable queries",
            u.low_confidence, u.queries
        );
    }
    let _ = writeln!(s);
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
    // No line ends in blanks (the padding of a last cell without a change).
    let mut out: String = s.lines().map(|l| l.trim_end().to_owned() + "\n").collect();
    if !s.ends_with('\n') {
        out.pop();
    }
    out
}
