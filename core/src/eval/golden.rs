//! Golden files: the YAML list of queries and the documents that answer them, read and
//! validated.
//!
//! A golden file (YAML) lists queries with the documents that answer them:
//!
//! ```yaml
//! queries:
//!   - id: ja-rollback            # optional; default: the first 32 characters of the query
//!     query: "本番に出した変更を前のバージョンへ戻したい"
//!     expected:
//!       - path: "ops/deploy-rollback.ja.md"   # root-relative
//!   - id: en-sourdough
//!     query: "how do I bake sourdough bread"
//!     expected: []                # nothing in the collection answers it
//! ```
//!
//! This is GrooveSeek's `groove eval` format (its optional `heading` is refused: folio
//! ranks documents, see below; a top-level `defaults` is accepted and ignored, as there).
//! A query's optional `tags` (e.g. `[ja]`) put it in named groups: the report then
//! also averages the metrics per tag, so that one file can hold, say, English,
//! Japanese and cross-language questions and be read per language.
//!
//! An explicit empty `expected: []` marks a question nothing in the collection answers
//! (folio's addition): it is left out of every average and counted apart, to show how
//! often the search's `low_confidence` flag warns that its best hit is no answer. A
//! missing `expected` stays an error, so that a forgotten list is not taken for one.

use std::collections::HashSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::EvalError;

/// One golden query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GoldenQuery {
    /// Its stable identifier (the diff key).
    pub id: String,
    /// The query text.
    pub query: String,
    /// Root-relative paths of the documents that answer it (deduplicated, in file order);
    /// empty for a question nothing in the collection answers ([`GoldenQuery::unanswerable`]).
    pub expected: Vec<String>,
    /// Its tags (deduplicated, in file order); the report averages the metrics per tag.
    pub tags: Vec<String>,
}

impl GoldenQuery {
    /// True for a question written with `expected: []`: no document answers it.
    pub fn unanswerable(&self) -> bool {
        self.expected.is_empty()
    }
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
/// `query` and an `expected` list (empty for an unanswerable question) whose entries
/// have a relative `path` (no `..`, no leading `/`); ids unique (a missing id defaults to the query's first 32 characters).
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
        let raw_expected = q.expected.ok_or_else(|| {
            bad(format!(
                "{at} (`{id}`): `expected` is missing (write `expected: []` for a question nothing answers)"
            ))
        })?;
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
