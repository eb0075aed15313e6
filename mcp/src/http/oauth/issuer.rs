//! One OAuth authorization server folio accepts tokens of: its metadata, found by
//! discovery (RFC 8414, then OpenID Connect Discovery), and its signing keys (the JWK set
//! at `jwks_uri`, RFC 7517), both fetched when first needed and kept.
//!
//! Keys are fetched again when they are an hour old, and when a token names a key id the
//! set does not hold (the issuer rotated its keys), at most once every
//! [`REFETCH_AT_MOST_EVERY`] so that tokens with made-up key ids cannot make folio hammer
//! the issuer. A failed fetch is not repeated for [`RETRY_AFTER_FAILURE`]: meanwhile its
//! error is the answer. Fetches run on tokio's blocking threads, one at a time per issuer;
//! redirects are not followed and a document over [`MAX_DOCUMENT_BYTES`] is refused
//! (`folio_core::service_http`'s policy).

use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{Jwk, JwkSet};
use serde::Deserialize;

/// The most time one fetch may take, connection to last byte.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest metadata document or key set read, in bytes.
pub const MAX_DOCUMENT_BYTES: u64 = 1024 * 1024;
/// Keys older than this are fetched again before use.
pub const KEYS_MAX_AGE: Duration = Duration::from_secs(3600);
/// An unknown key id fetches the keys again at most this often.
pub const REFETCH_AT_MOST_EVERY: Duration = Duration::from_secs(5);
/// After a failed fetch, the issuer is not asked again for this long.
pub const RETRY_AFTER_FAILURE: Duration = Duration::from_secs(10);

/// What folio reads of an authorization server's metadata (RFC 8414 §2).
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct Metadata {
    /// The issuer identifier; must equal the configured one (RFC 8414 §3.3).
    pub issuer: String,
    /// Where the signing keys are published.
    pub jwks_uri: Option<String>,
    /// The RFC 7662 introspection endpoint, when the server has one.
    pub introspection_endpoint: Option<String>,
}

#[derive(Debug, Default)]
struct Cache {
    metadata: Option<Metadata>,
    keys: Option<(JwkSet, Instant)>,
    /// The last failure and when it happened.
    failed: Option<(Instant, String)>,
}

/// An issuer whose tokens are accepted.
#[derive(Debug)]
pub struct Issuer {
    /// The issuer identifier, as configured.
    pub id: String,
    agent: ureq::Agent,
    cache: tokio::sync::Mutex<Cache>,
    /// When introspection at this issuer last failed, and why: it is not asked again
    /// for [`RETRY_AFTER_FAILURE`].
    introspection_failed: std::sync::Mutex<Option<(Instant, String)>>,
}

/// Whether `url` is `https://`, or `http://` to a loopback address; `Err` says why not.
/// `what` names the setting in the message.
pub fn check_url(url: &str, what: &str) -> Result<bool, String> {
    let uri: ureq::http::Uri = url
        .parse()
        .map_err(|e| format!("{what} `{url}` is not a URL: {e}"))?;
    let host = uri
        .host()
        .ok_or_else(|| format!("{what} `{url}` has no host"))?;
    let loopback =
        folio_core::endpoint::is_loopback_host(host.trim_start_matches('[').trim_end_matches(']'));
    match uri.scheme_str() {
        Some("https") => Ok(loopback),
        Some("http") if loopback => Ok(true),
        _ => Err(format!(
            "{what} `{url}` must start with https:// (http:// only on this machine): keys and introspection answers must not be open to tampering on the way"
        )),
    }
}

/// Checks an issuer identifier of `[mcp.http.oauth] issuers`: [`check_url`] (whose
/// answer, whether the issuer is on this machine, it returns), and no credentials, query
/// or fragment (RFC 8414 §2: an issuer is an https URL with neither query nor fragment;
/// credentials would be published in the metadata).
///
/// Errors: a message naming the key and the URL.
pub fn check_issuer(url: &str) -> Result<bool, String> {
    let what = "[mcp.http.oauth] issuers:";
    let loopback = check_url(url, what)?;
    let uri: ureq::http::Uri = url.parse().map_err(|e| format!("{what} `{url}`: {e}"))?;
    if uri.authority().is_some_and(|a| a.as_str().contains('@')) {
        return Err(format!(
            "{what} an issuer URL holds no user name or password (it is published in the metadata)"
        ));
    }
    if url.contains('@') {
        return Err(format!(
            "{what} `{url}` holds an `@`, which would make agent ids (`{{claim}}@{{issuer}}`) ambiguous"
        ));
    }
    if url.contains('?') || url.contains('#') {
        return Err(format!(
            "{what} `{url}` has a query or a fragment, which an issuer identifier cannot have (RFC 8414 §2)"
        ));
    }
    Ok(loopback)
}

/// The metadata URLs of `issuer`, in the order they are tried: RFC 8414's
/// (`/.well-known/oauth-authorization-server` inserted before the issuer's path), then
/// OpenID Connect Discovery's inserted the same way, then appended to the issuer
/// (OpenID Connect Discovery 1.0 §4; Keycloak, Entra ID and Okta serve this one).
pub fn discovery_urls(issuer: &str) -> Vec<String> {
    let issuer = issuer.trim_end_matches('/');
    let (origin, path) = match issuer.find("://") {
        Some(at) => match issuer[at + 3..].find('/') {
            Some(slash) => issuer.split_at(at + 3 + slash),
            None => (issuer, ""),
        },
        None => (issuer, ""),
    };
    let mut urls = vec![
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}/.well-known/openid-configuration{path}"),
    ];
    if !path.is_empty() {
        urls.push(format!("{issuer}/.well-known/openid-configuration"));
    }
    urls
}

/// The status and body (at most [`MAX_DOCUMENT_BYTES`]) of the answer to a request to
/// `url`.
///
/// Errors: a transport failure, sending or reading, as `{url}: {what}`.
pub(super) fn answer(
    sent: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    url: &str,
) -> Result<(u16, Vec<u8>), String> {
    let transport =
        |err: ureq::Error| format!("{url}: {}", folio_core::service_http::describe_error(&err));
    let response = sent.map_err(transport)?;
    let status = response.status().as_u16();
    let body = response
        .into_body()
        .into_with_config()
        .limit(MAX_DOCUMENT_BYTES)
        .read_to_vec()
        .map_err(transport)?;
    Ok((status, body))
}

/// GET of a JSON document: `Ok(None)` for a 404, the body for a 200.
fn get_json(agent: &ureq::Agent, url: &str) -> Result<Option<Vec<u8>>, String> {
    let sent = agent.get(url).header("Accept", "application/json").call();
    let (status, body) = answer(sent, url)?;
    match status {
        200 => Ok(Some(body)),
        404 => Ok(None),
        _ => Err(folio_core::service_http::JsonAnswer { status, body }.status_message(url)),
    }
}

/// The issuer's metadata, from the first discovery URL that has it.
fn discover(agent: &ureq::Agent, issuer: &str) -> Result<Metadata, String> {
    let mut tried = Vec::new();
    for url in discovery_urls(issuer) {
        match get_json(agent, &url)? {
            Some(body) => {
                let metadata: Metadata = serde_json::from_slice(&body).map_err(|e| {
                    format!("{url} is not authorization server metadata (RFC 8414): {e}")
                })?;
                if metadata.issuer != issuer {
                    return Err(format!(
                        "{url} names the issuer `{}`, not `{issuer}` (RFC 8414 §3.3: they must be equal; check `issuers` in [mcp.http.oauth])",
                        metadata.issuer
                    ));
                }
                return Ok(metadata);
            }
            None => tried.push(url),
        }
    }
    Err(format!(
        "no authorization server metadata for `{issuer}`: 404 at {}",
        tried.join(", ")
    ))
}

/// The key set at `url`.
fn fetch_keys(agent: &ureq::Agent, url: &str) -> Result<JwkSet, String> {
    let body = get_json(agent, url)?.ok_or_else(|| format!("{url}: HTTP 404"))?;
    let set: JwkSet = serde_json::from_slice(&body)
        .map_err(|e| format!("{url} is not a JWK set (RFC 7517): {e}"))?;
    Ok(set)
}

/// Runs a blocking fetch on tokio's blocking threads.
async fn blocking<T: Send + 'static>(
    job: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    tokio::task::spawn_blocking(job)
        .await
        .unwrap_or_else(|e| Err(format!("the fetch stopped: {e}")))
}

impl Issuer {
    /// An issuer at `id`, nothing fetched yet.
    ///
    /// Errors: `id` is not an issuer URL ([`check_issuer`]).
    pub fn new(id: &str) -> Result<Issuer, String> {
        let loopback = check_issuer(id)?;
        Ok(Issuer {
            id: id.to_owned(),
            agent: folio_core::service_http::agent(loopback, FETCH_TIMEOUT),
            cache: tokio::sync::Mutex::new(Cache::default()),
            introspection_failed: std::sync::Mutex::new(None),
        })
    }

    /// The error of an introspection that failed less than [`RETRY_AFTER_FAILURE`] ago.
    pub fn introspection_down(&self) -> Option<String> {
        let failed = self
            .introspection_failed
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        failed
            .as_ref()
            .filter(|(at, _)| at.elapsed() < RETRY_AFTER_FAILURE)
            .map(|(_, why)| why.clone())
    }

    /// Records that introspection failed (`Some`), or worked (`None`).
    pub fn introspection_result(&self, failure: Option<String>) {
        *self
            .introspection_failed
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = failure.map(|why| (Instant::now(), why));
    }

    /// The issuer's metadata, discovered on first use.
    ///
    /// Errors: discovery failed (now, or less than [`RETRY_AFTER_FAILURE`] ago).
    pub async fn metadata(&self) -> Result<Metadata, String> {
        let mut cache = self.cache.lock().await;
        self.metadata_in(&mut cache).await
    }

    async fn metadata_in(&self, cache: &mut Cache) -> Result<Metadata, String> {
        if let Some(metadata) = &cache.metadata {
            return Ok(metadata.clone());
        }
        if let Some((at, error)) = &cache.failed
            && at.elapsed() < RETRY_AFTER_FAILURE
        {
            return Err(error.clone());
        }
        let (agent, id) = (self.agent.clone(), self.id.clone());
        match blocking(move || discover(&agent, &id)).await {
            Ok(metadata) => {
                tracing::info!(issuer = %self.id, jwks_uri = ?metadata.jwks_uri, "authorization server metadata read");
                cache.metadata = Some(metadata.clone());
                cache.failed = None;
                Ok(metadata)
            }
            Err(error) => {
                tracing::error!(issuer = %self.id, %error, "authorization server discovery failed");
                cache.failed = Some((Instant::now(), error.clone()));
                Err(error)
            }
        }
    }

    /// The signing key `kid` names (`None`: the token names none, and the set holds one
    /// signing key only). `Ok(None)`: the set has no such key, even fetched again.
    ///
    /// Errors: the metadata or the keys cannot be fetched, or the metadata has no
    /// `jwks_uri`.
    pub async fn key(&self, kid: Option<&str>) -> Result<Option<Jwk>, String> {
        let mut cache = self.cache.lock().await;
        let metadata = self.metadata_in(&mut cache).await?;
        let url = metadata.jwks_uri.ok_or_else(|| {
            format!(
                "the metadata of `{}` has no jwks_uri: its tokens cannot be checked without introspection ([mcp.http.oauth] introspection_client_id)",
                self.id
            )
        })?;
        check_url(&url, "the issuer's jwks_uri")?;
        let fresh = |cache: &Cache, age: Duration| {
            cache
                .keys
                .as_ref()
                .is_some_and(|(_, at)| at.elapsed() < age)
        };
        if !fresh(&cache, KEYS_MAX_AGE) {
            self.refresh_keys(&mut cache, &url).await?;
        }
        if let Some(key) = find(&cache, kid) {
            return Ok(Some(key));
        }
        if fresh(&cache, REFETCH_AT_MOST_EVERY) {
            return Ok(None);
        }
        self.refresh_keys(&mut cache, &url).await?;
        Ok(find(&cache, kid))
    }

    async fn refresh_keys(&self, cache: &mut Cache, url: &str) -> Result<(), String> {
        if let Some((at, error)) = &cache.failed
            && at.elapsed() < RETRY_AFTER_FAILURE
        {
            return Err(error.clone());
        }
        let (agent, url) = (self.agent.clone(), url.to_owned());
        match blocking(move || fetch_keys(&agent, &url)).await {
            Ok(set) => {
                tracing::info!(issuer = %self.id, keys = set.keys.len(), "signing keys read");
                cache.keys = Some((set, Instant::now()));
                cache.failed = None;
                Ok(())
            }
            Err(error) => {
                tracing::error!(issuer = %self.id, %error, "signing keys could not be fetched");
                cache.failed = Some((Instant::now(), error.clone()));
                Err(error)
            }
        }
    }
}

/// Whether a key may verify signatures: not marked for encryption only.
fn signs(key: &Jwk) -> bool {
    !matches!(
        key.common.public_key_use,
        Some(jsonwebtoken::jwk::PublicKeyUse::Encryption)
    )
}

/// The key of the cached set that `kid` names; without `kid`, the only signing key.
fn find(cache: &Cache, kid: Option<&str>) -> Option<Jwk> {
    let (set, _) = cache.keys.as_ref()?;
    match kid {
        Some(kid) => set.find(kid).filter(|k| signs(k)).cloned(),
        None => {
            let mut signing = set.keys.iter().filter(|k| signs(k));
            match (signing.next(), signing.next()) {
                (Some(only), None) => Some(only.clone()),
                _ => None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_is_looked_for_where_rfc_8414_and_openid_connect_put_it() {
        assert_eq!(
            discovery_urls("https://id.example.com"),
            [
                "https://id.example.com/.well-known/oauth-authorization-server",
                "https://id.example.com/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            discovery_urls("https://kc.example.com/realms/kb/"),
            [
                "https://kc.example.com/.well-known/oauth-authorization-server/realms/kb",
                "https://kc.example.com/.well-known/openid-configuration/realms/kb",
                "https://kc.example.com/realms/kb/.well-known/openid-configuration",
            ]
        );
    }

    #[test]
    fn issuers_are_https_or_on_this_machine() {
        assert_eq!(check_url("https://id.example.com", "x"), Ok(false));
        assert_eq!(check_url("http://127.0.0.1:9000", "x"), Ok(true));
        assert_eq!(check_url("http://[::1]:9000/realms/a", "x"), Ok(true));
        assert!(
            check_url("http://id.example.com", "[mcp.http.oauth] issuers:")
                .unwrap_err()
                .starts_with(
                    "[mcp.http.oauth] issuers: `http://id.example.com` must start with https://"
                )
        );
        assert!(
            check_url("id.example.com", "x")
                .unwrap_err()
                .starts_with("x `id.example.com` must start with https://")
        );
        assert_eq!(
            check_url("https://", "x"),
            Err("x `https://` is not a URL: empty string".into())
        );
    }

    #[test]
    fn issuer_identifiers_carry_no_credentials_query_or_fragment() {
        assert_eq!(check_issuer("https://id.example.com/realms/kb"), Ok(false));
        assert_eq!(
            check_issuer("http://admin:hunter2@127.0.0.1:9/x"),
            Err("[mcp.http.oauth] issuers: an issuer URL holds no user name or password (it is published in the metadata)".into())
        );
        assert_eq!(
            check_issuer("https://id.example.com/?a=b"),
            Err("[mcp.http.oauth] issuers: `https://id.example.com/?a=b` has a query or a fragment, which an issuer identifier cannot have (RFC 8414 §2)".into())
        );
        assert!(check_issuer("https://id.example.com/#f").is_err());
    }

    #[test]
    fn a_token_without_a_key_id_needs_a_set_of_one_signing_key() {
        let key = |kid: &str, usage: &str| -> Jwk {
            serde_json::from_value(serde_json::json!({
                "kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo",
                "kid": kid, "use": usage,
            }))
            .unwrap()
        };
        let mut cache = Cache {
            keys: Some((
                JwkSet {
                    keys: vec![key("a", "sig"), key("b", "enc")],
                },
                Instant::now(),
            )),
            ..Cache::default()
        };
        assert_eq!(
            find(&cache, Some("a")).unwrap().common.key_id.as_deref(),
            Some("a")
        );
        assert_eq!(
            find(&cache, Some("b")),
            None,
            "an encryption key never verifies"
        );
        assert_eq!(
            find(&cache, None).unwrap().common.key_id.as_deref(),
            Some("a")
        );
        cache.keys.as_mut().unwrap().0.keys.push(key("c", "sig"));
        assert_eq!(
            find(&cache, None),
            None,
            "two signing keys: which one is unknown"
        );
    }
}
