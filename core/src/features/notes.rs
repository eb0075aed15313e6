//! New notes an editor creates: the note a link to a missing note names, and the daily
//! note of a date, each with its text from the workspace's template (`[notes]` in
//! `folio.toml`).
//!
//! A template is a Markdown file of the workspace; `{{title}}`, `{{date}}` (`YYYY-MM-DD`)
//! and `{{time}}` (`HH:MM`, 24-hour) in it are replaced, everything else is kept as
//! written. Without a template a note is its title as a level-1 heading.

use chrono::NaiveDateTime;

use crate::config::NotesConfig;
use crate::links::navigate::click_target;
use crate::parse::Link;
use crate::path_policy::check_syntax;
use crate::workspace::{Workspace, is_markdown, markdown_text};

/// A note to create: where, and what it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewNote {
    /// KB-relative path (a Markdown file that does not exist yet, unless the caller finds
    /// otherwise when it creates it).
    pub path: String,
    /// Its text.
    pub text: String,
    /// Why the template was not used (it cannot be read): the note is then its title
    /// alone, and the editor says why.
    pub problem: Option<String>,
}

/// The local date and time of this machine (its time zone), as the notes are dated.
pub fn local_now() -> NaiveDateTime {
    chrono::Local::now().naive_local()
}

/// Reads a local date and time written `YYYY-MM-DDTHH:MM` (or with a space, or a date
/// alone: midnight); `None` for anything else.
pub fn parse_local(text: &str) -> Option<NaiveDateTime> {
    let text = text.trim();
    ["%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M"]
        .iter()
        .find_map(|f| NaiveDateTime::parse_from_str(text, f).ok())
        .or_else(|| {
            chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d")
                .ok()
                .and_then(|d| d.and_hms_opt(0, 0, 0))
        })
}

/// `template` with `{{title}}`, `{{date}}` and `{{time}}` replaced for `title` at `now`.
pub fn fill(template: &str, title: &str, now: NaiveDateTime) -> String {
    template
        .replace("{{title}}", title)
        .replace("{{date}}", &now.format("%Y-%m-%d").to_string())
        .replace("{{time}}", &now.format("%H:%M").to_string())
}

/// The note link `link` of document `from` names when nothing exists there
/// ([`click_target`]: a Markdown link's path with `.md` added when it has none, a wiki
/// link's name as a `.md` path), titled with the target's file stem as written (a wiki
/// link: its name's last segment) and filled from `[notes].template`. `Ok(None)` when the target exists, is no Markdown file (`pic.png`) or
/// is outside the root.
///
/// A template that cannot be read (missing, not UTF-8) leaves the note its title alone,
/// with the reason in [`NewNote::problem`].
pub fn note_for_link(
    ws: &Workspace,
    from: &str,
    link: &Link,
    now: NaiveDateTime,
) -> Option<NewNote> {
    let target = click_target(ws, from, link).filter(|t| t.missing)?;
    if !is_markdown(&target.path) || check_syntax(&target.path).is_err() {
        return None;
    }
    let name = target.path.rsplit('/').next().unwrap_or(&target.path);
    let title = name.rsplit_once('.').map_or(name, |(stem, _)| stem);
    let (text, problem) = match from_template(ws, "template", ws.config().notes.template.as_deref())
    {
        Ok(template) => (
            template.map_or_else(|| format!("# {title}\n"), |t| fill(&t, title, now)),
            None,
        ),
        Err(why) => (format!("# {title}\n"), Some(why)),
    };
    Some(NewNote {
        path: target.path,
        text,
        problem,
    })
}

/// The daily note of the local date and time `now`: `[notes].daily_folder`/ the date
/// formatted with `daily_format` `.md`, filled from `daily_template` (title: the date,
/// `YYYY-MM-DD`).
///
/// Errors: the name is no path folio accepts (the format made `..` or an absolute
/// path), or the template cannot be read.
pub fn daily_note(ws: &Workspace, now: NaiveDateTime) -> Result<NewNote, String> {
    let notes: &NotesConfig = &ws.config().notes;
    let path = notes.daily_path(now)?;
    let date = now.format("%Y-%m-%d").to_string();
    let text = from_template(ws, "daily_template", notes.daily_template.as_deref())?
        .map_or_else(|| format!("# {date}\n"), |t| fill(&t, &date, now));
    Ok(NewNote {
        path,
        text,
        problem: None,
    })
}

/// The text of template `path` (`[notes].<key>`): the workspace's document when it holds
/// it (an editor's unsaved text included), else the file under the root; `None` without
/// a template.
fn from_template(ws: &Workspace, key: &str, path: Option<&str>) -> Result<Option<String>, String> {
    let Some(path) = path else {
        return Ok(None);
    };
    if let Some(entry) = ws.get(path) {
        return Ok(Some(entry.doc.text()));
    }
    let missing = || format!("[notes].{key} `{path}` is not a file of the workspace");
    check_syntax(path).map_err(|_| missing())?;
    let bytes = crate::write::atomic::read(ws.root(), path)
        .map_err(|e| format!("[notes].{key} `{path}` cannot be read: {e}"))?
        .ok_or_else(missing)?;
    // The rules a document read from disk follows: the size cap, no NUL bytes, UTF-8.
    markdown_text(bytes, ws.config().index.max_file_size)
        .map(Some)
        .map_err(|reason| format!("[notes].{key} `{path}` cannot be used: {reason}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn at(s: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M").unwrap()
    }

    #[test]
    fn a_missing_note_is_made_from_the_template_and_a_daily_note_from_its_own() {
        let config = Config::from_toml(
            "[notes]\ntemplate = \"templates/note.md\"\ndaily_folder = \"log/\"\n\
             daily_format = \"%Y/%m-%d\"\ndaily_template = \"templates/day.md\"\n",
        )
        .unwrap();
        let ws = crate::fixture::workspace_with(
            "//- /templates/note.md\n---\ncreated: {{date}} {{time}}\n---\n# {{title}}\n\n{{unknown}} stays.\n\
             //- /templates/day.md\n# Journal {{title}}\n\
             //- /a.md\n[new](ideas/Big%20Idea) [[Other note]] [img](pic.png) [here](a.md)\n",
            config,
        );
        let now = at("2026-12-06 09:05");
        let links = ws.parsed("a.md").unwrap().links.clone();
        let made: Vec<Option<NewNote>> = links
            .iter()
            .map(|l| note_for_link(&ws, "a.md", l, now))
            .collect();
        assert_eq!(
            made,
            vec![
                Some(NewNote {
                    path: "ideas/Big Idea.md".into(),
                    text: "---\ncreated: 2026-12-06 09:05\n---\n# Big Idea\n\n{{unknown}} stays.\n"
                        .into(),
                    problem: None
                }),
                Some(NewNote {
                    path: "Other note.md".into(),
                    text:
                        "---\ncreated: 2026-12-06 09:05\n---\n# Other note\n\n{{unknown}} stays.\n"
                            .into(),
                    problem: None
                }),
                None,
                None,
            ]
        );
        assert_eq!(
            daily_note(&ws, now).unwrap(),
            NewNote {
                path: "log/2026/12-06.md".into(),
                text: "# Journal 2026-12-06\n".into(),
                problem: None
            }
        );
        // Defaults: no template, journal/YYYY-MM-DD.md.
        let plain = crate::fixture::workspace("//- /a.md\n[[Next]]\n");
        let link = plain.parsed("a.md").unwrap().links[0].clone();
        assert_eq!(
            note_for_link(&plain, "a.md", &link, now),
            Some(NewNote {
                path: "Next.md".into(),
                text: "# Next\n".into(),
                problem: None
            })
        );
        assert_eq!(
            daily_note(&plain, now).unwrap(),
            NewNote {
                path: "journal/2026-12-06.md".into(),
                text: "# 2026-12-06\n".into(),
                problem: None
            }
        );
        // A template that is not there is named.
        let broken = crate::fixture::workspace_with(
            "//- /a.md\n[[Next]]\n",
            Config::from_toml("[notes]\ntemplate = \"tpl/missing.md\"\n").unwrap(),
        );
        assert_eq!(
            note_for_link(&broken, "a.md", &link, now),
            Some(NewNote {
                path: "Next.md".into(),
                text: "# Next\n".into(),
                problem: Some(
                    "[notes].template `tpl/missing.md` is not a file of the workspace".into()
                )
            })
        );
        // A template on disk that is not text, or too large, is not used, and says why.
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("tpl")).unwrap();
        std::fs::write(dir.path().join("tpl/bin.md"), b"# {{title}}\0\x01").unwrap();
        std::fs::write(dir.path().join("tpl/big.md"), "# {{title}}\n".repeat(100)).unwrap();
        for (template, why) in [
            ("tpl/bin.md", "binary content (NUL bytes)"),
            (
                "tpl/big.md",
                "too large (1200 bytes; the cap is 1024 bytes)",
            ),
        ] {
            let config = Config::from_toml(&format!(
                "[index]\nmax_file_size = 1024\n[notes]\ntemplate = \"{template}\"\n"
            ))
            .unwrap();
            let mut ws = Workspace::new(dir.path().to_path_buf(), config);
            ws.insert(
                "a.md".into(),
                crate::workspace::DocEntry::new("[[Next]]\n", 0, crate::workspace::Origin::Disk),
            );
            assert_eq!(
                note_for_link(&ws, "a.md", &link, now).unwrap().problem,
                Some(format!(
                    "[notes].template `{template}` cannot be used: {why}"
                ))
            );
        }
        assert!(
            Config::from_toml("[notes]\ndaily_folder = \"/tmp/days\"\n")
                .unwrap_err()
                .contains("[notes].daily_folder `/tmp/days` must be a folder of the workspace")
        );
        // A format that spells `.md` out gets it once.
        let spelled = crate::fixture::workspace_with(
            "//- /a.md\n# A\n",
            Config::from_toml("[notes]\ndaily_format = \"%Y-%m-%d.md\"\n").unwrap(),
        );
        assert_eq!(
            daily_note(&spelled, now).unwrap().path,
            "journal/2026-12-06.md"
        );
        assert!(
            Config::from_toml("[links.external]\ninclude_local = true\n")
                .unwrap_err()
                .contains("--external-include-local")
        );
        assert!(
            Config::from_toml("[notes]\ndaily_format = \"%Q\"\n")
                .unwrap_err()
                .contains("[notes].daily_format `%Q` is not a strftime format")
        );
        // Formats that give no note path are refused when folio.toml is read.
        for (format, path, why) in [
            ("%Y/", "journal/2024/.md", "the file name is only `.md`"),
            (
                "../../%Y-%m-%d",
                "journal/../../2024-03-05.md",
                "`.` and `..` segments",
            ),
            (
                "%Y-%m-%dT%H:%M",
                "journal/2024-03-05T09:07.md",
                "`:` is not allowed",
            ),
        ] {
            let err =
                Config::from_toml(&format!("[notes]\ndaily_format = \"{format}\"\n")).unwrap_err();
            let start = format!(
                "[notes] daily_folder `journal` and daily_format `{format}` give `{path}`, which is no note path: "
            );
            assert!(err.starts_with(&start) && err.contains(why), "{err}");
        }
    }
}
