//! Tests of kb_list_files, kb_list_topics and kb_download_file.

use serde_json::json;

use super::{GUIDE, err, ok, setup};
use crate::host::files::{DownloadArgs, ListFilesArgs};
use crate::host::read::ReadArgs;

#[test]
fn kb_list_files_prefix_is_a_folder_or_one_file() {
    let (_dir, kb) = setup(false);
    let titles = ok(kb.list_files(&ListFilesArgs {
        path_prefix: None,
        include_glob: None,
        limit: None,
    }));
    let titles: Vec<(&str, &serde_json::Value)> = titles["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["path"].as_str().unwrap(), &f["title"]))
        .collect();
    assert_eq!(
        titles,
        [
            ("docs/guide.md", &json!("Guide")),
            ("docs/logo.png", &serde_json::Value::Null),
            ("docs/more/other.md", &json!("Other")),
            ("index.md", &json!("Home"))
        ]
    );
    let list = |prefix: Option<&str>, glob: Option<&str>| {
        let v = ok(kb.list_files(&ListFilesArgs {
            path_prefix: prefix.map(String::from),
            include_glob: glob.map(String::from),
            limit: None,
        }));
        v["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                format!(
                    "{}:{}",
                    f["kind"].as_str().unwrap(),
                    f["path"].as_str().unwrap()
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        list(Some("docs/"), None),
        [
            "markdown:docs/guide.md",
            "asset:docs/logo.png",
            "markdown:docs/more/other.md"
        ]
    );
    assert_eq!(
        list(Some("docs/guide.md"), None),
        ["markdown:docs/guide.md"]
    );
    assert!(
        list(Some("docs/gui"), None).is_empty(),
        "a partial name is not a prefix"
    );
    assert_eq!(
        list(None, Some("*.md")),
        [
            "markdown:docs/guide.md",
            "markdown:docs/more/other.md",
            "markdown:index.md"
        ]
    );
    assert_eq!(
        list(Some("docs"), Some("other.md")),
        ["markdown:docs/more/other.md"]
    );
    let v = ok(kb.list_files(&ListFilesArgs {
        path_prefix: Some("docs/guide.md".into()),
        include_glob: None,
        limit: None,
    }));
    assert_eq!(
        v,
        json!({"files": [{"path": "docs/guide.md", "kind": "markdown", "bytes": GUIDE.len(), "title": "Guide"}], "truncated": false})
    );
    // `/` alone is an absolute path too, not the root.
    for prefix in ["../", "/", "//"] {
        assert_eq!(
            err(kb.list_files(&ListFilesArgs {
                path_prefix: Some(prefix.into()),
                ..ListFilesArgs::default()
            }))["code"],
            "INVALID_PATH",
            "{prefix}"
        );
    }
    // Limits of zero are argument errors, as for kb_search.
    assert_eq!(
        err(kb.list_files(&ListFilesArgs {
            limit: Some(0),
            ..ListFilesArgs::default()
        })),
        json!({"code": "INVALID_ARGUMENT", "message": "`limit` must be between 1 and 10000"})
    );
    assert_eq!(
        err(kb.read(&ReadArgs {
            path: "index.md".into(),
            max_bytes: Some(0),
            ..ReadArgs::default()
        })),
        json!({"code": "INVALID_ARGUMENT", "message": "`max_bytes` must be at least 1"})
    );
}

#[test]
fn kb_list_topics_counts_and_tree() {
    let (_dir, kb) = setup(false);
    assert_eq!(
        ok(kb.list_topics()),
        json!({
            "topics": [
                {"kind": "root", "category": "", "document_count": 1, "uri": "kb://topic/", "children": []},
                {"kind": "category", "category": "docs", "document_count": 2, "uri": "kb://topic/docs", "children": []},
                {"kind": "topic", "category": "docs", "topic": "docs/more", "document_count": 1, "uri": "kb://topic/docs/more", "children": []}
            ],
            "tags": [{"tag": "setup", "document_count": 1}],
            "total_documents": 3
        })
    );
}

/// Inline `#tag`s count beside frontmatter tags in kb_list_topics, and kb_search's
/// `tags_any` / `tags_all` find them, a tag matching the tags nested in it.
#[test]
fn inline_tags_in_kb_list_topics_and_kb_search() {
    let (dir, kb) = setup(false);
    std::fs::write(
        dir.path().join("docs/plan.md"),
        "# Plan\n\nThe widget #project/alpha and #setup work, not `#code`.\n",
    )
    .unwrap();
    kb.reindex_blocking(false).unwrap();
    assert_eq!(
        ok(kb.list_topics())["tags"],
        json!([
            {"tag": "project/alpha", "document_count": 1},
            {"tag": "setup", "document_count": 2}
        ])
    );
    let paths = |any: &[&str], all: &[&str]| -> Vec<String> {
        let v = ok(kb.search(&crate::host::search::SearchRequest {
            query: "widget".into(),
            tags_any: any.iter().map(|t| t.to_string()).collect(),
            tags_all: all.iter().map(|t| t.to_string()).collect(),
            ..Default::default()
        }));
        let mut p: Vec<String> = v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["path"].as_str().unwrap().to_string())
            .collect();
        p.sort();
        p.dedup();
        p
    };
    assert_eq!(paths(&["project"], &[]), ["docs/plan.md"]);
    assert_eq!(paths(&["setup"], &[]), ["docs/guide.md", "docs/plan.md"]);
    assert_eq!(paths(&[], &["setup", "project/alpha"]), ["docs/plan.md"]);
    assert_eq!(paths(&["code"], &[]), Vec::<String>::new());
}

#[test]
fn kb_list_topics_builds_the_folder_tree_below_a_topic() {
    let (dir, kb) = setup(false);
    std::fs::create_dir_all(dir.path().join("docs/more/deep/er")).unwrap();
    std::fs::write(dir.path().join("docs/more/deep/a.md"), "# A\n").unwrap();
    std::fs::write(dir.path().join("docs/more/deep/er/b.md"), "# B\n").unwrap();
    kb.reindex_blocking(false).unwrap();
    let v = ok(kb.list_topics());
    assert_eq!(
        v["topics"][2],
        json!({"kind": "topic", "category": "docs", "topic": "docs/more", "document_count": 3, "uri": "kb://topic/docs/more",
               "children": [{"segment": "deep", "file_count": 2, "children": [{"segment": "er", "file_count": 1, "children": []}]}]})
    );
}

#[test]
fn kb_download_file_returns_bytes_and_sha256() {
    let (_dir, kb) = setup(false);
    let d = kb
        .download(&DownloadArgs {
            path: "docs/logo.png".into(),
        })
        .unwrap();
    assert_eq!(d.data, b"\x89PNG\r\n\x1a\nfake");
    assert_eq!(
        serde_json::to_value(&d.meta).unwrap(),
        json!({"path": "docs/logo.png", "mimeType": "image/png", "bytes": 12, "sha256": "68ee4598e64cd28eed508c333dfb14c745677f41e2b012e6256c9b138b304270"})
    );
}
