//! The stdio transport with JSON-RPC errors for malformed input.
//!
//! rmcp's line transport drops a line it cannot decode without answering, so a client
//! that sent broken JSON would wait forever. This filter sits between stdin and rmcp:
//! each line that decodes as a client JSON-RPC message goes on to rmcp; anything else is
//! answered with -32700 (not JSON) or -32600 (JSON, but not a request or notification),
//! carrying the request's `id` when one can be read. Until the initialize request has
//! passed, other messages are answered or dropped here ([`before_initialize`]) instead of
//! ending the connection. Both answers and rmcp's own output go to stdout through one
//! writer, one line at a time.

use rmcp::model::ClientJsonRpcMessage;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// Longest input line (one JSON-RPC message) the server reads: 16 MiB, rmcp's own limit.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// A JSON-RPC error reply line.
fn error_reply(id: serde_json::Value, code: i64, message: &str) -> String {
    serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
        .to_string()
}

/// The `id` of a request, read from the start of a line too long or too broken to parse whole.
fn sniff_id(prefix: &[u8]) -> serde_json::Value {
    let text = String::from_utf8_lossy(&prefix[..prefix.len().min(4096)]);
    let Some(at) = text.find("\"id\"") else {
        return serde_json::Value::Null;
    };
    let rest = text[at + 4..]
        .trim_start()
        .strip_prefix(':')
        .unwrap_or("")
        .trim_start();
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    match serde_json::from_str::<serde_json::Value>(rest[..end].trim()) {
        Ok(v) if v.is_string() || v.is_number() => v,
        _ => serde_json::Value::Null,
    }
}

/// -32602 for a known method whose params have the wrong shape (rmcp would answer -32601):
/// the reply line, over stdio and (as the body of its answer) over HTTP.
pub fn invalid_params(v: &serde_json::Value) -> Option<String> {
    let method = v.get("method")?.as_str()?;
    let params = v.get("params");
    let object = params.is_some_and(serde_json::Value::is_object);
    let problem = match method {
        "tools/call" => {
            let p = params.filter(|_| object);
            let name_ok = p
                .and_then(|p| p.get("name"))
                .is_some_and(serde_json::Value::is_string);
            let args_ok = p
                .and_then(|p| p.get("arguments"))
                .is_none_or(|a| a.is_object() || a.is_null());
            (!(name_ok && args_ok))
                .then_some("tools/call needs params {name: string, arguments?: object}")
        }
        "prompts/get" => (!(object
            && params
                .and_then(|p| p.get("name"))
                .is_some_and(serde_json::Value::is_string)
            && params
                .and_then(|p| p.get("arguments"))
                .is_none_or(|a| a.is_object() || a.is_null())))
        .then_some("prompts/get needs params {name: string, arguments?: object}"),
        "resources/read" => (!(object
            && params
                .and_then(|p| p.get("uri"))
                .is_some_and(serde_json::Value::is_string)))
        .then_some("resources/read needs params {uri: string}"),
        _ => None,
    }?;
    let id = v
        .get("id")
        .filter(|id| id.is_string() || id.is_number())
        .cloned()?;
    Some(error_reply(
        id,
        -32602,
        &format!("Invalid params: {problem}"),
    ))
}

/// The reply to a line that is not a client message, if it needs one.
pub fn reply_to_malformed(line: &str) -> Option<String> {
    if line.trim().is_empty() {
        return None;
    }
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(line)
        && let Some(reply) = invalid_params(&v)
    {
        return Some(reply);
    }
    if serde_json::from_str::<ClientJsonRpcMessage>(line).is_ok() {
        return None;
    }
    let (code, message, id) = match serde_json::from_str::<serde_json::Value>(line) {
        Err(e) => (-32700, format!("Parse error: {e}"), serde_json::Value::Null),
        Ok(v) => {
            let id = v
                .get("id")
                .filter(|id| id.is_string() || id.is_number())
                .cloned()
                .unwrap_or(serde_json::Value::Null);
            // A response to a request the server never sent needs no answer.
            if v.get("method").is_none()
                && (v.get("result").is_some() || v.get("error").is_some())
                && !v.is_array()
            {
                return None;
            }
            let why = if v.is_array() {
                "batches are not supported"
            } else {
                "not a valid JSON-RPC 2.0 request or notification"
            };
            (-32600, format!("Invalid Request: {why}"), id)
        }
    };
    Some(serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string())
}

/// What the filter does with a client message that arrives before `initialize`.
#[derive(Debug, PartialEq, Eq)]
pub enum BeforeInitialize {
    /// The initialize request: pass it on; the session begins.
    Initialize,
    /// `server/discover` (a newer client's probe, answered -32601 by the server): pass it
    /// on and go on waiting.
    PassOn,
    /// Answer with this line and go on waiting (a ping, or a request that must wait).
    Reply(String),
    /// A notification or a response: nothing to answer, nothing to pass on.
    Drop,
}

/// The rule for messages before the session begins. rmcp ends the connection when the
/// first message is not `initialize`; the MCP lifecycle lets a client ping first and
/// expects other requests to wait, so a ping gets an empty result and any other request
/// -32002 (server not initialized, LSP's code for the same case), and the server keeps
/// waiting for `initialize`.
pub fn before_initialize(line: &str) -> BeforeInitialize {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
        return BeforeInitialize::Drop;
    };
    let method = v.get("method").and_then(serde_json::Value::as_str);
    let id = v.get("id").filter(|id| id.is_string() || id.is_number());
    match (method, id) {
        (Some("initialize"), Some(_)) => BeforeInitialize::Initialize,
        (Some("server/discover"), Some(_)) => BeforeInitialize::PassOn,
        (Some("ping"), Some(id)) => BeforeInitialize::Reply(
            serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {}}).to_string(),
        ),
        (Some(method), Some(id)) => BeforeInitialize::Reply(error_reply(
            id.clone(),
            -32002,
            &format!("Server not initialized: send initialize before {method}"),
        )),
        _ => BeforeInitialize::Drop,
    }
}

/// One line of input.
enum InputLine {
    /// A line of UTF-8 text, without its line ending.
    Text(String),
    /// A line that is not UTF-8 (its first bytes, to read the id from).
    NotUtf8(Vec<u8>),
    /// A line longer than the limit (its first bytes; `len` bytes were read and dropped).
    TooLong {
        /// The line's first bytes.
        prefix: Vec<u8>,
        /// Bytes read.
        len: usize,
    },
    /// End of input.
    Eof,
}

/// Reads one `\n`-terminated line, keeping at most `max` bytes in memory.
async fn read_line<R: AsyncBufReadExt + Unpin>(
    input: &mut R,
    max: usize,
) -> std::io::Result<InputLine> {
    let mut line: Vec<u8> = Vec::new();
    let mut len = 0usize;
    loop {
        let buf = input.fill_buf().await?;
        if buf.is_empty() {
            if len == 0 {
                return Ok(InputLine::Eof);
            }
            break;
        }
        let (take, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        len += take;
        if line.len() < max + 1 {
            let keep = take.min(max + 1 - line.len());
            line.extend_from_slice(&buf[..keep]);
        }
        input.consume(take);
        if done {
            break;
        }
    }
    if len > max + 1 {
        line.truncate(4096);
        return Ok(InputLine::TooLong { prefix: line, len });
    }
    while matches!(line.last(), Some(b'\n' | b'\r')) {
        line.pop();
    }
    match String::from_utf8(line) {
        Ok(text) => Ok(InputLine::Text(text)),
        Err(e) => Ok(InputLine::NotUtf8(e.into_bytes())),
    }
}

/// Halves of the pipe rmcp talks over: (what rmcp reads, what rmcp writes).
pub type ServerSide = (tokio::io::DuplexStream, tokio::io::DuplexStream);

/// Spawns the filter between `input`/`output` and rmcp; returns rmcp's side and the
/// writer task to await after the service stops (so the last replies are flushed).
pub fn filtered<R, W>(input: R, mut output: W) -> (ServerSide, tokio::task::JoinHandle<()>)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (server_read, mut to_server) = tokio::io::duplex(1 << 20);
    let (from_server, server_write) = tokio::io::duplex(1 << 20);
    let (tx, mut rx) = mpsc::channel::<String>(256);

    let errors = tx.clone();
    tokio::spawn(async move {
        let mut input = BufReader::new(input);
        let mut initialized = false;
        loop {
            let line = match read_line(&mut input, MAX_LINE_BYTES).await {
                Ok(InputLine::Text(line)) => line,
                Ok(InputLine::Eof) | Err(_) => break,
                Ok(InputLine::NotUtf8(prefix)) => {
                    tracing::warn!("input line is not UTF-8; answered with a parse error");
                    let reply = error_reply(
                        sniff_id(&prefix),
                        -32700,
                        "Parse error: the message is not valid UTF-8",
                    );
                    if errors.send(reply).await.is_err() {
                        break;
                    }
                    continue;
                }
                Ok(InputLine::TooLong { prefix, len }) => {
                    tracing::warn!(
                        len,
                        "input line longer than the limit; answered with an error"
                    );
                    let message = format!(
                        "Invalid Request: the message has more than {MAX_LINE_BYTES} bytes (the limit); send less per call"
                    );
                    let _ = len;
                    if errors
                        .send(error_reply(sniff_id(&prefix), -32600, &message))
                        .await
                        .is_err()
                    {
                        break;
                    }
                    continue;
                }
            };
            match reply_to_malformed(&line) {
                Some(reply) => {
                    tracing::warn!("malformed JSON-RPC input answered with an error");
                    if errors.send(reply).await.is_err() {
                        break;
                    }
                }
                None if !initialized => match before_initialize(&line) {
                    gate @ (BeforeInitialize::Initialize | BeforeInitialize::PassOn) => {
                        initialized = gate == BeforeInitialize::Initialize;
                        if to_server.write_all(line.as_bytes()).await.is_err()
                            || to_server.write_all(b"\n").await.is_err()
                        {
                            break;
                        }
                    }
                    BeforeInitialize::Reply(reply) => {
                        tracing::warn!("a request before initialize answered without a session");
                        if errors.send(reply).await.is_err() {
                            break;
                        }
                    }
                    BeforeInitialize::Drop => {
                        tracing::warn!("a notification or response before initialize dropped");
                    }
                },
                None => {
                    if to_server.write_all(line.as_bytes()).await.is_err()
                        || to_server.write_all(b"\n").await.is_err()
                    {
                        break;
                    }
                }
            }
        }
        // End of input: rmcp sees end of file and stops.
        let _ = to_server.shutdown().await;
    });

    tokio::spawn(async move {
        let mut lines = BufReader::new(from_server).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if tx.send(line).await.is_err() {
                break;
            }
        }
    });

    let writer = tokio::spawn(async move {
        while let Some(mut line) = rx.recv().await {
            // One write per message: a reader never sees a message without its newline.
            line.push('\n');
            if output.write_all(line.as_bytes()).await.is_err() || output.flush().await.is_err() {
                break;
            }
        }
    });
    ((server_read, server_write), writer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_before_initialize_wait_for_the_session() {
        assert_eq!(
            before_initialize(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#),
            BeforeInitialize::Initialize
        );
        assert_eq!(
            before_initialize(r#"{"jsonrpc":"2.0","id":1,"method":"server/discover"}"#),
            BeforeInitialize::PassOn
        );
        assert_eq!(
            before_initialize(r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#),
            BeforeInitialize::Reply(r#"{"id":"p","jsonrpc":"2.0","result":{}}"#.into())
        );
        assert_eq!(
            before_initialize(r#"{"jsonrpc":"2.0","id":-1,"method":"tools/list"}"#),
            BeforeInitialize::Reply(
                r#"{"error":{"code":-32002,"message":"Server not initialized: send initialize before tools/list"},"id":-1,"jsonrpc":"2.0"}"#.into()
            )
        );
        assert_eq!(
            before_initialize(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            BeforeInitialize::Drop
        );
        assert_eq!(
            before_initialize(r#"{"jsonrpc":"2.0","id":2,"result":{}}"#),
            BeforeInitialize::Drop
        );
    }

    #[test]
    fn malformed_lines_get_errors_and_valid_ones_pass() {
        assert_eq!(
            reply_to_malformed("{bad json").map(|r| serde_json::from_str::<serde_json::Value>(&r)
                .unwrap()["error"]["code"]
                .clone()),
            Some(serde_json::json!(-32700))
        );
        let r: serde_json::Value =
            serde_json::from_str(&reply_to_malformed(r#"{"id": 7, "foo": 1}"#).unwrap()).unwrap();
        assert_eq!(r["id"], 7);
        assert_eq!(r["error"]["code"], -32600);
        assert!(
            reply_to_malformed("[1,2]")
                .unwrap()
                .contains("batches are not supported")
        );
        assert_eq!(
            reply_to_malformed(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            None
        );
        assert_eq!(
            reply_to_malformed(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            None
        );
        assert_eq!(reply_to_malformed(""), None);
    }

    #[test]
    fn wrongly_shaped_params_of_known_methods_get_invalid_params() {
        let reply = |line: &str| {
            serde_json::from_str::<serde_json::Value>(&reply_to_malformed(line).unwrap()).unwrap()
        };
        assert_eq!(
            reply(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":null}"#),
            serde_json::json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32602,
                "message": "Invalid params: tools/call needs params {name: string, arguments?: object}"}})
        );
        assert_eq!(
            reply(
                r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"kb_read","arguments":"str"}}"#
            )["error"]["code"],
            -32602
        );
        assert_eq!(
            reply(r#"{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{}}"#)["error"]["code"],
            -32602
        );
        assert_eq!(
            reply_to_malformed(
                r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"kb_status"}}"#
            ),
            None
        );
    }

    #[tokio::test]
    async fn lines_that_are_not_utf8_or_too_long_are_answered_and_reading_goes_on() {
        let mut input: Vec<u8> = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n".to_vec();
        input.extend_from_slice(b"\xff\xfe garbage\n");
        input.extend_from_slice(
            b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"x\":\"",
        );
        input.extend(std::iter::repeat_n(b'a', 100));
        input.extend_from_slice(b"\"}}\nlast\n");
        let mut reader = tokio::io::BufReader::new(&input[..]);
        let mut got = Vec::new();
        loop {
            match read_line(&mut reader, 64).await.unwrap() {
                InputLine::Eof => break,
                InputLine::Text(t) => got.push(format!("text {t}")),
                InputLine::NotUtf8(p) => got.push(format!("not-utf8 {}", p.len())),
                InputLine::TooLong { prefix, len } => {
                    got.push(format!("too-long {len} id={}", sniff_id(&prefix)))
                }
            }
        }
        assert_eq!(
            got,
            vec![
                "text {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}".to_string(),
                // 10 bytes without the line ending.
                "not-utf8 10".to_string(),
                // 61 bytes of JSON before the value, 100 `a`, then `"}}` and the line ending.
                "too-long 165 id=9".to_string(),
                "text last".to_string(),
            ]
        );
    }
}
