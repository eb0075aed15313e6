//! Multi-file test fixtures: one string, files introduced by `//- /path` lines.
//!
//! A file that is not Markdown becomes an "other" path; folders are recorded for every
//! file, as the walker would.

use std::path::PathBuf;

use crate::workspace::{Config, DocEntry, Origin, Workspace, is_markdown};

/// Splits a fixture into (path, text) pairs.
pub fn files(fixture: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in fixture.split_inclusive('\n') {
        if let Some(path) = line.strip_prefix("//- /") {
            out.push((path.trim().to_string(), String::new()));
        } else if let Some((_, text)) = out.last_mut() {
            text.push_str(line);
        }
    }
    out
}

/// An in-memory workspace holding the fixture's files.
pub fn workspace_with(fixture: &str, config: Config) -> Workspace {
    let mut ws = Workspace::new(PathBuf::from("/fixture"), config);
    ws.add_other("");
    for (path, text) in files(fixture) {
        let mut dir = path.as_str();
        while let Some((parent, _)) = dir.rsplit_once('/') {
            ws.add_other(parent);
            dir = parent;
        }
        if is_markdown(&path) {
            ws.insert(path, DocEntry::new(&text, 0, Origin::Disk));
        } else {
            ws.add_other(&path);
        }
    }
    ws
}

/// Writes the fixture's files under `root` (a real folder), creating their folders: for
/// tests that read a site's configuration from disk.
pub fn on_disk(root: &std::path::Path, fixture: &str) {
    for (path, text) in files(fixture) {
        let file = root.join(&path);
        std::fs::create_dir_all(file.parent().expect("a file has a folder")).expect("mkdir");
        std::fs::write(file, text).expect("write");
    }
}

/// [`workspace_with`] and the default configuration.
pub fn workspace(fixture: &str) -> Workspace {
    workspace_with(fixture, Config::default())
}
