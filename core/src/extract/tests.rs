use std::time::Duration;

use super::*;
use crate::formats::*;

fn fixture(path: &str) -> Vec<u8> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/formats");
    std::fs::read(root.join(path)).unwrap()
}

fn limits() -> Limits {
    Limits {
        max_text_size: 16 << 20,
        max_binary_size: DEFAULT_BINARY_BUDGET,
        max_decompressed_size: DEFAULT_BINARY_BUDGET,
        time_budget: DEFAULT_TIME_BUDGET,
    }
}

fn read(path: &str) -> Extracted {
    let format = Format::of_path(path).unwrap();
    extract(format, fixture(path), &limits()).unwrap()
}

/// Each section as (heading path, lines, page).
fn outline(e: &Extracted) -> Vec<(Vec<&str>, u32, u32, Option<u32>)> {
    e.sections
        .iter()
        .map(|s| {
            (
                s.heading_path.iter().map(String::as_str).collect(),
                s.start_line,
                s.end_line,
                s.page,
            )
        })
        .collect()
}

/// Each definition as (kind, name, heading path, lines).
fn definitions(e: &Extracted) -> Vec<(&str, &str, Vec<&str>, u32, u32)> {
    e.sections
        .iter()
        .filter_map(|s| {
            Some((
                s.symbol_kind.as_deref()?,
                s.symbol.as_deref().unwrap_or(""),
                s.heading_path.iter().map(String::as_str).collect(),
                s.start_line,
                s.end_line,
            ))
        })
        .collect()
}

#[test]
fn extensions_are_registered_case_insensitively_and_a_bare_dot_name_is_none() {
    assert_eq!(Format::of_path("docs/Manual.PDF"), Some(Format::Pdf));
    assert_eq!(
        Format::of_path("src/lib.rs"),
        Some(Format::Code(Language::Rust))
    );
    assert_eq!(
        Format::of_path("a/b.tsx"),
        Some(Format::Code(Language::Tsx))
    );
    assert_eq!(Format::of_path(".pdf"), None);
    assert_eq!(Format::of_path("notes.md"), None);
    assert_eq!(Format::of_path("Makefile"), None);
    assert_eq!(Format::Code(Language::Cpp).name(), "code:cpp");
    for ext in DEFAULT_ENABLED {
        assert!(
            Format::of_extension(ext).is_some_and(|f| !matches!(f, Format::Code(_))),
            "{ext}"
        );
    }
}

#[test]
fn a_pdf_is_read_page_by_page_with_japanese_runs_joined() {
    let e = read("kb/manual.pdf");
    assert_eq!(e.title.as_deref(), Some("Zephyr Manual"));
    assert_eq!(
        e.text,
        "CalibrationThe zephyrometer must be calibrated every spring. Hold the vane still\n\
         and read the dial twice.\n\
         \n\
         校正手順鳳凰丸の羽根を止めてから目盛りを二回読みます。校正は毎年\n\
         春に行います。\n"
    );
    assert_eq!(
        outline(&e),
        vec![(vec![], 1, 2, Some(1)), (vec![], 4, 5, Some(2))]
    );
}

#[test]
fn a_word_document_keeps_its_headings_and_tables() {
    let e = read("kb/report.docx");
    assert_eq!(e.title.as_deref(), Some("Quarterly Report"));
    assert_eq!(
        e.text,
        "# Quarterly Report\n\nSales grew in every region.\n\n## Budget\n\n\
         | Item | Cost |\n| --- | --- |\n| quokkaberry seeds | 120 |\n"
    );
    assert_eq!(
        outline(&e),
        vec![
            (vec!["Quarterly Report"], 1, 3, None),
            (vec!["Quarterly Report", "Budget"], 5, 9, None),
        ]
    );
}

#[test]
fn each_slide_is_a_section_named_by_its_number() {
    let e = read("kb/slides.pptx");
    assert_eq!(
        e.text,
        "# Roadmap\n\nXylophonic milestones for the spring.\n\n# Risks\n\nA marmalade outage could delay shipping.\n"
    );
    assert_eq!(
        outline(&e),
        vec![
            (vec!["Slide 1", "Roadmap"], 1, 3, None),
            (vec!["Slide 2", "Risks"], 5, 7, None),
        ]
    );
}

#[test]
fn each_sheet_is_a_table_named_by_the_sheet_and_its_header() {
    let e = read("kb/budget.xlsx");
    assert_eq!(
        e.text,
        "# Q1\n\n| Item | Cost |\n| --- | --- |\n| flamingo widget | 12 |\n| spare bolts | 3 |\n\n\
         # Q2\n\n| Item | Cost |\n| --- | --- |\n| pangolin gear | 40 |\n"
    );
    assert_eq!(
        outline(&e),
        vec![
            (vec!["Q1", "Item, Cost"], 1, 6, None),
            (vec!["Q2", "Item, Cost"], 8, 12, None),
        ]
    );
    let csv = read("kb/inventory.csv");
    assert_eq!(
        csv.text,
        "sku,name,qty\nA-1,narwhal lamp,4\nA-2,desk fan,9\n"
    );
    assert_eq!(outline(&csv), vec![(vec!["sku, name, qty"], 1, 3, None)]);
}

#[test]
fn source_code_is_cut_by_definition_with_its_comments() {
    assert_eq!(
        definitions(&read("kb/src/lib.rs")),
        vec![
            ("struct_item", "Trowel", vec![], 5, 9),
            ("impl_item", "Trowel", vec![], 11, 11),
            ("function_item", "sharpen", vec!["Trowel"], 12, 15),
            ("impl_item", "fmt::Display for Trowel", vec![], 18, 18),
            (
                "function_item",
                "fmt",
                vec!["fmt::Display for Trowel"],
                19,
                21
            ),
            ("function_item", "count_earthworms", vec![], 24, 27),
        ]
    );
    assert_eq!(
        definitions(&read("kb/src/example.py")),
        vec![
            ("class_definition", "Survey", vec![], 6, 8),
            ("function_definition", "__init__", vec!["Survey"], 9, 10),
            (
                "function_definition",
                "tardigrade_index",
                vec!["Survey"],
                12,
                14
            ),
            ("function_definition", "area", vec![], 17, 19),
        ]
    );
    assert_eq!(
        definitions(&read("kb/src/app.ts")),
        vec![
            ("interface_declaration", "Harvest", vec![], 1, 4),
            ("function_declaration", "planKumquatHarvest", vec![], 6, 9),
            ("class_declaration", "Scheduler", vec![], 11, 11),
            (
                "method_definition",
                "bookTractor",
                vec!["Scheduler"],
                12,
                15
            ),
        ]
    );
    assert_eq!(
        definitions(&read("kb/src/util.js")),
        vec![
            ("arrow_function", "roundSaffron", vec![], 3, 4),
            ("function_declaration", "compostRatio", vec![], 6, 8),
        ]
    );
    assert_eq!(
        definitions(&read("kb/src/main.go")),
        vec![
            ("type_declaration", "Greenhouse", vec![], 5, 8),
            ("method_declaration", "Mist", vec![], 10, 13),
            ("function_declaration", "main", vec![], 15, 17),
        ]
    );
    assert_eq!(
        definitions(&read("kb/src/Main.java")),
        vec![
            ("class_declaration", "SeedBank", vec![], 3, 6),
            ("method_declaration", "deposit", vec!["SeedBank"], 7, 10),
            ("method_declaration", "balance", vec!["SeedBank"], 12, 14),
        ]
    );
    assert_eq!(
        definitions(&read("kb/src/buffer.c")),
        vec![
            ("struct_specifier", "gauge", vec![], 3, 6),
            ("function_definition", "wettest_monsoon", vec![], 8, 15),
        ]
    );
    assert_eq!(
        definitions(&read("kb/src/matrix.cpp")),
        vec![
            ("namespace_definition", "orchard", vec![], 3, 4),
            ("class_specifier", "Grid", vec!["orchard"], 5, 7),
            (
                "function_definition",
                "countPippins",
                vec!["orchard", "Grid"],
                8,
                9
            ),
        ]
    );
}

#[test]
fn lines_outside_definitions_are_sections_without_a_symbol() {
    let e = read("kb/src/util.js");
    let plain: Vec<(u32, u32)> = e
        .sections
        .iter()
        .filter(|s| s.symbol_kind.is_none())
        .map(|s| (s.start_line, s.end_line))
        .collect();
    // The first comment, and `module.exports`; the blank lines between are in none.
    assert_eq!(plain, vec![(1, 1), (10, 10)]);
}

#[test]
fn a_zip_bomb_an_encrypted_pdf_and_a_truncated_docx_are_refused_with_their_reason() {
    let bomb = extract(Format::Word, fixture("bad/bomb.docx"), &limits());
    assert_eq!(
        bomb,
        Err(ExtractError::InflationRatio {
            part: "word/document.xml".into(),
            inflated: 62_914_560,
            stored: 61_155,
        })
    );
    assert_eq!(
        extract(Format::Pdf, fixture("bad/locked.pdf"), &limits()),
        Err(ExtractError::Encrypted)
    );
    let truncated = extract(Format::Word, fixture("bad/truncated.docx"), &limits()).unwrap_err();
    assert!(
        matches!(&truncated, ExtractError::Malformed { format, .. } if format == "ZIP"),
        "{truncated:?}"
    );
    // Parts that inflate past the budget, each within the ratio.
    let strict = Limits {
        max_decompressed_size: 10_000,
        ..limits()
    };
    let report = extract(Format::Word, fixture("kb/report.docx"), &strict);
    assert!(
        matches!(report, Err(ExtractError::DecompressionBudget { budget: 10_000, declared }) if declared > 10_000),
        "{report:?}"
    );
}

#[test]
fn a_form_that_draws_itself_is_refused_and_a_page_tree_that_lists_itself_ends() {
    assert_eq!(
        extract(Format::Pdf, fixture("bad/xform-loop.pdf"), &limits()),
        Err(ExtractError::Malformed {
            format: "pdf".into(),
            message: "its form XObject 6 0 R draws itself (an object loop)".into(),
        })
    );
    // lopdf walks the page tree with a visited set: it ends, finding no page to read.
    let e = extract(Format::Pdf, fixture("bad/page-loop.pdf"), &limits()).unwrap();
    assert_eq!((e.text.as_str(), e.sections.len()), ("", 0));
}

#[test]
fn size_caps_hold_for_the_file_and_for_its_extracted_text() {
    let small = Limits {
        max_binary_size: 1000,
        ..limits()
    };
    assert_eq!(
        extract(Format::Pdf, fixture("kb/manual.pdf"), &small),
        Err(ExtractError::TooLarge {
            size: 24_159,
            cap: 1000,
            what: "binary documents".into(),
        })
    );
    let tiny_text = Limits {
        max_text_size: 100,
        ..limits()
    };
    assert_eq!(
        extract(Format::Word, fixture("kb/report.docx"), &tiny_text),
        Err(ExtractError::TooLarge {
            size: 118,
            cap: 100,
            what: "extracted text".into(),
        })
    );
}

#[test]
fn a_parser_that_runs_over_or_panics_is_given_up() {
    let slow = guard::with_budget(Format::Pdf, Duration::from_millis(50), || {
        std::thread::sleep(Duration::from_secs(2));
        Ok(())
    });
    assert_eq!(slow, Err(ExtractError::TimedOut(50)));
    let panicked: Result<(), ExtractError> =
        guard::with_budget(Format::Word, Duration::from_secs(5), || panic!("boom"));
    assert_eq!(panicked, Err(ExtractError::Panicked("docx".into())));
}

#[test]
fn sections_are_cut_at_blank_lines_under_the_budget_and_pointers_name_their_lines() {
    let text = "alpha one\nalpha two\n\nbeta one\nbeta two\n\ngamma\n".to_string();
    let e = Extracted {
        sections: vec![Section {
            start_line: 1,
            end_line: 7,
            ..Section::default()
        }],
        text,
        title: None,
    };
    let chunks = chunk_sections(&e, 20);
    let cut: Vec<(u32, u32, &str)> = chunks
        .iter()
        .map(|c| (c.start_line, c.end_line, c.text.as_str()))
        .collect();
    assert_eq!(
        cut,
        vec![
            (1, 2, "alpha one\nalpha two"),
            (4, 5, "beta one\nbeta two"),
            (7, 7, "gamma"),
        ]
    );
    let (start, end, hash) = parse_lines_pointer(&chunks[1].pointer).unwrap();
    assert_eq!((start, end), (4, 5));
    assert_eq!(
        hash,
        crate::pointer::hex(crate::pointer::hash_bytes(b"beta one\nbeta two"))
    );
    assert_eq!(
        parse_lines_pointer("1.p1~0000000000000000~0000000000000000"),
        None
    );
    assert_eq!(
        parse_lines_pointer("L5-4~0000000000000000~0000000000000000"),
        None
    );
}

#[test]
fn a_whole_definition_stays_one_chunk_up_to_eight_budgets() {
    let body: String = (0..20).map(|i| format!("    let x{i} = {i};\n")).collect();
    let text = format!("fn long() {{\n{body}}}\n");
    let e = code::extract(Language::Rust, &text);
    let chunks = chunk_sections(&e, 200);
    assert_eq!(chunks.len(), 1);
    assert_eq!((chunks[0].start_line, chunks[0].end_line), (1, 22));
    assert_eq!(chunks[0].citation.symbol.as_deref(), Some("long"));
    let cut = chunk_sections(&e, 40);
    assert!(cut.len() > 1, "{cut:?}");
    assert!(
        cut.iter()
            .all(|c| c.citation.symbol.as_deref() == Some("long"))
    );
}

#[test]
fn workbook_dates_read_as_dates() {
    let e = read("cells/dates.xlsx");
    assert_eq!(
        e.text,
        "# Sheet\n\n| Kind | Value |\n| --- | --- |\n| date | 2024-03-05 |\n| time | 2024-03-05 14:30:00 |\n\
         | number | 2.5 |\n| flag | true |\n| text | plain |\n"
    );
}

#[test]
fn text_with_nul_bytes_is_binary() {
    let utf16: Vec<u8> = "\u{feff}words"
        .encode_utf16()
        .flat_map(u16::to_le_bytes)
        .collect();
    assert_eq!(
        extract(Format::Text, utf16, &limits()),
        Err(ExtractError::Malformed {
            format: "text".into(),
            message: "binary content (NUL bytes; a UTF-16 file is read only as UTF-8)".into(),
        })
    );
}

#[test]
fn a_pdf_font_pdf_extract_cannot_map_leaves_the_pages_lopdf_reads() {
    // pdf-extract panics on the CID font of page 2 (UniJIS-UCS2-H); lopdf reads page 1.
    let e = read("cells/cid-japanese.pdf");
    assert!(
        e.text.starts_with("Page one English: pelicanstorm"),
        "{:?}",
        e.text
    );
    assert_eq!(e.sections[0].page, Some(1));
}
