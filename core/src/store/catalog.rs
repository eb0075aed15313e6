//! The catalog of indexed documents: path, title, category, topic, date and hash.
//!
//! Front ends list topics and serve resources from this, so what they offer is
//! exactly what the index holds.

use super::{Store, StoreError};

/// One indexed document as the catalog lists it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct CatalogEntry {
    /// KB-relative path.
    pub path: String,
    /// Title (frontmatter `title`, first heading, else the file stem).
    pub title: Option<String>,
    /// Category (first folder, or frontmatter `category`).
    pub category: Option<String>,
    /// Topic (first two folders, or frontmatter `topic`).
    pub topic: Option<String>,
    /// Frontmatter `date` (`YYYY-MM-DD`), if valid.
    pub date: Option<String>,
    /// Source hash when indexed.
    pub source_hash: String,
    /// Size in bytes when indexed.
    pub size: u64,
}

impl Store {
    /// Every indexed document, sorted by path.
    pub fn catalog(&self) -> Result<Vec<CatalogEntry>, StoreError> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT path, title, category, topic, date, source_hash, size FROM documents ORDER BY path",
        )?;
        let rows = stmt.query_map([], |row| {
            Ok(CatalogEntry {
                path: row.get(0)?,
                title: row.get(1)?,
                category: row.get(2)?,
                topic: row.get(3)?,
                date: row.get(4)?,
                source_hash: row.get(5)?,
                size: u64::try_from(row.get::<_, i64>(6)?).unwrap_or(0),
            })
        })?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// Every tag of the indexed documents (frontmatter and inline, see
    /// [`crate::parse::Tag`]) with the number of documents carrying it, sorted by tag.
    pub fn tag_counts(&self) -> Result<Vec<(String, usize)>, StoreError> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT t.value, count(*) FROM documents d, json_each(d.tags_json) t
             WHERE t.type = 'text' GROUP BY t.value ORDER BY t.value",
        )?;
        let rows = stmt.query_map([], |row| {
            Ok((
                row.get::<_, String>(0)?,
                usize::try_from(row.get::<_, i64>(1)?).unwrap_or(0),
            ))
        })?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }
}
