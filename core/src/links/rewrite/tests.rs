//! Tests of the link-rewrite engine with exact expected text: every kind of link a move
//! or a rename touches.

use std::collections::BTreeMap;

use super::*;
use crate::fixture::workspace;

fn apply(text: &str, edits: &[TextEdit]) -> String {
    let mut out = text.to_string();
    for e in edits.iter().rev() {
        out.replace_range(e.range.clone(), &e.new_text);
    }
    out
}

fn moved(fixture: &str, from: &str, to: &str) -> BTreeMap<String, String> {
    let ws = workspace(fixture);
    let edits = move_edits(&ws, &[(from.to_string(), to.to_string())]);
    edits
        .iter()
        .map(|(path, list)| (path.clone(), apply(&ws.get(path).unwrap().doc.text(), list)))
        .collect()
}

#[test]
fn heading_rename_updates_links_everywhere() {
    let ws = workspace(
        "//- /a.md\n# Intro\n## Set Up\nsee [s](#set-up) and [o](b.md#x)\n//- /b.md\n[a](a.md#set-up) [[a#Set Up]] [[a#set-up]] [n](a.md#nope)\n",
    );
    let edits = rename_heading(&ws, "a.md", 1, "Getting Started").unwrap();
    let a = ws.get("a.md").unwrap().doc.text();
    let b = ws.get("b.md").unwrap().doc.text();
    assert_eq!(
        apply(&a, &edits["a.md"]),
        "# Intro\n## Getting Started\nsee [s](#getting-started) and [o](b.md#x)\n"
    );
    assert_eq!(
        apply(&b, &edits["b.md"]),
        "[a](a.md#getting-started) [[a#Getting Started]] [[a#getting-started]] [n](a.md#nope)\n"
    );
}

/// A heading's attribute list stays when it is renamed, and links to its id stay as
/// written; in an MkDocs project a link written with Python-Markdown's id gets the new one.
#[test]
fn heading_rename_keeps_attribute_lists_and_python_markdown_ids() {
    let ws = workspace(
        "//- /a.md\n## API {#api}\n## Caret, Mark & Tilde { .x }\n//- /b.md\n[a](a.md#api) [b](a.md#api-api) [c](a.md#caret-mark-tilde) [d](a.md#caret-mark--tilde--x-) [e](a.md#caret-mark--tilde)\n",
    );
    let a = ws.get("a.md").unwrap().doc.text();
    let b = ws.get("b.md").unwrap().doc.text();
    let edits = rename_heading(&ws, "a.md", 0, "Interface").unwrap();
    assert_eq!(
        apply(&a, &edits["a.md"]),
        "## Interface {#api}\n## Caret, Mark & Tilde { .x }\n"
    );
    assert_eq!(
        apply(&b, &edits["b.md"]),
        "[a](a.md#api) [b](a.md#interface-api) [c](a.md#caret-mark-tilde) [d](a.md#caret-mark--tilde--x-) [e](a.md#caret-mark--tilde)\n"
    );
    // Not an MkDocs project: `#caret-mark-tilde` names nothing, so it is not rewritten;
    // GitHub's slug of the whole line stays one, and the list's id (the slug of the text
    // before the list) stays one.
    let edits = rename_heading(&ws, "a.md", 1, "Up & Down").unwrap();
    assert_eq!(
        apply(&a, &edits["a.md"]),
        "## API {#api}\n## Up & Down { .x }\n"
    );
    assert_eq!(
        apply(&b, &edits["b.md"]),
        "[a](a.md#api) [b](a.md#api-api) [c](a.md#caret-mark-tilde) [d](a.md#up--down--x-) [e](a.md#up--down)\n"
    );
    let config = crate::workspace::Config::from_toml("[links]\ngenerator = \"mkdocs\"\n").unwrap();
    let ws = crate::fixture::workspace_with(
        "//- /a.md\n## Caret, Mark & Tilde\n//- /b.md\n[c](a.md#caret-mark-tilde) [d](a.md#caret-mark--tilde)\n",
        config,
    );
    let b = ws.get("b.md").unwrap().doc.text();
    let edits = rename_heading(&ws, "a.md", 0, "Up & Down").unwrap();
    assert_eq!(
        apply(&b, &edits["b.md"]),
        "[c](a.md#up-down) [d](a.md#up--down)\n"
    );
}

/// An attribute list's id (`## Appendix {.unnumbered}` → `#appendix`) follows a rename,
/// but not onto another heading's anchor, where a link would change target.
#[test]
fn heading_rename_refuses_an_attribute_list_id_another_heading_has() {
    let ws = workspace(
        "//- /a.md\n## Annex\n\n## Appendix {.unnumbered}\n\n## Notes {.x}\n//- /b.md\n[a](a.md#appendix) [b](a.md#annex)\n",
    );
    for (index, name, other) in [
        (1, "Annex", "Annex"),
        (1, "notes", "Notes"),
        (2, "Appendix", "Appendix"),
    ] {
        assert_eq!(
            heading_rename_conflict(&ws, "a.md", index, name),
            Some(format!(
                "renaming to `{name}` would give this heading the id #{} of its attribute list, which names heading `{other}` already; choose a name no other heading has",
                name.to_lowercase()
            )),
            "{name}"
        );
        assert_eq!(rename_heading(&ws, "a.md", index, name), None);
    }
    // A name no other heading has: the link written with the list's id follows.
    let edits = rename_heading(&ws, "a.md", 1, "Addendum").unwrap();
    let b = ws.get("b.md").unwrap().doc.text();
    assert_eq!(
        apply(&b, &edits["b.md"]),
        "[a](a.md#addendum) [b](a.md#annex)\n"
    );
}

#[test]
fn definition_rename_renames_every_usage() {
    let ws = workspace("//- /a.md\n[x][Old] [old][] [old]\n\n[old]: b.md\n");
    let edits = rename_definition(&ws, "a.md", 0, "new").unwrap();
    let a = ws.get("a.md").unwrap().doc.text();
    assert_eq!(apply(&a, &edits), "[x][new] [new][] [new]\n\n[new]: b.md\n");
}

#[test]
fn relative_paths() {
    assert_eq!(relative_path("a.md", "b.md"), "b.md");
    assert_eq!(relative_path("docs/a.md", "b.md"), "../b.md");
    assert_eq!(relative_path("docs/x/a.md", "docs/y/b.md"), "../y/b.md");
    assert_eq!(relative_path("a/b/c.md", "a/d.md"), "../d.md");
    assert_eq!(relative_path("c.md", "a/d.md"), "a/d.md");
}

/// The fixture of issue 12: every kind of link to `Projects/Task.md`.
pub(crate) const EVERY_KIND: &str = "//- /index.md\n\
# Index\n\
\n\
[[Projects/Task]] and [[Projects/Task#Steps|the steps]] and [[Task]] and ![[Projects/Task]].\n\
[task](Projects/Task.md) [steps](<Projects/Task.md#steps>) [titled](Projects/Task.md \"Task\").\n\
[bare](Projects/Task) [site](Projects/Task.html#steps) [dot](./Projects/Task.md) [root](/Projects/Task.md?x=1).\n\
![icon](Projects/icon.png) [ref][t] [[Projects/Task.md]]\n\
\n\
[t]: Projects/Task.md#steps\n\
//- /Projects/Task.md\n\
# Task\n\
\n\
## Steps\n\
\n\
Back to [index](../index.md), see [icon](icon.png) and [self](Task.md#steps) and [[index]].\n\
//- /Projects/icon.png\n";

#[test]
fn a_move_rewrites_every_kind_of_link_to_and_from_the_moved_file() {
    let got = moved(EVERY_KIND, "Projects/Task.md", "Archive/2024/Task.md");
    assert_eq!(
        got["index.md"],
        "# Index\n\
\n\
[[Archive/2024/Task]] and [[Archive/2024/Task#Steps|the steps]] and [[Task]] and ![[Archive/2024/Task]].\n\
[task](Archive/2024/Task.md) [steps](<Archive/2024/Task.md#steps>) [titled](Archive/2024/Task.md \"Task\").\n\
[bare](Archive/2024/Task) [site](Archive/2024/Task.html#steps) [dot](./Archive/2024/Task.md) [root](/Archive/2024/Task.md?x=1).\n\
![icon](Projects/icon.png) [ref][t] [[Archive/2024/Task.md]]\n\
\n\
[t]: Archive/2024/Task.md#steps\n"
    );
    assert_eq!(
        got["Projects/Task.md"],
        "# Task\n\
\n\
## Steps\n\
\n\
Back to [index](../../index.md), see [icon](../../Projects/icon.png) and [self](Task.md#steps) and [[index]].\n"
    );
    assert_eq!(got.len(), 2);
}

#[test]
fn a_renamed_file_gets_its_new_name_in_wiki_links_written_as_names() {
    let got = moved(
        "//- /a.md\n[[task]] [[Task|alias]] ![[task.md]] [[Projects/Task#H]]\n//- /Projects/Task.md\n# H\n",
        "Projects/Task.md",
        "Projects/Chore.md",
    );
    assert_eq!(
        got["a.md"],
        "[[Chore]] [[Chore|alias]] ![[Chore.md]] [[Projects/Chore#H]]\n"
    );
}

#[test]
fn a_new_path_with_spaces_is_encoded_outside_angle_brackets() {
    let got = moved(
        "//- /a.md\n[x](b.md) [y](<b.md>) [z](b%20c.md)\n//- /b.md\n# B\n//- /b c.md\n# C\n",
        "b.md",
        "my notes/b (old).md",
    );
    assert_eq!(
        got["a.md"],
        "[x](my%20notes/b%20%28old%29.md) [y](<my notes/b (old).md>) [z](b%20c.md)\n"
    );
}

#[test]
fn a_folder_move_computes_links_between_moved_files_from_both_new_places() {
    let ws = workspace(
        "//- /docs/a.md\n[b](b.md) [out](../top.md)\n//- /docs/b.md\n[a](a.md)\n//- /top.md\n[a](docs/a.md)\n",
    );
    let moves = [
        ("docs/a.md".to_string(), "guide/a.md".to_string()),
        ("docs/b.md".to_string(), "guide/sub/b.md".to_string()),
    ];
    let edits = move_edits(&ws, &moves);
    let text = |p: &str| apply(&ws.get(p).unwrap().doc.text(), &edits[p]);
    assert_eq!(text("docs/a.md"), "[b](sub/b.md) [out](../top.md)\n");
    assert_eq!(text("docs/b.md"), "[a](../a.md)\n");
    assert_eq!(text("top.md"), "[a](guide/a.md)\n");
}

#[test]
fn a_heading_path_gets_only_the_segment_of_the_renamed_heading_renamed() {
    let ws = workspace(
        "//- /guide.md\n# Guide\n## Setup\n### On Linux\n//- /n.md\n[[guide#Setup#On Linux]] [[guide#On Linux]] [[guide#Guide#setup#On Linux|x]]\n",
    );
    let n = ws.get("n.md").unwrap().doc.text();
    let edits = rename_heading(&ws, "guide.md", 2, "On Debian").unwrap();
    assert_eq!(
        apply(&n, &edits["n.md"]),
        "[[guide#Setup#On Debian]] [[guide#On Debian]] [[guide#Guide#setup#On Debian|x]]\n"
    );
    // An ancestor renamed: its segment, in the style it was written (text, or text in
    // lower case).
    let edits = rename_heading(&ws, "guide.md", 1, "Getting Started").unwrap();
    assert_eq!(
        apply(&n, &edits["n.md"]),
        "[[guide#Getting Started#On Linux]] [[guide#On Linux]] [[guide#Guide#getting started#On Linux|x]]\n"
    );
    assert_eq!(
        edits["n.md"],
        vec![
            TextEdit {
                range: 8..13,
                new_text: "Getting Started".to_string()
            },
            TextEdit {
                range: 58..63,
                new_text: "getting started".to_string()
            },
        ]
    );
    // A new text a wiki link's fragment cannot hold (`#` splits a heading path): the slug.
    let edits = rename_heading(&ws, "guide.md", 1, "C# Setup").unwrap();
    assert_eq!(
        apply(&n, &edits["n.md"]),
        "[[guide#c-setup#On Linux]] [[guide#On Linux]] [[guide#Guide#c-setup#On Linux|x]]\n"
    );
}

/// A one-word heading: a wiki link written with its text gets the new text, one written
/// in lower case (its text and its slug) the new text in lower case, which Obsidian
/// resolves and a slug it would not; a Markdown link always the slug.
#[test]
fn a_wiki_link_keeps_its_style_when_text_and_slug_differ_only_in_case() {
    let ws = workspace(
        "//- /Setup.md\n## Install\n//- /n.md\n[[Setup#Install]] [[Setup#install]] [a](Setup.md#install) [b](Setup.md#Install)\n",
    );
    let n = ws.get("n.md").unwrap().doc.text();
    let edits = rename_heading(&ws, "Setup.md", 0, "Installation").unwrap();
    assert_eq!(
        apply(&n, &edits["n.md"]),
        "[[Setup#Installation]] [[Setup#installation]] [a](Setup.md#installation) [b](Setup.md#installation)\n"
    );
    let edits = rename_heading(&ws, "Setup.md", 0, "Get it").unwrap();
    assert_eq!(
        apply(&n, &edits["n.md"]),
        "[[Setup#Get it]] [[Setup#get it]] [a](Setup.md#get-it) [b](Setup.md#get-it)\n"
    );
}

/// A rename that makes a heading's name repeat an earlier one: the later heading's anchor
/// gets `-1`, and a wiki link written with its text, which would name the renamed heading
/// now, names it by its new anchor.
#[test]
fn a_rename_onto_a_later_headings_name_keeps_links_on_the_later_heading() {
    let ws = workspace(
        "//- /a.md\n# Alpha\n## Set Up\n//- /b.md\n[a](a.md#set-up) [[a#Set Up]] [[a#Alpha]] [[a#set-up]]\n",
    );
    let b = ws.get("b.md").unwrap().doc.text();
    let edits = rename_heading(&ws, "a.md", 0, "Set Up").unwrap();
    assert_eq!(
        apply(&b, &edits["b.md"]),
        "[a](a.md#set-up-1) [[a#set-up-1]] [[a#Set Up]] [[a#set-up-1]]\n"
    );
    assert_eq!(heading_rename_conflict(&ws, "a.md", 0, "Set Up"), None);
}

/// A link to an HTML anchor that the new name would take over (headings come first) can
/// be kept by no fragment: refused, with what to do.
#[test]
fn a_rename_that_would_capture_a_link_to_an_html_anchor_is_refused() {
    let ws = workspace(
        "//- /a.md\n# Intro\n\n<a id=\"faq\"></a>\n\n## Questions\n//- /b.md\n[f](a.md#faq) [q](a.md#questions)\n",
    );
    assert_eq!(
        heading_rename_conflict(&ws, "a.md", 1, "FAQ"),
        Some("renaming to `FAQ` would make the link `[f](a.md#faq)` in `b.md` lead elsewhere, and no fragment would keep it on what it names now; choose another name".to_string())
    );
    assert_eq!(rename_heading(&ws, "a.md", 1, "FAQ"), None);
    assert_eq!(
        plan_heading_rename(&ws, "a.md", 1, " "),
        Err(HeadingRenameError::InvalidName)
    );
    let edits = rename_heading(&ws, "a.md", 1, "Answers").unwrap();
    let b = ws.get("b.md").unwrap().doc.text();
    assert_eq!(
        apply(&b, &edits["b.md"]),
        "[f](a.md#faq) [q](a.md#answers)\n"
    );
}

/// In an MkDocs project a link written with Python-Markdown's id of a repeated heading
/// follows when the ids renumber (`_1` suffixes).
#[test]
fn repeated_headings_renumber_site_ids_too() {
    let config = crate::workspace::Config::from_toml("[links]\ngenerator = \"mkdocs\"\n").unwrap();
    let ws = crate::fixture::workspace_with(
        "//- /a.md\n## Usage\n## Usage\n//- /b.md\n[a](a.md#usage) [b](a.md#usage_1) [c](a.md#usage-1)\n",
        config,
    );
    let b = ws.get("b.md").unwrap().doc.text();
    let edits = rename_heading(&ws, "a.md", 0, "Options").unwrap();
    assert_eq!(
        apply(&b, &edits["b.md"]),
        "[a](a.md#options) [b](a.md#usage) [c](a.md#usage)\n"
    );
}

#[test]
fn a_link_target_renamed_where_it_is_written() {
    let ws = workspace(
        "//- /notes/a.md\n[x](../b.md#h) [y](/b) [[b]] [[sub/c]] [z](my%20d.md)\n//- /b.md\n# B\n//- /sub/c.md\n# C\n//- /notes/my d.md\n# D\n",
    );
    let a = ws.parsed("notes/a.md").unwrap();
    let text = ws.get("notes/a.md").unwrap().doc.text();
    let at = |needle: &str| text.find(needle).unwrap() + 1;
    let file = |offset: usize| {
        let link = a.links.iter().find(|l| l.range.contains(&offset)).unwrap();
        (
            linked_file_at(&ws, "notes/a.md", link, offset),
            link.clone(),
        )
    };
    // On the path: the file, as written; on the fragment: nothing.
    let (found, link) = file(at("../b.md"));
    assert_eq!(
        found,
        Some(LinkedFile {
            path: "b.md".to_string(),
            range: 4..11,
            written: "../b.md".to_string()
        })
    );
    assert_eq!(file(at("#h")).0, None);
    let rename =
        |link: &Link, old: &str, new: &str| renamed_link_target(&ws, "notes/a.md", link, old, new);
    // Relative to the linking document; an extension-less name keeps the file's.
    assert_eq!(rename(&link, "b.md", "../e"), Ok("e.md".to_string()));
    assert_eq!(rename(&link, "b.md", "f.md"), Ok("notes/f.md".to_string()));
    assert_eq!(
        rename(&link, "b.md", "../sub/c.md"),
        Err("`sub/c.md` already exists".to_string())
    );
    assert_eq!(
        rename(&link, "b.md", "../../x.md"),
        Err("`../../x.md` leaves the workspace root".to_string())
    );
    let (_, root_link) = file(at("/b)"));
    assert_eq!(rename(&root_link, "b.md", "/g"), Ok("g.md".to_string()));
    // Wiki: a name stays in the file's folder, a path is from the root.
    let (_, wiki) = file(at("[[b]]") + 1);
    assert_eq!(rename(&wiki, "b.md", "h"), Ok("h.md".to_string()));
    let (_, wiki_path) = file(at("sub/c"));
    assert_eq!(
        rename(&wiki_path, "sub/c.md", "i"),
        Ok("sub/i.md".to_string())
    );
    assert_eq!(
        rename(&wiki_path, "sub/c.md", "k/j"),
        Ok("k/j.md".to_string())
    );
    // Percent-encoded Markdown destinations are decoded.
    let (_, spaced) = file(at("my%20d"));
    assert_eq!(
        rename(&spaced, "notes/my d.md", "my%20e.md"),
        Ok("notes/my e.md".to_string())
    );
}

#[test]
fn a_move_rewrites_wiki_links_in_frontmatter_properties() {
    let got = moved(
        "//- /a.md\n---\nup: \"[[Task]]\"\nrelated:\n  - \"[[Projects/Task#H]]\"\n---\n[[Task]]\n//- /Projects/Task.md\n# H\n",
        "Projects/Task.md",
        "Projects/Chore.md",
    );
    assert_eq!(
        got["a.md"],
        "---\nup: \"[[Chore]]\"\nrelated:\n  - \"[[Projects/Chore#H]]\"\n---\n[[Chore]]\n"
    );
}

#[test]
fn a_frontmatter_link_stays_valid_yaml_when_the_new_name_has_its_quote() {
    // `'[[Bob's Task]]'` would end the YAML string early: the value changes quotes.
    let got = moved(
        "//- /a.md\n---\nup: '[[Task]]'\nflow: ['[[Task#H]]', \"[[Task]]\"]\n---\n[[Task]]\n//- /Task.md\n# H\n",
        "Task.md",
        "Sub/Bob's Task.md",
    );
    assert_eq!(
        got["a.md"],
        "---\nup: \"[[Bob's Task]]\"\nflow: [\"[[Bob's Task#H]]\", \"[[Bob's Task]]\"]\n---\n[[Bob's Task]]\n"
    );
}

#[test]
fn a_move_to_a_name_no_wiki_link_can_hold_lists_those_links_and_rewrites_the_rest() {
    let ws = workspace(
        "//- /Task.md\n# Task\n//- /a.md\n[[Task]] [t](Task.md) [[Task.md#Task|x]]\n//- /b.md\n![[Task]]\n",
    );
    let plan = move_plan(&ws, &[("Task.md".into(), "Task [draft].md".into())]);
    let a = ws.get("a.md").unwrap().doc.text();
    assert_eq!(
        apply(&a, &plan.edits["a.md"]),
        "[[Task]] [t](Task%20[draft].md) [[Task.md#Task|x]]\n"
    );
    assert_eq!(plan.edits.len(), 1);
    let listed: Vec<(String, String, String)> = plan
        .unnameable
        .iter()
        .map(|u| {
            let text = ws.get(&u.document).unwrap().doc.text();
            (
                u.document.clone(),
                text[u.range.clone()].to_string(),
                u.target.clone(),
            )
        })
        .collect();
    let want = |d: &str, l: &str| (d.to_string(), l.to_string(), "Task [draft].md".to_string());
    assert_eq!(
        listed,
        [
            want("a.md", "[[Task]]"),
            want("a.md", "[[Task.md#Task|x]]"),
            want("b.md", "![[Task]]")
        ]
    );
}

#[test]
fn a_percent_encoded_extension_is_kept_as_an_extension() {
    let out = moved(
        "//- /target.md\n# T\n//- /sub/a.md\n[t](../target%2Emd) [u](../target)\n",
        "target.md",
        "moved/target two.md",
    );
    assert_eq!(
        out["sub/a.md"],
        "[t](../moved/target%20two.md) [u](../moved/target%20two)\n"
    );
}

#[test]
fn raw_html_src_and_href_follow_moves() {
    let out = moved(
        "//- /guide.md\n# G\n<img src=\"shot.png\" width=\"50%\">\n<a href=\"other.md#x\">o</a>\n\
         //- /other.md\n# O\n## x\n//- /shot.png\nPNG\n",
        "guide.md",
        "docs/guide.md",
    );
    assert_eq!(
        out["guide.md"],
        "# G\n<img src=\"../shot.png\" width=\"50%\">\n<a href=\"../other.md#x\">o</a>\n"
    );
    let out = moved(
        "//- /guide.md\n# G\n<img src=\"shot.png\">\n//- /shot.png\nPNG\n",
        "shot.png",
        "img/shot 1.png",
    );
    assert_eq!(out["guide.md"], "# G\n<img src=\"img/shot%201.png\">\n");
}

#[test]
fn html_values_are_encoded_to_stay_one_value_and_unmoved_paths_stay_as_written() {
    // helper-44: `'` ended a single-quoted value, `&` made the value unreadable.
    let out = moved(
        "//- /a.md\n<img src='pic.png'> <a href=\"pic.png\">p</a> ![m](pic.png)\n//- /pic.png\nPNG\n",
        "pic.png",
        "Tom's R&D.png",
    );
    assert_eq!(
        out["a.md"],
        "<img src='Tom%27s%20R%26D.png'> <a href=\"Tom%27s%20R%26D.png\">p</a> ![m](Tom's%20R&D.png)\n"
    );
    // The moved note's root-relative image names the same file from anywhere.
    let out = moved(
        "//- /n/a.md\n<img src=\"/my pic.png\"> [b](b.md)\n//- /n/b.md\n# B\n//- /my pic.png\nPNG\n",
        "n/a.md",
        "a.md",
    );
    assert_eq!(out["n/a.md"], "<img src=\"/my pic.png\"> [b](n/b.md)\n");
}

/// In a Hugo site a move rewrites a page link in Hugo's terms: a link written as the
/// page's URL gets its new URL (a `url` frontmatter keeps it), one written as its logical
/// path the new logical path, root-absolute; a `/…` link whose target stays is left as
/// written when the linking page moves; a plain file path stays a file path.
#[test]
fn hugo_page_links_follow_a_move_in_hugos_terms() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let intro = "[a](methods/site/title/) [b](/methods/site/title/#usage) [c](/posts/hello/) \
                 [d](/kept/) [e](../about/team.md) [f](/about/team/) [g](/methods/site/Title.md)\n";
    crate::fixture::on_disk(
        root,
        &format!(
            "//- /hugo.toml\nbaseURL = 'https://example.org/'\n\
             //- /content/methods/site/Title.md\n# Title\n\n## Usage\n\
             //- /content/posts/first.md\n---\nslug: hello\n---\n# First\n\
             //- /content/posts/kept.md\n---\nurl: /kept/\n---\n# Kept\n\
             //- /content/about/team.md\n# Team\n\
             //- /content/templates/intro.md\n{intro}"
        ),
    );
    let (ws, _) = Workspace::load(root, crate::workspace::Config::default()).unwrap();
    let after = |moves: &[(&str, &str)]| -> String {
        let moves: Vec<(String, String)> = moves
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        let edits = move_edits(&ws, &moves);
        let list = edits
            .get("content/templates/intro.md")
            .cloned()
            .unwrap_or_default();
        apply(intro, &list)
    };
    assert_eq!(
        after(&[
            (
                "content/methods/site/Title.md",
                "content/methods/page/Title.md"
            ),
            ("content/posts/first.md", "content/news/first.md"),
            ("content/posts/kept.md", "content/news/kept.md"),
            ("content/about/team.md", "content/people/team.md"),
        ]),
        "[a](/methods/page/title/) [b](/methods/page/title/#usage) [c](/news/hello/) \
         [d](/kept/) [e](../people/team.md) [f](/people/team/) [g](/methods/page/Title.md)\n"
    );
    // The linking page moves: root-absolute links stay, relative ones follow.
    assert_eq!(
        after(&[("content/templates/intro.md", "content/guides/deep/intro.md")]),
        "[a](/methods/site/title/) [b](/methods/site/title/#usage) [c](/posts/hello/) \
         [d](/kept/) [e](../../about/team.md) [f](/about/team/) [g](/methods/site/Title.md)\n"
    );
}

/// In a Docusaurus site a move gives a page-URL link the page's new URL (ids, number
/// prefixes and slugs as Docusaurus makes them); a link to the `.md` file stays a path.
#[test]
fn docusaurus_page_urls_follow_a_move() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let text = "[a](/docs/guide/plain) [b](plain#x) [c](custom/) [d](02-plain.md)\n";
    crate::fixture::on_disk(
        root,
        &format!(
            "//- /docusaurus.config.js\nexport default {{}};\n\
             //- /docs/guide/02-plain.md\n# Plain\n\
             //- /docs/guide/other.md\n---\nslug: custom\n---\n# Other\n\
             //- /docs/guide/a.md\n{text}"
        ),
    );
    let (ws, _) = Workspace::load(root, crate::workspace::Config::default()).unwrap();
    let moves = vec![
        (
            "docs/guide/02-plain.md".to_string(),
            "docs/ref/03-plain.md".to_string(),
        ),
        (
            "docs/guide/other.md".to_string(),
            "docs/ref/other.md".to_string(),
        ),
    ];
    let edits = move_edits(&ws, &moves);
    assert_eq!(
        apply(text, &edits["docs/guide/a.md"]),
        "[a](/docs/ref/plain) [b](/docs/ref/plain#x) [c](/docs/ref/custom/) [d](../ref/03-plain.md)\n"
    );
}

/// A moved note's `[[alias]]` links stay as written (the alias moves with the note);
/// links by its file name follow it.
#[test]
fn a_move_keeps_links_by_alias_and_rewrites_links_by_name() {
    let ws = workspace(
        "//- /Task.md\n---\naliases: [Chore]\n---\n# Task\n//- /a.md\n[[Chore]] [[chore#Task]] [[Task]]\n",
    );
    let plan = move_plan(&ws, &[("Task.md".into(), "Job.md".into())]);
    let a = ws.get("a.md").unwrap().doc.text();
    assert_eq!(
        apply(&a, &plan.edits["a.md"]),
        "[[Chore]] [[chore#Task]] [[Job]]\n"
    );
}
