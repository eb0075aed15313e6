//! Parser tests: elements, logical addresses, headings, links, byte preservation.

use super::*;
use crate::pointer::ALL_KINDS;

fn summary(text: &str) -> Vec<String> {
    let parsed = parse(text);
    parsed
        .elements
        .iter()
        .map(|e| {
            format!(
                "{} {} {}-{} {:?}",
                e.logical,
                e.kind.as_str(),
                e.start_line,
                e.end_line,
                &text[e.range.clone()]
            )
        })
        .collect()
}

#[test]
fn logical_addresses_follow_heading_nesting() {
    let text = "Lead.\n\n# One\n\nPara.\n\n## One.One\n\n- a\n  - a1\n- b\n\n| h |\n|---|\n| c |\n\n> quote\n\n## One.Two\n\n```\ncode\n```\n\n---\n\n# Two\n\n<div>x</div>\n";
    assert_eq!(
        summary(text),
        vec![
            format!("document document 1-30 {text:?}"),
            "p1 paragraph 1-1 \"Lead.\"".to_string(),
            "1 heading 3-3 \"# One\"".to_string(),
            "1.p1 paragraph 5-5 \"Para.\"".to_string(),
            "1.1 heading 7-7 \"## One.One\"".to_string(),
            "1.1.li1 list_item 9-9 \"- a\"".to_string(),
            "1.1.li1.li1 list_item 10-10 \"- a1\"".to_string(),
            "1.1.li2 list_item 11-11 \"- b\"".to_string(),
            "1.1.t1 table 13-15 \"| h |\\n|---|\\n| c |\"".to_string(),
            "1.1.q1 block_quote 17-17 \"> quote\"".to_string(),
            "1.2 heading 19-19 \"## One.Two\"".to_string(),
            "1.2.code1 code 21-23 \"```\\ncode\\n```\"".to_string(),
            "1.2.hr1 thematic_break 25-25 \"---\"".to_string(),
            "2 heading 27-27 \"# Two\"".to_string(),
            "2.html1 html 29-29 \"<div>x</div>\"".to_string(),
        ]
    );
    let parsed = parse(text);
    let one = &parsed.elements[2];
    assert_eq!(
        &text[one.subtree.clone()],
        &text[text.find("# One").unwrap()..text.find("\n\n# Two").unwrap()]
    );
    let li1 = &parsed.elements[5];
    assert_eq!(&text[li1.subtree.clone()], "- a\n  - a1");
    assert_ne!(li1.self_hash, li1.subtree_hash);
}

#[test]
fn frontmatter_is_an_element_and_metadata() {
    let text = "---\ntitle: Hello\ntags: [a, b]\n---\n# H\n";
    let parsed = parse(text);
    assert_eq!(parsed.elements[1].logical, "frontmatter");
    assert_eq!(
        &text[parsed.elements[1].range.clone()],
        "---\ntitle: Hello\ntags: [a, b]\n---"
    );
    assert_eq!(
        parsed.frontmatter,
        Some(serde_json::json!({"title": "Hello", "tags": ["a", "b"]}))
    );
    assert_eq!(parsed.title().as_deref(), Some("Hello"));
    let broken = parse("---\ntitle: [unclosed\n---\n# H\n");
    assert_eq!(broken.frontmatter, None);
    assert_eq!(broken.problems.len(), 1);
    assert!(
        broken.problems[0]
            .message
            .starts_with("frontmatter is not valid YAML"),
        "{:?}",
        broken.problems
    );
    assert_eq!(broken.title().as_deref(), Some("H"));
}

#[test]
fn bom_and_crlf_ranges_are_exact_source_bytes() {
    let text = "\u{feff}# Title\r\n\r\nBody line\r\nsecond\r\n";
    let parsed = parse(text);
    let h = &parsed.elements[1];
    assert_eq!(h.range, 3..10);
    assert_eq!(&text[h.range.clone()], "# Title");
    assert_eq!(
        &text[parsed.elements[2].range.clone()],
        "Body line\r\nsecond"
    );
    assert_eq!(
        (parsed.elements[2].start_line, parsed.elements[2].end_line),
        (3, 4)
    );
    assert_eq!(parsed.headings[0].slug, "title");
}

#[test]
fn headings_get_unique_slugs_and_custom_ids() {
    let parsed = parse("# Intro\n## Intro\n> ### *Intro*\n\n## API: `get()` {#api}\nSetext\n===\n");
    let slugs: Vec<(&str, &str)> = parsed
        .headings
        .iter()
        .map(|h| (h.text.as_str(), h.slug.as_str()))
        .collect();
    assert_eq!(
        slugs,
        vec![
            ("Intro", "intro"),
            ("Intro", "intro-1"),
            ("Intro", "intro-2"),
            ("API: get()", "api-get-api"),
            ("Setext", "setext")
        ]
    );
    assert_eq!(
        parsed
            .anchors
            .iter()
            .map(|a| a.id.as_str())
            .collect::<Vec<_>>(),
        vec!["api"]
    );
    // The heading inside the block quote has an anchor but no element of its own.
    assert_eq!(parsed.headings[2].element, None);
    assert_eq!(parsed.headings[1].element, Some(2));
}

/// MkDocs' attr_list and Pandoc's attributes: the list comes off the heading's name; its id,
/// or else the slug of what is left, is an anchor beside GitHub's slug of the whole text.
#[test]
fn heading_attribute_lists_give_anchors() {
    let parsed = parse(
        "### Context <small>optional</small> { #context }\n\n\
         ## Path { id=navigation-path data-toc-label=\"Path\" }\n\n\
         ## Appendix {.unnumbered}\n\n\
         ## Using {x}\n",
    );
    let names: Vec<(&str, &str)> = parsed
        .headings
        .iter()
        .map(|h| (h.text.as_str(), h.slug.as_str()))
        .collect();
    assert_eq!(
        names,
        vec![
            ("Context optional", "context-optional--context-"),
            ("Path", "path--idnavigation-path-data-toc-labelpath-"),
            ("Appendix", "appendix-unnumbered"),
            ("Using {x}", "using-x"),
        ]
    );
    let anchors: Vec<&str> = parsed.anchors.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(anchors, vec!["context", "navigation-path", "appendix"]);
    assert_eq!(
        parsed.headings[1].custom_id.as_deref(),
        Some("navigation-path")
    );
}

#[test]
fn link_kinds_ranges_and_destinations() {
    let text = "[a](x.md#Frag \"t\") ![i](<p q.png>) <https://e.test> www.e.test [r][d] [[w|alias]] ![[e#h]] [^n]\n\n[d]: <y z.md>\n[^n]: note\n";
    let parsed = parse(text);
    let rows: Vec<String> = parsed
        .links
        .iter()
        .map(|l| {
            format!(
                "{:?} {:?} dest={:?} frag={:?} dest_src={:?} ext={}",
                l.kind,
                &text[l.range.clone()],
                l.dest,
                l.fragment,
                l.dest_range.clone().map(|r| &text[r]),
                l.external
            )
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            r#"Inline "[a](x.md#Frag \"t\")" dest="x.md" frag=Some("Frag") dest_src=Some("x.md#Frag") ext=false"#,
            r#"Image "![i](<p q.png>)" dest="p q.png" frag=None dest_src=Some("p q.png") ext=false"#,
            r#"Autolink "<https://e.test>" dest="https://e.test" frag=None dest_src=Some("https://e.test") ext=true"#,
            r#"Autolink "www.e.test" dest="http://www.e.test" frag=None dest_src=Some("www.e.test") ext=true"#,
            r#"Reference "[r][d]" dest="" frag=None dest_src=None ext=false"#,
            r#"Wiki "[[w|alias]]" dest="w" frag=None dest_src=Some("w") ext=false"#,
            r#"WikiEmbed "![[e#h]]" dest="e" frag=Some("h") dest_src=Some("e") ext=false"#,
            r#"Footnote "[^n]" dest="" frag=None dest_src=None ext=false"#,
            r#"Definition "[d]: <y z.md>" dest="y z.md" frag=None dest_src=Some("y z.md") ext=false"#,
        ]
    );
    assert_eq!(parsed.definitions[0].key, "d");
    // `[[d]]` with a definition of `[d]` is still a wiki link (Foam).
    let foam = parse("[[d]]\n\n[d]: y.md\n");
    assert_eq!(
        foam.links.iter().map(|l| l.kind).collect::<Vec<_>>(),
        vec![LinkKind::Wiki, LinkKind::Definition]
    );
    assert_eq!(&text[parsed.definitions[0].label_range.clone()], "d");
}

#[test]
fn broken_markdown_never_fails() {
    for text in [
        "",
        "\n",
        "[",
        "[[",
        "]]",
        "```\nunclosed",
        "<div",
        "- \n  -",
        "| a |\n|",
        "\u{feff}",
        "\r\r\r",
        "#",
    ] {
        let parsed = parse(text);
        assert_eq!(parsed.elements[0].kind, ElementKind::Document, "{text:?}");
    }
}

#[test]
fn element_kind_segments_round_trip() {
    for kind in ALL_KINDS {
        let segment = if kind == ElementKind::Document || kind == ElementKind::Frontmatter {
            kind.prefix().to_string()
        } else {
            format!("{}3", kind.prefix())
        };
        assert_eq!(ElementKind::from_segment(&segment), Some(kind), "{segment}");
    }
    assert_eq!(ElementKind::from_segment("x3"), None);
    assert_eq!(ElementKind::from_segment("p"), None);
}

#[test]
fn pathological_nesting_is_reported_not_parsed() {
    let cases = [
        (
            ">".repeat(3200) + " x\n",
            "line 1 opens more than 100 nested block quotes or lists",
        ),
        (
            "- ".repeat(500) + "x\n",
            "line 1 opens more than 100 nested block quotes or lists",
        ),
        (
            (0..200)
                .map(|k| format!("{}- x\n", "  ".repeat(k)))
                .collect::<String>(),
            "line 130 is indented 258 columns before a list marker or `>` (limit 256)",
        ),
        (
            "*".repeat(6400) + "x" + &"*".repeat(6400),
            "a run of more than 1000 `*`, `_` or `[` characters",
        ),
        (
            "![".repeat(2000) + "x",
            "a run of more than 1000 `*`, `_` or `[` characters",
        ),
    ];
    for (text, reason) in cases {
        let parsed = parse(&text);
        assert_eq!(parsed.elements.len(), 1);
        assert_eq!(parsed.problems[0].message, format!("not parsed: {reason}"));
    }
    // Too many links in one paragraph (markdown-rs's inline pass is quadratic in them);
    // the same links in paragraphs of 20, or inside a code fence, parse.
    let link = "[t](target.md#part) ";
    let crowded = format!("# L\n\n{}", link.repeat(MAX_INLINE_OPENERS_PER_BLOCK + 1));
    assert_eq!(
        nesting_problem(&crowded).as_deref(),
        Some(
            "the block of lines from line 3 holds more than 20000 links, emphasis or code spans \
             without a blank line"
        )
    );
    let paragraphs = format!("{}\n\n", link.repeat(20)).repeat(MAX_INLINE_OPENERS_PER_BLOCK / 10);
    let fenced = format!(
        "```\n{}\n```\n",
        link.repeat(MAX_INLINE_OPENERS_PER_BLOCK + 1)
    );
    // Ordinary nesting parses.
    for ok in [
        paragraphs,
        fenced,
        ">".repeat(100) + " x",
        "- ".repeat(100) + "x",
        "*".repeat(1000) + "x" + &"*".repeat(1000),
        "---\n***\n___\n".into(),
    ] {
        assert_eq!(nesting_problem(&ok), None, "{ok:.40}");
    }
}

#[test]
fn math_blocks_are_opaque() {
    let text = "# Top\n\n$$\na\n=\n[[x]] [y](gone.md)\n$$\n\nAfter [[z]].\n";
    assert_eq!(
        summary(text),
        vec![
            format!("document document 1-10 {text:?}"),
            "1 heading 1-1 \"# Top\"".to_string(),
            "1.math1 math 3-7 \"$$\\na\\n=\\n[[x]] [y](gone.md)\\n$$\"".to_string(),
            "1.p1 paragraph 9-9 \"After [[z]].\"".to_string(),
        ]
    );
    let parsed = parse(text);
    let headings: Vec<&str> = parsed.headings.iter().map(|h| h.text.as_str()).collect();
    assert_eq!(headings, ["Top"]);
    let dests: Vec<&str> = parsed.links.iter().map(|l| l.dest.as_str()).collect();
    assert_eq!(dests, ["z"]);
}

#[test]
fn a_multi_line_setext_heading_is_named_on_one_line() {
    let parsed = parse("First line\n  second line\n===\n\nA  \r\nB\n---\n");
    let names: Vec<(&str, &str)> = parsed
        .headings
        .iter()
        .map(|h| (h.text.as_str(), h.slug.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("First line second line", "first-linesecond-line"),
            ("A B", "a-b")
        ]
    );
}

/// Inline tags: `#name` at a line start or after white space, with a letter, nested with
/// `/`; never in code, HTML, math, links, URLs, inside a word or as a heading's marks.
#[test]
fn inline_tags_and_what_is_not_one() {
    let text = "---\ntags: [\"#fm\", 2024]\n---\n\
                #start and #project/alpha, #日本語; #trail/ #dash-ed_1.\n\
                ## Heading #in-heading ##\n\
                C# a#b #123 \\#escaped `#code` <span>#html</span> [#linktext](#frag) [[n#h]]\n\
                https://example.com/#frag <https://example.com/#x>\n\
                \n```\n#fenced\n```\n\n$$\n#math\n$$\n\n    #indented\n\n> #quoted\n- #listed\n";
    let parsed = parse(text);
    let tags: Vec<(&str, &str, bool)> = parsed
        .tags
        .iter()
        .map(|t| (t.name.as_str(), &text[t.range.clone()], t.in_frontmatter))
        .collect();
    assert_eq!(
        tags,
        [
            ("fm", "fm", true),
            ("2024", "2024", true),
            ("start", "#start", false),
            ("project/alpha", "#project/alpha", false),
            ("日本語", "#日本語", false),
            ("trail", "#trail", false),
            ("dash-ed_1", "#dash-ed_1", false),
            ("in-heading", "#in-heading", false),
            ("quoted", "#quoted", false),
            ("listed", "#listed", false),
        ]
    );
}

#[test]
fn logical_addresses_read_compare_and_print_as_their_text() {
    use std::collections::HashSet;
    let short = Logical::from("1.2.p3");
    let longest_inline = "1.2.3.4.5.6.li1.li2.p9";
    assert_eq!(longest_inline.len(), Logical::INLINE);
    let long_text = "1.2.3.4.5.6.li1.li2.li3.p10";
    let long = Logical::from(long_text.to_string());
    for (logical, text) in [
        (&short, "1.2.p3"),
        (&Logical::from(longest_inline), longest_inline),
        (&long, long_text),
        (&Logical::from(""), ""),
    ] {
        assert_eq!(logical.as_str(), text);
        assert_eq!(&**logical, text);
        let owned = text.to_string();
        assert!(*logical == text && *logical == *text && *logical == owned);
        assert!(text == *logical && *text == *logical && owned == *logical);
        assert_eq!(logical.to_string(), text);
        assert_eq!(format!("{logical:?}"), format!("{text:?}"));
        assert_eq!(
            serde_json::to_value(logical).unwrap(),
            serde_json::json!(text)
        );
        assert_eq!(*logical, Logical::from(text));
    }
    assert_ne!(short, Logical::from("1.2.p"));
    assert_ne!(long, Logical::from(&long_text[..Logical::INLINE]));
    let set: HashSet<Logical> = [short.clone(), long.clone()].into_iter().collect();
    assert!(set.contains("1.2.p3") && set.contains(long_text));
    assert!(std::mem::size_of::<Logical>() <= std::mem::size_of::<String>());
}

/// An outline keeps the headings (with their sections) and the paragraphs that are one
/// link, in order, with the heading and parent indices following them.
#[test]
fn an_outline_keeps_headings_and_one_link_paragraphs() {
    let text = "---\ntitle: T\n---\n# Top\n\nIntro [x](a.md), [site](https://example.com), <https://x.y> and [r][ext].\n\n[[toc]]\n\n## Sub\n\n- item\n- [[b]]\n\n```\ncode\n```\n\n> ## Quoted\n\n# Next\n\n[c](c.md)\n\n[ext]: https://example.org\n";
    let full = parse(text);
    let mut outline = full.clone();
    outline.keep_outline();
    assert!(outline.outline_only && !full.outline_only);
    let kinds: Vec<(ElementKind, &str)> = outline
        .elements
        .iter()
        .map(|e| (e.kind, &text[e.range.clone()]))
        .collect();
    assert_eq!(
        kinds,
        [
            (ElementKind::Heading, "# Top"),
            (ElementKind::Paragraph, "[[toc]]"),
            (ElementKind::Heading, "## Sub"),
            (ElementKind::Heading, "# Next"),
            (ElementKind::Paragraph, "[c](c.md)"),
        ]
    );
    let parents: Vec<Option<usize>> = outline.elements.iter().map(|e| e.parent).collect();
    assert_eq!(parents, [None, Some(0), Some(0), None, Some(3)]);
    // Each heading's element holds the same section as in the full parse; the quoted
    // heading has none in either.
    let sections = |p: &Parsed| -> Vec<Option<std::ops::Range<usize>>> {
        p.headings
            .iter()
            .map(|h| h.element.map(|i| p.elements[i].subtree.clone()))
            .collect()
    };
    assert_eq!(sections(&outline), sections(&full));
    assert_eq!(sections(&full)[2], None);
    // External links go, but a definition's; the others stay as they were.
    let links = |p: &Parsed| -> Vec<(LinkKind, String, bool)> {
        p.links
            .iter()
            .map(|l| (l.kind, text[l.range.clone()].to_string(), l.external))
            .collect()
    };
    let link = |kind, written: &str, external| (kind, written.to_string(), external);
    let kept = vec![
        link(LinkKind::Inline, "[x](a.md)", false),
        link(LinkKind::Reference, "[r][ext]", false),
        link(LinkKind::Wiki, "[[toc]]", false),
        link(LinkKind::Wiki, "[[b]]", false),
        link(LinkKind::Inline, "[c](c.md)", false),
        link(LinkKind::Definition, "[ext]: https://example.org", true),
    ];
    let mut all = kept.clone();
    all.insert(
        1,
        link(LinkKind::Inline, "[site](https://example.com)", true),
    );
    all.insert(2, link(LinkKind::Autolink, "<https://x.y>", true));
    assert_eq!(links(&full), all);
    assert_eq!(links(&outline), kept);
    assert_eq!(outline.headings.len(), full.headings.len());
    // Twice is once.
    let again = {
        let mut o = outline.clone();
        o.keep_outline();
        o
    };
    assert!(again.same_content(&outline));
}

#[test]
fn obsidian_comments_and_inline_math_hide_links_tags_and_definitions() {
    let text = "# A\n\nSee $[[x]]$ and %%[[gone]] #draft [old](old.md)%%.\n\n%%\n\n\
                [def]: hidden.md\n\n[[also-gone]]\n%%\n\nCosts $5, [[kept]] #kept for $10.\n";
    let parsed = parse(text);
    let dests: Vec<&str> = parsed.links.iter().map(|l| l.dest.as_str()).collect();
    assert_eq!(dests, ["kept"]);
    let tags: Vec<&str> = parsed.tags.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(tags, ["kept"]);
    let definitions: Vec<(&str, bool)> = parsed
        .definitions
        .iter()
        .map(|d| (d.label.as_str(), d.comment))
        .collect();
    assert_eq!(definitions, [("def", true)]);
}

#[test]
fn raw_html_img_src_and_a_href_are_links() {
    let text = "# A\n\n<p align=\"center\"><img alt=\"x\" src=\"img/one.png\" width=10></p>\n\n\
                > <a href='../b.md#part'>B</a> <a href=\"#top\">up</a>\n\n\
                <!-- <img src=\"old.png\"> -->\n\n<a href=\"https://example.com\">e</a> \
                <img src=\"\"> <a name=\"x\" href=\"a&amp;b.md\">q</a>\n";
    let parsed = parse(text);
    let links: Vec<(LinkKind, &str, &str, Option<&str>, bool)> = parsed
        .links
        .iter()
        .map(|l| {
            (
                l.kind,
                &text[l.range.clone()],
                &text[l.dest_range.clone().unwrap()],
                l.fragment.as_deref(),
                l.external,
            )
        })
        .collect();
    assert_eq!(
        links,
        [
            (
                LinkKind::Html,
                "<img alt=\"x\" src=\"img/one.png\" width=10>",
                "img/one.png",
                None,
                false
            ),
            (
                LinkKind::Html,
                "<a href='../b.md#part'>",
                "../b.md#part",
                Some("part"),
                false
            ),
            (
                LinkKind::Html,
                "<a href=\"https://example.com\">",
                "https://example.com",
                None,
                true
            ),
        ]
    );
    assert_eq!(parsed.links[1].dest, "../b.md");
}

#[test]
fn a_dollar_or_percent_pair_inside_links_or_across_table_cells_hides_nothing() {
    // helper-43's cases: math in an alias or heading stays inside its link; `$` in a link's
    // target or URL opens nothing; table cells bound inline math (GFM splits cells first).
    let text = "See [[Formula|$E=mc^2$]] and [[Euler#$x$]].\n\n\
                Listen to [[A$AP Rocky]] and [[A$AP Ferg]] tonight.\n\n\
                See [a](https://h.example/api?$top=5) and [[V-url]] and [b](x.md?$skip=2).\n\n\
                <https://h.example/?$a> [[V-autolink]] <https://h.example/?b$>\n\n\
                | a | b | c |\n|---|---|---|\n| $10 | [[V-table]] | 12$ |\n\n\
                Sale [[Sale 50%%]] and [[Other]] 100%% sure.\n";
    let parsed = parse(text);
    let dests: Vec<&str> = parsed.links.iter().map(|l| l.dest.as_str()).collect();
    assert_eq!(
        dests,
        [
            "Formula",
            "Euler",
            "A$AP Rocky",
            "A$AP Ferg",
            "https://h.example/api?$top=5",
            "V-url",
            "x.md",
            "https://h.example/?$a",
            "V-autolink",
            "https://h.example/?b$",
            "V-table",
            "Sale 50%%",
            "Other"
        ]
    );
}

/// Definition terms (PHP Markdown Extra's syntax): the lines of a paragraph before its
/// first `: ` line, as plain text with their bytes; a paragraph that starts with `: ` or
/// has no such line has none. Their ids share goldmark's counter with the headings.
#[test]
fn definition_terms_are_the_lines_before_a_colon_line() {
    let text = "`cacheDir` *x*\nTerm two\n: def\nlazy\n: def2\n\n: lone\n\nplain\ntext\n\n\
                ```\nt\n: code\n```\n\n## Term two\n\nTerm two\n:\tagain\n";
    let parsed = parse(text);
    let terms: Vec<(&str, &str)> = parsed
        .definition_terms
        .iter()
        .map(|(t, r)| (t.as_str(), &text[r.clone()]))
        .collect();
    assert_eq!(
        terms,
        vec![
            ("cacheDir x", "`cacheDir` *x*"),
            ("Term two", "Term two"),
            ("Term two", "Term two"),
        ]
    );
    assert_eq!(
        definition_term_ids(&parsed.headings, &parsed.definition_terms),
        vec!["cachedir-x", "term-two", "term-two-1", "term-two-2"]
    );
}
