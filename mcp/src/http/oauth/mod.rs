//! `folio mcp --http` as an OAuth 2.1 resource server, as the MCP authorization
//! specification asks: access tokens issued by the authorization servers named in
//! `[mcp.http.oauth] issuers` are accepted beside the token file's own tokens.
//!
//! A token is checked either here, as a JWT against the issuer's published keys
//! ([`jwt`]), or, when `introspection_client_id` is set, by asking the issuer
//! ([`introspection`], RFC 7662). Either way it must be for this server (`aud` is the
//! resource URI, RFC 8707) and in date. Its scopes (`scope`, space-separated, or `scp`)
//! map to folio's three ([`ScopeNames`]; the widest granted wins) and one claim (`sub` by
//! default) is the caller's agent id. Issuers are discovered and their keys fetched by
//! [`issuer`].

pub mod introspection;
pub mod issuer;
pub mod jwt;

use std::sync::Arc;

use folio_core::config::tokens::Scope;
use folio_core::config::user::UserOAuthConfig;
use serde_json::{Map, Value};

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
    /// The settings of `[mcp.http.oauth]`, `None` when it names no issuer; the client
    /// secret from [`CLIENT_SECRET_ENV`] when set (`secret_from_env`).
    ///
    /// Errors (naming the key): an issuer that is not https (or http on this machine), a
    /// scope name that is empty, holds a space or names two scopes, `leeway_seconds` over
    /// [`MAX_LEEWAY_SECONDS`], an introspection client id without a secret.
    pub fn from_config(
        config: &UserOAuthConfig,
        secret_from_env: Option<String>,
    ) -> Result<Option<Settings>, String> {
        if config.issuers.is_empty() {
            return Ok(None);
        }
        for url in &config.issuers {
            issuer::check_url(url, "[mcp.http.oauth] issuers:")?;
        }
        let defaults = ScopeNames::default();
        let pick = |value: &Option<String>, default: &str, key: &str| {
            let name = value.clone().unwrap_or_else(|| default.to_owned());
            if name.is_empty()
                || name
                    .chars()
                    .any(|c| c.is_whitespace() || c == '"' || c == '\\')
            {
                return Err(format!(
                    "[mcp.http.oauth] {key} = `{name}` is not a scope name (one word, no quotes)"
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
        let introspection = match &config.introspection_client_id {
            None => None,
            Some(id) => {
                let secret = secret_from_env
                    .or_else(|| config.introspection_client_secret.clone())
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
            audience: config.audience.clone(),
            scopes,
            agent_claims: match &config.agent_claim {
                Some(claim) => vec![claim.clone()],
                None => vec!["sub".to_owned(), "client_id".to_owned()],
            },
            leeway,
            introspection,
        }))
    }
}

/// The accepted issuers and how their tokens are checked.
#[derive(Debug)]
pub struct OAuth {
    /// The settings.
    pub settings: Settings,
    issuers: Vec<Arc<Issuer>>,
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
        Ok(OAuth { settings, issuers })
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
        let audience = self.audience(resource);
        let leeway = self.settings.leeway;
        let (claims, issuer) = if jwt::looks_like_jwt(token) {
            let claimed = jwt::claimed_issuer(token)
                .ok_or_else(|| Rejection::Invalid("the token's claims have no iss".into()))?;
            let issuer = self
                .issuers
                .iter()
                .find(|i| i.id == claimed)
                .ok_or_else(|| {
                    Rejection::Invalid(format!(
                        "the token was issued by {claimed}, which this server does not accept"
                    ))
                })?;
            let introspected = match &self.settings.introspection {
                Some(client) => {
                    introspection::introspect(issuer, client, token, audience, leeway).await?
                }
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
            let client = self.settings.introspection.as_ref().ok_or_else(|| {
                Rejection::Invalid(
                    "not a token of this server's token file, nor a JWT access token (opaque tokens need introspection: [mcp.http.oauth] introspection_client_id)".into(),
                )
            })?;
            self.introspect_opaque(client, token, audience).await?
        };
        self.caller(&claims, &issuer.id)
    }

    /// An opaque token asked of each issuer in turn: the first that vouches for it.
    async fn introspect_opaque(
        &self,
        client: &ClientCredentials,
        token: &str,
        audience: &str,
    ) -> Result<(Map<String, Value>, &Arc<Issuer>), Rejection> {
        let mut last = Rejection::Invalid("no issuer is configured".into());
        for issuer in &self.issuers {
            match introspection::introspect(issuer, client, token, audience, self.settings.leeway)
                .await
            {
                Ok(Some(claims)) => return Ok((claims, issuer)),
                Ok(None) => {
                    last = Rejection::Invalid(format!(
                        "{} does not introspect this kind of token",
                        issuer.id
                    ))
                }
                Err(rejection) => last = rejection,
            }
        }
        Err(last)
    }

    /// The caller of verified `claims` of `issuer`.
    ///
    /// Errors: no agent claim ([`Rejection::Invalid`]); none of folio's scopes
    /// ([`Rejection::NoScope`]).
    fn caller(&self, claims: &Map<String, Value>, issuer: &str) -> Result<Caller, Rejection> {
        let agent = self
            .settings
            .agent_claims
            .iter()
            .find_map(|claim| match claims.get(claim) {
                Some(Value::String(s)) if !s.trim().is_empty() => Some(s.clone()),
                Some(Value::Number(n)) => Some(n.to_string()),
                _ => None,
            })
            .ok_or_else(|| {
                Rejection::Invalid(format!(
                    "the token has no {} claim to name its agent ([mcp.http.oauth] agent_claim)",
                    self.settings.agent_claims.join(" or ")
                ))
            })?;
        let scope = self
            .settings
            .scopes
            .widest(&granted(claims))
            .ok_or(Rejection::NoScope)?;
        Ok(Caller {
            token_id: format!("oauth:{agent}@{issuer}"),
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
            "[mcp.http.oauth] read_scope = `kb read` is not a scope name (one word, no quotes)"
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
