//! Tests of the path policy as every operation applies it: each rejected path is
//! INVALID_PATH or NOT_FOUND and nothing on disk changes.

use super::{err, ptr_of, setup, snapshot};
use crate::host::edit::*;
use crate::host::files::DownloadArgs;
use crate::host::links::LinksArgs;
use crate::host::read::{OutlineArgs, ReadArgs};

#[test]
fn every_path_policy_rejection_is_invalid_path_or_not_found_and_touches_nothing() {
    let (dir, kb) = setup(true);
    let root = dir.path();
    std::fs::write(root.join("outside.md"), "# Out\n").unwrap();
    std::os::unix::fs::symlink(root.join("docs"), root.join("linkdir")).unwrap();
    std::os::unix::fs::symlink(root.join("index.md"), root.join("link.md")).unwrap();
    std::fs::hard_link(root.join("outside.md"), root.join("hard.md")).unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join(".git/config.md"), "x").unwrap();
    let invalid = [
        "",
        "/etc/passwd",
        "a\\b.md",
        "a\u{0}.md",
        "a\n.md",
        "c:/x.md",
        "note.md:secret",
        "a/../index.md",
        "./index.md",
        "docs//guide.md",
        "docs/",
        "CON",
        "docs/nul.md",
        "com1.md",
        "docs./guide.md",
        "docs /guide.md",
        "a?.md",
        "a*.md",
        ".git/config.md",
        ".folio/index.db",
    ];
    let not_found = [
        "INDEX.md",
        "docs/Guide.md",
        "linkdir/guide.md",
        "link.md",
        "hard.md",
        "missing.md",
        "docs",
    ];
    let before = snapshot(root);
    let codes = |path: &str| -> Vec<String> {
        let p = path.to_string();
        let pointer = ptr_of(&kb, "index.md", "1.p1");
        let results = vec![
            err(kb.read(&ReadArgs {
                path: p.clone(),
                ..ReadArgs::default()
            })),
            err(kb.outline(&OutlineArgs { path: p.clone() })),
            err(kb.links(&LinksArgs {
                path: p.clone(),
                direction: None,
                depth: None,
                include_external: false,
            })),
            err(kb
                .download(&DownloadArgs { path: p.clone() })
                .map(|d| d.meta)),
            err(kb.patch(&PatchArgs {
                path: p.clone(),
                operations: vec![PatchOperation {
                    kind: PatchKindArg::Delete,
                    pointer,
                    markdown: None,
                    key: None,
                    value: None,
                }],
            })),
            err(kb.delete(&DeleteArgs {
                path: p.clone(),
                expected_source_hash: None,
            })),
            err(kb.move_document(&MoveArgs {
                source_path: p.clone(),
                target_path: "moved.md".into(),
                expected_source_hash: None,
                update_links: None,
            })),
        ];
        results
            .into_iter()
            .map(|v| v["code"].as_str().unwrap().to_string())
            .collect()
    };
    for path in invalid {
        assert!(
            codes(path).iter().all(|c| c == "INVALID_PATH"),
            "{path:?}: {:?}",
            codes(path)
        );
        // Targets of create and move go through the same policy.
        assert_eq!(
            err(kb.create(&CreateArgs {
                path: path.into(),
                markdown: Some("x".into())
            }))["code"],
            "INVALID_PATH",
            "{path:?}"
        );
        let mv = MoveArgs {
            source_path: "index.md".into(),
            target_path: path.into(),
            expected_source_hash: None,
            update_links: None,
        };
        assert_eq!(
            err(kb.move_document(&mv))["code"],
            "INVALID_PATH",
            "{path:?}"
        );
    }
    for path in not_found {
        assert!(
            codes(path).iter().all(|c| c == "NOT_FOUND"),
            "{path:?}: {:?}",
            codes(path)
        );
    }
    // New files are not created through a symbolic link to a folder.
    assert_eq!(
        err(kb.create(&CreateArgs {
            path: "linkdir/new.md".into(),
            markdown: None
        }))["code"],
        "NOT_FOUND"
    );
    assert_eq!(snapshot(root), before);
}
