//! Best-practice documents (`kb_best_practice`): which paths a request names and which
//! part of the document it returns.
//!
//! Opt-in: a workspace lists path templates in `folio.toml`,
//!
//! ```toml
//! [best_practice]
//! path_templates = ["docs/best-practice/{category}/{target}.md", "docs/best-practice/{target}.md"]
//! ```
//!
//! and a request for a target (for example `claude-code`) reads the first template whose
//! file exists (`host::best_practice`). A template with `{category}` is used only when a
//! category is given and then names the whole answer; with a template without it, a
//! category selects the document's level-2 section of that name (heading text,
//! case-insensitive, or its slug).

/// A path to try, and whether the category chose it (so the whole file is the answer).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// KB-relative path filled in from a template (not yet checked by the path policy).
    pub path: String,
    /// True when the template had `{category}`.
    pub by_category: bool,
}

/// True when `value` (a target or category) is one plain path segment: no `/`, `\`,
/// `..`, `:` or control characters, not empty.
pub fn is_plain_name(value: &str) -> bool {
    !value.is_empty()
        && value != "."
        && value != ".."
        && !value
            .chars()
            .any(|c| c.is_control() || matches!(c, '/' | '\\' | ':'))
}

/// The paths `templates` name for `target` and `category`, in order; a template with
/// `{category}` is skipped without a category.
pub fn candidates(templates: &[String], target: &str, category: Option<&str>) -> Vec<Candidate> {
    templates
        .iter()
        .filter_map(|template| {
            let by_category = template.contains("{category}");
            let path = match (by_category, category) {
                (true, None) => return None,
                (true, Some(c)) => template
                    .replace("{target}", target)
                    .replace("{category}", c),
                (false, _) => template.replace("{target}", target),
            };
            Some(Candidate { path, by_category })
        })
        .collect()
}

/// The heading texts of the document's level-2 sections.
pub fn h2_names(text: &str) -> Vec<String> {
    crate::parse::parse(text)
        .headings
        .iter()
        .filter(|h| h.level == 2)
        .map(|h| h.text.clone())
        .collect()
}

/// The level-2 section named `name` (heading text, case-insensitive, or slug): its
/// heading text and its Markdown up to the next heading of level 1 or 2.
pub fn h2_section(text: &str, name: &str) -> Option<(String, String)> {
    let parsed = crate::parse::parse(text);
    let wanted = name.trim().to_lowercase();
    let slug = crate::parse::slug::slug(name);
    let i = parsed
        .headings
        .iter()
        .position(|h| h.level == 2 && (h.text.trim().to_lowercase() == wanted || h.slug == slug))?;
    let heading = &parsed.headings[i];
    let end = parsed.headings[i + 1..]
        .iter()
        .find(|h| h.level <= 2)
        .map_or(text.len(), |h| h.range.start);
    Some((
        heading.text.clone(),
        text[heading.range.start..end].to_string(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GUIDE: &str = "# Claude Code\n\nIntro.\n\n## Setup\n\nInstall it.\n\n### Details\n\nMore.\n\n## Error handling\n\nRetry.\n";

    #[test]
    fn sections_are_found_by_text_or_slug_and_end_at_the_next_h2() {
        assert_eq!(
            h2_section(GUIDE, "setup"),
            Some((
                "Setup".into(),
                "## Setup\n\nInstall it.\n\n### Details\n\nMore.\n\n".into()
            ))
        );
        assert_eq!(
            h2_section(GUIDE, "error-handling"),
            Some((
                "Error handling".into(),
                "## Error handling\n\nRetry.\n".into()
            ))
        );
        assert_eq!(h2_section(GUIDE, "Details"), None);
        assert_eq!(h2_names(GUIDE), ["Setup", "Error handling"]);
    }

    #[test]
    fn templates_fill_in_target_and_category() {
        let templates = [
            "docs/bp/{category}/{target}.md".to_string(),
            "docs/bp/{target}.md".into(),
        ];
        assert_eq!(
            candidates(&templates, "codex", None),
            [Candidate {
                path: "docs/bp/codex.md".into(),
                by_category: false
            }]
        );
        assert_eq!(
            candidates(&templates, "codex", Some("agents")),
            [
                Candidate {
                    path: "docs/bp/agents/codex.md".into(),
                    by_category: true
                },
                Candidate {
                    path: "docs/bp/codex.md".into(),
                    by_category: false
                }
            ]
        );
        for bad in ["../etc", "a/b", "", "x:y", "..", "a\\b"] {
            assert!(!is_plain_name(bad), "{bad}");
        }
        assert!(is_plain_name("claude-code"));
    }
}
