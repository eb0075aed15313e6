//! The JSON-RPC message a POST to `/mcp` carries, read and checked before rmcp sees it.
//!
//! rmcp answers a body that is not JSON, or not a JSON-RPC message, with HTTP 415 and a
//! plain-text body. JSON-RPC 2.0 (§5.1) names both errors and the MCP transport
//! specification asks for HTTP 400 with a JSON-RPC error: here a body that does not parse
//! gets 400 with `-32700` (parse error) and `id: null`, and JSON that is not one JSON-RPC
//! 2.0 message (a batch, no `jsonrpc: "2.0"`, neither a method nor a result or error, both
//! a result and an error, an `id` that is neither a string nor a signed 64-bit integer,
//! `params` that are not an object) gets 400 with `-32600` (invalid request),
//! carrying the message's `id` when it has a usable one. What passes is handed on
//! unchanged, with what the session layer needs to know of it ([`Message`]).

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// JSON-RPC 2.0 parse error (§5.1).
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC 2.0 invalid request (§5.1).
pub const INVALID_REQUEST: i64 = -32600;

/// What one checked message is.
#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    /// A request: it will be answered under `id`, a string or an integer.
    Request {
        /// The request's id, as sent.
        id: Value,
        /// The method, e.g. `initialize` or `tools/call`.
        method: String,
        /// For `tools/call`, the tool's name (`params.name`) when it is a string.
        tool: Option<String>,
        /// The -32602 reply line when the params of a known method have the wrong shape
        /// (`crate::transport::invalid_params`, the stdio filter's rule).
        invalid_params: Option<String>,
    },
    /// A notification (a method, no id): nothing answers it.
    Notification,
    /// The client's answer to a request of the server (`result` or `error`).
    Response,
}

impl Message {
    /// True for an `initialize` request (the one that opens a session).
    pub fn is_initialize(&self) -> bool {
        matches!(self, Message::Request { method, .. } if method == "initialize")
    }
}

/// Why a body is refused: the JSON-RPC error code, its message and the id to answer under.
#[derive(Clone, Debug, PartialEq)]
pub struct Refusal {
    /// [`PARSE_ERROR`] or [`INVALID_REQUEST`].
    pub code: i64,
    /// What is wrong, for the client's developer.
    pub message: String,
    /// The message's id when it has a usable one, else `null`.
    pub id: Value,
}

impl IntoResponse for Refusal {
    /// HTTP 400 with the JSON-RPC error object as the body.
    fn into_response(self) -> Response {
        let body = json!({
            "jsonrpc": "2.0",
            "id": self.id,
            "error": {"code": self.code, "message": self.message},
        });
        (StatusCode::BAD_REQUEST, Json(body)).into_response()
    }
}

/// The members of a JSON-RPC message, read only to refuse one given twice (serde refuses
/// a repeated field of a struct).
#[derive(serde::Deserialize)]
#[allow(dead_code)]
struct Members {
    jsonrpc: Option<serde::de::IgnoredAny>,
    id: Option<serde::de::IgnoredAny>,
    method: Option<serde::de::IgnoredAny>,
    params: Option<Params>,
    result: Option<serde::de::IgnoredAny>,
    error: Option<serde::de::IgnoredAny>,
}

/// The members of `params` MCP's requests route by, read only to refuse one given twice.
#[derive(serde::Deserialize)]
#[allow(dead_code)]
struct Params {
    name: Option<serde::de::IgnoredAny>,
    arguments: Option<serde::de::IgnoredAny>,
    uri: Option<serde::de::IgnoredAny>,
    cursor: Option<serde::de::IgnoredAny>,
}

/// Checks `body` as one JSON-RPC 2.0 message.
///
/// Errors: a [`Refusal`] with [`PARSE_ERROR`] when `body` is not JSON, with
/// [`INVALID_REQUEST`] when it is JSON but not one JSON-RPC 2.0 message.
pub fn check(body: &[u8]) -> Result<Message, Refusal> {
    let value: Value = serde_json::from_slice(body).map_err(|e| Refusal {
        code: PARSE_ERROR,
        message: format!("the body is not JSON: {e}"),
        id: Value::Null,
    })?;
    let invalid_params = crate::transport::invalid_params(&value);
    let invalid = |message: &str, id: Value| Refusal {
        code: INVALID_REQUEST,
        message: message.to_owned(),
        id,
    };
    // A member given twice: JSON keeps the last, rmcp refuses the message (HTTP 415).
    if value.is_object()
        && serde_json::from_slice::<Members>(body)
            .is_err_and(|e| e.to_string().starts_with("duplicate field"))
    {
        let id = match value.get("id") {
            Some(id @ Value::String(_)) => id.clone(),
            Some(id @ Value::Number(n)) if n.is_i64() => id.clone(),
            _ => Value::Null,
        };
        return Err(Refusal {
            code: INVALID_REQUEST,
            message: "a member of the message is given twice".into(),
            id,
        });
    }
    let Value::Object(object) = value else {
        let what = if value.is_array() {
            "a batch (JSON array) is not accepted: send one JSON-RPC message per request"
        } else {
            "the body is not a JSON-RPC message (a JSON object)"
        };
        return Err(invalid(what, Value::Null));
    };
    let id = object.get("id").cloned();
    // rmcp reads a numeric id as a signed 64-bit integer.
    let usable_id = match &id {
        Some(Value::String(_)) => id.clone(),
        Some(Value::Number(n)) if n.is_i64() => id.clone(),
        _ => None,
    };
    let answer_id = usable_id.clone().unwrap_or(Value::Null);
    if object.get("jsonrpc") != Some(&Value::String("2.0".into())) {
        return Err(invalid("`jsonrpc` must be \"2.0\"", answer_id));
    }
    if let Some(params) = object.get("params")
        && !params.is_object()
    {
        return Err(invalid(
            "`params` must be an object (MCP names every parameter)",
            answer_id,
        ));
    }
    match object.get("method") {
        Some(Value::String(method)) => match (id, usable_id) {
            (None, _) => Ok(Message::Notification),
            (Some(_), Some(id)) => Ok(Message::Request {
                id,
                method: method.clone(),
                tool: (method == "tools/call")
                    .then(|| {
                        object
                            .get("params")?
                            .get("name")?
                            .as_str()
                            .map(str::to_owned)
                    })
                    .flatten(),
                invalid_params,
            }),
            (Some(_), None) => Err(invalid(
                "a request's `id` must be a string or a signed 64-bit integer",
                Value::Null,
            )),
        },
        Some(_) => Err(invalid("`method` must be a string", answer_id)),
        None if object.contains_key("result") != object.contains_key("error") => {
            if object.get("error").is_some_and(|e| !e.is_object()) {
                return Err(invalid("`error` must be an object", answer_id));
            }
            Ok(Message::Response)
        }
        None if object.contains_key("result") => Err(invalid(
            "an answer has either a `result` or an `error`, not both",
            answer_id,
        )),
        None => Err(invalid(
            "the message has neither a `method` nor a `result` or `error`",
            answer_id,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_notifications_and_responses_pass() {
        assert_eq!(
            check(br#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#),
            Ok(Message::Request {
                id: json!(7),
                method: "tools/list".into(),
                tool: None,
                invalid_params: None,
            })
        );
        assert_eq!(
            check(br#"{"jsonrpc":"2.0","id":"a","method":"initialize","params":{}}"#),
            Ok(Message::Request {
                id: json!("a"),
                method: "initialize".into(),
                tool: None,
                invalid_params: None,
            })
        );
        assert_eq!(
            check(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"kb_patch","arguments":{}}}"#),
            Ok(Message::Request {
                id: json!(1),
                method: "tools/call".into(),
                tool: Some("kb_patch".into()),
                invalid_params: None,
            })
        );
        assert!(
            check(br#"{"jsonrpc":"2.0","id":"a","method":"initialize"}"#)
                .unwrap()
                .is_initialize()
        );
        assert_eq!(
            check(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Ok(Message::Notification)
        );
        assert_eq!(
            check(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#),
            Ok(Message::Response)
        );
    }

    #[test]
    fn what_is_not_json_is_a_parse_error() {
        let refusal = check(b"{\"jsonrpc\":\"2.0\",").unwrap_err();
        assert_eq!((refusal.code, refusal.id), (PARSE_ERROR, Value::Null));
        assert_eq!(
            refusal.message,
            "the body is not JSON: EOF while parsing a value at line 1 column 17"
        );
        assert_eq!(check(b"\xff").unwrap_err().code, PARSE_ERROR);
    }

    #[test]
    fn json_that_is_not_one_message_is_an_invalid_request() {
        let refused = |body: &[u8]| {
            let r = check(body).unwrap_err();
            (r.code, r.id, r.message)
        };
        for twice in [
            &br#"{"jsonrpc":"2.0","id":3,"method":"ping","method":"tools/list"}"#[..],
            br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"kb_read","name":"kb_delete"}}"#,
        ] {
            assert_eq!(
                refused(twice),
                (
                    INVALID_REQUEST,
                    json!(3),
                    "a member of the message is given twice".into()
                )
            );
        }
        assert_eq!(
            refused(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#),
            (
                INVALID_REQUEST,
                Value::Null,
                "a batch (JSON array) is not accepted: send one JSON-RPC message per request"
                    .into()
            )
        );
        assert_eq!(
            refused(br#"{"id":4,"method":"ping"}"#),
            (
                INVALID_REQUEST,
                json!(4),
                "`jsonrpc` must be \"2.0\"".into()
            )
        );
        assert_eq!(
            refused(br#"{"jsonrpc":"2.0","id":4,"method":5}"#),
            (
                INVALID_REQUEST,
                json!(4),
                "`method` must be a string".into()
            )
        );
        assert_eq!(
            refused(br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#),
            (
                INVALID_REQUEST,
                Value::Null,
                "a request's `id` must be a string or a signed 64-bit integer".into()
            )
        );
        assert_eq!(
            refused(br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#).0,
            INVALID_REQUEST
        );
        assert_eq!(
            refused(br#"{"jsonrpc":"2.0","id":"x"}"#),
            (
                INVALID_REQUEST,
                json!("x"),
                "the message has neither a `method` nor a `result` or `error`".into()
            )
        );
        assert_eq!(refused(b"42").0, INVALID_REQUEST);
        // What rmcp cannot read either: an id past i64, params that are not an object,
        // an answer with both a result and an error.
        assert_eq!(
            refused(br#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}"#),
            (
                INVALID_REQUEST,
                Value::Null,
                "a request's `id` must be a string or a signed 64-bit integer".into()
            )
        );
        assert_eq!(
            refused(br#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":[]}"#),
            (
                INVALID_REQUEST,
                json!(3),
                "`params` must be an object (MCP names every parameter)".into()
            )
        );
        assert_eq!(
            refused(br#"{"jsonrpc":"2.0","id":3,"result":{},"error":{"code":1,"message":"x"}}"#),
            (
                INVALID_REQUEST,
                json!(3),
                "an answer has either a `result` or an `error`, not both".into()
            )
        );
        assert_eq!(
            refused(br#"{"jsonrpc":"2.0","id":3,"error":5}"#).2,
            "`error` must be an object"
        );
    }
}
