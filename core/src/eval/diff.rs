//! The difference between two runs of one golden file: every metric's change per group
//! and tag, and the queries whose ranks moved.

use serde::{Deserialize, Serialize};

use super::metrics::metric_names;
use super::report::EvalReport;

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
