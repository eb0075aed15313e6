//! Where folio's installed data lives (the built-in embedding model, the Japanese
//! dictionary): one rule for every kind, the same one `scripts/lib-data-dir.sh` follows
//! when the fetch scripts install them.

use std::ffi::OsString;
use std::path::PathBuf;

/// The folder of the installed data `name` of `kind` (`models`, `dictionaries`), with the
/// environment read through `env`, in this order:
///
/// 1. the variable `override_var` when set and not empty (used as given, whether or not
///    it exists: an explicit choice is never silently replaced);
/// 2. `$XDG_DATA_HOME/folio/<kind>/<name>` when `XDG_DATA_HOME` is an absolute path
///    (the XDG Base Directory specification ignores a relative one);
/// 3. `$HOME/.local/share/folio/<kind>/<name>`.
///
/// `None` only when none of these variables is usable. The folder is not checked.
pub fn data_dir_from(
    env: impl Fn(&str) -> Option<OsString>,
    override_var: &str,
    kind: &str,
    name: &str,
) -> Option<PathBuf> {
    let var = |name: &str| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = var(override_var) {
        return Some(dir);
    }
    let data = match var("XDG_DATA_HOME").filter(|p| p.is_absolute()) {
        Some(data) => data,
        None => var("HOME")?.join(".local").join("share"),
    };
    Some(data.join("folio").join(kind).join(name))
}
