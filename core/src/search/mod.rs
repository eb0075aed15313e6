//! Lexical search over the index: FTS5 with BM25, filters and snippets.
//!
//! [`Store::search_lexical`] turns a [`SearchQuery`] into one SQL query over
//! `chunks_fts`, with every filter applied in SQL so `LIMIT` counts only
//! matching chunks. The query language is described in [`query`].
//! Scores are `-bm25` with the heading path weighted 2.0 and the body 1.0, so
//! higher is better.

pub mod confidence;
pub mod filter;
pub mod fusion;
pub mod mmr;
pub mod parent;
pub mod pipeline;
pub mod query;
pub mod semantic;
pub mod snippet;
pub mod vector;

use rusqlite::types::Value;

use crate::store::{HEADING_PATH_SEPARATOR, Store, StoreError};

/// The number of results returned when [`SearchQuery::limit`] is 0.
pub const DEFAULT_LIMIT: usize = 10;

/// Most distinct terms one query may have (each costs a `MATCH` and a BM25 lookup).
pub const MAX_TERMS: usize = 64;

/// BM25 column weights: heading path, body, and the document's frontmatter title,
/// aliases and tags.
const BM25_WEIGHTS: (f64, f64, f64) = (2.0, 1.0, 2.0);

/// A lexical search request.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchQuery {
    /// The query text; see [`query`] for the language.
    pub text: String,
    /// Maximum number of hits; 0 means [`DEFAULT_LIMIT`].
    pub limit: usize,
    /// Path globs; a `!`-prefixed glob excludes. See [`crate::store::functions::PathFilter`].
    pub path_globs: Vec<String>,
    /// Only documents whose category (first folder) is exactly this.
    pub category: Option<String>,
    /// Only documents whose topic (first two folders, `a/b`) is exactly this.
    pub topic: Option<String>,
    /// Only documents with at least one of these tags (frontmatter or inline `#tag`;
    /// exact match, or a tag nested in it: `project` matches `project/alpha`).
    pub tags_any: Vec<String>,
    /// Only documents with all of these tags (matched as `tags_any` matches).
    pub tags_all: Vec<String>,
    /// Only documents dated on or after this `YYYY-MM-DD` date.
    pub date_from: Option<String>,
    /// Only documents dated on or before this `YYYY-MM-DD` date.
    pub date_to: Option<String>,
    /// Frontmatter fields: for each `(key, values)`, the document's `key` (a string,
    /// number or list) must equal one of `values`. Keys are letters, digits, `_` and `-`.
    pub fields: Vec<(String, Vec<String>)>,
    /// Frontmatter fields that exclude: for each `(key, values)`, the document's `key`
    /// must not equal any of `values` (documents without the key stay).
    pub fields_not: Vec<(String, Vec<String>)>,
    /// Only documents whose quality score (`[0, 1]`, stubs score low) is at least this.
    pub min_quality: Option<f64>,
}

impl Default for SearchQuery {
    fn default() -> SearchQuery {
        SearchQuery {
            text: String::new(),
            limit: DEFAULT_LIMIT,
            path_globs: Vec::new(),
            category: None,
            topic: None,
            tags_any: Vec::new(),
            tags_all: Vec::new(),
            date_from: None,
            date_to: None,
            fields: Vec::new(),
            fields_not: Vec::new(),
            min_quality: None,
        }
    }
}

impl SearchQuery {
    /// A query for `text` with no filters and the default limit.
    pub fn new(text: &str) -> SearchQuery {
        SearchQuery {
            text: text.to_owned(),
            ..SearchQuery::default()
        }
    }
}

/// One matching chunk.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchHit {
    /// KB-relative path of the document.
    pub path: String,
    /// Pointer of the chunk's first element.
    pub pointer: String,
    /// Headings enclosing the chunk, outermost first.
    pub heading_path: Vec<String>,
    /// First line of the chunk, 1-based.
    pub start_line: u32,
    /// Last line of the chunk, 1-based, inclusive.
    pub end_line: u32,
    /// `-bm25`: higher is better; only comparable within one query.
    pub score: f64,
    /// About 200 characters of the chunk around the first query hit.
    pub snippet: String,
    /// The source hash of the document when it was indexed.
    pub indexed_source_hash: String,
    /// The chunk's page and definition in a document other than Markdown.
    pub citation: crate::store::Citation,
}

/// Another chunk of a hit's document that the search also found, listed on the hit
/// instead of taking a place of its own (`per_document`, docs/search.md, "One file, one
/// place").
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct SectionHit {
    /// Pointer of the chunk's first element (for kb_read / kb_patch).
    pub pointer: String,
    /// Headings above the chunk, outermost first.
    pub heading_path: Vec<String>,
    /// First line of the chunk, 1-based.
    pub start_line: u32,
    /// Last line of the chunk, 1-based, inclusive.
    pub end_line: u32,
    /// The mode's score, as the hit's.
    pub score: f64,
}

/// The answer to a [`SearchQuery`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SearchResults {
    /// Hits, best first.
    pub results: Vec<SearchHit>,
    /// True when there are no results, or the best hit matches fewer than half
    /// of the query's included terms.
    pub low_confidence: bool,
    /// Names of the filters that applied, in this order: `path_globs`,
    /// `category`, `topic`, `tags_any`, `tags_all`, `date_from`, `date_to`,
    /// then `fields` and `fields_not`.
    pub filter_applied: Vec<String>,
}

/// A failure of a search.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// The query is malformed: an invalid glob or date, for example.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The index could not be read.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<rusqlite::Error> for SearchError {
    fn from(err: rusqlite::Error) -> SearchError {
        SearchError::Store(StoreError::Sqlite(err))
    }
}

impl Store {
    /// Runs a lexical (FTS5, BM25) search.
    ///
    /// A query with no searchable term, or only `-excluded` terms, returns no
    /// hits (with `low_confidence` set) rather than an error.
    /// Invalid globs and dates give [`SearchError::InvalidArgument`].
    pub fn search_lexical(&self, search: &SearchQuery) -> Result<SearchResults, SearchError> {
        let ranking = self.lexical_ranking(search, true)?;
        let needles = snippet::needles_for(&query::parse_query(&search.text));
        Ok(SearchResults {
            results: self.hits_for(&ranking.ranked, &needles)?,
            low_confidence: ranking.low_confidence,
            filter_applied: ranking.filter_applied,
        })
    }

    /// The lexical leg's order without the hits' text: [`Store::search_lexical`]'s chunks
    /// as `(chunks.id, score)`, the score being −BM25 (higher is better), best first;
    /// `widen`: with the store's synonyms ([`Store::synonyms`]).
    pub(crate) fn lexical_ranking(
        &self,
        search: &SearchQuery,
        widen: bool,
    ) -> Result<Ranking, SearchError> {
        self.keep_lexical()?;
        let filters = build_filters(search)?;
        let terms = query::parse_query(&search.text);
        if terms.len() > MAX_TERMS {
            return Err(SearchError::InvalidArgument(format!(
                "the query has {} distinct terms; at most {MAX_TERMS} are allowed",
                terms.len()
            )));
        }
        let synonyms = if widen { self.synonyms() } else { None };
        let included = query::included_exprs(&terms, self.lexical(), synonyms);
        let Some(match_expr) = query::match_expr_of(&included, &terms, self.lexical()) else {
            return Ok(Ranking {
                ranked: Vec::new(),
                low_confidence: true,
                filter_applied: filters.applied,
            });
        };
        let limit = if search.limit == 0 {
            DEFAULT_LIMIT
        } else {
            search.limit
        };
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);

        let mut values = vec![Value::Text(match_expr)];
        values.extend(filters.values);
        values.push(Value::Integer(limit));
        let sql = format!(
            "SELECT c.id, bm25(chunks_fts, {heading_weight:.1}, {body_weight:.1}, {document_weight:.1}) AS score_bm25
             FROM chunks_fts
             JOIN chunks c ON c.id = chunks_fts.rowid
             JOIN documents d ON d.id = c.doc_id
             WHERE chunks_fts MATCH ?1{where_sql}
             ORDER BY score_bm25, d.path, c.seq
             LIMIT ?{limit_idx}",
            heading_weight = BM25_WEIGHTS.0,
            body_weight = BM25_WEIGHTS.1,
            document_weight = BM25_WEIGHTS.2,
            where_sql = filters.sql,
            limit_idx = values.len(),
        );
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(values.iter()), |row| {
            Ok((row.get::<_, i64>(0)?, -row.get::<_, f64>(1)?))
        })?;
        let ranked = rows.collect::<Result<Vec<_>, _>>()?;
        let low_confidence = match ranked.first() {
            None => true,
            Some(&(best, _)) => {
                let mut n_matched = 0;
                let mut stmt = conn.prepare_cached(
                    "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?1 AND rowid = ?2",
                )?;
                for expr in &included {
                    let n: i64 = stmt.query_row(rusqlite::params![expr, best], |row| row.get(0))?;
                    if n > 0 {
                        n_matched += 1;
                    }
                }
                n_matched * 2 < included.len()
            }
        };
        Ok(Ranking {
            ranked,
            low_confidence,
            filter_applied: filters.applied,
        })
    }

    /// The hits of `ranked` (`(chunks.id, score)`), in that order, each with its score
    /// and a snippet around the first of `needles` it contains. Chunks no longer in the
    /// index are left out.
    pub(crate) fn hits_for(
        &self,
        ranked: &[(i64, f64)],
        needles: &[String],
    ) -> Result<Vec<SearchHit>, SearchError> {
        let ids: Vec<i64> = ranked.iter().map(|(id, _)| *id).collect();
        let mut rows = self.load_chunk_rows(&ids)?;
        Ok(ranked
            .iter()
            .filter_map(|(id, score)| {
                let row = rows.remove(id)?;
                Some(SearchHit {
                    snippet: snippet::make_snippet(&row.text, needles),
                    path: row.path,
                    pointer: row.pointer,
                    heading_path: row.heading_path,
                    start_line: row.start_line,
                    end_line: row.end_line,
                    score: *score,
                    indexed_source_hash: row.source_hash,
                    citation: row.citation,
                })
            })
            .collect())
    }
}

/// One leg's order before fusion: chunk ids with their scores, best first, without the
/// chunks' text (the pipeline reads the text of the few it keeps).
#[derive(Debug)]
pub(crate) struct Ranking {
    /// `(chunks.id, score)`, best first; the score is the lexical leg's own (−BM25).
    pub(crate) ranked: Vec<(i64, f64)>,
    /// The leg's own low-confidence rule: no hits, or (lexical) the best hit matches
    /// fewer than half of the query's included terms.
    pub(crate) low_confidence: bool,
    /// Names of the filters that applied, as in [`SearchResults::filter_applied`].
    pub(crate) filter_applied: Vec<String>,
}

/// The SQL of the active filters (each clause starting with ` AND `), their
/// bound values (numbered from `?2`), and their names.
#[derive(Debug, Default)]
pub(crate) struct Filters {
    pub(crate) sql: String,
    pub(crate) values: Vec<Value>,
    pub(crate) applied: Vec<String>,
}

impl Filters {
    /// Adds a clause; `{}` in `clause` is replaced by the next parameter
    /// number for each value in `values`, in order.
    fn add(&mut self, name: &str, clause: &str, values: Vec<Value>) {
        let mut clause = clause.to_owned();
        for value in values {
            // `?1` is the MATCH expression, so filter parameters start at 2.
            let idx = self.values.len() + 2;
            clause = clause.replacen("{}", &format!("?{idx}"), 1);
            self.values.push(value);
        }
        self.sql.push_str(" AND ");
        self.sql.push_str(&clause);
        self.applied.push(name.to_owned());
    }
}

/// Validates the filters of `search` and turns them into SQL.
pub(crate) fn build_filters(search: &SearchQuery) -> Result<Filters, SearchError> {
    let mut filters = Filters::default();
    if !search.path_globs.is_empty() {
        crate::store::functions::PathFilter::new(&search.path_globs)
            .map_err(SearchError::InvalidArgument)?;
        let json = serde_json::to_string(&search.path_globs)
            .map_err(|err| SearchError::InvalidArgument(format!("path_globs: {err}")))?;
        let clause = format!(
            "{}(d.path, {{}}) = 1",
            crate::store::functions::PATH_MATCH_FN
        );
        filters.add("path_globs", &clause, vec![Value::Text(json)]);
    }
    if let Some(category) = &search.category {
        filters.add(
            "category",
            "d.category = {}",
            vec![Value::Text(category.clone())],
        );
    }
    if let Some(topic) = &search.topic {
        filters.add("topic", "d.topic = {}", vec![Value::Text(topic.clone())]);
    }
    // A tag matches itself and the tags nested in it (`project` matches `project/alpha`):
    // `parse::tag_within` in SQL, over the query's tags as one JSON array parameter (any
    // number of tags, one expression). Tags are written as `parse::clean_tag` reads them.
    const TAG_WITHIN: &str =
        "(t.value = q.value OR substr(t.value, 1, length(q.value) + 1) = q.value || '/')";
    let tags_any = clean_tags(&search.tags_any);
    if !tags_any.is_empty() {
        let json = serde_json::to_string(&tags_any)
            .map_err(|err| SearchError::InvalidArgument(format!("tags_any: {err}")))?;
        filters.add(
            "tags_any",
            &format!("EXISTS (SELECT 1 FROM json_each(d.tags_json) t, json_each({{}}) q WHERE {TAG_WITHIN})"),
            vec![Value::Text(json)],
        );
    }
    let tags_all = clean_tags(&search.tags_all);
    if !tags_all.is_empty() {
        let n = tags_all.len();
        let json = serde_json::to_string(&tags_all)
            .map_err(|err| SearchError::InvalidArgument(format!("tags_all: {err}")))?;
        filters.add(
            "tags_all",
            &format!(
                "(SELECT count(*) FROM json_each({{}}) q WHERE EXISTS (SELECT 1 FROM json_each(d.tags_json) t WHERE {TAG_WITHIN})) = {n}"
            ),
            vec![Value::Text(json)],
        );
    }
    if let Some(from) = &search.date_from {
        filter::validate_date("date_from", from).map_err(SearchError::InvalidArgument)?;
    }
    if let Some(to) = &search.date_to {
        filter::validate_date("date_to", to).map_err(SearchError::InvalidArgument)?;
    }
    if let (Some(from), Some(to)) = (&search.date_from, &search.date_to)
        && from > to
    {
        return Err(SearchError::InvalidArgument(format!(
            "date_from {from} is after date_to {to}"
        )));
    }
    if let Some(from) = &search.date_from {
        filters.add("date_from", "d.date >= {}", vec![Value::Text(from.clone())]);
    }
    if let Some(to) = &search.date_to {
        filters.add("date_to", "d.date <= {}", vec![Value::Text(to.clone())]);
    }
    if let Some(q) = search.min_quality {
        if !(0.0..=1.0).contains(&q) {
            return Err(SearchError::InvalidArgument(format!(
                "min_quality {q} is not between 0 and 1"
            )));
        }
        filters.add("min_quality", "d.quality >= {}", vec![Value::Real(q)]);
    }
    for (name, negate, list) in [
        ("fields", false, &search.fields),
        ("fields_not", true, &search.fields_not),
    ] {
        for (key, values) in list {
            if key.is_empty()
                || !key
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                return Err(SearchError::InvalidArgument(format!(
                    "{name}: `{key}` is not a frontmatter key (letters, digits, `_` and `-` only)"
                )));
            }
            let values = dedup(values);
            if values.is_empty() {
                return Err(SearchError::InvalidArgument(format!(
                    "{name}: `{key}` needs at least one value"
                )));
            }
            let placeholders = vec!["{}"; values.len()].join(", ");
            let clause = format!(
                "{}EXISTS (SELECT 1 FROM json_each(d.frontmatter_json, {{}}) WHERE CAST(value AS TEXT) IN ({placeholders}))",
                if negate { "NOT " } else { "" }
            );
            let mut params = vec![Value::Text(format!("$.\"{key}\""))];
            params.extend(values.into_iter().map(Value::Text));
            filters.add(name, &clause, params);
        }
    }
    filters.applied.dedup();
    Ok(filters)
}

/// Filter tags as folio names them ([`crate::parse::clean_tag`]: `#project/` is
/// `project`), each once, in order; blank ones dropped.
fn clean_tags(tags: &[String]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    tags.iter()
        .filter_map(|t| crate::parse::clean_tag(t))
        .filter(|t| seen.insert(*t))
        .map(str::to_owned)
        .collect()
}

/// Removes duplicates from `items`, keeping the first occurrence's order.
fn dedup(items: &[String]) -> Vec<String> {
    let mut res: Vec<String> = Vec::new();
    for item in items {
        if !res.contains(item) {
            res.push(item.clone());
        }
    }
    res
}

/// Splits a stored heading path back into headings.
pub(crate) fn split_heading_path(joined: &str) -> Vec<String> {
    if joined.is_empty() {
        return Vec::new();
    }
    joined
        .split(HEADING_PATH_SEPARATOR)
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests;
