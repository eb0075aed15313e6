//! folio's SQL functions, registered on every connection the store opens.
//!
//! Path globs are applied inside SQL through the scalar function
//! `folio_path_match(path, globs_json)`, so `LIMIT` counts only matching
//! chunks. The compiled glob set is cached per statement with SQLite's
//! auxiliary data, so it is built once per query, not once per row.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use rusqlite::Connection;
use rusqlite::functions::FunctionFlags;

/// The name of the SQL path-glob function registered on every connection.
pub(crate) const PATH_MATCH_FN: &str = "folio_path_match";

/// A compiled list of path globs, where `!glob` excludes.
///
/// A path passes when the include list is empty or one include matches, and
/// no exclude matches. Globs use `globset` syntax with `*` not crossing `/`
/// (use `**` for any depth); a glob ending in `/` means everything below that
/// folder (`docs/` is `docs/**`).
#[derive(Debug, Clone)]
pub struct PathFilter {
    include: GlobSet,
    n_include: usize,
    exclude: GlobSet,
}

impl PathFilter {
    /// Compiles `globs`; the error message names the offending glob.
    pub fn new(globs: &[String]) -> Result<PathFilter, String> {
        let mut include = GlobSetBuilder::new();
        let mut exclude = GlobSetBuilder::new();
        let mut n_include = 0;
        for raw in globs {
            let (negated, pattern) = match raw.strip_prefix('!') {
                Some(rest) => (true, rest),
                None => (false, raw.as_str()),
            };
            let pattern = pattern.trim();
            if pattern.is_empty() {
                return Err(format!("invalid path glob {raw:?}: the glob is empty"));
            }
            let pattern = if pattern.ends_with('/') {
                format!("{pattern}**")
            } else {
                pattern.to_owned()
            };
            let glob = GlobBuilder::new(&pattern)
                .literal_separator(true)
                .build()
                .map_err(|err| format!("invalid path glob {raw:?}: {}", err.kind()))?;
            if negated {
                exclude.add(glob);
            } else {
                include.add(glob);
                n_include += 1;
            }
        }
        let build = |builder: GlobSetBuilder| {
            builder
                .build()
                .map_err(|err| format!("invalid path globs: {err}"))
        };
        Ok(PathFilter {
            include: build(include)?,
            n_include,
            exclude: build(exclude)?,
        })
    }

    /// True when `path` (KB-relative, `/`-separated) passes the filter.
    pub fn matches(&self, path: &str) -> bool {
        (self.n_include == 0 || self.include.is_match(path)) && !self.exclude.is_match(path)
    }
}

/// Registers folio's SQL functions on `conn`.
///
/// `folio_path_match(path TEXT, globs_json TEXT) -> INTEGER` returns 1 when
/// `path` passes the [`PathFilter`] built from the JSON array of globs.
pub(crate) fn register_functions(conn: &Connection) -> rusqlite::Result<()> {
    conn.create_scalar_function(
        PATH_MATCH_FN,
        2,
        FunctionFlags::SQLITE_UTF8
            | FunctionFlags::SQLITE_DETERMINISTIC
            | FunctionFlags::SQLITE_DIRECTONLY,
        |ctx| {
            let filter = ctx.get_or_create_aux(1, |value| -> Result<PathFilter, String> {
                let json = value.as_str().map_err(|err| err.to_string())?;
                let globs: Vec<String> =
                    serde_json::from_str(json).map_err(|err| err.to_string())?;
                PathFilter::new(&globs)
            })?;
            let path: String = ctx.get(0)?;
            Ok(filter.matches(&path))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(globs: &[&str]) -> PathFilter {
        let globs: Vec<String> = globs.iter().map(|g| g.to_string()).collect();
        PathFilter::new(&globs).expect("valid globs")
    }

    #[test]
    fn globs() {
        let f = filter(&["docs/**", "!docs/drafts/**"]);
        assert!(f.matches("docs/a.md"));
        assert!(f.matches("docs/x/y.md"));
        assert!(!f.matches("docs/drafts/a.md"));
        assert!(!f.matches("notes/a.md"));

        let f = filter(&["!*.txt"]);
        assert!(f.matches("a.md"));
        assert!(!f.matches("a.txt"));

        let f = filter(&["notes/*.md"]);
        assert!(f.matches("notes/a.md"));
        assert!(!f.matches("notes/sub/a.md"));

        let f = filter(&["notes/"]);
        assert!(f.matches("notes/sub/a.md"));

        assert!(filter(&[]).matches("anything.md"));
    }

    #[test]
    fn invalid_globs() {
        assert_eq!(
            PathFilter::new(&["a/[b".to_owned()]).err().as_deref(),
            Some("invalid path glob \"a/[b\": unclosed character class; missing ']'")
        );
        assert_eq!(
            PathFilter::new(&["!".to_owned()]).err().as_deref(),
            Some("invalid path glob \"!\": the glob is empty")
        );
    }
}
