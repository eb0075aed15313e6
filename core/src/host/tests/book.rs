//! `kb_create_pdf_book`: output rules, replacement of an earlier export, refusals that
//! write nothing.

use super::{err, snapshot};
use crate::host::Host;
use crate::host::book::PdfBookArgs;

fn open(root: &std::path::Path, allow_writes: bool) -> Host {
    super::open_at(root, allow_writes)
}

fn args(path: &str, output: Option<&str>) -> PdfBookArgs {
    PdfBookArgs {
        path: path.into(),
        output_path: output.map(String::from),
        page_format: None,
        style: None,
        profile: None,
    }
}

#[test]
fn export_checks_the_output_and_replaces_only_an_earlier_pdf() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("notes")).unwrap();
    std::fs::write(root.join("notes/book.md"), "# Book\n\nText.\n").unwrap();
    std::fs::write(root.join("notes/not-a-pdf.pdf"), "my own notes").unwrap();
    // A PDF of the user's own (here, a book's bytes without folio's keyword).
    std::fs::write(
        root.join("notes/paper.pdf"),
        "%PDF-1.7\n% the user's paper\n",
    )
    .unwrap();
    std::fs::write(root.join("notes/other.md"), "# Other\n").unwrap();
    std::fs::create_dir(root.join("real")).unwrap();
    std::os::unix::fs::symlink(root.join("real"), root.join("linked")).unwrap();
    let kb = open(root, true);
    let first = kb.create_pdf_book(&args("notes/book.md", None)).unwrap();
    assert_eq!(first.path, "notes/book.pdf");
    let written = std::fs::read(root.join("notes/book.pdf")).unwrap();
    assert_eq!(first.bytes, written.len() as u64);
    assert!(written.starts_with(b"%PDF-"));
    assert!(crate::book::is_folio_book(&written));
    assert_eq!(first.warnings, Vec::<String>::new());
    // An export a viewer saved annotations into (an incremental update) is the user's.
    let mut annotated = written.clone();
    annotated.extend_from_slice(b"\n1 0 obj\n<< /Annots [] >>\nendobj\nstartxref\n0\n%%EOF\n");
    std::fs::write(root.join("notes/annotated.pdf"), &annotated).unwrap();
    assert_eq!(
        err(kb.create_pdf_book(&args("notes/book.md", Some("notes/annotated.pdf"))))["code"],
        "ALREADY_EXISTS"
    );
    std::fs::remove_file(root.join("notes/annotated.pdf")).unwrap();
    // Again, after an edit: the earlier export is replaced.
    std::fs::write(root.join("notes/book.md"), "# Book\n\nChanged text.\n").unwrap();
    let second = kb.create_pdf_book(&args("notes/book.md", None)).unwrap();
    assert_eq!(second.path, "notes/book.pdf");
    assert_ne!(std::fs::read(root.join("notes/book.pdf")).unwrap(), written);
    let exports = kb
        .create_pdf_book(&args("notes/book.md", Some("exports/a/book.pdf")))
        .unwrap();
    assert_eq!(exports.path, "exports/a/book.pdf");
    assert!(root.join("exports/a/book.pdf").is_file());

    let before = snapshot(root);
    let refusals = [
        (args("notes/book.md", Some("../book.pdf")), "INVALID_PATH"),
        (args("notes/book.md", Some("/tmp/book.pdf")), "INVALID_PATH"),
        (args("notes/book.md", Some(".git/book.pdf")), "INVALID_PATH"),
        (
            args("notes/book.md", Some("notes/other.md")),
            "INVALID_ARGUMENT",
        ),
        (
            args("notes/book.md", Some("notes/not-a-pdf.pdf")),
            "ALREADY_EXISTS",
        ),
        (
            args("notes/book.md", Some("notes/paper.pdf")),
            "ALREADY_EXISTS",
        ),
        (args("notes/book.md", Some("linked/book.pdf")), "NOT_FOUND"),
        (args("missing.md", None), "NOT_FOUND"),
        (
            args("notes/not-a-pdf.pdf", Some("x.pdf")),
            "UNSUPPORTED_FORMAT",
        ),
    ];
    for (a, code) in refusals {
        let got = err(kb.create_pdf_book(&a));
        assert_eq!(got["code"], code, "{a:?}: {got}");
    }
    assert_eq!(
        err(open(root, false).create_pdf_book(&args("notes/book.md", None)))["code"],
        "PERMISSION_DENIED"
    );
    assert_eq!(snapshot(root), before);
    assert!(!root.join("real/book.pdf").exists());
    assert_eq!(crate::book::default_output("a/b.markdown"), "a/b.pdf");
    assert_eq!(crate::book::default_output("a/B.MD"), "a/B.pdf");
}
