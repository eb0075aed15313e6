//! The stdio transport with JSON-RPC errors for malformed input.
//!
//! rmcp's line transport drops a line it cannot decode without answering, so a client
//! that sent broken JSON would wait forever. This filter sits between stdin and rmcp:
//! each line that decodes as a client JSON-RPC message goes on to rmcp; anything else is
//! answered with -32700 (not JSON) or -32600 (JSON, but not a request or notification),
//! carrying the request's `id` when one can be read. Both answers and rmcp's own output
//! go to stdout through one writer, one line at a time.

use rmcp::model::ClientJsonRpcMessage;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// The reply to a line that is not a client message, if it needs one.
pub fn reply_to_malformed(line: &str) -> Option<String> {
    if line.trim().is_empty() {
        return None;
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
        let mut lines = BufReader::new(input).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            match reply_to_malformed(&line) {
                Some(reply) => {
                    tracing::warn!("malformed JSON-RPC input answered with an error");
                    if errors.send(reply).await.is_err() {
                        break;
                    }
                }
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
        while let Some(line) = rx.recv().await {
            if output.write_all(line.as_bytes()).await.is_err()
                || output.write_all(b"\n").await.is_err()
                || output.flush().await.is_err()
            {
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
}
