//! The book export: generated source for each Markdown construct, rendering with the
//! machine's fonts, images per profile, and the output rules.

use std::path::Path;

use super::*;
use crate::media::testdata;

fn write(root: &Path, path: &str, bytes: &[u8]) {
    let abs = root.join(path);
    std::fs::create_dir_all(abs.parent().unwrap()).unwrap();
    std::fs::write(abs, bytes).unwrap();
}

const DOC: &str = "---\ntitle: The Handbook\n---\n# Handbook\n\nSee [setup](#setup), [the web](https://example.com/x) and [other](other.md).\n\n## Setup\n\n*Install* **it** with `cargo`:\n\n```rust\nfn main() {}\n```\n\n- one\n- [x] done\n\n> quoted\n\n| Item | Price |\n|:-----|------:|\n| Widget | 10 |\n\n![cover](img/cover.png)\n\n![gone](img/missing.png) and ![far](https://example.com/a.png)\n\n<div>raw</div>\n\n## 日本語\n\n日本語の文章です。\n改行は詰めます。\n";

#[test]
fn generated_source_covers_each_construct_and_warns_about_images() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "book/img/cover.png",
        &testdata::png(96, 48, [200, 10, 10]),
    );
    let g = markup::generate(dir.path(), "book/doc.md", DOC, &BookOptions::default());
    assert_eq!(g.title, "The Handbook");
    let expected_parts = [
        // The table of contents after the title heading.
        "#heading(level: 1)[#\"Handbook\"] <folio-h1>\n\n#outline(depth: 3)\n\n",
        "#link(<folio-h2>)[#\"setup\"]",
        "#link(\"https://example.com/x\")[#\"the web\"]",
        // A link to another document is printed as its text.
        "#\" and \"#\"other\"#\".\"",
        "#heading(level: 2)[#\"Setup\"] <folio-h2>",
        "#emph[#\"Install\"]#\" \"#strong[#\"it\"]#\" with \"#raw(\"cargo\")",
        "#raw(block: true, lang: \"rust\", \"fn main() {}\")",
        "#list(tight: true, [#\"one\"], [#\"☑ \"#\"done\"])",
        "#quote(block: true)[#\"quoted\"]",
        "#table(columns: 2, align: (left, right,), table.header([#\"Item\"], [#\"Price\"]), [#\"Widget\"], [#\"10\"])",
        "#align(center)[#image(\"/img/1.png\", width: 72.00pt, alt: \"cover\")]",
        "#box(stroke: 0.5pt + luma(150), inset: 4pt)[#text(size: 0.85em, fill: luma(90))[#\"[image: gone]\"]]",
        "#heading(level: 2)[#\"日本語\"] <folio-h3>",
        "#\"日本語の文章です。改行は詰めます。\"",
    ];
    for part in expected_parts {
        assert!(g.body.contains(part), "missing {part:?} in\n{}", g.body);
    }
    assert_eq!(
        g.warnings,
        [
            "line 27: image `img/missing.png` is not available (not found: `book/img/missing.png`); a placeholder is printed",
            "line 27: image `https://example.com/a.png` is remote and is never fetched; a placeholder is printed",
            "1 raw HTML fragment(s) are not rendered in the PDF",
        ]
    );
    assert_eq!(g.files.len(), 1);
    assert_eq!(g.files[0].0, "/img/1.png");
}

#[test]
fn document_text_cannot_become_typst_code() {
    let dir = tempfile::tempdir().unwrap();
    let doc = "# T\n\n#read(\"/etc/passwd\") \\\" ] [ $x$ `#set` <b>bold</b> @ref\n";
    let g = markup::generate(dir.path(), "t.md", doc, &BookOptions::default());
    let book = render(dir.path(), "t.md", doc, &BookOptions::default()).unwrap();
    assert!(book.pdf.starts_with(b"%PDF-"));
    assert!(
        g.body.contains(
            "#\"#read(\\\"/etc/passwd\\\") \\\" ] [ $x$ \"#raw(\"#set\")#\" \"#\"bold\"#\" @ref\""
        ),
        "{}",
        g.body
    );
}

#[test]
fn images_outside_the_root_or_linked_are_placeholders() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("kb");
    write(&root, "real.png", &testdata::png(4, 4, [0, 0, 0]));
    write(dir.path(), "secret.png", &testdata::png(4, 4, [0, 0, 0]));
    std::os::unix::fs::symlink(root.join("real.png"), root.join("link.png")).unwrap();
    write(&root, "text.png", b"not an image");
    let doc = "![a](../secret.png)\n\n![b](link.png)\n\n![c](text.png)\n\n![d](/real.png)\n\n![e](file:///etc/passwd)\n";
    let g = markup::generate(&root, "doc.md", doc, &BookOptions::default());
    assert_eq!(
        g.warnings,
        [
            "line 1: image `../secret.png` points outside the knowledge base; a placeholder is printed",
            "line 3: image `link.png` is not available (not found: `link.png`; symbolic links are not followed); a placeholder is printed",
            "line 5: image `text.png` cannot be used: `text.png` is not a PNG, JPEG, WebP or GIF image (its first bytes carry no image signature); a placeholder is printed",
            "line 9: image `file:///etc/passwd` is remote and is never fetched; a placeholder is printed",
        ]
    );
    // `/real.png` is read from the root, as folio's links resolve it.
    assert_eq!(g.files.len(), 1);
}

#[test]
fn every_style_and_format_renders() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "book/img/cover.png",
        &testdata::png(96, 48, [200, 10, 10]),
    );
    for style in ["compact", "classic", "modern", "technical", "academic"] {
        for format in ["a4", "a5", "a6", "b5", "letter"] {
            let options = BookOptions {
                page_format: PageFormat::parse(format).unwrap(),
                style: Style::parse(style).unwrap(),
                profile: Profile::Standard,
            };
            let book = render(dir.path(), "book/doc.md", DOC, &options).unwrap();
            assert!(book.pdf.starts_with(b"%PDF-"), "{style} {format}");
            assert_eq!(
                book.warnings.len(),
                3,
                "{style} {format}: {:?}",
                book.warnings
            );
        }
    }
}

#[test]
fn profiles_reduce_large_photos_and_the_pdf_with_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut doc = String::from("# Photos\n\n");
    for i in 0..3 {
        write(
            dir.path(),
            &format!("photos/p{i}.jpg"),
            &testdata::noisy_jpeg(4000, 3000, 92),
        );
        doc.push_str(&format!("![photo {i}](photos/p{i}.jpg)\n\n"));
    }
    write(
        dir.path(),
        "photos/p3.png",
        &testdata::noisy_png(2400, 1600),
    );
    doc.push_str("![png](photos/p3.png)\n");
    let originals: u64 = (0..3)
        .map(|i| {
            std::fs::metadata(dir.path().join(format!("photos/p{i}.jpg")))
                .unwrap()
                .len()
        })
        .sum::<u64>()
        + std::fs::metadata(dir.path().join("photos/p3.png"))
            .unwrap()
            .len();
    let mut sizes = Vec::new();
    for profile in [Profile::Screen, Profile::Standard, Profile::Print] {
        let options = BookOptions {
            profile,
            ..BookOptions::default()
        };
        let book = render(dir.path(), "photos.md", &doc, &options).unwrap();
        assert!(book.warnings.is_empty(), "{:?}", book.warnings);
        sizes.push(book.pdf.len() as u64);
    }
    eprintln!(
        "photo book: originals {originals} bytes; screen {} standard {} print {}",
        sizes[0], sizes[1], sizes[2]
    );
    assert!(sizes[0] < sizes[1] && sizes[1] < sizes[2], "{sizes:?}");
    assert!(sizes[2] < originals, "{sizes:?} vs {originals}");
}

#[test]
fn a_script_without_a_font_is_reported_and_the_set_up_installs_one() {
    let text = "日本語のテキスト and 한국어";
    let empty = typst::text::FontBook::new();
    assert_eq!(
        font_warnings(text, &empty),
        [
            "no installed font covers Japanese kana; that text is missing from the PDF (install a CJK font, e.g. Debian's fonts-noto-cjk)",
            "no installed font covers Chinese and Japanese kanji; that text is missing from the PDF (install a CJK font, e.g. Debian's fonts-noto-cjk)",
            "no installed font covers Korean; that text is missing from the PDF (install a CJK font, e.g. Debian's fonts-noto-cjk)",
        ]
    );
    // scripts/test installs fonts-noto-cjk; without it the book tests above fail here first.
    let (book, _) = world::fonts();
    assert_eq!(
        font_warnings(text, book),
        Vec::<String>::new(),
        "install a CJK font (Debian: apt-get install fonts-noto-cjk; scripts/test does it)"
    );
}
