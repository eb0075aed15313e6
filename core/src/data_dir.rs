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

/// The folder of folio's cache `name` (`outlines`), with the environment read through
/// `env`: `$XDG_CACHE_HOME/folio/<name>` when `XDG_CACHE_HOME` is an absolute path, else
/// `$HOME/.cache/folio/<name>` when `HOME` is an absolute path (the XDG Base Directory
/// specification's cache home; a relative one would put it under whatever folder the
/// process runs in).
/// What is there can be deleted at any time; folio makes it again.
///
/// `None` when neither variable is usable. The folder is not checked.
pub fn cache_dir_from(env: impl Fn(&str) -> Option<OsString>, name: &str) -> Option<PathBuf> {
    let var = |name: &str| env(name).map(PathBuf::from).filter(|p| p.is_absolute());
    let cache = match var("XDG_CACHE_HOME") {
        Some(cache) => cache,
        None => var("HOME")?.join(".cache"),
    };
    Some(cache.join("folio").join(name))
}

#[cfg(test)]
mod cache_tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn the_cache_folder_follows_the_xdg_cache_home_then_home() {
        let both = [("XDG_CACHE_HOME", "/c"), ("HOME", "/h")];
        assert_eq!(
            cache_dir_from(env(&both), "outlines"),
            Some(PathBuf::from("/c/folio/outlines"))
        );
        let relative = [("XDG_CACHE_HOME", "c"), ("HOME", "/h")];
        assert_eq!(
            cache_dir_from(env(&relative), "outlines"),
            Some(PathBuf::from("/h/.cache/folio/outlines"))
        );
        assert_eq!(cache_dir_from(env(&[("HOME", "")]), "outlines"), None);
        assert_eq!(
            cache_dir_from(env(&[("HOME", "relhome")]), "outlines"),
            None
        );
    }
}
