//! `kb_best_practice`: the best-practice document for a target, or one of its level-2
//! sections, from the path templates of `folio.toml` (rules in [`crate::best_practice`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::best_practice::{candidates, h2_names, h2_section, is_plain_name};
use crate::pointer::{hash_bytes, hex};

use super::{ErrorCode, Host, HostError, HostResult};

/// `kb_best_practice` arguments.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(transform = crate::host::portable_schema)]
#[serde(deny_unknown_fields)]
pub struct BestPracticeArgs {
    /// What the practices are for, e.g. `claude-code`; fills `{target}` in the configured path templates.
    pub target: String,
    /// Optional: fills `{category}` in templates that have it; otherwise selects the document's level-2 section with this heading.
    #[serde(default)]
    pub category: Option<String>,
}

/// `kb_best_practice` output.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct BestPracticeOutput {
    /// The target asked for.
    pub target: String,
    /// The category asked for, if any.
    pub category: Option<String>,
    /// KB-relative path of the document.
    pub path: String,
    /// The Markdown: the whole document, or the selected level-2 section with its heading.
    pub content: String,
    /// The heading of the selected section, when one was selected.
    pub section: Option<String>,
    /// XxHash64 of the whole document (as kb_read gives it).
    #[serde(rename = "sourceHash")]
    pub source_hash: String,
}

impl Host {
    /// `kb_best_practice`.
    pub fn best_practice(&self, args: &BestPracticeArgs) -> HostResult<BestPracticeOutput> {
        let templates = &self.config.best_practice.path_templates;
        if templates.is_empty() {
            return Err(HostError::new(
                ErrorCode::NotConfigured,
                "best-practice documents are not configured: add `[best_practice]` with `path_templates = [\"docs/best-practice/{target}.md\"]` to folio.toml",
            ));
        }
        let (target, category) = (&args.target, args.category.as_deref());
        for (what, value) in [("target", Some(target.as_str())), ("category", category)] {
            if let Some(value) = value
                && !is_plain_name(value)
            {
                return Err(HostError::invalid(format!(
                    "`{what}` `{value}` must be a plain name (no folders, `..`, `:` or control characters)"
                )));
            }
        }
        let mut tried = Vec::new();
        for candidate in candidates(templates, target, category) {
            let path = candidate.path;
            let text = match self.read_document(&path) {
                Ok((_, text)) => text,
                Err(e) if e.code == ErrorCode::NotFound => {
                    tried.push(path);
                    continue;
                }
                Err(e) => return Err(e),
            };
            let source_hash = hex(hash_bytes(text.as_bytes()));
            let (content, section) = match category {
                Some(c) if !candidate.by_category => {
                    let (heading, body) = h2_section(&text, c).ok_or_else(|| {
                        HostError::new(
                            ErrorCode::NotFound,
                            format!(
                                "`{path}` has no level-2 section `{c}`; its sections are: {}",
                                h2_names(&text).join(", ")
                            ),
                        )
                    })?;
                    (body, Some(heading))
                }
                _ => (text, None),
            };
            return Ok(BestPracticeOutput {
                target: target.clone(),
                category: category.map(str::to_string),
                path,
                content,
                section,
                source_hash,
            });
        }
        Err(HostError::new(
            ErrorCode::NotFound,
            format!(
                "no best-practice document for `{target}`{}; tried: {}",
                category.map(|c| format!(" in `{c}`")).unwrap_or_default(),
                if tried.is_empty() {
                    "no template applies without a category".to_string()
                } else {
                    tried.join(", ")
                }
            ),
        ))
    }
}
