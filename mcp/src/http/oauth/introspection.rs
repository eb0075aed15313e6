//! Token introspection (RFC 7662): the issuer itself says whether a token is active, so a
//! token revoked at the issuer is refused on its next request, and opaque (non-JWT)
//! tokens work. folio authenticates at the `introspection_endpoint` of the issuer's
//! metadata with HTTP Basic client credentials (`client_secret_basic`, RFC 6749 §2.3.1)
//! and checks what the answer says: `active`, then `aud` (must name this server's
//! resource URI), `iss` (when given, the issuer) and `exp` (when given).

use base64::Engine;
use serde_json::{Map, Value};

use super::Rejection;
use super::issuer::{FETCH_TIMEOUT, Issuer};

/// The client folio introspects as.
#[derive(Clone, PartialEq, Eq)]
pub struct ClientCredentials {
    /// The client id.
    pub id: String,
    /// The client secret.
    pub secret: String,
}

impl std::fmt::Debug for ClientCredentials {
    /// The id only: the secret never reaches a log.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientCredentials")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// Form-urlencoding of a client id or secret for HTTP Basic (RFC 6749 §2.3.1).
fn form_encode(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// What an introspection endpoint answered about one token.
#[derive(Debug)]
enum Answer {
    /// The answer's JSON object (RFC 7662 §2.2).
    Claims(Map<String, Value>),
    /// `unsupported_token_type`: the issuer does not introspect tokens of this kind.
    Unsupported,
    /// A client error about this request (400, 413, 414, 431): the token is refused,
    /// and the issuer is not taken for unreachable.
    Refused(u16),
}

/// POSTs the token to `endpoint`.
///
/// Errors: a transport failure, a server error, any other status (folio's own
/// credentials refused: 401, 403; 429), or a body that is not a JSON object.
fn post(
    agent: &ureq::Agent,
    endpoint: &str,
    client: &ClientCredentials,
    token: &str,
) -> Result<Answer, String> {
    let basic = base64::engine::general_purpose::STANDARD.encode(format!(
        "{}:{}",
        form_encode(&client.id),
        form_encode(&client.secret)
    ));
    let sent = agent
        .post(endpoint)
        .header("Authorization", &format!("Basic {basic}"))
        .header("Accept", "application/json")
        .send_form([("token", token), ("token_type_hint", "access_token")]);
    let (status, body) = super::issuer::answer(sent, endpoint)?;
    match status {
        200 => serde_json::from_slice(&body)
            .map(Answer::Claims)
            .map_err(|e| format!("{endpoint} answered something that is not a JSON object: {e}")),
        400 if unsupported(&body) => Ok(Answer::Unsupported),
        400 | 413 | 414 | 431 => Ok(Answer::Refused(status)),
        _ => Err(folio_core::service_http::JsonAnswer { status, body }.status_message(endpoint)),
    }
}

/// Whether an error answer is `unsupported_token_type`: the issuer does not introspect
/// tokens of this kind (some refuse their own JWTs, which their keys verify instead).
fn unsupported(body: &[u8]) -> bool {
    serde_json::from_slice::<Value>(body)
        .ok()
        .is_some_and(|v| v.get("error").and_then(Value::as_str) == Some("unsupported_token_type"))
}

/// Whether `aud` (a string or an array of strings) names `audience`.
fn names(aud: Option<&Value>, audience: &str) -> bool {
    match aud {
        Some(Value::String(one)) => one == audience,
        Some(Value::Array(many)) => many.iter().any(|a| a.as_str() == Some(audience)),
        _ => false,
    }
}

/// What the answer of an introspection says of the token: its claims when it is active,
/// for `audience`, of `issuer` and in date (`now` and `leeway` in seconds since the epoch).
///
/// Errors: [`Rejection::Invalid`] with why.
pub fn judge(
    answer: Map<String, Value>,
    issuer: &str,
    audience: &str,
    now: u64,
    leeway: u64,
) -> Result<Map<String, Value>, Rejection> {
    if answer.get("active") != Some(&Value::Bool(true)) {
        return Err(Rejection::Invalid(
            "the issuer says the token is not active (expired, revoked or unknown)".into(),
        ));
    }
    if !names(answer.get("aud"), audience) {
        return Err(Rejection::Invalid(format!(
            "the token is not for this server (its aud is not {audience})"
        )));
    }
    if let Some(iss) = answer.get("iss")
        && iss.as_str() != Some(issuer)
    {
        return Err(Rejection::Invalid(
            "the token's iss is not its issuer".into(),
        ));
    }
    let seconds = |claim: &str| match answer.get(claim) {
        None => Ok(None),
        Some(v) => v.as_u64().map(Some).ok_or_else(|| {
            Rejection::Invalid(format!("the issuer's {claim} is not a number of seconds"))
        }),
    };
    if let Some(exp) = seconds("exp")?
        && exp.saturating_add(leeway) < now
    {
        return Err(Rejection::Invalid("the token has expired".into()));
    }
    if let Some(nbf) = seconds("nbf")?
        && nbf > now.saturating_add(leeway)
    {
        return Err(Rejection::Invalid(
            "the token is not valid yet (nbf)".into(),
        ));
    }
    if answer
        .get("token_type")
        .and_then(Value::as_str)
        .is_some_and(|t| t.eq_ignore_ascii_case("refresh_token"))
    {
        return Err(Rejection::Invalid(
            "a refresh token is not an access token".into(),
        ));
    }
    Ok(answer)
}

/// Introspects `token` at `issuer`: its claims, or `None` when the issuer answers that
/// it does not introspect tokens of this kind (`unsupported_token_type`).
///
/// Errors: [`Rejection::Invalid`] when the issuer does not vouch for it (see [`judge`]),
/// [`Rejection::Unavailable`] when it cannot be asked (no metadata, no
/// `introspection_endpoint`, a transport failure or another error status).
pub async fn introspect(
    issuer: &Issuer,
    client: &ClientCredentials,
    token: &str,
    audience: &str,
    leeway: u64,
) -> Result<Option<Map<String, Value>>, Rejection> {
    if let Some(why) = issuer.introspection_down() {
        return Err(Rejection::Unavailable(why));
    }
    let metadata = issuer.metadata().await.map_err(Rejection::Unavailable)?;
    let endpoint = metadata.introspection_endpoint.ok_or_else(|| {
        Rejection::Unavailable(format!(
            "the metadata of `{}` has no introspection_endpoint",
            issuer.id
        ))
    })?;
    let loopback = super::issuer::check_url(&endpoint, "the introspection endpoint")
        .map_err(Rejection::Unavailable)?;
    let agent = folio_core::service_http::agent(loopback, FETCH_TIMEOUT);
    let (client, token_owned) = (client.clone(), token.to_owned());
    let answer =
        tokio::task::spawn_blocking(move || post(&agent, &endpoint, &client, &token_owned))
            .await
            .unwrap_or_else(|e| Err(format!("the introspection stopped: {e}")));
    // Only a failure of the issuer holds introspection back, never an answer about one
    // token (a caller's junk must not switch OAuth off for everyone).
    issuer.introspection_result(answer.as_ref().err().cloned());
    let now = jsonwebtoken::get_current_timestamp();
    match answer.map_err(Rejection::Unavailable)? {
        Answer::Claims(answer) => judge(answer, &issuer.id, audience, now, leeway).map(Some),
        Answer::Unsupported => Ok(None),
        Answer::Refused(status) => Err(Rejection::Invalid(format!(
            "the issuer refused to introspect the token (HTTP {status})"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn answer(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn an_introspection_answer_vouches_only_for_an_active_token_for_this_server() {
        let aud = "https://kb.example.com/mcp";
        let iss = "https://id.example.com";
        let ok =
            json!({"active": true, "aud": [aud, "other"], "iss": iss, "exp": 1000, "sub": "a"});
        assert!(judge(answer(ok.clone()), iss, aud, 1000, 0).is_ok());
        assert!(
            judge(answer(ok.clone()), iss, aud, 1030, 60).is_ok(),
            "within the skew"
        );
        let refused = |v: Value, now: u64| match judge(answer(v), iss, aud, now, 0) {
            Err(Rejection::Invalid(why)) => why,
            other => panic!("{other:?}"),
        };
        assert_eq!(refused(ok.clone(), 1001), "the token has expired");
        assert_eq!(
            refused(json!({"active": true, "aud": aud, "nbf": "9999999999"}), 0),
            "the issuer's nbf is not a number of seconds"
        );
        assert_eq!(
            refused(
                json!({"active": true, "aud": aud, "token_type": "refresh_token"}),
                0
            ),
            "a refresh token is not an access token"
        );
        assert_eq!(
            refused(json!({"active": false}), 0),
            "the issuer says the token is not active (expired, revoked or unknown)"
        );
        assert_eq!(
            refused(json!({"active": "true", "aud": aud}), 0),
            "the issuer says the token is not active (expired, revoked or unknown)"
        );
        assert_eq!(
            refused(json!({"active": true}), 0),
            "the token is not for this server (its aud is not https://kb.example.com/mcp)"
        );
        assert_eq!(
            refused(
                json!({"active": true, "aud": aud, "iss": "https://evil.example"}),
                0
            ),
            "the token's iss is not its issuer"
        );
    }

    #[test]
    fn basic_credentials_are_form_encoded_first() {
        assert_eq!(form_encode("folio kb:1"), "folio+kb%3A1");
    }
}
