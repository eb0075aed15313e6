//! `kb_best_practice`: off without templates, then documents and sections by template.

use serde_json::json;

use super::err;
use crate::host::Host;
use crate::host::best_practice::{BestPracticeArgs, BestPracticeOutput};
use crate::pointer::{hash_bytes, hex};

const GUIDE: &str =
    "# Claude Code\n\nIntro.\n\n## Setup\n\nInstall it.\n\n## Error handling\n\nRetry.\n";

fn open(root: &std::path::Path) -> Host {
    super::open_at(root, false)
}

fn ask(
    kb: &Host,
    target: &str,
    category: Option<&str>,
) -> crate::host::HostResult<BestPracticeOutput> {
    kb.best_practice(&BestPracticeArgs {
        target: target.into(),
        category: category.map(String::from),
    })
}

#[test]
fn best_practice_is_opt_in_and_returns_documents_and_sections() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("docs/bp/agents")).unwrap();
    std::fs::write(root.join("docs/bp/claude-code.md"), GUIDE).unwrap();
    std::fs::write(root.join("docs/bp/agents/codex.md"), "# Codex\n").unwrap();
    assert_eq!(
        err(ask(&open(root), "claude-code", None))["code"],
        "NOT_CONFIGURED"
    );
    std::fs::write(
        root.join("folio.toml"),
        "[best_practice]\npath_templates = [\"docs/bp/{category}/{target}.md\", \"docs/bp/{target}.md\"]\n",
    )
    .unwrap();
    let kb = open(root);
    assert_eq!(
        ask(&kb, "claude-code", None).unwrap(),
        BestPracticeOutput {
            target: "claude-code".into(),
            category: None,
            path: "docs/bp/claude-code.md".into(),
            content: GUIDE.into(),
            section: None,
            source_hash: hex(hash_bytes(GUIDE.as_bytes())),
        }
    );
    let section = ask(&kb, "claude-code", Some("error-handling")).unwrap();
    assert_eq!(
        (section.section.as_deref(), section.content.as_str()),
        (Some("Error handling"), "## Error handling\n\nRetry.\n")
    );
    let codex = ask(&kb, "codex", Some("agents")).unwrap();
    assert_eq!(
        (codex.path.as_str(), codex.content.as_str(), codex.section),
        ("docs/bp/agents/codex.md", "# Codex\n", None)
    );
    assert_eq!(
        err(ask(&kb, "claude-code", Some("Nope"))),
        json!({"code": "NOT_FOUND", "message": "`docs/bp/claude-code.md` has no level-2 section `Nope`; its sections are: Setup, Error handling"})
    );
    assert_eq!(
        err(ask(&kb, "cursor", None)),
        json!({"code": "NOT_FOUND", "message": "no best-practice document for `cursor`; tried: docs/bp/cursor.md"})
    );
    for bad in ["../etc", "a/b", "", "x:y"] {
        assert_eq!(
            err(ask(&kb, bad, None))["code"],
            "INVALID_ARGUMENT",
            "{bad}"
        );
    }
    assert_eq!(
        err(ask(&kb, "codex", Some("../x")))["code"],
        "INVALID_ARGUMENT"
    );
}

#[test]
fn templates_are_checked_when_the_configuration_loads() {
    for (template, fragment) in [
        ("docs/x.md", "must contain `{target}`"),
        ("docs/{target}.txt", "Markdown file"),
        ("docs/{name}/{target}.md", "only placeholders"),
    ] {
        let err = crate::config::Config::from_toml(&format!(
            "[best_practice]\npath_templates = [\"{template}\"]\n"
        ))
        .unwrap_err();
        assert!(err.contains(fragment), "{template}: {err}");
    }
}
