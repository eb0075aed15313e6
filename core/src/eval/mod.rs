//! Retrieval evaluation: golden queries, recall@k, MRR, nDCG@k, and run-to-run diffs.
//!
//! `folio eval` reads a golden file (`golden.rs`), runs each query through the search and
//! scores the documents it ranks (`run.rs`, with the metrics in `metrics.rs`), prints the
//! report as text or JSON (`report.rs`) and compares it with the previous run (`diff.rs`),
//! which it keeps in a history file (`history.rs`).

mod diff;
mod golden;
mod history;
mod metrics;
mod report;
mod run;

pub use diff::{EvalDiff, MetricDelta, RankChange, diff};
pub use golden::{Golden, GoldenQuery, load_golden, parse_golden};
pub use history::{EvalHistory, history_key, load_report};
pub use metrics::{
    DEFAULT_K, metric_names, ndcg_at_k, rank_documents, recall_at_k, reciprocal_rank,
};
pub use report::{EvalReport, GroupMetrics, QueryOutcome, TagMetrics, Unanswerable, format_text};
pub use run::{SearchOutcome, run_eval, score_query};

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

#[cfg(test)]
mod tests;
