//! The framing layer between the client and tower-lsp-server's transport.
//!
//! tower-lsp-server ends the session on a frame it cannot decode, and a real client sends
//! such frames: VS Code passes a lone UTF-16 surrogate typed into a document on as the
//! JSON escape `\ud800`, which JSON parsers refuse, and then restarts the server over the
//! same document until it gives up. This layer reads the client's frames first (LSP base
//! protocol: `Content-Length` headers, a blank line, the JSON body) and hands the server
//! only frames it can decode:
//!
//! - a body that is not UTF-8 is read with U+FFFD for each invalid sequence, and lone
//!   surrogate escapes (`\ud800` not followed by a low surrogate, or a low one alone)
//!   become `\ufffd`; both with a warning in the log;
//! - a body that is still not JSON gets a parse error (-32700), and JSON that is not a
//!   request, notification or response gets -32600, each with the message's `id` when
//!   one can be read; without one the frame is dropped with a log line;
//! - a header block without a usable `Content-Length` (missing, not a number, negative,
//!   over [`MAX_FRAME_BYTES`]) is dropped with a log line, and reading goes on at the next
//!   `Content-Length` header; other headers (`Content-Type`) are not passed on.
//!
//! The session goes on after each. The server's own frames and these answers reach the
//! client through one writer, a whole frame at a time.

use serde::Deserialize;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// The largest body read: 256 MiB. A larger `Content-Length` is treated as a broken
/// header (the bytes that follow are searched for the next frame).
pub const MAX_FRAME_BYTES: usize = 256 * 1024 * 1024;

/// The longest header line read; a longer line is skipped.
const MAX_HEADER_LINE: u64 = 8 * 1024;

/// The fields of a message this layer reads to answer one the server cannot: whether
/// it is a request or notification, and its id.
#[derive(Deserialize)]
struct Shape {
    method: Option<serde::de::IgnoredAny>,
    id: Option<serde_json::Value>,
}

/// What to do with one frame's body.
#[derive(Debug, PartialEq)]
pub enum Decoded {
    /// Pass this body on to the server.
    Forward(Vec<u8>),
    /// Answer the client with this JSON-RPC error message (a whole JSON body).
    Reply(String),
    /// Drop the frame (the reason is logged).
    Drop(String),
}

/// A frame around `body`.
pub fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

/// A JSON-RPC error message.
fn error_message(id: &serde_json::Value, code: i64, message: &str) -> String {
    serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
        .to_string()
}

/// The `id` of a message too broken to parse, read from its text: a number or a string
/// after the first `"id"` key.
fn sniff_id(text: &str) -> Option<serde_json::Value> {
    let at = text.find("\"id\"")?;
    let rest = text[at + 4..].trim_start().strip_prefix(':')?.trim_start();
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    serde_json::from_str::<serde_json::Value>(rest[..end].trim())
        .ok()
        .filter(|v| v.is_string() || v.is_number())
}

/// `text` with every lone surrogate escape replaced by `\ufffd`, or `None` when it has
/// none. A `\u` escape is read only where a backslash starts an escape (not after an
/// escaped backslash).
pub fn replace_lone_surrogates(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let hex = |at: usize| -> Option<u16> {
        let digits = text.get(at..at + 4)?;
        u16::from_str_radix(digits, 16).ok()
    };
    let escape_at = |at: usize| -> Option<u16> {
        (bytes.get(at) == Some(&b'\\') && bytes.get(at + 1) == Some(&b'u'))
            .then(|| hex(at + 2))
            .flatten()
    };
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    let (mut i, mut copied) = (0, 0);
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        let Some(unit) = escape_at(i) else {
            i += 2;
            continue;
        };
        let lone = match unit {
            0xD800..=0xDBFF => {
                let paired = escape_at(i + 6).is_some_and(|low| (0xDC00..=0xDFFF).contains(&low));
                if paired {
                    i += 12;
                    continue;
                }
                true
            }
            0xDC00..=0xDFFF => true,
            _ => false,
        };
        if lone {
            out.push_str(&text[copied..i]);
            out.push_str("\\ufffd");
            copied = i + 6;
            changed = true;
        }
        i += 6;
    }
    changed.then(|| {
        out.push_str(&text[copied..]);
        out
    })
}

/// Decides what happens to one frame's body (see the module documentation).
pub fn decode(body: Vec<u8>) -> Decoded {
    let mut text = match String::from_utf8(body) {
        Ok(text) => text,
        Err(e) => {
            tracing::warn!(
                "a frame from the client is not UTF-8: read with U+FFFD for each invalid sequence"
            );
            String::from_utf8_lossy(e.as_bytes()).into_owned()
        }
    };
    // Checked on every frame: parsing the shape skips the params, where they would be.
    if let Some(replaced) = replace_lone_surrogates(&text) {
        tracing::warn!("a frame from the client holds lone UTF-16 surrogates: each became U+FFFD");
        text = replaced;
    }
    let parsed = serde_json::from_str::<Shape>(&text);
    let id = || sniff_id(&text);
    let shape = match parsed {
        Ok(shape) => shape,
        Err(e) if e.is_data() => return invalid_request(id(), &format!("{e}")),
        Err(e) => {
            return match id() {
                Some(id) => {
                    Decoded::Reply(error_message(&id, -32700, &format!("Parse error: {e}")))
                }
                None => Decoded::Drop(format!("a frame that is not JSON ({e}), without an id")),
            };
        }
    };
    if !text.trim_start().starts_with('{') {
        // A batch or a bare value: LSP has neither.
        return invalid_request(id(), "not a JSON-RPC message object");
    }
    // What the server's transport reads (its `Request` or `Response`, whose parse covers
    // the params too: numbers out of range, nesting past the parser's limit); anything
    // else would end the session there.
    use tower_lsp_server::jsonrpc::{Request, Response};
    if text.parse::<Request>().is_ok() || text.parse::<Response>().is_ok() {
        return Decoded::Forward(text.into_bytes());
    }
    if shape.method.is_none() {
        // A broken answer to one of the server's requests: answering it would put an
        // error under an id of the server's own.
        return Decoded::Drop("an answer the server cannot read".to_owned());
    }
    let id = shape.id.filter(|id| id.is_string() || id.is_number());
    invalid_request(id, "not a JSON-RPC 2.0 request, notification or response")
}

/// -32600 for a message with `id`, else a drop.
fn invalid_request(id: Option<serde_json::Value>, why: &str) -> Decoded {
    match id {
        Some(id) => Decoded::Reply(error_message(
            &id,
            -32600,
            &format!("Invalid Request: {why}"),
        )),
        None => Decoded::Drop(format!("an invalid message without an id: {why}")),
    }
}

/// The `Content-Length` of a header line, when it is one: `Some(Ok(n))`, or `Some(Err)`
/// for a value that is not a length up to [`MAX_FRAME_BYTES`].
fn content_length(line: &str) -> Option<Result<usize, String>> {
    let lower = line.to_ascii_lowercase();
    // The last one: a body glued to the next header while resynchronising may hold the
    // words itself.
    let at = lower.rfind("content-length:")?;
    let value = line[at + "content-length:".len()..].trim();
    Some(match value.parse::<usize>() {
        Ok(n) if n <= MAX_FRAME_BYTES => Ok(n),
        Ok(n) => Err(format!(
            "Content-Length {n} is over the limit of {MAX_FRAME_BYTES} bytes"
        )),
        Err(_) => Err(format!("Content-Length `{value}` is not a length")),
    })
}

/// Reads the client's frames from `input` until it ends: decodable ones go to `server`
/// (re-framed), answers to `replies`. Returns when the input ends or breaks (the server
/// then sees its input end).
pub async fn read_client<I, S>(input: I, mut server: S, replies: mpsc::UnboundedSender<Vec<u8>>)
where
    I: AsyncRead + Unpin,
    S: AsyncWrite + Unpin,
{
    let mut input = BufReader::new(input);
    let mut line = Vec::new();
    loop {
        // The header block: lines up to a blank one after a Content-Length.
        let mut length: Option<Result<usize, String>> = None;
        loop {
            line.clear();
            match (&mut input)
                .take(MAX_HEADER_LINE)
                .read_until(b'\n', &mut line)
                .await
            {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            if !line.ends_with(b"\n") && line.len() as u64 >= MAX_HEADER_LINE {
                tracing::warn!("skipped a header line over {MAX_HEADER_LINE} bytes");
                continue;
            }
            let text = String::from_utf8_lossy(&line);
            let text = text.trim_end_matches(['\r', '\n']);
            if text.is_empty() {
                if length.is_some() {
                    break;
                }
                continue;
            }
            if let Some(found) = content_length(text) {
                length = Some(found);
            }
        }
        let n = match length {
            Some(Ok(n)) => n,
            Some(Err(why)) => {
                tracing::warn!("dropped a frame header: {why}");
                continue;
            }
            None => continue,
        };
        let mut body = vec![0; n];
        if input.read_exact(&mut body).await.is_err() {
            tracing::warn!("the input ended inside a frame of {n} bytes");
            return;
        }
        match decode(body) {
            Decoded::Forward(body) => {
                if server.write_all(&frame(&body)).await.is_err() || server.flush().await.is_err() {
                    return;
                }
            }
            Decoded::Reply(message) => {
                tracing::warn!("answered a frame the server cannot decode: {message}");
                let _ = replies.send(frame(message.as_bytes()));
            }
            Decoded::Drop(why) => tracing::warn!("dropped a frame: {why}"),
        }
    }
}

/// Reads the server's frames from `server` and sends each whole to `frames`, until the
/// server's output ends.
pub async fn relay_server<R>(server: R, frames: mpsc::UnboundedSender<Vec<u8>>)
where
    R: AsyncRead + Unpin,
{
    let mut server = BufReader::new(server);
    let mut line = Vec::new();
    loop {
        let mut header = Vec::new();
        let mut length = None;
        loop {
            line.clear();
            match server.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            header.extend_from_slice(&line);
            let text = String::from_utf8_lossy(&line);
            let text = text.trim_end_matches(['\r', '\n']);
            if text.is_empty() {
                break;
            }
            // The server's own frames are trusted: no cap on their length.
            let lower = text.to_ascii_lowercase();
            if let Some(value) = lower.strip_prefix("content-length:") {
                length = value.trim().parse::<usize>().ok();
            }
        }
        let mut body = vec![0; length.unwrap_or(0)];
        if server.read_exact(&mut body).await.is_err() {
            return;
        }
        header.extend_from_slice(&body);
        if frames.send(header).is_err() {
            return;
        }
    }
}

/// Writes the server's frames and this layer's answers to `output`, a whole frame at a
/// time, until the server's frames end (answers left then are written first).
pub async fn write_client<O>(
    mut server_frames: mpsc::UnboundedReceiver<Vec<u8>>,
    mut replies: mpsc::UnboundedReceiver<Vec<u8>>,
    output: O,
) where
    O: AsyncWrite,
{
    tokio::pin!(output);
    loop {
        let next = tokio::select! {
            frame = server_frames.recv() => match frame {
                Some(frame) => frame,
                None => break,
            },
            Some(frame) = replies.recv() => frame,
        };
        if output.write_all(&next).await.is_err() || output.flush().await.is_err() {
            return;
        }
    }
    while let Ok(frame) = replies.try_recv() {
        if output.write_all(&frame).await.is_err() {
            return;
        }
    }
    let _ = output.flush().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_surrogates_become_replacement_characters_and_pairs_stay() {
        assert_eq!(replace_lone_surrogates(r#"{"t":"a\ud83d\ude00b"}"#), None);
        assert_eq!(
            replace_lone_surrogates(r#"{"t":"a\ud800b\udc00c\\ud800"}"#).as_deref(),
            Some(r#"{"t":"a\ufffdb\ufffdc\\ud800"}"#)
        );
        assert_eq!(
            replace_lone_surrogates(r#"{"t":"\uD800\u0041"}"#).as_deref(),
            Some(r#"{"t":"\ufffd\u0041"}"#)
        );
    }

    #[test]
    fn each_body_is_forwarded_answered_or_dropped() {
        let forward = |s: &str| Decoded::Forward(s.as_bytes().to_vec());
        let request = r#"{"jsonrpc":"2.0","id":3,"method":"shutdown"}"#;
        assert_eq!(decode(request.into()), forward(request));
        assert_eq!(
            decode(br#"{"jsonrpc":"2.0","id":4,"method":"x","params":{"t":"\ud800"}}"#.to_vec()),
            forward(r#"{"jsonrpc":"2.0","id":4,"method":"x","params":{"t":"\ufffd"}}"#)
        );
        assert_eq!(
            decode(b"{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":\"\xff\"}".to_vec()),
            forward("{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":\"\u{fffd}\"}")
        );
        assert_eq!(
            decode(br#"{"jsonrpc":"2.0","id":5,"method":"#.to_vec()),
            Decoded::Reply(
                r#"{"error":{"code":-32700,"message":"Parse error: EOF while parsing a value at line 1 column 33"},"id":5,"jsonrpc":"2.0"}"#
                    .into()
            )
        );
        assert_eq!(
            decode(br#"{"jsonrpc":"1.0","id":"a","method":"x"}"#.to_vec()),
            Decoded::Reply(
                r#"{"error":{"code":-32600,"message":"Invalid Request: not a JSON-RPC 2.0 request, notification or response"},"id":"a","jsonrpc":"2.0"}"#
                    .into()
            )
        );
        // A client's answer to a server request, `null` result included, goes through.
        let answer = r#"{"jsonrpc":"2.0","id":0,"result":null}"#;
        assert_eq!(decode(answer.into()), forward(answer));
        // What the server's transport would refuse: a method that is not a string, an id
        // out of range, a number past f64.
        for (body, code) in [
            (r#"{"jsonrpc":"2.0","id":1,"method":5}"#, -32600),
            (r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#, -32600),
            (
                r#"{"jsonrpc":"2.0","id":2,"method":"x","params":[1e400]}"#,
                -32600,
            ),
        ] {
            match decode(body.into()) {
                Decoded::Reply(reply) => {
                    assert!(reply.contains(&format!("\"code\":{code}")), "{reply}")
                }
                other => panic!("{body}: {other:?}"),
            }
        }
        assert!(matches!(decode(b"not json".to_vec()), Decoded::Drop(_)));
        assert!(matches!(decode(b"[1,2]".to_vec()), Decoded::Drop(_)));
        assert_eq!(content_length("Content-Length: 12"), Some(Ok(12)));
        assert_eq!(content_length("content-length:7"), Some(Ok(7)));
        assert!(matches!(content_length("Content-Length: -1"), Some(Err(_))));
        assert_eq!(content_length("Content-Type: x"), None);
    }
}
