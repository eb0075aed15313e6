//! Property tests of the JSON-RPC framing of both servers, on the built binary: random
//! bytes, truncated frames, huge or negative `Content-Length` headers and deeply nested
//! JSON never make `folio lsp` or `folio mcp` panic or hang. Each case starts a server,
//! writes the input, closes stdin and waits for the process to end.
//!
//! `PROPTEST_CASES` cases per property (24 by default: each case is a process); the long
//! run of docs/reliability.md sets it higher.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::Config;

/// How long a server may take to exit after its input ends before the case counts as a
/// hang. Far above the tens of milliseconds it takes; a hang detector, not a timing.
const HANG: Duration = Duration::from_secs(60);

fn config() -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(24);
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

/// What a server did with one input: its exit status, stdout and stderr.
struct Run {
    code: Option<i32>,
    stdout: Vec<u8>,
    stderr: String,
}

/// Runs `folio <command>` on an empty root with `input` on stdin, then end of input.
/// Panics (fails the case) when the process is still running [`HANG`] after that.
fn run(command: &str, root: &Path, input: &[u8]) -> Run {
    let runtime = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_folio"))
        .args(
            [command, "--root", root.to_str().unwrap()]
                .iter()
                .take(if command == "lsp" { 1 } else { 3 }),
        )
        .current_dir(root)
        .env("FOLIO_EMBED_PROVIDER", "none")
        .env("XDG_RUNTIME_DIR", runtime.path())
        .env("FOLIO_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("folio starts");
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    // Write from a thread: a server that stops reading must not block the test.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = stdout.read_to_end(&mut v);
        v
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > HANG {
            let _ = child.kill();
            panic!("folio {command} still runs {HANG:?} after its input ended");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let _ = writer.join();
    Run {
        code: status.code(),
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

/// A frame with a `Content-Length` header that may lie about its body.
fn frame(length: &str, body: &[u8]) -> Vec<u8> {
    let mut v = format!("Content-Length: {length}\r\n\r\n").into_bytes();
    v.extend_from_slice(body);
    v
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"capabilities":{}}}"#;

fn lsp_input() -> impl Strategy<Value = Vec<u8>> {
    let header = prop_oneof![
        Just("0".to_owned()),
        Just("18446744073709551615".to_owned()),
        Just("99999999999999999999999".to_owned()),
        Just("-1".to_owned()),
        Just("".to_owned()),
        Just("12 34".to_owned()),
        (0usize..200).prop_map(|n| n.to_string()),
    ];
    let body = prop_oneof![
        prop::collection::vec(any::<u8>(), 0..200),
        Just(INITIALIZE.as_bytes().to_vec()),
        (1usize..200_000)
            .prop_map(|depth| format!("{}{}", "[".repeat(depth), "]".repeat(depth)).into_bytes()),
        (0usize..INITIALIZE.len()).prop_map(|cut| INITIALIZE.as_bytes()[..cut].to_vec()),
    ];
    let part = prop_oneof![
        (header, body).prop_map(|(h, b)| frame(&h, &b)),
        prop::collection::vec(any::<u8>(), 0..300),
        Just(b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n".to_vec()),
    ];
    prop::collection::vec(part, 0..6).prop_map(|parts| parts.concat())
}

fn mcp_input() -> impl Strategy<Value = Vec<u8>> {
    let line = prop_oneof![
        prop::collection::vec(any::<u8>(), 0..300),
        (1usize..200_000)
            .prop_map(|depth| format!("{}{}", "[".repeat(depth), "]".repeat(depth)).into_bytes()),
        (1usize..100_000).prop_map(|depth| format!(
            "{}1{}",
            r#"{"a":"#.repeat(depth),
            "}".repeat(depth)
        )
        .into_bytes()),
        Just(br#"{"jsonrpc":"2.0","id":-1,"method":"tools/list"}"#.to_vec()),
        Just(br#"{"jsonrpc":"2.0","id":2,"result":{}}"#.to_vec()),
        Just(b"Content-Length: 99999999999\r\n\r\n".to_vec()),
    ];
    prop::collection::vec(line, 0..6).prop_map(|lines| lines.join(&b'\n'))
}

fn no_panic(run: &Run) -> Result<(), TestCaseError> {
    prop_assert!(
        !run.stderr.contains("panicked"),
        "the server panicked:\n{}",
        run.stderr
    );
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    /// `folio lsp` on any byte stream, then end of input: it ends, without a panic.
    #[test]
    fn lsp_survives_any_framing(input in lsp_input()) {
        let root = tempfile::tempdir().unwrap();
        let run = run("lsp", root.path(), &input);
        no_panic(&run)?;
        prop_assert!(run.code.is_some(), "killed by a signal: {}", run.stderr);
    }

    /// `folio mcp` on any lines, then a real session: every garbage line is answered or
    /// dropped, and the initialize request after them still gets its result.
    #[test]
    fn mcp_answers_after_any_garbage(input in mcp_input()) {
        let root = tempfile::tempdir().unwrap();
        let mut bytes = input;
        bytes.push(b'\n');
        bytes.extend_from_slice(INITIALIZE.replace("\"capabilities\":{}", "\"capabilities\":{},\"protocolVersion\":\"2025-06-18\",\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}").as_bytes());
        bytes.push(b'\n');
        let run = run("mcp", root.path(), &bytes);
        no_panic(&run)?;
        let stdout = String::from_utf8_lossy(&run.stdout);
        let answered = stdout.lines().any(|l| {
            serde_json::from_str::<serde_json::Value>(l)
                .is_ok_and(|v| v["id"] == 1 && v["result"]["serverInfo"]["name"] == "folio")
        });
        prop_assert!(answered, "no initialize result in:\n{stdout}\nstderr:\n{}", run.stderr);
        prop_assert_eq!(run.code, Some(0), "{}", run.stderr);
    }
}

/// Every kind of frame tower-lsp-server's transport cannot decode (each used to end the
/// session), then a valid request: the broken frames with an id get their JSON-RPC error,
/// those without one are dropped, a lone surrogate in a document's text is read as
/// U+FFFD, and the request after them all is answered (lsp/src/framing.rs).
#[test]
fn lsp_answers_after_every_kind_of_broken_frame() {
    use serde_json::json;
    use std::io::{BufRead, BufReader};
    let root = tempfile::tempdir().unwrap();
    let runtime = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_folio"))
        .arg("lsp")
        .current_dir(root.path())
        .env("FOLIO_EMBED_PROVIDER", "none")
        .env("XDG_RUNTIME_DIR", runtime.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let whole = |body: &[u8]| frame(&body.len().to_string(), body);
    let uri = format!(
        "file://{}/a.md",
        root.path().canonicalize().unwrap().display()
    );
    let nested = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let broken: Vec<Vec<u8>> = vec![
        whole(b"not json!"),                            // not JSON, no id
        whole(br#"{"jsonrpc":"2.0","id":7,"method":"#), // cut short, id 7
        whole(b"{\"jsonrpc\":\"2.0\",\"method\":\"$/x\",\"params\":\"\xff\"}"), // not UTF-8
        frame("-1", b"{}"),                             // negative length
        frame("abc", b"{}"),                            // not a number
        frame("99999999999999999999999", b"{}"),        // overflows
        frame("300000000", b"{}"),                      // over the limit
        frame("0", b""),                                // empty body
        b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}".to_vec(), // no length
        whole(br#"[{"jsonrpc":"2.0","id":9,"method":"shutdown"}]"#), // a batch
        whole(b"42"),                                   // not an object
        whole(br#"{"jsonrpc":"1.0","id":"a","method":"x"}"#), // another version
        whole(br#"{"jsonrpc":"2.0","id":10}"#),         // neither method nor result
        whole(br#"{"jsonrpc":"2.0","id":{"a":1},"method":"x"}"#), // an id that is an object
        [vec![b'x'; 20_000], b"\r\n".to_vec()].concat(), // a header line too long
        whole(nested.as_bytes()),                       // nested past the parser's limit
    ];
    let open = format!(
        r##"{{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{{"textDocument":{{"uri":"{uri}","languageId":"markdown","version":1,"text":"# A \ud800 title\n"}}}}}}"##
    );
    let symbols = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"textDocument/documentSymbol","params":{{"textDocument":{{"uri":"{uri}"}}}}}}"#
    );
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        for f in broken {
            stdin.write_all(&f).unwrap();
        }
        stdin.write_all(&whole(INITIALIZE.as_bytes())).unwrap();
        stdin.flush().unwrap();
        stdin
    });
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    // Answers (server requests and notifications are skipped), read until each of `ids`
    // has one.
    let answers_until = |stdout: &mut BufReader<_>,
                         answers: &mut Vec<serde_json::Value>,
                         ids: &[serde_json::Value]| {
        while !ids.iter().all(|id| answers.iter().any(|a| a["id"] == *id)) {
            let mut length = 0;
            loop {
                let mut line = String::new();
                assert!(stdout.read_line(&mut line).unwrap() > 0, "output closed");
                match line.trim_end().strip_prefix("Content-Length: ") {
                    Some(n) => length = n.parse().unwrap(),
                    None if line.trim_end().is_empty() => break,
                    None => {}
                }
            }
            let mut body = vec![0; length];
            stdout.read_exact(&mut body).unwrap();
            let message: serde_json::Value = serde_json::from_slice(&body).unwrap();
            if message.get("id").is_some() && message.get("method").is_none() {
                answers.push(message);
            }
        }
    };
    let mut answers = Vec::new();
    let first = [json!(7), json!(9), json!("a"), json!(10), json!(1)];
    answers_until(&mut stdout, &mut answers, &first);
    // A client sends nothing else before the initialize result; then the document, with a
    // lone surrogate in its text, and a request about it.
    let mut stdin = writer.join().unwrap();
    for message in [
        r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#,
        &open,
        &symbols,
    ] {
        stdin.write_all(&whole(message.as_bytes())).unwrap();
    }
    stdin.flush().unwrap();
    answers_until(&mut stdout, &mut answers, &[json!(2)]);
    let mut summary: Vec<String> = answers
        .iter()
        .map(|a| format!("{} {}", a["id"], a["error"]["code"]))
        .collect();
    summary.sort();
    // Only these: the other broken frames had no id, or reached the server readable (a
    // message with an id and nothing else is the server's to answer: method not found).
    assert_eq!(
        summary,
        [
            "\"a\" -32600",
            "1 null",
            "10 -32601",
            "2 null",
            "7 -32700",
            "9 -32600"
        ]
    );
    let answer = |id: i64| answers.iter().find(|a| a["id"] == id).unwrap();
    assert!(
        answer(1)["result"]["capabilities"].is_object(),
        "{}",
        answer(1)
    );
    // The lone surrogate was read as U+FFFD: the heading is named with it.
    assert_eq!(answer(2)["result"][0]["name"], "A \u{fffd} title");
    stdin
        .write_all(&whole(br#"{"jsonrpc":"2.0","id":3,"method":"shutdown"}"#))
        .unwrap();
    stdin
        .write_all(&whole(br#"{"jsonrpc":"2.0","method":"exit"}"#))
        .unwrap();
    drop(stdin);
    assert_eq!(child.wait().unwrap().code(), Some(0));
}
