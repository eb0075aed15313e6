//! The image tools on a root on disk, with exact expected values; every refusal is
//! checked to leave the root as it was.

use std::path::Path;

use serde_json::{Value, json};

use super::{err, ok, snapshot};
use crate::digest::sha256_hex;
use crate::host::Host;
use crate::host::images::*;
use crate::media::MAX_IMAGE_BYTES;
use crate::media::testdata::{gif, jpeg, png, webp};

fn open(root: &Path, allow_writes: bool) -> Host {
    super::open_at(root, allow_writes)
}

fn write(root: &Path, path: &str, bytes: &[u8]) {
    let abs = root.join(path);
    std::fs::create_dir_all(abs.parent().unwrap()).unwrap();
    std::fs::write(abs, bytes).unwrap();
}

fn code(v: Value) -> String {
    v["code"].as_str().unwrap().to_string()
}

fn list(kb: &Host, cursor: Option<&str>, page_size: usize) -> ListImagesOutput {
    kb.list_images(&ListImagesArgs {
        cursor: cursor.map(String::from),
        page_size: Some(page_size),
    })
    .unwrap()
}

#[test]
fn listing_orders_case_insensitively_then_ordinally_and_pages_across_a_deletion() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let one = png(1, 1, [1, 2, 3]);
    for path in [
        "b.png",
        "a.png",
        "A.png",
        "d.webp",
        "Docs/x.jpeg",
        "images/Z.gif",
        "images/y.JPG",
        "notes.md",
        "c.txt",
        "e.svg",
    ] {
        write(root, path, &one);
    }
    std::os::unix::fs::symlink(root.join("b.png"), root.join("link.png")).unwrap();
    write(root, "h1.png", &one);
    std::fs::hard_link(root.join("h1.png"), root.join("h2.png")).unwrap();
    let kb = open(root, false);
    let all = ok(kb.list_images(&ListImagesArgs::default()));
    let n = one.len();
    let entry = |p: &str, m: &str| json!({"path": p, "mimeType": m, "bytes": n});
    assert_eq!(
        all,
        json!({"images": [
            entry("A.png", "image/png"),
            entry("a.png", "image/png"),
            entry("b.png", "image/png"),
            entry("d.webp", "image/webp"),
            entry("Docs/x.jpeg", "image/jpeg"),
            entry("images/y.JPG", "image/jpeg"),
            entry("images/Z.gif", "image/gif"),
        ], "nextCursor": null})
    );
    let names = |p: &ListImagesOutput| p.images.iter().map(|e| e.path.clone()).collect::<Vec<_>>();
    let page1 = list(&kb, None, 2);
    assert_eq!(names(&page1), ["A.png", "a.png"]);
    let cursor = page1.next_cursor.clone().unwrap();
    assert_eq!(cursor, crate::media::list::cursor_after("a.png"));
    // The item the cursor points at is deleted before the next page is asked for.
    std::fs::remove_file(root.join("a.png")).unwrap();
    let page2 = list(&kb, Some(&cursor), 2);
    assert_eq!(names(&page2), ["b.png", "d.webp"]);
    let page3 = list(&kb, page2.next_cursor.as_deref(), 2);
    assert_eq!(names(&page3), ["Docs/x.jpeg", "images/y.JPG"]);
    let page4 = list(&kb, page3.next_cursor.as_deref(), 2);
    assert_eq!(names(&page4), ["images/Z.gif"]);
    assert_eq!(page4.next_cursor, None);

    let bad = |cursor: Option<&str>, page_size: usize| {
        err(kb.list_images(&ListImagesArgs {
            cursor: cursor.map(String::from),
            page_size: Some(page_size),
        }))
    };
    assert_eq!(
        bad(None, 0),
        json!({"code": "INVALID_ARGUMENT", "message": "`pageSize` must be between 1 and 200 (got 0)"})
    );
    assert_eq!(code(bad(None, 201)), "INVALID_ARGUMENT");
    assert_eq!(
        bad(Some("garbage!"), 5),
        json!({"code": "INVALID_ARGUMENT", "message": "`garbage!` is not a cursor from kb_list_images; omit it to start from the first page"})
    );
}

#[test]
fn loading_returns_bytes_and_a_gif_as_its_first_frame_in_png() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let files = [
        ("p.png", png(3, 2, [10, 20, 30]), "image/png"),
        ("j.jpg", jpeg(3, 2, [200, 100, 50]), "image/jpeg"),
        ("w.webp", webp(3, 2, [5, 6, 7]), "image/webp"),
    ];
    for (path, bytes, _) in &files {
        write(root, path, bytes);
    }
    let animated = gif(4, 3, [255, 0, 0], [0, 0, 255]);
    write(root, "anim/a.gif", &animated);
    let kb = open(root, false);
    for (path, bytes, mime) in &files {
        let loaded = kb
            .load_image(&LoadImageArgs {
                path: path.to_string(),
            })
            .unwrap();
        assert_eq!(
            loaded,
            LoadedImage {
                meta: ImageMetadata {
                    path: path.to_string(),
                    mime_type: mime.to_string(),
                    bytes: bytes.len() as u64,
                    sha256: sha256_hex(bytes),
                },
                display: bytes.clone(),
                display_mime_type: mime.to_string(),
            }
        );
    }
    let loaded = kb
        .load_image(&LoadImageArgs {
            path: "anim/a.gif".into(),
        })
        .unwrap();
    assert_eq!(
        loaded.meta,
        ImageMetadata {
            path: "anim/a.gif".into(),
            mime_type: "image/gif".into(),
            bytes: animated.len() as u64,
            sha256: sha256_hex(&animated),
        }
    );
    assert_eq!(loaded.display_mime_type, "image/png");
    let frame = image::load_from_memory_with_format(&loaded.display, image::ImageFormat::Png)
        .unwrap()
        .to_rgba8();
    assert_eq!(frame.dimensions(), (4, 3));
    assert!(frame.pixels().all(|p| p.0 == [255, 0, 0, 255]));
    assert_eq!(std::fs::read(root.join("anim/a.gif")).unwrap(), animated);
}

#[test]
fn loading_refuses_what_is_not_a_served_image() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "text.png", b"not an image at all");
    write(root, "empty.png", b"");
    write(root, "mislabeled.gif", &png(1, 1, [0, 0, 0]));
    write(root, "notes.md", b"# x\n");
    let mut huge = png(1, 1, [0, 0, 0]);
    huge.resize(MAX_IMAGE_BYTES as usize + 1, 0);
    write(root, "huge.png", &huge);
    write(root, "real.png", &png(1, 1, [0, 0, 0]));
    std::os::unix::fs::symlink(root.join("real.png"), root.join("link.png")).unwrap();
    std::os::unix::fs::symlink(root, root.join("loop")).unwrap();
    let kb = open(root, false);
    let cases = [
        ("text.png", "UNSUPPORTED_FORMAT"),
        ("empty.png", "UNSUPPORTED_FORMAT"),
        ("mislabeled.gif", "UNSUPPORTED_FORMAT"),
        ("notes.md", "UNSUPPORTED_FORMAT"),
        ("huge.png", "INVALID_ARGUMENT"),
        ("link.png", "NOT_FOUND"),
        ("loop/real.png", "NOT_FOUND"),
        ("missing.png", "NOT_FOUND"),
        ("REAL.png", "NOT_FOUND"),
        ("../real.png", "INVALID_PATH"),
        ("/etc/passwd", "INVALID_PATH"),
        (".git/x.png", "INVALID_PATH"),
    ];
    for (path, expected) in cases {
        let got = err(kb.load_image(&LoadImageArgs { path: path.into() }));
        assert_eq!(code(got), expected, "{path}");
    }
    assert_eq!(
        err(kb.load_image(&LoadImageArgs {
            path: "mislabeled.gif".into()
        })),
        json!({"code": "UNSUPPORTED_FORMAT", "message": "`mislabeled.gif` is named as GIF but its bytes are PNG"})
    );
    assert_eq!(
        err(kb.load_image(&LoadImageArgs {
            path: "huge.png".into()
        })),
        json!({"code": "INVALID_ARGUMENT", "message": "`huge.png` is 26214401 bytes; images are at most 25 MiB (26214400 bytes)"})
    );
}

fn b64(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn inline(bytes: &[u8], mime: &str) -> SaveImageArgs {
    SaveImageArgs {
        file: None,
        image: Some(InlineImage {
            data: b64(bytes),
            mime_type: mime.into(),
        }),
        file_name: None,
        alt_text: None,
        target_path: None,
    }
}

fn download(url: &str) -> SaveImageArgs {
    SaveImageArgs {
        file: Some(FileReference {
            download_url: url.into(),
            file_id: "file-1".into(),
            mime_type: None,
            file_name: None,
        }),
        image: None,
        file_name: None,
        alt_text: None,
        target_path: None,
    }
}

#[test]
fn saving_inline_bytes_picks_free_names_and_explicit_targets_never_replace() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let kb = open(root, true);
    let cover = png(2, 2, [1, 1, 1]);
    let named = |name: &str| SaveImageArgs {
        file_name: Some(name.into()),
        alt_text: Some("The [cover]".into()),
        ..inline(&cover, "image/png")
    };
    assert_eq!(
        ok(kb.save_image(&named("cover.png"))),
        json!({
            "path": "images/cover.png",
            "mimeType": "image/png",
            "bytes": cover.len(),
            "sha256": sha256_hex(&cover),
            "markdown": "![The \\[cover\\]](images/cover.png)",
        })
    );
    let second = kb.save_image(&named("cover.png")).unwrap();
    assert_eq!(
        (second.path.as_str(), second.markdown.as_str()),
        (
            "images/cover-2.png",
            "![The \\[cover\\]](images/cover-2.png)"
        )
    );
    // A symbolic link takes a name too.
    std::os::unix::fs::symlink(root.join("nowhere"), root.join("images/cover-3.png")).unwrap();
    assert_eq!(
        kb.save_image(&named("cover.png")).unwrap().path,
        "images/cover-4.png"
    );
    // No name at all: `image` with the format's extension; a name without an image
    // extension gets one.
    let jpg = jpeg(2, 2, [9, 9, 9]);
    let unnamed = kb.save_image(&inline(&jpg, "image/jpeg")).unwrap();
    assert_eq!(
        (unnamed.path.as_str(), unnamed.markdown.as_str()),
        ("images/image.jpg", "![image](images/image.jpg)")
    );
    let spaced = kb
        .save_image(&SaveImageArgs {
            file_name: Some("my photo".into()),
            ..inline(&jpg, "image/jpeg")
        })
        .unwrap();
    assert_eq!(
        (spaced.path.as_str(), spaced.markdown.as_str()),
        ("images/my photo.jpg", "![my photo](images/my%20photo.jpg)")
    );
    // A name that is only an extension, blank before it, or hidden is refused.
    let before = snapshot(root);
    for (name, target) in [
        (Some(".jpg"), None),
        (Some(" .jpg"), None),
        (Some("..jpg"), None),
        (Some(".hidden.jpg"), None),
        (None, Some("sub/.x.jpg")),
    ] {
        let refused = err(kb.save_image(&SaveImageArgs {
            file_name: name.map(String::from),
            target_path: target.map(String::from),
            ..inline(&jpg, "image/jpeg")
        }));
        let (what, given) = match (name, target) {
            (Some(n), _) => ("`fileName`", n),
            (_, Some(t)) => ("`targetPath`", t.rsplit('/').next().unwrap()),
            _ => unreachable!(),
        };
        assert_eq!(
            refused,
            json!({"code": "INVALID_ARGUMENT", "message": format!("{what} `{given}` has no name before its extension or starts with `.` (a hidden file); give a name such as `chart.png`")})
        );
    }
    assert_eq!(snapshot(root), before);
    assert_eq!(
        std::fs::read(root.join("images/cover-2.png")).unwrap(),
        cover
    );

    // An explicit target with new folders.
    let target = |t: &str| SaveImageArgs {
        target_path: Some(t.into()),
        ..inline(&cover, "image/png")
    };
    let placed = kb.save_image(&target("chapters/01/fig 1.png")).unwrap();
    assert_eq!(
        (placed.path.as_str(), placed.markdown.as_str()),
        ("chapters/01/fig 1.png", "![fig 1](chapters/01/fig%201.png)")
    );
    let before = snapshot(root);
    assert_eq!(
        err(kb.save_image(&target("chapters/01/fig 1.png"))),
        json!({"code": "ALREADY_EXISTS", "message": "`chapters/01/fig 1.png` already exists"})
    );
    assert_eq!(snapshot(root), before);
    // Read-only servers save nothing.
    assert_eq!(
        code(err(open(root, false).save_image(&named("x.png")))),
        "PERMISSION_DENIED"
    );
    assert_eq!(snapshot(root), before);
}

#[test]
fn saving_refuses_bad_input_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "notes.md", b"# Notes\n");
    write(root, "images/taken.png", &png(1, 1, [0, 0, 0]));
    std::fs::create_dir(root.join("real")).unwrap();
    std::os::unix::fs::symlink(root.join("real"), root.join("linked")).unwrap();
    let kb = open(root, true);
    let cover = png(2, 2, [1, 1, 1]);
    let mut huge = cover.clone();
    huge.resize(MAX_IMAGE_BYTES as usize + 1, 0);
    let before = snapshot(root);
    let with_target = |t: &str| SaveImageArgs {
        target_path: Some(t.into()),
        ..inline(&cover, "image/png")
    };
    let cases: Vec<(&str, SaveImageArgs, &str)> = vec![
        (
            "text bytes under a .png name",
            SaveImageArgs {
                file_name: Some("x.png".into()),
                ..inline(b"hello, not an image", "image/png")
            },
            "UNSUPPORTED_FORMAT",
        ),
        (
            "an empty file",
            inline(b"", "image/png"),
            "UNSUPPORTED_FORMAT",
        ),
        (
            "over 25 MiB",
            inline(&huge, "image/png"),
            "INVALID_ARGUMENT",
        ),
        (
            "not base64",
            SaveImageArgs {
                image: Some(InlineImage {
                    data: "@@@".into(),
                    mime_type: "image/png".into(),
                }),
                ..inline(b"", "image/png")
            },
            "INVALID_ARGUMENT",
        ),
        (
            "a MIME type that is not the bytes'",
            inline(&cover, "image/jpeg"),
            "UNSUPPORTED_FORMAT",
        ),
        (
            "a MIME type that is not an image",
            inline(&cover, "text/plain"),
            "UNSUPPORTED_FORMAT",
        ),
        (
            "a name of another format",
            SaveImageArgs {
                file_name: Some("x.jpg".into()),
                ..inline(&cover, "image/png")
            },
            "UNSUPPORTED_FORMAT",
        ),
        (
            "targetPath and fileName",
            SaveImageArgs {
                file_name: Some("x.png".into()),
                target_path: Some("a/x.png".into()),
                ..inline(&cover, "image/png")
            },
            "INVALID_ARGUMENT",
        ),
        (
            "neither file nor image",
            SaveImageArgs {
                image: None,
                ..inline(&cover, "image/png")
            },
            "INVALID_ARGUMENT",
        ),
        ("traversal", with_target("../outside.png"), "INVALID_PATH"),
        ("absolute", with_target("/tmp/x.png"), "INVALID_PATH"),
        ("into .git", with_target(".git/x.png"), "INVALID_PATH"),
        (
            "a name too long",
            with_target(&format!("{}.png", "x".repeat(300))),
            "INVALID_PATH",
        ),
        (
            "through a symlinked folder",
            with_target("linked/x.png"),
            "NOT_FOUND",
        ),
        ("over a note", with_target("notes.md"), "UNSUPPORTED_FORMAT"),
        (
            "over an image",
            with_target("images/taken.png"),
            "ALREADY_EXISTS",
        ),
        (
            "without an extension",
            with_target("images/x"),
            "UNSUPPORTED_FORMAT",
        ),
        (
            "a fileName with folders",
            SaveImageArgs {
                file_name: Some("a/b.png".into()),
                ..inline(&cover, "image/png")
            },
            "INVALID_ARGUMENT",
        ),
        (
            "an http:// URL",
            download("http://example.com/a.png"),
            "INVALID_ARGUMENT",
        ),
        (
            "a private address",
            download("https://192.168.1.10/a.png"),
            "PERMISSION_DENIED",
        ),
        (
            "the metadata address",
            download("https://169.254.169.254/latest/meta-data"),
            "PERMISSION_DENIED",
        ),
        (
            "loopback",
            download("https://127.0.0.1:9/a.png"),
            "PERMISSION_DENIED",
        ),
        (
            "a name resolving to loopback",
            download("https://localhost:9/a.png"),
            "PERMISSION_DENIED",
        ),
    ];
    for (what, args, expected) in cases {
        let got = err(kb.save_image(&args));
        assert_eq!(code(got.clone()), expected, "{what}: {got}");
        assert_eq!(snapshot(root), before, "{what}: nothing written");
    }
}

#[test]
fn deleting_and_moving_check_the_file_and_its_hash() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let cover = png(2, 2, [1, 1, 1]);
    write(root, "images/cover.png", &cover);
    write(root, "images/fake.png", b"text");
    write(root, "images/other.png", &png(1, 1, [0, 0, 0]));
    let doc = "# Book\n\n![c](images/cover.png) and ![[cover.png]]\n\n[ref]: images/cover.png\n";
    write(root, "book.md", doc.as_bytes());
    let kb = open(root, true);
    let sha = sha256_hex(&cover);
    let before = snapshot(root);
    let mv = |from: &str, to: &str, expected: Option<String>| MoveImageArgs {
        source_path: from.into(),
        target_path: to.into(),
        expected_sha256: expected,
        update_links: None,
    };
    let refusals = [
        (
            mv("images/cover.png", "art/cover.png", Some("0".repeat(64))),
            "CONFLICT",
        ),
        (
            mv("images/cover.png", "art/cover.png", Some("xyz".into())),
            "INVALID_ARGUMENT",
        ),
        (
            mv("images/cover.png", "images/other.png", None),
            "ALREADY_EXISTS",
        ),
        (
            mv("images/cover.png", "art/cover.jpg", None),
            "UNSUPPORTED_FORMAT",
        ),
        (
            mv("images/cover.png", "art/cover", None),
            "UNSUPPORTED_FORMAT",
        ),
        (mv("images/cover.png", "../cover.png", None), "INVALID_PATH"),
        (
            mv("images/fake.png", "art/fake.png", None),
            "UNSUPPORTED_FORMAT",
        ),
        (mv("book.md", "art/book.md", None), "UNSUPPORTED_FORMAT"),
        (mv("images/none.png", "art/none.png", None), "NOT_FOUND"),
    ];
    for (args, want) in refusals {
        let got = err(kb.move_image(&args));
        assert_eq!(code(got.clone()), want, "{args:?}: {got}");
        assert_eq!(snapshot(root), before, "{args:?}: nothing changed");
    }
    assert_eq!(
        err(kb.move_image(&mv(
            "images/cover.png",
            "art/cover.png",
            Some("0".repeat(64))
        ))),
        json!({"code": "CONFLICT", "message": format!(
            "`images/cover.png` changed since it was read: its sha256 is now {sha}, not {}; nothing was moved",
            "0".repeat(64)
        )})
    );
    // The right hash (in capitals too): moved, Markdown untouched.
    assert_eq!(
        ok(kb.move_image(&mv(
            "images/cover.png",
            "art/cover.png",
            Some(sha.to_uppercase())
        ))),
        json!({"previousPath": "images/cover.png", "path": "art/cover.png", "sha256": sha})
    );
    assert_eq!(std::fs::read(root.join("art/cover.png")).unwrap(), cover);
    assert!(!root.join("images/cover.png").exists());
    assert_eq!(std::fs::read_to_string(root.join("book.md")).unwrap(), doc);

    // Delete: refusals first, then the real one; the folder stays.
    let del = |path: &str| DeleteImageArgs { path: path.into() };
    for (path, want) in [
        ("images/fake.png", "UNSUPPORTED_FORMAT"),
        ("book.md", "UNSUPPORTED_FORMAT"),
        ("images/cover.png", "NOT_FOUND"),
        ("../x.png", "INVALID_PATH"),
    ] {
        assert_eq!(code(err(kb.delete_image(&del(path)))), want, "{path}");
    }
    assert_eq!(
        ok(kb.delete_image(&del("art/cover.png"))),
        json!({"path": "art/cover.png", "deleted": true})
    );
    assert!(!root.join("art/cover.png").exists());
    assert!(root.join("art").is_dir());
}

#[test]
fn moving_with_update_links_rewrites_every_reference_in_one_operation() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let cover = png(2, 2, [1, 1, 1]);
    write(root, "images/cover.png", &cover);
    write(
        root,
        "book.md",
        b"# Book\n\n![c](images/cover.png \"Cover\") and ![[cover.png]]\n\n[ref]: ./images/cover.png\n",
    );
    write(root, "ch/one.md", b"See ![c](../images/cover.png).\n");
    write(root, "other.md", b"No images here.\n");
    let kb = open(root, true);
    let moved = ok(kb.move_image(&MoveImageArgs {
        source_path: "images/cover.png".into(),
        target_path: "art/front.png".into(),
        expected_sha256: None,
        update_links: Some(true),
    }));
    assert_eq!(
        moved,
        json!({
            "previousPath": "images/cover.png",
            "path": "art/front.png",
            "sha256": sha256_hex(&cover),
            "updated_links": [{"path": "book.md", "links": 3}, {"path": "ch/one.md", "links": 1}],
            "indexSynchronized": true,
        })
    );
    assert_eq!(
        std::fs::read_to_string(root.join("book.md")).unwrap(),
        "# Book\n\n![c](art/front.png \"Cover\") and ![[front.png]]\n\n[ref]: ./art/front.png\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("ch/one.md")).unwrap(),
        "See ![c](../art/front.png).\n"
    );
    assert_eq!(std::fs::read(root.join("art/front.png")).unwrap(), cover);
    assert!(!root.join("images/cover.png").exists());
    assert_eq!(
        std::fs::read_to_string(root.join("other.md")).unwrap(),
        "No images here.\n"
    );
}
