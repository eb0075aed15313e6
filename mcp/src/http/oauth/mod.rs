//! `folio mcp --http` as an OAuth 2.1 resource server, as the MCP authorization
//! specification asks: access tokens issued by the authorization servers named in
//! `[mcp.http.oauth] issuers` are accepted beside the token file's own tokens.
//!
//! A token is checked either here, as a JWT against the issuer's published keys
//! ([`jwt`]), or, when `introspection_client_id` is set, by asking the issuer
//! ([`introspection`], RFC 7662). Either way it must be for this server (`aud` is the
//! resource URI, RFC 8707) and in date. Its scopes (`scope`, space-separated, or `scp`)
//! map to folio's three ([`ScopeNames`]; the widest granted wins) and one claim (`sub` by
//! default), qualified by the issuer (`{value}@{issuer}`), is the caller's agent id.
//! Issuers are discovered and their keys fetched by [`issuer`].

pub mod introspection;
pub mod issuer;
pub mod jwt;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use folio_core::config::tokens::Scope;
use folio_core::config::user::UserOAuthConfig;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::caller::Caller;
use introspection::ClientCredentials;
use issuer::Issuer;

/// Environment variable that overrides `[mcp.http.oauth] introspection_client_secret`.
pub const CLIENT_SECRET_ENV: &str = "FOLIO_OAUTH_CLIENT_SECRET";

/// The most clock skew `leeway_seconds` may allow.
pub const MAX_LEEWAY_SECONDS: u64 = 300;

/// Why a bearer token that is not one of the token file's is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rejection {
    /// Not a valid token of an accepted issuer for this server: 401 `invalid_token`,
    /// with why as `error_description`.
    Invalid(String),
    /// Valid, but it grants none of folio's scopes: 403 `insufficient_scope`.
    NoScope,
    /// The issuer could not be asked (discovery, keys, introspection): 503.
    Unavailable(String),
}

/// The scope names an issuer grants for folio's three scopes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScopeNames {
    /// Grants [`Scope::Read`].
    pub read: String,
    /// Grants [`Scope::Contribute`].
    pub contribute: String,
    /// Grants [`Scope::ReadWrite`].
    pub read_write: String,
}

impl Default for ScopeNames {
    /// folio's own names: `read`, `contribute`, `read-write`.
    fn default() -> ScopeNames {
        ScopeNames {
            read: Scope::Read.as_str().into(),
            contribute: Scope::Contribute.as_str().into(),
            read_write: Scope::ReadWrite.as_str().into(),
        }
    }
}

impl ScopeNames {
    /// The name granting `scope`.
    pub fn name(&self, scope: Scope) -> &str {
        match scope {
            Scope::Read => &self.read,
            Scope::Contribute => &self.contribute,
            Scope::ReadWrite => &self.read_write,
        }
    }

    /// The widest of folio's scopes that `granted` holds a name of (read-write, then
    /// contribute, then read).
    pub fn widest(&self, granted: &[&str]) -> Option<Scope> {
        [Scope::ReadWrite, Scope::Contribute, Scope::Read]
            .into_iter()
            .find(|s| granted.contains(&self.name(*s)))
    }
}

/// The scopes a token's claims grant: `scope` (a space-separated string, RFC 8693 §4.2,
/// RFC 9068 §2.2.3), or `scp` (a string or an array of strings, as Entra ID and Okta send).
pub fn granted(claims: &Map<String, Value>) -> Vec<&str> {
    let mut out = Vec::new();
    for key in ["scope", "scp"] {
        match claims.get(key) {
            Some(Value::String(s)) => out.extend(s.split_ascii_whitespace()),
            Some(Value::Array(a)) => out.extend(a.iter().filter_map(Value::as_str)),
            _ => {}
        }
    }
    out
}

/// `[mcp.http.oauth]`, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// Issuer identifiers.
    pub issuers: Vec<String>,
    /// The audience tokens must name; `None`: the request's resource URI.
    pub audience: Option<String>,
    /// Scope names.
    pub scopes: ScopeNames,
    /// The claims whose first present one is the agent id: the configured one, else
    /// `sub`, then `client_id` (what RFC 7662 answers of a client-credentials token).
    pub agent_claims: Vec<String>,
    /// Allowed clock skew, seconds.
    pub leeway: u64,
    /// Introspect instead of checking JWTs here.
    pub introspection: Option<ClientCredentials>,
}

impl Settings {
    /// The settings of `[mcp.http.oauth]`, `None` when the table is absent or empty; the
    /// client secret from [`CLIENT_SECRET_ENV`] when set (`secret_from_env`).
    ///
    /// Errors (naming the key): other keys without `issuers`; an issuer that is not https
    /// (or http on this machine), carries credentials, a query or a fragment, or is listed
    /// twice; an empty `audience` or `agent_claim`; a scope name that is not one RFC 6749
    /// scope token, or names two scopes; `leeway_seconds` over [`MAX_LEEWAY_SECONDS`]; an
    /// introspection client id without a secret, a secret without an id, or introspection
    /// with more than one issuer (the secret would be sent to issuers a token does not
    /// come from).
    pub fn from_config(
        config: &UserOAuthConfig,
        secret_from_env: Option<String>,
    ) -> Result<Option<Settings>, String> {
        if config.issuers.is_empty() {
            if *config != UserOAuthConfig::default() {
                return Err("[mcp.http.oauth] names no issuers: list the authorization servers whose tokens are accepted in `issuers`, or remove the table".into());
            }
            return Ok(None);
        }
        for (i, url) in config.issuers.iter().enumerate() {
            issuer::check_issuer(url)?;
            if config.issuers[..i].contains(url) {
                return Err(format!("[mcp.http.oauth] issuers lists `{url}` twice"));
            }
        }
        let text = |value: &Option<String>, key: &str| match value {
            Some(v) if v.trim().is_empty() => Err(format!(
                "[mcp.http.oauth] {key} is empty: remove it for the default"
            )),
            v => Ok(v.clone()),
        };
        let audience = text(&config.audience, "audience")?;
        let agent_claim = text(&config.agent_claim, "agent_claim")?;
        let defaults = ScopeNames::default();
        let pick = |value: &Option<String>, default: &str, key: &str| {
            let name = value.clone().unwrap_or_else(|| default.to_owned());
            // RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ).
            if name.is_empty()
                || !name
                    .bytes()
                    .all(|b| (0x21..=0x7e).contains(&b) && b != b'"' && b != b'\\')
            {
                return Err(format!(
                    "[mcp.http.oauth] {key} = `{name}` is not a scope name (printable ASCII, no spaces, quotes or backslashes: RFC 6749 §3.3)"
                ));
            }
            Ok(name)
        };
        let scopes = ScopeNames {
            read: pick(&config.read_scope, &defaults.read, "read_scope")?,
            contribute: pick(
                &config.contribute_scope,
                &defaults.contribute,
                "contribute_scope",
            )?,
            read_write: pick(
                &config.read_write_scope,
                &defaults.read_write,
                "read_write_scope",
            )?,
        };
        if scopes.read == scopes.contribute
            || scopes.read == scopes.read_write
            || scopes.contribute == scopes.read_write
        {
            return Err("[mcp.http.oauth] read_scope, contribute_scope and read_write_scope must be three different names".into());
        }
        let leeway = config.leeway_seconds.unwrap_or(60);
        if leeway > MAX_LEEWAY_SECONDS {
            return Err(format!(
                "[mcp.http.oauth] leeway_seconds = {leeway} is more than {MAX_LEEWAY_SECONDS}: an expired token would be taken for that long"
            ));
        }
        let introspection = match (
            &config.introspection_client_id,
            &config.introspection_client_secret,
        ) {
            (None, Some(_)) => {
                return Err("[mcp.http.oauth] introspection_client_secret is set without introspection_client_id".into());
            }
            (None, None) => None,
            (Some(id), file_secret) => {
                if config.issuers.len() > 1 {
                    return Err("[mcp.http.oauth] introspection works with one issuer: its client secret would be sent to issuers a token does not come from (list one issuer, or run one server per issuer)".into());
                }
                let secret = secret_from_env
                    .or_else(|| file_secret.clone())
                    .ok_or_else(|| {
                        format!("[mcp.http.oauth] introspection_client_id is set but no secret: set introspection_client_secret or {CLIENT_SECRET_ENV}")
                    })?;
                Some(ClientCredentials {
                    id: id.clone(),
                    secret,
                })
            }
        };
        Ok(Some(Settings {
            issuers: config.issuers.clone(),
            audience,
            scopes,
            agent_claims: match agent_claim {
                Some(claim) => vec![claim],
                None => vec!["sub".to_owned(), "client_id".to_owned()],
            },
            leeway,
            introspection,
        }))
    }
}

/// How long a token the issuer's introspection refused is refused again without asking.
pub const REFUSED_FOR: Duration = Duration::from_secs(60);

/// The most refused tokens remembered (by SHA-256); past it, the expired ones are
/// forgotten, and all of them when none has expired.
const MAX_REFUSED: usize = 10_000;

/// The longest agent claim value taken, in characters.
pub const MAX_AGENT_CHARS: usize = 128;

/// The longest access token checked, in bytes (longer ones are refused before any check,
/// and never sent to an issuer).
pub const MAX_TOKEN_BYTES: usize = 16 * 1024;

/// Introspections folio asks of its issuer per second at most (bursts of twice as many):
/// a flood of made-up tokens cannot pass on to the issuer; past it, `503`.
pub const INTROSPECTIONS_PER_SECOND: u32 = 20;

/// Whether `c` may stand in an agent id: not a control character, and not a character
/// that breaks a line or reorders or hides text (line and paragraph separators,
/// bidirectional controls, zero-width characters).
fn agent_char(c: char) -> bool {
    !(c.is_control()
        || matches!(c, '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}'))
}

/// The accepted issuers and how their tokens are checked.
#[derive(Debug)]
pub struct OAuth {
    /// The settings.
    pub settings: Settings,
    issuers: Vec<Arc<Issuer>>,
    /// Tokens introspection refused lately (SHA-256 → when, and why).
    refused: Mutex<HashMap<[u8; 32], (Instant, String)>>,
    /// The rate of introspections ([`INTROSPECTIONS_PER_SECOND`]).
    introspections: governor::DefaultDirectRateLimiter,
}

impl OAuth {
    /// Accepts the tokens of `settings.issuers` (nothing fetched until a token comes).
    ///
    /// Errors: an issuer URL that [`Issuer::new`] refuses.
    pub fn new(settings: Settings) -> Result<OAuth, String> {
        let issuers = settings
            .issuers
            .iter()
            .map(|id| Issuer::new(id).map(Arc::new))
            .collect::<Result<_, _>>()?;
        let per_second = std::num::NonZeroU32::new(INTROSPECTIONS_PER_SECOND).expect("non-zero");
        let burst = std::num::NonZeroU32::new(2 * INTROSPECTIONS_PER_SECOND).expect("non-zero");
        Ok(OAuth {
            settings,
            issuers,
            refused: Mutex::new(HashMap::new()),
            introspections: governor::RateLimiter::direct(
                governor::Quota::per_second(per_second).allow_burst(burst),
            ),
        })
    }

    /// The audience a token must name: the configured one, else `resource`.
    pub fn audience<'a>(&'a self, resource: &'a str) -> &'a str {
        self.settings.audience.as_deref().unwrap_or(resource)
    }

    /// The caller `token` stands for, when an accepted issuer vouches for it for
    /// `resource` (this server's resource URI as the request reached it).
    ///
    /// Errors: a [`Rejection`].
    pub async fn verify(&self, token: &str, resource: &str) -> Result<Caller, Rejection> {
        if token.len() > MAX_TOKEN_BYTES {
            return Err(Rejection::Invalid(format!(
                "the token is longer than {MAX_TOKEN_BYTES} bytes"
            )));
        }
        let audience = self.audience(resource);
        let leeway = self.settings.leeway;
        let (claims, issuer) = if jwt::looks_like_jwt(token) {
            let claimed = jwt::claimed_issuer(token)?;
            let issuer = self
                .issuers
                .iter()
                .find(|i| i.id == claimed)
                .ok_or_else(|| {
                    Rejection::Invalid(format!(
                        "the token was issued by {}, which this server does not accept",
                        claimed.escape_debug().take(200).collect::<String>()
                    ))
                })?;
            let introspected = match &self.settings.introspection {
                Some(client) => self.introspect(issuer, client, token, audience).await?,
                None => None,
            };
            // Without introspection, or from an issuer that does not introspect its own
            // JWTs: checked against its keys.
            let claims = match introspected {
                Some(claims) => claims,
                None => jwt::verify(issuer, token, audience, leeway).await?,
            };
            (claims, issuer)
        } else {
            // Introspection is configured with one issuer only (`Settings::from_config`).
            let (Some(client), Some(issuer)) = (&self.settings.introspection, self.issuers.first())
            else {
                return Err(Rejection::Invalid(
                    "not a token of this server's token file, nor a JWT access token (opaque tokens need introspection: [mcp.http.oauth] introspection_client_id)".into(),
                ));
            };
            let claims = self
                .introspect(issuer, client, token, audience)
                .await?
                .ok_or_else(|| {
                    Rejection::Invalid(format!(
                        "{} does not introspect this kind of token",
                        issuer.id
                    ))
                })?;
            (claims, issuer)
        };
        self.caller(&claims, &issuer.id)
    }

    /// [`introspection::introspect`], with the tokens the issuer refused in the last
    /// [`REFUSED_FOR`] refused again without asking it (a caller sending the same bad
    /// token again and again does not reach the issuer).
    async fn introspect(
        &self,
        issuer: &Issuer,
        client: &ClientCredentials,
        token: &str,
        audience: &str,
    ) -> Result<Option<Map<String, Value>>, Rejection> {
        let key: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        {
            let refused = self.refused.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((at, why)) = refused.get(&key)
                && at.elapsed() < REFUSED_FOR
            {
                return Err(Rejection::Invalid(why.clone()));
            }
        }
        if self.introspections.check().is_err() {
            return Err(Rejection::Unavailable(format!(
                "more than {INTROSPECTIONS_PER_SECOND} tokens a second to introspect: the issuer is spared the rest"
            )));
        }
        let answer =
            introspection::introspect(issuer, client, token, audience, self.settings.leeway).await;
        if let Err(Rejection::Invalid(why)) = &answer {
            let mut refused = self.refused.lock().unwrap_or_else(|e| e.into_inner());
            if refused.len() >= MAX_REFUSED {
                refused.retain(|_, (at, _)| at.elapsed() < REFUSED_FOR);
                if refused.len() >= MAX_REFUSED {
                    refused.clear();
                }
            }
            refused.insert(key, (Instant::now(), why.clone()));
        }
        answer
    }

    /// The caller of verified `claims` of `issuer`: its agent id is the agent claim's
    /// value qualified by the issuer, `{value}@{issuer}`, so that no identity of one
    /// issuer is taken for another issuer's or for a token file's agent (whose names
    /// cannot hold `:` or `/`).
    ///
    /// Errors ([`Rejection::Invalid`]): no agent claim, or one that is not 1 to
    /// [`MAX_AGENT_CHARS`] characters without surrounding spaces of which
    /// [`agent_char`] takes every one; both `scope` and `scp`. None of folio's scopes:
    /// [`Rejection::NoScope`].
    fn caller(&self, claims: &Map<String, Value>, issuer: &str) -> Result<Caller, Rejection> {
        let names = self.settings.agent_claims.join(" or ");
        let value = self
            .settings
            .agent_claims
            .iter()
            .find_map(|claim| match claims.get(claim) {
                Some(Value::String(s)) => Some(s.clone()),
                Some(Value::Number(n)) => Some(n.to_string()),
                _ => None,
            })
            .ok_or_else(|| {
                Rejection::Invalid(format!(
                    "the token has no {names} claim to name its agent ([mcp.http.oauth] agent_claim)"
                ))
            })?;
        let chars = value.chars().count();
        if chars == 0
            || chars > MAX_AGENT_CHARS
            || value.trim() != value
            || !value.chars().all(agent_char)
        {
            return Err(Rejection::Invalid(format!(
                "the token's {names} claim is not an agent id (1 to {MAX_AGENT_CHARS} characters, no control, line-breaking, bidirectional or zero-width characters, no surrounding spaces)"
            )));
        }
        if claims.contains_key("scope") && claims.contains_key("scp") {
            return Err(Rejection::Invalid(
                "the token has both a scope and an scp claim; folio reads one".into(),
            ));
        }
        let agent = format!("{value}@{issuer}");
        let scope = self
            .settings
            .scopes
            .widest(&granted(claims))
            .ok_or(Rejection::NoScope)?;
        Ok(Caller {
            token_id: format!("oauth:{agent}"),
            agent,
            scope,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_widest_granted_scope_wins_under_the_configured_names() {
        let names = ScopeNames {
            read: "kb:read".into(),
            contribute: "kb:contribute".into(),
            read_write: "kb:write".into(),
        };
        let claims = |v: Value| v.as_object().unwrap().clone();
        let c = claims(json!({"scope": "openid kb:read kb:write"}));
        assert_eq!(names.widest(&granted(&c)), Some(Scope::ReadWrite));
        let c = claims(json!({"scp": ["kb:read"]}));
        assert_eq!(names.widest(&granted(&c)), Some(Scope::Read));
        let c = claims(json!({"scp": "kb:contribute openid"}));
        assert_eq!(names.widest(&granted(&c)), Some(Scope::Contribute));
        let c = claims(json!({"scope": "read openid"}));
        assert_eq!(
            names.widest(&granted(&c)),
            None,
            "folio's own name is not kb:read"
        );
    }

    fn config(toml: &str) -> UserOAuthConfig {
        folio_core::config::user::UserConfig::from_toml(&format!("[mcp.http.oauth]\n{toml}"))
            .unwrap()
            .mcp
            .http
            .oauth
    }

    #[test]
    fn settings_are_checked_key_by_key() {
        assert!(Settings::from_config(&config(""), None).unwrap().is_none());
        let s = Settings::from_config(&config("issuers = [\"https://id.example.com\"]"), None)
            .unwrap()
            .unwrap();
        assert_eq!(s.scopes, ScopeNames::default());
        assert_eq!(
            (s.agent_claims.as_slice(), s.leeway),
            (&["sub".to_owned(), "client_id".to_owned()][..], 60)
        );
        let err = |t: &str| Settings::from_config(&config(t), None).unwrap_err();
        assert_eq!(
            err("issuers = [\"https://a\"]\nread_scope = \"kb read\""),
            "[mcp.http.oauth] read_scope = `kb read` is not a scope name (printable ASCII, no spaces, quotes or backslashes: RFC 6749 §3.3)"
        );
        assert_eq!(
            err("issuers = [\"https://a\"]\nread_write_scope = \"read\""),
            "[mcp.http.oauth] read_scope, contribute_scope and read_write_scope must be three different names"
        );
        assert_eq!(
            err("issuers = [\"https://a\"]\nleeway_seconds = 301"),
            "[mcp.http.oauth] leeway_seconds = 301 is more than 300: an expired token would be taken for that long"
        );
        assert_eq!(
            err("issuers = [\"https://a\"]\nintrospection_client_id = \"folio\""),
            "[mcp.http.oauth] introspection_client_id is set but no secret: set introspection_client_secret or FOLIO_OAUTH_CLIENT_SECRET"
        );
        for (toml, message) in [
            (
                "audience = \"https://a/mcp\"",
                "[mcp.http.oauth] names no issuers: list the authorization servers whose tokens are accepted in `issuers`, or remove the table",
            ),
            (
                "issuers = [\"https://a\", \"https://a\"]",
                "[mcp.http.oauth] issuers lists `https://a` twice",
            ),
            (
                "issuers = [\"https://a\"]\naudience = \" \"",
                "[mcp.http.oauth] audience is empty: remove it for the default",
            ),
            (
                "issuers = [\"https://a\"]\nagent_claim = \"\"",
                "[mcp.http.oauth] agent_claim is empty: remove it for the default",
            ),
            (
                "issuers = [\"https://a\"]\nread_scope = \"kb:lesen-ä\"",
                "[mcp.http.oauth] read_scope = `kb:lesen-ä` is not a scope name (printable ASCII, no spaces, quotes or backslashes: RFC 6749 §3.3)",
            ),
            (
                "issuers = [\"https://a\"]\nintrospection_client_secret = \"s\"",
                "[mcp.http.oauth] introspection_client_secret is set without introspection_client_id",
            ),
            (
                "issuers = [\"https://a\", \"https://b\"]\nintrospection_client_id = \"folio\"\nintrospection_client_secret = \"s\"",
                "[mcp.http.oauth] introspection works with one issuer: its client secret would be sent to issuers a token does not come from (list one issuer, or run one server per issuer)",
            ),
        ] {
            assert_eq!(err(toml), message, "{toml}");
        }
        let s = Settings::from_config(
            &config("issuers = [\"https://a\"]\nintrospection_client_id = \"folio\"\nintrospection_client_secret = \"file\""),
            Some("env".into()),
        )
        .unwrap()
        .unwrap();
        assert_eq!(s.introspection.unwrap().secret, "env");
    }

    #[tokio::test]
    async fn tokens_of_other_issuers_and_unsigned_shapes_are_refused_before_any_fetch() {
        let settings =
            Settings::from_config(&config("issuers = [\"https://id.example.com\"]"), None)
                .unwrap()
                .unwrap();
        let oauth = OAuth::new(settings).unwrap();
        let resource = "http://127.0.0.1:1/mcp";
        // {"alg":"RS256"} . {"iss":"https://evil.example"} . sig
        let foreign = "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJodHRwczovL2V2aWwuZXhhbXBsZSJ9.c2ln";
        assert_eq!(
            oauth.verify(foreign, resource).await,
            Err(Rejection::Invalid(
                "the token was issued by https://evil.example, which this server does not accept"
                    .into()
            ))
        );
        assert!(matches!(
            oauth.verify("opaque-token", resource).await,
            Err(Rejection::Invalid(why)) if why.starts_with("not a token of this server's token file, nor a JWT")
        ));
        // {"alg":"none"} . {"iss":"https://id.example.com","sub":"a"} . (empty)
        let none = "eyJhbGciOiJub25lIn0.eyJpc3MiOiJodHRwczovL2lkLmV4YW1wbGUuY29tIiwic3ViIjoiYSJ9.";
        assert!(matches!(
            oauth.verify(none, resource).await,
            Err(Rejection::Invalid(why)) if why == "an unsigned token (alg none) is never accepted"
        ));
    }
}
