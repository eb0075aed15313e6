//! docfx, the build behind Microsoft Learn (PowerShell-Docs, the Windows Terminal docs and
//! most MicrosoftDocs repositories).
//!
//! **Redirections.** A page that is removed or renamed keeps its links working through a
//! redirection file: `.openpublishing.redirection.json` (and `.openpublishing.redirection.<name>.json`),
//! anywhere in the repository, and `redirections.json` at the root, hold
//! `{"redirections": [{"source_path": "…", "redirect_url": "…", "redirect_document_id": …}]}`.
//! `source_path` is relative to the folder of the file that names it,
//! `source_path_from_root` starts with `/` and is relative to the repository root; docfx
//! finds these files wherever they are (rule: docfx v3, `RedirectionProvider`), compares
//! paths without letter case (the build runs on Windows) and resolves a link to a
//! redirected path to the redirect's URL, without checking its fragment. folio looks the
//! files up first (a redirected file that still exists is a docfx warning of its own) and
//! then the redirections. [`Redirections`] holds them.
//!
//! **Heading ids.** docfx gives headings Markdig's GitHub-style ids
//! (`UseAutoIdentifiers(AutoIdentifierOptions.GitHub)`, [`markdig_ids`]): they equal
//! GitHub's slugs but where GitHub's is empty (a heading `` `$?` ``), which Markdig names
//! `section`, `section-1`, …, and where the text holds combining marks, letter-like or
//! other numbers (`Ⅻ`, `²`) or letters outside the Basic Multilingual Plane, which Markdig
//! drops.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// True when `root` is published with docfx: it has `.openpublishing.publish.config.json`
/// or a `docfx.json`, at the root or in a folder at the root (PowerShell-Docs keeps it in
/// `reference/`).
pub fn is_docfx_root(root: &Path) -> bool {
    const MARKERS: &[&str] = &[".openpublishing.publish.config.json", "docfx.json"];
    if MARKERS.iter().any(|m| root.join(m).is_file()) {
        return true;
    }
    let Ok(entries) = std::fs::read_dir(root) else {
        return false;
    };
    entries.flatten().any(|e| {
        let name = e.file_name();
        let hidden = name.to_string_lossy().starts_with('.');
        !hidden && e.path().is_dir() && e.path().join("docfx.json").is_file()
    })
}

/// The pages a docfx site redirects: KB-relative source path, lowercased → the URL it
/// redirects to. Empty for other sites.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Redirections {
    by_path: BTreeMap<String, String>,
    /// Redirection files that could not be read or parsed: (KB-relative path, why).
    pub problems: Vec<(String, String)>,
}

/// One redirection file.
#[derive(Deserialize)]
struct RedirectionFile {
    #[serde(default)]
    redirections: Vec<RedirectionEntry>,
}

/// One entry of a redirection file (`redirect_document_id` and `monikers` do not change
/// where a link leads, and are not read).
#[derive(Deserialize)]
struct RedirectionEntry {
    source_path: Option<String>,
    source_path_from_root: Option<String>,
    redirect_url: String,
}

/// True for the name of a redirection file docfx reads (rule: docfx v3 reads every
/// `*.openpublishing.redirection*.json` and the root's `redirections.json`).
pub fn is_redirection_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    let openpublishing = name.contains(".openpublishing.redirection") && name.ends_with(".json");
    openpublishing || path.eq_ignore_ascii_case("redirections.json")
}

impl Redirections {
    /// Reads the redirection files among `files` (KB-relative paths of the workspace's
    /// files) under `root`; a source path is joined onto its file's folder by the path
    /// policy (an entry whose path leaves the root is dropped). A file that cannot be
    /// read or parsed is named in [`Redirections::problems`]; its entries are not used.
    pub fn load<'a>(root: &Path, files: impl IntoIterator<Item = &'a str>) -> Redirections {
        let join = crate::path_policy::join_onto_folder;
        let mut out = Redirections::default();
        let mut names: Vec<&str> = files
            .into_iter()
            .filter(|p| is_redirection_file(p))
            .collect();
        names.sort_unstable();
        for name in names {
            let mut file = root.to_path_buf();
            file.extend(name.split('/'));
            let parsed = std::fs::read_to_string(&file)
                .map_err(|e| e.to_string())
                .and_then(|text| {
                    serde_json::from_str::<RedirectionFile>(text.trim_start_matches('\u{feff}'))
                        .map_err(|e| e.to_string())
                });
            match parsed {
                Ok(parsed) => out.add(name, parsed.redirections, &join),
                Err(why) => {
                    tracing::warn!("cannot read the docfx redirection file {name}: {why}");
                    out.problems.push((name.to_owned(), why));
                }
            }
        }
        out
    }

    /// Adds the entries of the redirection file at KB-relative `file`.
    fn add(
        &mut self,
        file: &str,
        entries: Vec<RedirectionEntry>,
        join: &impl Fn(&str, &str) -> Option<String>,
    ) {
        let folder = file.rsplit_once('/').map_or("", |(folder, _)| folder);
        for entry in entries {
            let source = match (&entry.source_path_from_root, &entry.source_path) {
                (Some(from_root), _) => join("", from_root.trim_start_matches('/')),
                (None, Some(relative)) => join(folder, relative),
                (None, None) => None,
            };
            if let Some(source) = source {
                self.by_path
                    .insert(source.to_lowercase(), entry.redirect_url);
            }
        }
    }

    /// The URL the page at KB-relative `path` redirects to, when it is redirected (letter
    /// case ignored).
    pub fn target(&self, path: &str) -> Option<&str> {
        self.by_path.get(&path.to_lowercase()).map(String::as_str)
    }

    /// How many pages are redirected.
    pub fn len(&self) -> usize {
        self.by_path.len()
    }

    /// True when no page is redirected.
    pub fn is_empty(&self) -> bool {
        self.by_path.is_empty()
    }
}

/// Markdig's id for one heading text, before de-duplication (its GitHub mode,
/// `LinkHelper.UrilizeAsGfm`): each letter or decimal digit of the Basic Multilingual Plane
/// (Unicode categories Lu, Ll, Lt, Lm, Lo, Nd) lowercased, `-` and `_` kept, each space
/// turned into `-`, everything else dropped; nothing is trimmed. May be empty.
pub fn markdig_slug(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let letter_or_digit = matches!(
            c.general_category(),
            GeneralCategory::UppercaseLetter
                | GeneralCategory::LowercaseLetter
                | GeneralCategory::TitlecaseLetter
                | GeneralCategory::ModifierLetter
                | GeneralCategory::OtherLetter
                | GeneralCategory::DecimalNumber
        );
        if letter_or_digit && u32::from(c) <= 0xFFFF {
            out.extend(c.to_lowercase());
        } else if c == '-' || c == '_' {
            out.push(c);
        } else if c == ' ' {
            out.push('-');
        }
    }
    out
}

/// The ids Markdig gives a document's headings, in order, from each heading's text and
/// explicit id (kept as it is): [`markdig_slug`], `section` when that is empty, and a
/// repeat made unique with the first free `-1`, `-2`, … (rule: Markdig
/// `AutoIdentifierExtension`, as docfx configures it).
pub fn markdig_ids<'a>(headings: impl Iterator<Item = (&'a str, Option<&'a str>)>) -> Vec<String> {
    let mut used = std::collections::HashSet::new();
    headings
        .map(|(text, id)| {
            // An explicit id is kept and not reserved (Markdig adds only the ids it makes).
            if let Some(id) = id {
                return id.to_owned();
            }
            let mut base = markdig_slug(text);
            if base.is_empty() {
                base = "section".to_owned();
            }
            super::first_free_id(&base, &mut used)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdig_ids_differ_from_github_slugs_only_where_markdig_drops_or_names_sections() {
        let texts = [
            "$$",
            "$?",
            "$^",
            "Section",
            "日本語",
            "Über uns",
            "v1.2_beta",
            "x² and ½",
            "Ⅻ",
            "𝒳 math",
            "🎉 Release",
            "C#",
        ];
        let ids = markdig_ids(texts.iter().map(|t| (*t, None)));
        assert_eq!(
            ids,
            [
                "section",
                "section-1",
                "section-2",
                "section-3",
                "日本語",
                "über-uns",
                "v12_beta",
                "x-and-",
                "section-4",
                "-math",
                "-release",
                "c",
            ]
        );
        // An explicit id is kept, and not reserved: Markdig numbers only the ids it makes.
        let ids = markdig_ids([("A", Some("a")), ("A", None)].into_iter());
        assert_eq!(ids, ["a", "a"]);
    }

    #[test]
    fn redirection_sources_are_relative_to_their_file_and_matched_without_case() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("redir")).unwrap();
        std::fs::write(
            dir.path().join("redir/.openpublishing.redirection.sdk.json"),
            r#"{"redirections": [
                {"source_path": "../docs/Old-Page.md", "redirect_url": "/site/new-page", "redirect_document_id": false},
                {"source_path_from_root": "/docs/gone.md", "redirect_url": "https://example.com/gone"}
            ]}"#,
        )
        .unwrap();
        std::fs::write(
            dir.path().join(".openpublishing.redirection.json"),
            "{not json",
        )
        .unwrap();
        let files = [
            "redir/.openpublishing.redirection.sdk.json",
            ".openpublishing.redirection.json",
            "docs/a.md",
        ];
        let r = Redirections::load(dir.path(), files);
        assert_eq!(r.len(), 2);
        assert_eq!(r.target("docs/old-page.md"), Some("/site/new-page"));
        assert_eq!(r.target("docs/Gone.md"), Some("https://example.com/gone"));
        assert_eq!(r.target("docs/a.md"), None);
        assert_eq!(r.problems.len(), 1);
        assert_eq!(r.problems[0].0, ".openpublishing.redirection.json");
        assert!(is_redirection_file("redirections.json"));
        assert!(!is_redirection_file("docs/redirections.json"));
    }
}
