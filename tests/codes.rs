//! The stable codes have one source, core `codes`: docs/diagnostics.md, the VS Code
//! extension's `folio.diagnostics.silence` setting and every docs page agree with it.

use folio_core::codes::{DiagnosticCode, ErrorCode, Severity};

fn repo_file(path: &str) -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

/// The rows of the Markdown table that follows `heading` in `text`, as cells.
fn table_after(text: &str, heading: &str) -> Vec<Vec<String>> {
    let start = text
        .find(heading)
        .unwrap_or_else(|| panic!("no `{heading}`"));
    text[start..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|l| {
            l.trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

#[test]
fn docs_list_every_diagnostic_code_with_its_severity_and_meaning() {
    let rows = table_after(&repo_file("docs/diagnostics.md"), "## Link diagnostics");
    let expected: Vec<Vec<String>> = DiagnosticCode::ALL
        .iter()
        .map(|c| {
            let severity = match c.severity() {
                Severity::Error => "error",
                Severity::Warning => "warning",
            };
            vec![
                format!("`{}`", c.as_str()),
                severity.to_string(),
                c.description().to_string(),
            ]
        })
        .collect();
    assert_eq!(rows, expected);
}

#[test]
fn docs_list_every_error_code_with_its_meaning() {
    let rows = table_after(&repo_file("docs/diagnostics.md"), "## Errors of operations");
    let expected: Vec<Vec<String>> = ErrorCode::ALL
        .iter()
        .map(|c| vec![format!("`{}`", c.as_str()), c.description().to_string()])
        .collect();
    assert_eq!(rows, expected);
}

#[test]
fn the_vs_code_setting_offers_exactly_the_codes() {
    let manifest: serde_json::Value =
        serde_json::from_str(&repo_file("editors/vscode/package.json")).unwrap();
    let properties = &manifest["contributes"]["configuration"]["properties"];
    let offered = &properties["folio.diagnostics.silence"]["items"]["enum"];
    let expected: Vec<&str> = DiagnosticCode::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(offered, &serde_json::json!(expected));
}

#[test]
fn no_other_docs_page_keeps_its_own_list_of_codes() {
    for entry in
        std::fs::read_dir(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs")).unwrap()
    {
        let path = entry.unwrap().path();
        if path.file_name().unwrap() == "diagnostics.md"
            || path.extension().unwrap_or_default() != "md"
        {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for line in text.lines() {
            let named = DiagnosticCode::ALL
                .iter()
                .filter(|c| line.contains(&format!("`{}`", c.as_str())))
                .count();
            assert!(
                named < 3,
                "{}: lists codes; link to diagnostics.md instead: {line}",
                path.display()
            );
        }
    }
}
