//! Resource limits, CI size: inputs beyond what folio parses are skipped with a reason
//! that names the limit, and the rest of the root is indexed and checked. The full-size
//! figures (time and peak memory) come from `scripts/resource-limits`; see
//! docs/reliability.md.

use std::path::Path;
use std::process::{Command, Output};

fn folio(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_folio"))
        .args(args)
        .env("FOLIO_EMBED_PROVIDER", "none")
        .output()
        .expect("folio runs")
}

/// Exit code and stderr of `folio index` and of `folio check` on `root`.
fn index_and_check(root: &Path) -> [(Option<i32>, String); 2] {
    ["index", "check"].map(|cmd| {
        let out = folio(&[cmd, "--root", root.to_str().unwrap()]);
        (out.status.code(), String::from_utf8(out.stderr).unwrap())
    })
}

#[test]
fn inputs_beyond_the_limits_are_skipped_with_their_reason() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("ok.md"), "# Ok\n\n[big](big.md)\n").unwrap();
    // Over the 16 MiB default cap.
    let big = "Words of a long document.\n\n".repeat(16 * 1024 * 1024 / 27 + 1);
    std::fs::write(root.join("big.md"), &big).unwrap();
    // More than 20,000 links in one paragraph (markdown-rs is quadratic in them).
    let crowded = format!("# L\n\n{}\n", "[t](ok.md) ".repeat(20_001));
    std::fs::write(root.join("crowded.md"), crowded).unwrap();
    // 300 levels of nested list.
    let deep: String = (0..300)
        .map(|i| format!("{}- x\n", "  ".repeat(i)))
        .collect();
    std::fs::write(root.join("deep.md"), deep).unwrap();
    // A folder link to itself and one to the file system root: not followed.
    std::os::unix::fs::symlink(".", root.join("loop")).unwrap();
    std::os::unix::fs::symlink("/", root.join("outside")).unwrap();

    let skipped = format!(
        "folio: skipped big.md: too large ({} bytes; the cap is 16777216 bytes)\n\
         folio: skipped crowded.md: too complex to parse safely: the block of lines from line 3 \
         holds more than 20000 links, emphasis or code spans without a blank line\n\
         folio: skipped deep.md: too complex to parse safely: line 130 is indented 258 columns \
         before a list marker or `>` (limit 256)\n",
        big.len()
    );
    let [index, check] = index_and_check(root);
    assert_eq!(index, (Some(3), skipped.clone()));
    assert_eq!(
        check,
        (
            Some(3),
            format!(
                "{skipped}folio: checked 1 document: 0 errors, 0 warnings in 0 files, 3 files skipped\n"
            )
        )
    );
}
