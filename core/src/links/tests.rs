//! Diagnostics and resolution tests over multi-file fixtures.

use crate::document::Encoding;
use crate::fixture::{workspace, workspace_with};
use crate::workspace::{Config, Workspace};

use super::*;

/// Renders every diagnostic of every document as `path:line:col: code: message`
/// (1-based line, 1-based column in characters).
fn render(ws: &Workspace) -> String {
    let mut out = String::new();
    for path in ws.document_paths() {
        let doc = &ws.get(path).unwrap().doc;
        for d in diagnostics(ws, path) {
            let lc = doc.offset_to_line_col(d.range.start, Encoding::Utf32);
            out.push_str(&format!(
                "{path}:{}:{}: {}: {}\n",
                lc.line + 1,
                lc.col + 1,
                d.code,
                d.message
            ));
        }
    }
    out
}

fn check(fixture: &str, expect: &str) {
    assert_eq!(render(&workspace(fixture)), expect);
}

#[test]
fn each_diagnostic_code() {
    check(
        r#"
//- /a.md
# Title

See [b](b.md), [gone](gone.md), [sec](b.md#second-section), [bad](b.md#nope).
Own [top](#title) and [missing](#nowhere).
Ref [x][used] and [y][undefined] and [^nofoot].
Wiki [[b]], [[missing-page]], [[dup]] and [[b#Second Section]] and [[b#Nope]].

[used]: b.md
[unused]: b.md
[USED]: other.md
//- /b.md
# B
## Second Section
//- /one/dup.md
//- /two/dup.md
"#,
        "\
a.md:3:23: missing-file: file `gone.md` does not exist (resolved to `gone.md`)
a.md:3:72: missing-heading: no heading or anchor `#nope` in `b.md`
a.md:4:34: missing-heading: no heading or anchor `#nowhere` in this document
a.md:5:19: undefined-reference: no definition for reference `[undefined]`
a.md:5:38: undefined-reference: no definition for reference `[^nofoot]`
a.md:6:15: missing-wiki-target: no document or file matches wiki link `[[missing-page]]`
a.md:6:33: ambiguous-wiki-target: wiki link `[[dup]]` matches 2 documents: one/dup.md, two/dup.md
a.md:6:72: missing-heading: no heading or anchor `#Nope` in `b.md`
a.md:9:2: unused-definition: link reference definition `[unused]` is not used
a.md:10:2: duplicate-definition: duplicate definition of `[USED]`; the first one is used (CommonMark 4.7)
a.md:10:9: missing-file: file `other.md` does not exist (resolved to `other.md`)
",
    );
}

#[test]
fn links_in_code_are_not_links() {
    check(
        "
//- /a.md
`[x](gone.md)` and `[[nothing]]`

```md
[y](gone.md) [[nothing]] [a][b]
```

    [z](gone.md)

<div>[w](gone.md)</div>
",
        "",
    );
}

#[test]
fn percent_encoded_and_angle_destinations_resolve() {
    check(
        "
//- /a.md
[one](my%20notes.md) [two](<my notes.md>) [three](<my notes.md#sub-part>) [four](sub/%E6%97%A5%E6%9C%AC.md)
[five](my%20notes.md#Sub-Part) [six](./sub/../my%20notes.md) [seven](/sub/日本.md?plain=1)
//- /my notes.md
# Title
## Sub part
//- /sub/日本.md
",
        "",
    );
}

#[test]
fn reference_labels_are_case_folded() {
    check(
        "
//- /a.md
[Foo Bar][] [x][FOO   bar] [y][straße] [z][STRASSE] [[Daily]] [[journal|alias]] [[b#Sec|Alias]]

[b#sec|alias]: b.md#sec
[foo bar]: b.md
[Strasse]: b.md
[daily]: b.md
[journal]: b.md
//- /b.md
# Sec
",
        "",
    );
}

#[test]
fn html_anchors_custom_ids_files_and_folders_are_targets() {
    check(
        r#"
//- /a.md
[a](b.md#old-name) [b](b.md#legacy) [c](b.md#custom) [d](img/pic.png) [e](img/) [f](img) [g](https://x.test/#nope) [h](b#custom) [i](b.html#legacy) [j](b.html#nope)
//- /b.md
<a id="old-name"></a>
<a name="legacy"></a>
## Heading {#custom}
//- /img/pic.png
"#,
        "a.md:1:160: missing-heading: no heading or anchor `#nope` in `b.md`\n",
    );
}

#[test]
fn silencing_codes_and_targets_and_case_sensitive_fragments() {
    let fixture = "
//- /a.md
[x](vendor/gone.md) [y](gone.md) [z](b.md#Title)

[unused]: b.md
//- /b.md
# Title
";
    let mut config =
        Config::from_toml("[diagnostics]\nsilence = [\"unused-definition\"]\nsilence_targets = [\"vendor/**\"]\nfragment_case_sensitive = true\n")
            .unwrap();
    config.diagnostics.compile().unwrap();
    assert_eq!(
        render(&workspace_with(fixture, config)),
        "\
a.md:1:25: missing-file: file `gone.md` does not exist (resolved to `gone.md`)
a.md:1:43: missing-heading: no heading or anchor `#Title` in `b.md`
"
    );
}

#[test]
fn wiki_links_resolve_by_stem_path_alias_embed_and_block_id() {
    check(
        "
//- /notes/a.md
[[B]] [[b|alias]] [[notes/sub/b]] [[sub/b.md]] ![[pic.png]] [[#Local]] [[b#^block-1]] [[b#^missing]]
# Local
//- /notes/sub/b.md
A paragraph. ^block-1
//- /assets/pic.png
",
        "notes/a.md:1:91: missing-heading: no heading or anchor `#^missing` in `notes/sub/b.md`\n",
    );
}

#[test]
fn join_relative_normalises_and_refuses_to_leave_the_root() {
    assert_eq!(
        join_relative("docs/a.md", "b.md").as_deref(),
        Some("docs/b.md")
    );
    assert_eq!(
        join_relative("docs/a.md", "../b.md").as_deref(),
        Some("b.md")
    );
    assert_eq!(
        join_relative("docs/a.md", "/x/./y.md").as_deref(),
        Some("x/y.md")
    );
    assert_eq!(join_relative("docs/a.md", "../../b.md"), None);
}

#[test]
fn disk_decides_for_links_outside_the_root_and_to_files_the_walk_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("kb");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::write(dir.path().join("outside.md"), "# Outside\n").unwrap();
    std::fs::write(root.join(".gitignore"), "ignored.md\n").unwrap();
    std::fs::create_dir(root.join(".git")).unwrap();
    std::fs::write(root.join("ignored.md"), "# Ignored\n").unwrap();
    std::fs::write(root.join("what?.md"), "# Q\n").unwrap();
    std::fs::write(root.join("latin1.md"), b"caf\xe9\n").unwrap();
    std::fs::write(
        root.join("sub/a.md"),
        "[a](../../outside.md) [b](../../missing.md) [c](../ignored.md) [d](../what%3F.md?x=1) [[latin1]] \
         [e](../../../../../../../../../../../../etc/x.md)\n\n## Heading {#my-id}\n\n[f](#my-id) [g](#heading-my-id) [h](#heading)\n",
    )
    .unwrap();
    let (ws, report) = Workspace::load(&root, Config::default()).unwrap();
    assert_eq!(report.skipped.len(), 1);
    assert_eq!(
        render(&ws),
        "\
sub/a.md:1:27: missing-file: file `../../missing.md` does not exist (resolved to `a path outside the root`)
sub/a.md:1:102: missing-file: file `../../../../../../../../../../../../etc/x.md` does not exist (resolved to `a path outside the root`)
sub/a.md:5:38: missing-heading: no heading or anchor `#heading` in this document
"
    );
}
