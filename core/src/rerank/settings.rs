//! Rerank settings: where they come from, and the checks they pass.
//!
//! Sources, per key, the first that sets it wins: the user's own config (`[rerank]` in
//! `config.toml`, [`UserRerankConfig`]), the workspace's `folio.toml` (`[rerank]`,
//! [`RerankConfig`]), the defaults: provider `none`, batch size [`DEFAULT_BATCH_SIZE`],
//! timeout [`DEFAULT_TIMEOUT_MS`] ms, endpoint [`DEFAULT_COHERE_ENDPOINT`] for `cohere`
//! and [`DEFAULT_TEI_ENDPOINT`] for `tei`.
//!
//! **Remote endpoints.** The rule of [`crate::endpoint`]: a `folio.toml` names an
//! endpoint on this machine only; one elsewhere needs the user's own config to name it
//! and to allow it (`[rerank] allow_remote = true`). There is no command-line flag.
//!
//! **API key.** Read from the environment only, [`API_KEY_ENV`] in order, and sent as
//! `Authorization: Bearer …`; never from a file in the workspace.

use crate::config::user::UserRerankConfig;
use crate::config::{RerankConfig, RerankProvider};
use crate::endpoint::{EndpointChoice, SettingSource};

/// Passages per request when no config sets `batch_size`: text-embeddings-inference's
/// default `--max-client-batch-size`, so a default TEI server takes every batch.
pub const DEFAULT_BATCH_SIZE: usize = 32;
/// Largest accepted `batch_size` (the Cohere API's limit of documents per request).
pub const MAX_BATCH_SIZE: usize = 1000;
/// Timeout of one request when no config sets `timeout_ms`: a search waits for it.
pub const DEFAULT_TIMEOUT_MS: u64 = 10_000;
/// Default endpoint of the `cohere` provider.
pub const DEFAULT_COHERE_ENDPOINT: &str = "https://api.cohere.com";
/// Default endpoint of the `tei` provider (text-embeddings-inference's usual port).
pub const DEFAULT_TEI_ENDPOINT: &str = "http://127.0.0.1:8080";
/// Environment variables read for the API key, in order.
pub const API_KEY_ENV: [&str; 2] = ["FOLIO_RERANK_API_KEY", "COHERE_API_KEY"];

/// Resolved rerank settings of a configured reranker; build them with
/// [`RerankSettings::resolve`].
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct RerankSettings {
    /// The provider (never [`RerankProvider::None`]).
    pub provider: RerankProvider,
    /// Where `provider` came from.
    pub provider_source: SettingSource,
    /// Model name sent with each request (`None` only for `tei`, which serves one model).
    pub model: Option<String>,
    /// Base URL without a trailing `/` (and, for `cohere`, without a trailing `/v1`).
    pub endpoint: String,
    /// Where `endpoint` came from.
    pub endpoint_source: SettingSource,
    /// Passages per request, 1–[`MAX_BATCH_SIZE`].
    pub batch_size: usize,
    /// Timeout of one request, in milliseconds (≥ 1).
    pub timeout_ms: u64,
    /// Whether `endpoint` is on this machine.
    pub endpoint_is_loopback: bool,
}

impl RerankSettings {
    /// Merges the sources (see the module docs) and checks the result; `Ok(None)` when
    /// the provider is `none` (the default).
    ///
    /// Errors (a message naming the key and its source): `cohere` without `model`; an
    /// endpoint that is not an `http://` or `https://` URL with a host; `batch_size`
    /// outside 1–[`MAX_BATCH_SIZE`]; `timeout_ms` outside 1–[`crate::endpoint::MAX_TIMEOUT_MS`]; a remote endpoint the workspace
    /// chose or the user did not allow ([`crate::endpoint`]).
    pub fn resolve(
        workspace: &RerankConfig,
        user: &UserRerankConfig,
    ) -> Result<Option<RerankSettings>, String> {
        let (provider, provider_source) = SettingSource::pick(&user.provider, &workspace.provider);
        let provider = provider.unwrap_or_default();
        let default_endpoint = match provider {
            RerankProvider::None => return Ok(None),
            RerankProvider::Cohere => DEFAULT_COHERE_ENDPOINT,
            RerankProvider::Tei => DEFAULT_TEI_ENDPOINT,
        };
        let (model, _) = SettingSource::pick(&user.model, &workspace.model);
        let model = model.filter(|m| !m.trim().is_empty());
        if provider == RerankProvider::Cohere && model.is_none() {
            return Err(format!(
                "[rerank] provider = \"cohere\" (from {}) needs `model`, the name of the rerank model to request",
                provider_source.describe()
            ));
        }
        let (batch_size, batch_source) =
            SettingSource::pick(&user.batch_size, &workspace.batch_size);
        let batch_size = batch_size.unwrap_or(DEFAULT_BATCH_SIZE);
        if !(1..=MAX_BATCH_SIZE).contains(&batch_size) {
            return Err(format!(
                "[rerank].batch_size = {batch_size} (from {}) must be between 1 and {MAX_BATCH_SIZE}",
                batch_source.describe()
            ));
        }
        let (timeout_ms, timeout_source) =
            SettingSource::pick(&user.timeout_ms, &workspace.timeout_ms);
        let timeout_ms =
            crate::endpoint::timeout_ms("rerank", timeout_ms, timeout_source, DEFAULT_TIMEOUT_MS)?;
        let (endpoint, endpoint_source) = SettingSource::pick(&user.endpoint, &workspace.endpoint);
        let raw = endpoint.unwrap_or_else(|| default_endpoint.to_owned());
        let admitted = EndpointChoice {
            table: "rerank",
            purpose: "rerank",
            raw: &raw,
            api_prefix: (provider == RerankProvider::Cohere).then_some("/v1"),
            endpoint_source,
            provider_source,
            allow_remote: user.allow_remote,
            allow_flag: None,
        }
        .admit()?;
        Ok(Some(RerankSettings {
            provider,
            provider_source,
            model,
            endpoint: admitted.base,
            endpoint_source,
            batch_size,
            timeout_ms,
            endpoint_is_loopback: admitted.loopback,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::user::UserConfig;

    fn ws(text: &str) -> RerankConfig {
        crate::workspace::Config::from_toml(text)
            .expect("valid folio.toml")
            .rerank
    }

    #[test]
    fn defaults_and_sources() {
        assert_eq!(
            RerankSettings::resolve(&RerankConfig::default(), &UserRerankConfig::default()),
            Ok(None)
        );
        let s = RerankSettings::resolve(
            &ws("[rerank]\nprovider = \"tei\"\n"),
            &UserRerankConfig::default(),
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            s,
            RerankSettings {
                provider: RerankProvider::Tei,
                provider_source: SettingSource::Workspace,
                model: None,
                endpoint: "http://127.0.0.1:8080".into(),
                endpoint_source: SettingSource::Default,
                batch_size: 32,
                timeout_ms: 10_000,
                endpoint_is_loopback: true,
            }
        );
        // The user's keys win one by one; a trailing /v1 of a Cohere-style endpoint goes.
        let user = UserRerankConfig {
            provider: Some(RerankProvider::Cohere),
            model: Some("rerank-v3.5".into()),
            batch_size: Some(100),
            ..UserRerankConfig::default()
        };
        let s = RerankSettings::resolve(
            &ws("[rerank]\nprovider = \"tei\"\nendpoint = \"http://localhost:9000/v1/\"\ntimeout_ms = 500\n"),
            &user,
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            (
                s.provider,
                s.provider_source,
                s.model.as_deref(),
                s.endpoint.as_str(),
                s.endpoint_source,
                s.batch_size,
                s.timeout_ms
            ),
            (
                RerankProvider::Cohere,
                SettingSource::User,
                Some("rerank-v3.5"),
                "http://localhost:9000",
                SettingSource::Workspace,
                100,
                500
            )
        );
        // The user turns the workspace's reranker off.
        let off = UserRerankConfig {
            provider: Some(RerankProvider::None),
            ..UserRerankConfig::default()
        };
        assert_eq!(
            RerankSettings::resolve(&ws("[rerank]\nprovider = \"tei\"\n"), &off),
            Ok(None)
        );
    }

    #[test]
    fn invalid_settings_are_errors_naming_the_key() {
        let none = UserRerankConfig::default();
        let err = |text: &str| RerankSettings::resolve(&ws(text), &none).unwrap_err();
        assert_eq!(
            err("[rerank]\nprovider = \"cohere\"\nendpoint = \"http://127.0.0.1:1\"\n"),
            "[rerank] provider = \"cohere\" (from the workspace's folio.toml) needs `model`, the name of the rerank model to request"
        );
        assert_eq!(
            err("[rerank]\nprovider = \"tei\"\nbatch_size = 0\n"),
            "[rerank].batch_size = 0 (from the workspace's folio.toml) must be between 1 and 1000"
        );
        assert_eq!(
            err("[rerank]\nprovider = \"tei\"\ntimeout_ms = 0\n"),
            "[rerank].timeout_ms = 0 (from the workspace's folio.toml) must be between 1 and 600000 (10 minutes)"
        );
        assert_eq!(
            err("[rerank]\nprovider = \"tei\"\ntimeout_ms = 600001\n"),
            "[rerank].timeout_ms = 600001 (from the workspace's folio.toml) must be between 1 and 600000 (10 minutes)"
        );
        assert_eq!(
            err("[rerank]\nprovider = \"tei\"\nendpoint = \"127.0.0.1:8080\"\n"),
            "[rerank].endpoint `127.0.0.1:8080` (from the workspace's folio.toml) is not valid: expected an http:// or https:// URL, such as http://127.0.0.1:8080"
        );
        // Cohere's own endpoint is the default, and remote: a workspace naming the
        // provider chose it.
        assert_eq!(
            err("[rerank]\nprovider = \"cohere\"\nmodel = \"rerank-v3.5\"\n"),
            format!(
                "the rerank endpoint `https://api.cohere.com` is chosen by the workspace's folio.toml ([rerank].provider) \
                 and is not on this machine; a workspace may only name an endpoint on this machine. To send your notes \
                 to it, set [rerank] provider and endpoint in your own config ({}) and allow it there",
                UserConfig::location()
            )
        );
        let text = "[rerank]\nprovider = \"tei\"\nallow_remote = true\n";
        assert_eq!(
            crate::workspace::Config::from_toml(text).unwrap_err(),
            format!(
                "[rerank].allow_remote cannot be set in a workspace's folio.toml: only your own config ({}) may \
                 allow a remote rerank endpoint",
                UserConfig::location()
            )
        );
        let err =
            crate::workspace::Config::from_toml("[rerank]\nprovider = \"jina\"\n").unwrap_err();
        assert!(
            err.contains("unknown variant `jina`, expected one of `none`, `cohere`, `tei`"),
            "{err}"
        );
    }

    #[test]
    fn a_remote_endpoint_needs_the_users_choice_and_allowance() {
        let user = UserRerankConfig {
            provider: Some(RerankProvider::Cohere),
            model: Some("rerank-v3.5".into()),
            ..UserRerankConfig::default()
        };
        let err = RerankSettings::resolve(&RerankConfig::default(), &user).unwrap_err();
        assert!(
            err.starts_with("the rerank endpoint `https://api.cohere.com` (from the default) is not on this machine; remote endpoints are refused unless you allow them in your own config (`[rerank] allow_remote = true` in "),
            "{err}"
        );
        let allowed = UserRerankConfig {
            allow_remote: true,
            ..user
        };
        let s = RerankSettings::resolve(&RerankConfig::default(), &allowed)
            .unwrap()
            .unwrap();
        assert_eq!(
            (s.endpoint.as_str(), s.endpoint_is_loopback),
            ("https://api.cohere.com", false)
        );
        // The workspace's remote endpoint stays refused though the user allows remote ones.
        let err = RerankSettings::resolve(
            &ws("[rerank]\nendpoint = \"https://rerank.example.invalid\"\n"),
            &allowed,
        )
        .unwrap_err();
        assert!(
            err.contains("chosen by the workspace's folio.toml ([rerank].endpoint)"),
            "{err}"
        );
    }
}
