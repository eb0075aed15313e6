//! Diagnostics and resolution tests over multi-file fixtures.

use crate::document::Encoding;
use crate::fixture::{workspace, workspace_with};
use crate::workspace::{Config, SiteGenerator, Workspace};

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

/// The text of each diagnostic's range in document `path`, in order.
fn reported_text(ws: &Workspace, path: &str) -> Vec<String> {
    let text = ws.get(path).unwrap().doc.text();
    diagnostics(ws, path)
        .iter()
        .map(|d| text[d.range.clone()].to_string())
        .collect()
}

fn check(fixture: &str, expect: &str) {
    assert_eq!(render(&workspace(fixture)), expect);
}

#[test]
fn undefined_image_references_are_reported() {
    // `![Logo][logo]` was skipped as if `!` were a word character before the brackets.
    check(
        "//- /readme.md\n![Logo][logo] and x![y][z]\n",
        "readme.md:1:1: undefined-reference: no definition for reference `[logo]`\n",
    );
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

/// MkDocs sites: heading attribute lists, fenced-code ids, footnote ids and links inside
/// admonitions and content tabs, as Python-Markdown and PyMdown Extensions render them.
#[test]
fn mkdocs_anchors_and_container_bodies() {
    check(
        r#"
//- /a.md
[a](b.md#context) [b](b.md#navigation-path) [c](b.md#appendix) [d](b.md#example) [e](b.md#fn:1) [f](b.md#fn-1) [g](b.md#user-content-fn-1) [h](b.md#fn:2) [i](b.md#example-1)

=== "Linux"

    See [the guide][guide] and [gone](missing.md).

!!! note "Nested"

    ??? tip

        [deep](nowhere.md)

  [guide]: b.md
//- /b.md
### Context <small>optional</small> { #context }
## Path { id=navigation-path data-toc-label="Path" }
## Appendix {.unnumbered}

``` { .sh .no-copy #example }
ls
```

Text.[^1]

[^1]: The note.
"#,
        "a.md:1:149: missing-heading: no heading or anchor `#fn:2` in `b.md`\n\
         a.md:1:164: missing-heading: no heading or anchor `#example-1` in `b.md`\n\
         a.md:5:39: missing-file: file `missing.md` does not exist (resolved to `missing.md`)\n\
         a.md:11:16: missing-file: file `nowhere.md` does not exist (resolved to `nowhere.md`)\n",
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
    // `latin1.md` is not UTF-8: loaded with U+FFFD for its invalid byte, not skipped.
    assert_eq!(report.skipped.len(), 0);
    assert_eq!(
        render(&ws),
        "\
sub/a.md:1:27: missing-file: file `../../missing.md` does not exist (resolved to `a path outside the root`)
sub/a.md:1:102: missing-file: file `../../../../../../../../../../../../etc/x.md` does not exist (resolved to `a path outside the root`)
sub/a.md:5:38: missing-heading: no heading or anchor `#heading` in this document
"
    );
}

#[test]
fn an_escaped_pipe_in_a_table_starts_the_alias() {
    check(
        r"
//- /a.md
| link | note |
|---|---|
| [[Weekly review\|Review]] | notes |
| [[b#Sec\|Sec]] | [[gone\|Gone]] |
//- /Weekly review.md
//- /b.md
# Sec
",
        "a.md:4:22: missing-wiki-target: no document or file matches wiki link `[[gone]]`\n",
    );
}

#[test]
fn block_ids_after_a_block_and_at_the_end_of_a_line_are_targets() {
    check(
        "
//- /a.md
[[plan#^milestones]] ![[plan#^table-1]] [x](plan.md#^milestones) [[plan#^para]] [[plan#^nope]]
//- /plan.md
- one
- two

^milestones

| a |
|---|
| b |
^table-1

Some text ^para
",
        "a.md:1:88: missing-heading: no heading or anchor `#^nope` in `plan.md`\n",
    );
}

#[test]
fn references_to_a_block_id_are_the_links_that_name_it() {
    let ws = workspace(
        "
//- /a.md
[[plan#^milestones]] ![[plan#^MILESTONES]] [x](plan.md#^milestones) [[plan#^para]] [[plan]]
//- /b.md
See [[plan#^milestones|the plan]].
//- /plan.md
- one

^milestones

Some text ^para
",
    );
    let plan = ws.parsed("plan.md").unwrap();
    let at = |id: &str| plan.block_ids.iter().position(|(i, _)| i == id).unwrap();
    let found = |b: usize| -> Vec<(String, String)> {
        references::references_to_block(&ws, "plan.md", b)
            .into_iter()
            .map(|r| {
                let text = ws.get(&r.path).unwrap().doc.text();
                (r.path.clone(), text[r.range.clone()].to_string())
            })
            .collect()
    };
    assert_eq!(
        found(at("milestones")),
        vec![
            ("a.md".to_string(), "[[plan#^milestones]]".to_string()),
            ("a.md".to_string(), "![[plan#^MILESTONES]]".to_string()),
            ("a.md".to_string(), "[x](plan.md#^milestones)".to_string()),
            (
                "b.md".to_string(),
                "[[plan#^milestones|the plan]]".to_string()
            ),
        ]
    );
    assert_eq!(
        found(at("para")),
        vec![("a.md".to_string(), "[[plan#^para]]".to_string())]
    );
    // The cursor on `^para` finds that block.
    let offset = plan.block_ids[at("para")].1.start + 2;
    assert_eq!(navigate::block_id_at(&plan, offset), Some(at("para")));
}

#[test]
fn heading_paths_name_nested_headings() {
    check(
        "
//- /a.md
[[guide#Setup#On Linux]] [[guide#Guide#Setup#On Linux]] [[guide#Setup#On Mac]] [[guide#Usage#On Linux]]
//- /guide.md
# Guide
## Setup
### On Linux
## Usage
",
        "\
a.md:1:65: missing-heading: no heading or anchor `#Setup#On Mac` in `guide.md`
a.md:1:88: missing-heading: no heading or anchor `#Usage#On Linux` in `guide.md`
",
    );
}

#[test]
fn links_inside_math_blocks_are_not_checked() {
    check(
        "
//- /a.md
$$
x
=
[[nothing]] [a](gone.md)
$$
",
        "",
    );
}

/// Every diagnostic that carries a repair, as `path:line:col: code: title => new text`.
fn render_fixes(ws: &Workspace) -> String {
    let mut out = String::new();
    for path in ws.document_paths() {
        let doc = &ws.get(path).unwrap().doc;
        for d in diagnostics(ws, path) {
            let Some(fix) = d.fix else { continue };
            let lc = doc.offset_to_line_col(fix.edit.range.start, Encoding::Utf32);
            out.push_str(&format!(
                "{path}:{}:{}: {}: {} => {}\n",
                lc.line + 1,
                lc.col + 1,
                d.code,
                fix.title,
                fix.edit.new_text
            ));
        }
    }
    out
}

const VAULT: &str = "
//- /notes/q3.md
![chart](chart.png) [App](App) [x](Plugin/Manifest) [y](Manifest.md) [z](dup) [w](nothing.png)
//- /assets/chart.png
//- /Reference/App.md
//- /Reference/Plugin/Manifest.md
//- /a/dup.md
//- /b/dup.md
";

#[test]
fn in_a_vault_markdown_links_resolve_by_vault_root_and_unique_name() {
    let config = Config::from_toml("[links]\nobsidian = true\n").unwrap();
    let ws = workspace_with(VAULT, config);
    assert!(ws.is_vault());
    assert_eq!(
        render(&ws),
        "\
notes/q3.md:1:74: ambiguous-file: `dup` matches 2 files by name: a/dup.md, b/dup.md
notes/q3.md:1:83: missing-file: file `nothing.png` does not exist (resolved to `notes/nothing.png`)
"
    );
    assert_eq!(render_fixes(&ws), "");
}

#[test]
fn outside_a_vault_a_unique_file_of_that_name_is_named_and_offered() {
    let ws = workspace(VAULT);
    assert!(!ws.is_vault());
    assert_eq!(
        render(&ws),
        "\
notes/q3.md:1:10: missing-file: file `chart.png` does not exist (resolved to `notes/chart.png`); a file of that name is at `assets/chart.png`
notes/q3.md:1:27: missing-file: file `App` does not exist (resolved to `notes/App`); a file of that name is at `Reference/App.md`
notes/q3.md:1:36: missing-file: file `Plugin/Manifest` does not exist (resolved to `notes/Plugin/Manifest`); a file of that name is at `Reference/Plugin/Manifest.md`
notes/q3.md:1:57: missing-file: file `Manifest.md` does not exist (resolved to `notes/Manifest.md`); a file of that name is at `Reference/Plugin/Manifest.md`
notes/q3.md:1:74: missing-file: file `dup` does not exist (resolved to `notes/dup`)
notes/q3.md:1:83: missing-file: file `nothing.png` does not exist (resolved to `notes/nothing.png`)
"
    );
    assert_eq!(
        render_fixes(&ws),
        "\
notes/q3.md:1:10: missing-file: Change link to `../assets/chart.png` => ../assets/chart.png
notes/q3.md:1:27: missing-file: Change link to `../Reference/App` => ../Reference/App
notes/q3.md:1:36: missing-file: Change link to `../Reference/Plugin/Manifest` => ../Reference/Plugin/Manifest
notes/q3.md:1:57: missing-file: Change link to `../Reference/Plugin/Manifest.md` => ../Reference/Plugin/Manifest.md
"
    );
}

#[test]
fn a_vault_is_recognised_by_its_obsidian_folder() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".obsidian")).unwrap();
    std::fs::create_dir_all(dir.path().join("Reference")).unwrap();
    std::fs::write(dir.path().join("Reference/App.md"), "# App\n").unwrap();
    std::fs::write(dir.path().join("a.md"), "[App](App)\n").unwrap();
    let (ws, _) = Workspace::load(dir.path(), Config::default()).unwrap();
    assert!(ws.is_vault());
    assert_eq!(render(&ws), "");
    let off = Config::from_toml("[links]\nobsidian = false\n").unwrap();
    let (ws, _) = Workspace::load(dir.path(), off).unwrap();
    assert!(!ws.is_vault());
    assert_eq!(
        render(&ws),
        "a.md:1:7: missing-file: file `App` does not exist (resolved to `App`); a file of that name is at `Reference/App.md`\n"
    );
}

#[test]
fn names_in_another_unicode_normalisation_form_resolve() {
    // File names NFC, links NFD; then the other way round.
    check(
        "
//- /a.md
[[Cafe\u{301}]] [x](Cafe\u{301}.md) [y](sub/Cafe\u{301}.png) [z](Cafe\u{301}.md#menu)
//- /Caf\u{e9}.md
# Menu
//- /sub/Caf\u{e9}.png
",
        "",
    );
    check(
        "
//- /a.md
[[Caf\u{e9}]] [x](Caf\u{e9}.md) [y](sub/Caf\u{e9}.png)
//- /Cafe\u{301}.md
//- /sub/Cafe\u{301}.png
",
        "",
    );
}

#[test]
fn a_case_only_mismatch_is_named_with_its_fix() {
    let ws = workspace(
        "
//- /docs/guide/x.md
[about](../../Core/about/topic.md) [b](/core/ABOUT/topic#intro) [c](../../Core/About/topic.md)
//- /Core/About/topic.md
# Intro
",
    );
    assert_eq!(
        render(&ws),
        "\
docs/guide/x.md:1:9: case-mismatch: `../../Core/about/topic.md` exists as `../../Core/About/topic.md`, which differs only in letter case: the link works on Windows and macOS but breaks on Linux and GitHub
docs/guide/x.md:1:40: case-mismatch: `/core/ABOUT/topic` exists as `/Core/About/topic`, which differs only in letter case: the link works on Windows and macOS but breaks on Linux and GitHub
"
    );
    assert_eq!(
        render_fixes(&ws),
        "\
docs/guide/x.md:1:9: case-mismatch: Change link to `../../Core/About/topic.md` => ../../Core/About/topic.md
docs/guide/x.md:1:40: case-mismatch: Change link to `/Core/About/topic` => /Core/About/topic
"
    );
}

#[test]
fn site_absolute_links_follow_the_links_settings() {
    let fixture = "
//- /docs/a.md
[a](/dotnet/api/system.string) [b](/docs/editor/intellisense) [c](/images/gone.png) [d](/docs/b) [e](/docs/gone.md) [f](/windows/terminal/install#setup)
//- /docs/b.md
//- /images/pic.png
//- /TerminalDocs/install.md
## Setup
";
    // Default: unresolved `/…` pages without a known file extension are the site's.
    check(
        fixture,
        "\
docs/a.md:1:67: missing-file: file `/images/gone.png` does not exist (resolved to `images/gone.png`)
docs/a.md:1:102: missing-file: file `/docs/gone.md` does not exist (resolved to `docs/gone.md`)
",
    );
    let check_all = Config::from_toml("[links]\nsite_absolute = \"check\"\n").unwrap();
    assert_eq!(
        render(&workspace_with(fixture, check_all)),
        "\
docs/a.md:1:5: missing-file: file `/dotnet/api/system.string` does not exist (resolved to `dotnet/api/system.string`)
docs/a.md:1:36: missing-file: file `/docs/editor/intellisense` does not exist (resolved to `docs/editor/intellisense`)
docs/a.md:1:67: missing-file: file `/images/gone.png` does not exist (resolved to `images/gone.png`)
docs/a.md:1:102: missing-file: file `/docs/gone.md` does not exist (resolved to `docs/gone.md`)
docs/a.md:1:121: missing-file: file `/windows/terminal/install` does not exist (resolved to `windows/terminal/install`)
",
    );
    let site = Config::from_toml(
        "[links]\nsite_absolute = \"check\"\nsite_root = \"TerminalDocs\"\nsite_base = \"/windows/terminal\"\nexternal_prefixes = [\"/dotnet/\", \"/docs/editor/\", \"/images/\"]\n",
    )
    .unwrap();
    assert_eq!(
        render(&workspace_with(fixture, site)),
        "docs/a.md:1:102: missing-file: file `/docs/gone.md` does not exist (resolved to `docs/gone.md`)\n",
    );
    // Under the default `pages-external`, a link under `site_base` is still this site's
    // own page: one that names no file of `site_root` is broken (the other `/…` pages
    // stay the site's).
    let own = "
//- /TerminalDocs/a.md
[a](/windows/terminal/install) [b](/windows/terminal/nonexistent-page) [c](/windows/terminal/install#gone) [d](/dotnet/api/system.string) [e](/windows/terminal/faq) [f](/windows/terminal/../wsl/install)
//- /TerminalDocs/install.md
## Setup
//- /TerminalDocs/faq.yml
";
    let site = Config::from_toml(
        "[links]\nsite_root = \"TerminalDocs\"\nsite_base = \"/windows/terminal\"\n",
    )
    .unwrap();
    assert_eq!(
        render(&workspace_with(own, site)),
        "\
TerminalDocs/a.md:1:36: missing-file: file `/windows/terminal/nonexistent-page` does not exist (resolved to `TerminalDocs/nonexistent-page`)
TerminalDocs/a.md:1:102: missing-heading: no heading or anchor `#gone` in `TerminalDocs/install.md`
",
    );
    // With `site_root` alone (`site_base` `/`), `/…` links stay under `site_absolute`.
    let root_only = Config::from_toml("[links]\nsite_root = \"TerminalDocs\"\n").unwrap();
    assert_eq!(render(&workspace_with(own, root_only)), "");
}

#[test]
fn site_absolute_links_find_notes_in_a_conventional_site_root() {
    // A VitePress site published from `src/`: `/guide/intro.html` is `src/guide/intro.md`,
    // and its fragment is checked against that note's headings.
    let fixture = "
//- /src/api/a.md
[a](/guide/intro.html) [b](/guide/intro.html#setup) [c](/guide/intro#gone) [d](/guide/intro.md) [e](/guide/missing.html)
//- /src/guide/intro.md
## Setup {#setup}
//- /src/guide/x.html
//- /README.md
[[TOC]]

[[toc]] and more text [[toc]]
";
    check(
        fixture,
        "\
README.md:3:3: missing-wiki-target: no document or file matches wiki link `[[toc]]`
README.md:3:25: missing-wiki-target: no document or file matches wiki link `[[toc]]`
src/api/a.md:1:70: missing-heading: no heading or anchor `#gone` in `src/guide/intro.md`
src/api/a.md:1:101: missing-file: file `/guide/missing.html` does not exist (resolved to `guide/missing.html`)
",
    );
    // With `site_root` set, it alone maps `/…`; with `site_absolute = \"check\"`, the
    // repository's own rule holds (GitHub reads `/guide/intro.html` from the root).
    let check_all = Config::from_toml("[links]\nsite_absolute = \"check\"\n").unwrap();
    assert_eq!(
        render(&workspace_with(fixture, check_all))
            .lines()
            .filter(|l| l.contains("missing-file"))
            .count(),
        5
    );
}

#[test]
fn site_absolute_links_find_files_in_a_public_or_static_folder() {
    // VitePress serves `docs/public/logo.svg` at `/logo.svg`; Docusaurus and Hugo serve
    // `static/`. A file in no such folder is still missing.
    check(
        "
//- /docs/guide.md
![a](/logo.svg) ![b](/img/shot.png) ![c](/gone.png)
//- /docs/public/logo.svg
//- /static/img/shot.png
",
        "docs/guide.md:1:42: missing-file: file `/gone.png` does not exist (resolved to `gone.png`)\n",
    );
}
#[test]
fn a_heading_that_links_to_a_tab_anchor_defines_it() {
    check(
        "
//- /a.md
# [Windows](#tab/windows)
text
# [Linux](#tab/linux)
## [Known issues](#issues-1.5)
[w](#tab/windows) [m](#tab/mac) [x](a.md#tab/linux) [k](#known-issues)
",
        "\
a.md:4:20: missing-heading: no heading or anchor `#issues-1.5` in this document
a.md:5:24: missing-heading: no heading or anchor `#tab/mac` in this document
",
    );
}

#[test]
fn of_several_files_by_name_the_exact_letter_case_then_the_nearest_wins() {
    let config = Config::from_toml("[links]\nobsidian = true\n").unwrap();
    let ws = workspace_with(
        "
//- /api/Modal/ctor.md
[App](App) [[Manifest]] [x](onload) [[onload]] [Modal](Modal)
//- /api/Modal/app.md
//- /api/App.md
//- /Manifest.md
//- /api/Plugin/manifest.md
//- /api/Component/onload.md
//- /api/Plugin/onload.md
//- /api/Modal.md
//- /css/Modal.md
",
        config,
    );
    assert_eq!(
        render(&ws),
        "\
api/Modal/ctor.md:1:29: ambiguous-file: `onload` matches 2 files by name: api/Component/onload.md, api/Plugin/onload.md
api/Modal/ctor.md:1:39: ambiguous-wiki-target: wiki link `[[onload]]` matches 2 documents: api/Component/onload.md, api/Plugin/onload.md
"
    );
}

#[test]
fn wiki_syntax_inside_an_html_code_element_is_code() {
    check(
        "
//- /a.md
| a | b |
|---|---|
| x | <code>[[page name&#124;display name]]</code> and [[gone]] |
",
        "a.md:3:58: missing-wiki-target: no document or file matches wiki link `[[gone]]`\n",
    );
}

#[test]
fn shortcut_references_with_inline_markup_use_their_definition() {
    // CommonMark 4.7 matches the label's source text, markup included: [`x`] uses
    // [`x`]: ..., as GitHub renders it (kubernetes/community has 17 of these).
    check(
        "
//- /a.md
See [`status-reconciler`], [_trivial fix_], [**Bold** Text][] and [x][`code`].

[`status-reconciler`]: https://example.com/a
[_trivial fix_]: https://example.com/b
[**bold** text]: https://example.com/c
[`code`]: https://example.com/d
[`unused`]: https://example.com/e
",
        "a.md:7:2: unused-definition: link reference definition `[`unused`]` is not used\n",
    );
}

#[test]
fn comment_definitions_are_neither_unused_nor_duplicates() {
    // `[//]: # (note)` and `[comment]: <> (note)` are the Markdown comment idiom; Foam
    // writes `[//begin]: #` and `[//end]: #` around its generated definitions.
    check(
        "
//- /a.md
[//]: # (first note)
[//]: # (second note)
[comment]: <> (a third)
[//begin]: # \"Autogenerated link references\"
[//end]: # \"Autogenerated link references\"
[real]: b.md
[real]: b.md
//- /b.md
# B
",
        "\
a.md:6:2: unused-definition: link reference definition `[real]` is not used
a.md:7:2: duplicate-definition: duplicate definition of `[real]`; the first one is used (CommonMark 4.7)
",
    );
}

#[test]
fn a_wiki_link_never_resolves_to_a_folder() {
    // Obsidian and Foam resolve `[[publishing]]` to a file; a folder of that name is not
    // a target (foam-docs `user/index.md` links `[[publishing]]` where only the folder
    // `user/publishing/` exists).
    check(
        "
//- /user/index.md
[[publishing]], [[assets]] and [[publishing-to-gh]].
//- /user/publishing/publishing-to-gh.md
# Publishing
//- /assets/logo.png
",
        "\
user/index.md:1:3: missing-wiki-target: no document or file matches wiki link `[[publishing]]`
user/index.md:1:19: missing-wiki-target: no document or file matches wiki link `[[assets]]`
",
    );
}

#[test]
fn wiki_links_in_quoted_frontmatter_strings_are_links() {
    // Obsidian resolves a wiki link in a property's quoted value (kepano's vault has 30
    // such links to notes that do not exist); unquoted, `[[x]]` is a YAML list.
    // Only a property's whole quoted value is a link: not a comment, an unquoted or block
    // value, or a link among other words.
    check(
        "
//- /a.md
---
up: \"[[Home]]\"
related:
  - \"[[Missing note]]\"
  - '[[Home#Gone]]'
flow: [\"[[Missing two]]\", 'x']
list: [[not, a, link]]
# don't link \"[[Commented]]\"
summary: Bob's take on [[Unquoted]]
words: \"see [[Among words]] here\"
notes: |
  it's a block \"[[Block]]\"
date: \"[[{{date}}]]\"
escaped: '[[It''s]]'
---
# A

Made from a template: [[<% tp.date.now() %>]] and [[{{title}} log]].
//- /Home.md
# Home
",
        "\
a.md:4:8: missing-wiki-target: no document or file matches wiki link `[[Missing note]]`
a.md:5:13: missing-heading: no heading or anchor `#Gone` in `Home.md`
a.md:6:11: missing-wiki-target: no document or file matches wiki link `[[Missing two]]`
",
    );
}

/// An MkDocs project (an `mkdocs.yml` at the root, or `[links] generator = "mkdocs"`) also names
/// headings by Python-Markdown's `toc` ids: runs of `-` and spaces collapse, non-ASCII
/// letters are reduced or dropped, repeats get `_1`, an image's alt text is left out.
/// Elsewhere only GitHub's slugs count.
#[test]
fn an_mkdocs_project_also_uses_python_markdown_heading_ids() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("mkdocs.yml"), "site_name: x\n").unwrap();
    std::fs::write(
        dir.path().join("b.md"),
        "## Caret, Mark & Tilde\n## Über uns\n## 日本語\n## 中文\n## Usage\n## Usage\n## ![logo](https://example.com/l.png) Project\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("a.md"),
        "[a](b.md#caret-mark-tilde) [b](b.md#caret-mark--tilde) [c](b.md#uber-uns) \
         [d](b.md#_1) [e](b.md#_2) [f](b.md#usage_1) [g](b.md#usage-1) [h](b.md#usage_2) \
         [i](b.md#project) [j](b.md#logo-project)\n",
    )
    .unwrap();
    let (ws, _) = Workspace::load(dir.path(), Config::default()).unwrap();
    assert_eq!(ws.generator(), SiteGenerator::Mkdocs);
    assert_eq!(
        render(&ws),
        "a.md:1:146: missing-heading: no heading or anchor `#usage_2` in `b.md`\n"
    );
    // Go to definition lands on the heading the id names.
    let parsed = ws.parsed("b.md").unwrap();
    assert_eq!(
        navigate::fragment_range(&parsed, "_2", false, false, SiteGenerator::Mkdocs),
        Some(parsed.headings[3].range.clone())
    );
    let off = Config::from_toml("[links]\ngenerator = \"none\"\n").unwrap();
    let (ws, _) = Workspace::load(dir.path(), off).unwrap();
    assert_eq!(ws.generator(), SiteGenerator::None);
    let codes: Vec<String> = diagnostics(&ws, "a.md")
        .iter()
        .map(|d| ws.get("a.md").unwrap().doc.text()[d.range.clone()].to_string())
        .collect();
    assert_eq!(
        codes,
        vec![
            "caret-mark-tilde",
            "uber-uns",
            "_1",
            "_2",
            "usage_1",
            "usage_2",
            "project"
        ]
    );
}

/// A VitePress site (a `.vitepress/` folder at the root or in `docs/`, or `[links]
/// generator = "vitepress"`) names headings by VitePress's slugs too: punctuation runs become one `-`,
/// repeats get `-1`.
#[test]
fn a_vitepress_site_also_uses_its_heading_ids() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("docs/.vitepress")).unwrap();
    std::fs::write(
        dir.path().join("b.md"),
        "## build.assetsInlineLimit\n## 2.0 Release\n## Usage\n## Usage\n## ![v](https://example.com/v.svg) Vite\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("a.md"),
        "[a](b.md#build-assetsinlinelimit) [b](b.md#buildassetsinlinelimit) [c](b.md#_2-0-release) [d](b.md#usage-1) [e](b.md#usage_1) [f](b.md#vite)\n",
    )
    .unwrap();
    let (ws, _) = Workspace::load(dir.path(), Config::default()).unwrap();
    assert_eq!(ws.generator(), SiteGenerator::Vitepress);
    assert_eq!(
        render(&ws),
        "a.md:1:118: missing-heading: no heading or anchor `#usage_1` in `b.md`\n"
    );
}

/// A Docusaurus site (a `docusaurus.config.*` at the root or in `website/`, `docs/`, …)
/// looks a link to a Markdown file up from its docs folders and its site folder when the
/// page's folder has no such file; `./` and `../` links are the page folder's only. An
/// extension-less link is a page URL, which names a document by its frontmatter `id`.
#[test]
fn a_docusaurus_site_looks_markdown_links_up_from_its_docs_folder() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for folder in ["website/src/pages", "docs/api", "docs/guide"] {
        std::fs::create_dir_all(root.join(folder)).unwrap();
    }
    std::fs::write(
        root.join("website/docusaurus.config.js"),
        "module.exports = { presets: [['classic', { docs: { path: '../docs' } }]] };\n",
    )
    .unwrap();
    std::fs::write(root.join("docs/api/Store.md"), "# Store\n## dispatch\n").unwrap();
    std::fs::write(root.join("docs/intro.mdx"), "# Intro\n").unwrap();
    std::fs::write(
        root.join("docs/guide/SetupGuide.md"),
        "---\nid: setup\n---\n# Setup\n## Install\n",
    )
    .unwrap();
    std::fs::write(root.join("website/src/pages/about.md"), "# About\n").unwrap();
    std::fs::write(
        root.join("docs/guide/glossary.md"),
        "[a](api/Store.md#dispatch) [b](/api/Store.md) [c](intro.mdx) [d](@site/src/pages/about.md) \
         [e](src/pages/about.md) [f](./api/Store.md) [g](api/Store.md#nope) [h](api/Gone.md) \
         [i](setup#install) [j](../guide/setup/) [k](gone)\n",
    )
    .unwrap();
    let (ws, _) = Workspace::load(root, Config::default()).unwrap();
    assert_eq!(ws.generator(), SiteGenerator::Docusaurus);
    assert_eq!(
        render(&ws),
        "docs/guide/glossary.md:1:120: missing-file: file `./api/Store.md` does not exist (resolved to `docs/guide/api/Store.md`); a file of that name is at `docs/api/Store.md`\n\
         docs/guide/glossary.md:1:153: missing-heading: no heading or anchor `#nope` in `docs/api/Store.md`\n\
         docs/guide/glossary.md:1:163: missing-file: file `api/Gone.md` does not exist (resolved to `docs/guide/api/Gone.md`)\n\
         docs/guide/glossary.md:1:220: missing-file: file `gone` does not exist (resolved to `docs/guide/gone`)\n"
    );
    // Go to definition and the link graph follow the same lookup.
    let parsed = ws.parsed("docs/guide/glossary.md").unwrap();
    assert_eq!(
        resolve_link(&ws, "docs/guide/glossary.md", &parsed.links[0]),
        Target::Document {
            path: "docs/api/Store.md".into(),
            fragment: Some("dispatch".into())
        }
    );
    // Elsewhere the page's folder is the only one (`/api/Store.md` is found in the
    // conventional site root `docs/`).
    let off = Config::from_toml("[links]\ngenerator = \"none\"\n").unwrap();
    let (ws, _) = Workspace::load(root, off).unwrap();
    let text = ws.get("docs/guide/glossary.md").unwrap().doc.text();
    let reported: Vec<&str> = diagnostics(&ws, "docs/guide/glossary.md")
        .iter()
        .map(|d| &text[d.range.clone()])
        .collect();
    assert_eq!(
        reported,
        vec![
            "api/Store.md",
            "intro.mdx",
            "@site/src/pages/about.md",
            "src/pages/about.md",
            "./api/Store.md",
            "api/Store.md",
            "api/Gone.md",
            "setup",
            "../guide/setup/",
            "gone"
        ]
    );
}

/// Docusaurus page URLs: a file name's number prefix is not part of its id, a relative
/// `slug` replaces it and an absolute one is the page's URL, an index page's relative
/// links start at its folder's URL, `/docs/…` is under the docs route, an `.mdx` page
/// counts, and `@site/…` names any file.
#[test]
fn docusaurus_page_urls_follow_its_ids_slugs_and_index_pages() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for folder in ["docs/guide", "docs/releases", "static/img"] {
        std::fs::create_dir_all(root.join(folder)).unwrap();
    }
    std::fs::write(root.join("docusaurus.config.ts"), "export default {};\n").unwrap();
    std::fs::write(root.join("static/img/logo.png"), "png").unwrap();
    std::fs::write(root.join("docs/guide/02-plain.md"), "# Plain\n").unwrap();
    std::fs::write(
        root.join("docs/guide/other.md"),
        "---\nslug: custom\n---\n# Other\n",
    )
    .unwrap();
    std::fs::write(root.join("docs/guide/codegen.mdx"), "# Codegen\n").unwrap();
    std::fs::write(
        root.join("docs/guide/terms.md"),
        "---\nslug: /glossary\n---\n# Terms\n## Word\n",
    )
    .unwrap();
    std::fs::write(root.join("docs/releases/policy.md"), "# Policy\n").unwrap();
    std::fs::write(
        root.join("docs/releases/releases.md"),
        "[a](./releases/policy) [b](releases/gone)\n",
    )
    .unwrap();
    std::fs::write(
        root.join("docs/guide/a.md"),
        "[a](plain) [b](custom) [c](codegen) [d](/docs/guide/plain) [e](@site/static/img/logo.png) \
         [f](/docs/guide/gone) [g](other) [h](../glossary#word) [i](/docs/glossary#nope)\n",
    )
    .unwrap();
    let (ws, _) = Workspace::load(root, Config::default()).unwrap();
    assert_eq!(ws.generator(), SiteGenerator::Docusaurus);
    assert_eq!(ws.site_route_base(), "docs");
    let reported = |path: &str| reported_text(&ws, path);
    // A `/…` link that names nothing is a page of the site, not checked (`site_absolute`);
    // `other` names its file, though the page is published as `custom`.
    assert_eq!(reported("docs/guide/a.md"), vec!["nope"]);
    let parsed = ws.parsed("docs/guide/a.md").unwrap();
    let targets: Vec<Target> = parsed
        .links
        .iter()
        .map(|l| resolve_link(&ws, "docs/guide/a.md", l))
        .collect();
    let doc = |path: &str| Target::Document {
        path: path.into(),
        fragment: None,
    };
    assert_eq!(
        targets,
        vec![
            doc("docs/guide/02-plain.md"),
            doc("docs/guide/other.md"),
            Target::File("docs/guide/codegen.mdx".into()),
            doc("docs/guide/02-plain.md"),
            Target::File("static/img/logo.png".into()),
            Target::External,
            doc("docs/guide/other.md"),
            Target::Document {
                path: "docs/guide/terms.md".into(),
                fragment: Some("word".into())
            },
            Target::Document {
                path: "docs/guide/terms.md".into(),
                fragment: Some("nope".into())
            },
        ]
    );
    assert_eq!(
        ws.page_at_url("/Docs/Guide/plain/"),
        Some("docs/guide/02-plain.md")
    );
    // An index page is at its folder's URL with a `/`: its links start in that folder.
    // A bare `x.md` is looked up in the docs folders before the page's own folder.
    std::fs::write(
        root.join("docs/guide/index.md"),
        "[a](./plain) [b](plain)\n",
    )
    .unwrap();
    std::fs::write(root.join("docs/intro.md"), "# Root\n").unwrap();
    std::fs::write(root.join("docs/guide/intro.md"), "# Local\n").unwrap();
    std::fs::write(
        root.join("docs/guide/b.md"),
        "[c](intro.md#root) [d](./intro.md#local) [e](intro.md#local)\n",
    )
    .unwrap();
    let (ws, _) = Workspace::load(root, Config::default()).unwrap();
    assert_eq!(
        ws.page_url_of("docs/guide/index.md").as_deref(),
        Some("/docs/guide/")
    );
    assert_eq!(diagnostics(&ws, "docs/guide/index.md").len(), 0);
    let b = ws.get("docs/guide/b.md").unwrap().doc.text();
    let in_b: Vec<&str> = diagnostics(&ws, "docs/guide/b.md")
        .iter()
        .map(|d| &b[d.range.clone()])
        .collect();
    assert_eq!(in_b, vec!["local"]);
    assert_eq!(
        ws.page_at_url("/docs/releases"),
        Some("docs/releases/releases.md")
    );
    assert_eq!(
        ws.page_url_of("docs/guide/terms.md").as_deref(),
        Some("/docs/glossary")
    );
    assert_eq!(reported("docs/releases/releases.md"), vec!["releases/gone"]);
}

/// A folder's name gives no file kind: `/blog/react-native-0.81` is a page of the site
/// even where a folder `version-0.81/` exists, while `/blog/x.82` with a file `data/a.82`
/// is a file that must exist.
#[test]
fn folder_names_are_not_file_extensions() {
    check(
        "//- /a.md\n[a](/blog/react-native-0.81) [b](/blog/x.82)\n//- /versioned_docs/version-0.81/intro.md\n# Intro\n//- /data/a.82\nx\n",
        "a.md:1:34: missing-file: file `/blog/x.82` does not exist (resolved to `blog/x.82`)\n",
    );
}

/// Hugo: a link names a page by its logical path (from the page's folder, then from the
/// content folder a module mount gives), by its URL (`slug`, `url`, `aliases`), or as a
/// browser resolves it against the page's URL; files come from `static/` and `assets/`;
/// a `/…` link under a section must name a page, one elsewhere (`/tags/…`) need not;
/// definition terms have ids with `autoDefinitionTermID`; template expressions and
/// `[[…]]` are not reported.
#[test]
fn hugo_links_name_pages_by_logical_path_and_url() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for folder in [
        "site/content/en/methods/site",
        "site/content/en/about",
        "site/content/en/posts",
        "site/content/en/configuration",
        "site/content/en/templates",
        "site/static/images",
        "site/assets/img",
    ] {
        std::fs::create_dir_all(root.join(folder)).unwrap();
    }
    let write = |path: &str, text: &str| std::fs::write(root.join(path), text).unwrap();
    write(
        "site/hugo.toml",
        "baseURL = 'https://example.org/'\n\
         [markup.goldmark.parser]\nautoDefinitionTermID = true\n\
         [[module.mounts]]\nsource = 'content/en'\ntarget = 'content'\n",
    );
    write("site/static/images/logo.png", "png");
    write("site/assets/img/kitten.jpg", "jpg");
    write(
        "site/content/en/methods/site/Title.md",
        "# Title\n\n## Usage\n",
    );
    write("site/content/en/methods/site/_index.md", "# Site\n");
    write("site/content/en/about/index.md", "[q](team/)\n");
    write("site/content/en/about/team.md", "# Team\n");
    write("site/content/en/posts/team.md", "# Another team\n");
    write(
        "site/content/en/posts/first.md",
        "---\nslug: hello\n---\n[r](../moved/)\n",
    );
    write(
        "site/content/en/posts/moved.md",
        "---\nurl: /elsewhere/moved/\naliases: [/old/moved/]\n---\n# Moved\n",
    );
    write(
        "site/content/en/configuration/all.md",
        "`cacheDir`\n: (string) where\n\n`cacheDir`\n: again\n\n## Cache dir\n",
    );
    write(
        "site/content/en/templates/intro.md",
        "[a](methods/site/title/) [b](/methods/site/title/#usage) [c](/methods/site/) \
         [d](../about/) [e](/posts/hello/) [f](/elsewhere/moved/) [g](/old/moved/) \
         [h](/images/logo.png) [i](img/kitten.jpg) [j](/methods/site/gone/) [k](/tags/go/) \
         [l](/configuration/all/#cachedir-1) [m](/configuration/all/#cache-dir) \
         [n](/configuration/all/#nope) [o]({{% param repo %}}/issues) [p](nothing/here/)\n\n\
         [[menus.main]]\n\n[[team]]\n",
    );
    let (ws, _) = Workspace::load(root, Config::default()).unwrap();
    assert_eq!(ws.generator(), SiteGenerator::Hugo);
    assert!(ws.definition_term_ids());
    let reported = |path: &str| reported_text(&ws, path);
    let intro = "site/content/en/templates/intro.md";
    assert_eq!(
        reported(intro),
        vec!["/methods/site/gone/", "nope", "nothing/here/"]
    );
    let parsed = ws.parsed(intro).unwrap();
    let targets: Vec<Target> = parsed
        .links
        .iter()
        .take(11)
        .map(|l| resolve_link(&ws, intro, l))
        .collect();
    let doc = |path: &str| Target::Document {
        path: format!("site/content/en/{path}"),
        fragment: None,
    };
    assert_eq!(
        targets,
        vec![
            doc("methods/site/Title.md"),
            Target::Document {
                path: "site/content/en/methods/site/Title.md".into(),
                fragment: Some("usage".into())
            },
            doc("methods/site/_index.md"),
            doc("about/index.md"),
            doc("posts/first.md"),
            doc("posts/moved.md"),
            doc("posts/moved.md"),
            Target::File("site/static/images/logo.png".into()),
            Target::File("site/assets/img/kitten.jpg".into()),
            Target::Missing,
            Target::External,
        ]
    );
    // A bundle's links start in its folder; a page published under a `slug` has its
    // relative links resolved by the browser against that URL.
    assert_eq!(
        reported("site/content/en/about/index.md"),
        Vec::<String>::new()
    );
    assert_eq!(
        reported("site/content/en/posts/first.md"),
        Vec::<String>::new()
    );
    assert_eq!(
        ws.page_url_of("site/content/en/posts/first.md").as_deref(),
        Some("/posts/hello/")
    );
    let message = diagnostics(&ws, intro)
        .into_iter()
        .map(|d| d.message)
        .next()
        .unwrap();
    assert_eq!(
        message,
        "file `/methods/site/gone/` does not exist (resolved to `site/content/en/methods/site/gone`)"
    );
}

/// Hugo module mounts and snippets: a translation falls back to what a mount brings from
/// the default language and shares its bundles' resources; what a mount brings from
/// outside the workspace is not reported; `static/` mounts serve files; a page shows the
/// anchors of the snippets it includes (`include` shortcode, `_includes/`, Markdown
/// shortcode templates) and a snippet's `#x` names its includer's anchor; a template's
/// `/…` link names a page of the default language.
#[test]
fn hugo_mounts_translations_and_snippets() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let write =
        |path: &str, text: &str| crate::fixture::on_disk(root, &format!("//- /{path}\n{text}"));
    write(
        "config/_default/hugo.yaml",
        "baseURL: https://example.org/\n\
         module:\n  mounts:\n\
         \x20   - {source: content/en, target: content}\n\
         \x20   - {source: content/ja, target: content}\n\
         \x20   - {source: content/en/docs, target: content/docs}\n\
         \x20   - {source: tmp/spec, target: content/docs/specs}\n\
         \x20   - {source: icons, target: static/img/logos}\n",
    );
    write("icons/a.svg", "<svg/>");
    write("content/en/docs/guide.md", "# Guide\n\n## Setup\n");
    write("content/en/docs/concepts/signals/s.svg", "<svg/>");
    write(
        "content/en/docs/concepts/signals/baggage.md",
        "![b](../s.svg)\n",
    );
    write("content/en/blog/post/index.md", "# Post\n");
    write("content/en/blog/post/shot.png", "png");
    write("content/ja/blog/post/index.md", "![s](shot.png)\n");
    write(
        "content/ja/docs/x.md",
        "[a](/docs/guide/#setup) [b](guide/) [c](/docs/specs/otel/) [d](/docs/gone/) \
         [e](/img/logos/a.svg) [f](/img/logos/b.svg)\n",
    );
    write(
        "content/en/docs/_includes/intro.md",
        "## Snippet heading\n\nSee [here](#page-heading).\n",
    );
    write("content/en/_common/terms.md", "## Common term\n");
    write(
        "layouts/_shortcodes/docs/outro.md",
        "## Outro\n\n[Guide](/docs/guide/)\n",
    );
    write(
        "content/en/docs/languages/page.md",
        "## Page heading\n\n{{% include \"intro.md\" %}}\n\n{{% include \"/_common/terms.md\" %}}\n\n\
         {{% docs/outro %}}\n\n```\n{{% include \"nothing.md\" %}}\n```\n\n\
         [a](#snippet-heading) [b](#common-term) [c](#outro) [d](#nope)\n",
    );
    let (ws, _) = Workspace::load(root, Config::default()).unwrap();
    assert_eq!(ws.generator(), SiteGenerator::Hugo);
    let reported = |path: &str| reported_text(&ws, path);
    assert_eq!(
        reported("content/ja/docs/x.md"),
        vec!["/docs/gone/", "/img/logos/b.svg"]
    );
    let parsed = ws.parsed("content/ja/docs/x.md").unwrap();
    let first = resolve_link(&ws, "content/ja/docs/x.md", &parsed.links[0]);
    assert_eq!(
        first,
        Target::Document {
            path: "content/en/docs/guide.md".into(),
            fragment: Some("setup".into())
        }
    );
    assert_eq!(
        reported("content/ja/blog/post/index.md"),
        Vec::<String>::new()
    );
    assert_eq!(
        reported("content/en/docs/concepts/signals/baggage.md"),
        Vec::<String>::new()
    );
    assert_eq!(reported("content/en/docs/languages/page.md"), vec!["nope"]);
    assert_eq!(
        reported("content/en/docs/_includes/intro.md"),
        Vec::<String>::new()
    );
    assert_eq!(
        reported("layouts/_shortcodes/docs/outro.md"),
        Vec::<String>::new()
    );
}

/// Hugo's `ref` and `relref` shortcodes are links: found outside code, resolved as
/// `GetPage` does, their anchors checked, and their quoted path rewritten when the page
/// moves.
#[test]
fn hugo_ref_shortcodes_are_checked_and_follow_moves() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let page = "[a]({{< ref \"sec/al.md\" >}}) [b]({{< relref \"/sec/al#al\" >}}) \
                [c]({{% ref \"sec/nope.md\" %}}) [d]({{< ref \"sec/al.md#nope\" >}}) \
                [e]({{< ref `sec/My Page` >}}) [f]({{< ref \"al\" >}}) [g]({{< ref \"sec\" >}})\n\n\
                `{{< ref \"code.md\" >}}` {{</* ref \"x.md\" */>}}\n";
    crate::fixture::on_disk(
        root,
        &format!(
            "//- /hugo.toml\nbaseURL = 'https://example.org/'\n\
             //- /content/sec/al.md\n# Al\n\
             //- /content/sec/_index.md\n# Section\n\
             //- /content/sec/My Page.md\n# Mine\n\
             //- /content/refs.md\n{page}"
        ),
    );
    let (ws, _) = Workspace::load(root, Config::default()).unwrap();
    let parsed = ws.parsed("content/refs.md").unwrap();
    let shortcodes: Vec<(&str, Option<&str>, &str)> = parsed
        .links
        .iter()
        .filter(|l| l.kind == LinkKind::Shortcode)
        .map(|l| {
            (
                l.dest.as_str(),
                l.fragment.as_deref(),
                &page[l.dest_range.clone().unwrap()],
            )
        })
        .collect();
    assert_eq!(
        shortcodes,
        vec![
            ("sec/al.md", None, "sec/al.md"),
            ("/sec/al", Some("al"), "/sec/al#al"),
            ("sec/nope.md", None, "sec/nope.md"),
            ("sec/al.md", Some("nope"), "sec/al.md#nope"),
            ("sec/My Page", None, "sec/My Page"),
            ("al", None, "al"),
            ("sec", None, "sec"),
        ]
    );
    assert_eq!(
        reported_text(&ws, "content/refs.md"),
        vec!["sec/nope.md", "nope"]
    );
    let moves = vec![
        (
            "content/sec/al.md".to_string(),
            "content/other/al.md".to_string(),
        ),
        (
            "content/sec/My Page.md".to_string(),
            "content/other/My Page.md".to_string(),
        ),
    ];
    let edits = crate::links::rewrite::move_edits(&ws, &moves);
    let mut text = page.to_string();
    for e in edits["content/refs.md"].iter().rev() {
        text.replace_range(e.range.clone(), &e.new_text);
    }
    assert_eq!(
        text,
        "[a]({{< ref \"other/al.md\" >}}) [b]({{< relref \"/other/al#al\" >}}) \
         [c]({{% ref \"sec/nope.md\" %}}) [d]({{< ref \"other/al.md#nope\" >}}) \
         [e]({{< ref `other/My Page` >}}) [f]({{< ref \"/other/al\" >}}) [g]({{< ref \"sec\" >}})\n\n\
         `{{< ref \"code.md\" >}}` {{</* ref \"x.md\" */>}}\n"
    );
}

/// A docfx site (a `docfx.json` in a folder at the root): a link to a page one of its
/// redirection files names (anywhere in the repository, its `source_path` relative to that
/// file, letter case ignored) works, its fragment unchecked; Markdig's `section` ids name
/// headings whose GitHub slug is empty; other broken links are still reported.
#[test]
fn a_docfx_site_follows_its_redirection_files_and_markdig_heading_ids() {
    let dir = tempfile::tempdir().unwrap();
    crate::fixture::on_disk(
        dir.path(),
        r#"//- /reference/docfx.json
{"build": {"content": [{"files": ["**/*.md"], "src": "docs"}]}}
//- /redir/.openpublishing.redirection.json
{"redirections": [
  {"source_path": "../reference/docs/Old-Name.md", "redirect_url": "/site/docs/new-name", "redirect_document_id": false},
  {"source_path_from_root": "/reference/docs/retired.md", "redirect_url": "https://example.com/retired"}
]}
//- /reference/docs/new-name.md
# New name

### `$$`

### `$?`
//- /reference/docs/guide.md
[a](old-name.md) [b](Old-Name.md#gone) [c](retired.md) [d](new-name.md#section-1) [e](new-name.md#section-2) [f](missing.md)
"#,
    );
    let (ws, _) = Workspace::load(dir.path(), Config::default()).unwrap();
    assert_eq!(ws.generator(), SiteGenerator::Docfx);
    assert_eq!(
        render(&ws),
        "reference/docs/guide.md:1:99: missing-heading: no heading or anchor `#section-2` in `reference/docs/new-name.md`\n\
         reference/docs/guide.md:1:114: missing-file: file `missing.md` does not exist (resolved to `reference/docs/missing.md`)\n"
    );
    let guide = ws.parsed("reference/docs/guide.md").unwrap();
    assert_eq!(
        resolve_link(&ws, "reference/docs/guide.md", &guide.links[1]),
        Target::Redirected("/site/docs/new-name".into())
    );
    // Without docfx the same links are broken.
    let mut config = Config::default();
    config.links.generator = Some(SiteGenerator::None);
    let (plain, _) = Workspace::load(dir.path(), config).unwrap();
    assert_eq!(render(&plain).lines().count(), 6, "{}", render(&plain));
}

/// `[[alias]]` names a note by an alias of its frontmatter (`aliases` list or `alias`),
/// in any letter case, with a heading; an alias no note gives is still missing.
#[test]
fn wiki_links_resolve_frontmatter_aliases() {
    check(
        "//- /Meeting notes.md\n---\naliases: [Standup, \"Daily sync\"]\n---\n## Actions\n\
         //- /b.md\n---\nalias: Bee\n---\n# B\n\
         //- /a.md\n[[standup]] [[Daily sync#Actions]] [[bee]] [[Retro]]\n",
        "a.md:1:46: missing-wiki-target: no document or file matches wiki link `[[Retro]]`\n",
    );
}

#[test]
fn frontmatter_that_does_not_parse_is_reported_on_its_opening_line() {
    check(
        "//- /bad.md\n---\ntitle: [unclosed\ntags: a\n---\n# Bad\n//- /good.md\n---\ntitle: Good\n---\n# Good\n",
        "bad.md:1:1: invalid-frontmatter: frontmatter is not valid YAML: did not find expected ',' or ']' at line 2 column 5, while parsing a flow sequence at line 1 column 8 (lines counted from the one after the opening `---`); the note's title, tags, aliases and dates are not read from it\n",
    );
}
