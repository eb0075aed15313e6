//! Where skills, units and ledger events are kept. Both places, the knowledge base
//! (`org`) and the private folder (`private`), use the same relative layout:
//!
//! ```text
//! skills/<name>/SKILL.md              a contributed skill (hand-written ones may be anywhere)
//! knowledge/units/<id>.md             a knowledge unit
//! knowledge/ledger/<item id>/<ms>-<hash>.json   one ledger event
//! ```
//!
//! The private folder is `$XDG_DATA_HOME/folio/knowledge/<XxHash64 of the root path>`
//! (else `~/.local/share/folio/knowledge/...`): the user's data folder for this root,
//! outside the knowledge base, so git never sees it.

use std::path::{Path, PathBuf};

/// Folder of knowledge units, relative to a place.
pub const UNITS_DIR: &str = "knowledge/units";

/// Folder of ledger events, relative to a place.
pub const LEDGER_DIR: &str = "knowledge/ledger";

/// Folder of contributed skills, relative to a place.
pub const SKILLS_DIR: &str = "skills";

/// The file name of a skill.
pub const SKILL_FILE: &str = "SKILL.md";

/// The private folder of `root` (absolute): see the module documentation. Creates nothing.
pub fn private_dir(root: &Path) -> PathBuf {
    let base = std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("folio")
        .join("knowledge")
        .join(super::short_hash(root.to_string_lossy().as_bytes()))
}

/// The relative path of unit `id` (checked with [`super::check_id`]).
pub fn unit_path(id: &str) -> String {
    format!("{UNITS_DIR}/{id}.md")
}

/// The relative path of a contributed skill named `name`: `skills/<folder>/SKILL.md`,
/// the folder being [`skill_folder`] of the name.
pub fn skill_path(name: &str, id: &str) -> String {
    format!("{SKILLS_DIR}/{}/{SKILL_FILE}", skill_folder(name, id))
}

/// A folder name for a skill: its name in lowercase, runs of other characters than
/// ASCII letters and digits turned into one `-`, at most 64 bytes; the id when nothing
/// is left (a name in Japanese, say).
pub fn skill_folder(name: &str, id: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    out.truncate(64);
    let out = out.trim_end_matches('-').to_string();
    if out.is_empty() { id.to_string() } else { out }
}

/// True for a path whose file name is `SKILL.md`.
pub fn is_skill_path(path: &str) -> bool {
    path.rsplit('/').next() == Some(SKILL_FILE)
}

/// True for a path of a unit file: `knowledge/units/<id>.md`.
pub fn is_unit_path(path: &str) -> bool {
    path.strip_prefix(UNITS_DIR)
        .and_then(|rest| rest.strip_prefix('/'))
        .is_some_and(|name| !name.contains('/') && name.ends_with(".md"))
}
