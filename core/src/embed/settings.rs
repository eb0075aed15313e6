//! Embedding settings: where they come from, the remote-endpoint policy, and
//! turning them into an [`Embedder`].
//!
//! Sources, per key, the first that sets it wins:
//! 1. the command line (`--allow-remote-embeddings` only);
//! 2. the user's own config, `[embed]` in `$XDG_CONFIG_HOME/folio/config.toml`
//!    ([`UserEmbedConfig`]) — the user's machine decides;
//! 3. the workspace's `folio.toml`, `[embed]` ([`EmbedConfig`]);
//! 4. the defaults: provider `builtin`, batch size [`DEFAULT_BATCH_SIZE`],
//!    timeout [`DEFAULT_TIMEOUT_MS`] ms, endpoint `http://127.0.0.1:11434`
//!    for `ollama` and `https://api.openai.com` for `openai`.
//!
//! **Remote endpoints.** The rule of [`crate::endpoint`]: a `folio.toml` can name
//! an endpoint on this machine only; one elsewhere needs the user's own config to name
//! it and to allow it (`[embed] allow_remote = true`, or `--allow-remote-embeddings`).
//!
//! **API key.** Read from the environment only, `FOLIO_EMBED_API_KEY`, else
//! `OPENAI_API_KEY`, and sent as `Authorization: Bearer …`; never from a file
//! in the workspace.

use std::sync::Arc;
use std::time::Duration;

pub use crate::config::ProviderKind;

use super::Embedder;
use super::http::{HttpApi, HttpEmbedder};
use crate::config::EmbedConfig;
use crate::config::user::UserEmbedConfig;
use crate::endpoint::{EndpointChoice, SettingSource};

/// Passages per request when no config sets `batch_size`.
pub const DEFAULT_BATCH_SIZE: usize = 32;
/// Largest accepted `batch_size`.
pub const MAX_BATCH_SIZE: usize = 2048;
/// Timeout of one HTTP request when no config sets `timeout_ms`.
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;
/// Default endpoint of the `ollama` provider.
pub const DEFAULT_OLLAMA_ENDPOINT: &str = "http://127.0.0.1:11434";
/// Default endpoint of the `openai` provider.
pub const DEFAULT_OPENAI_ENDPOINT: &str = "https://api.openai.com";
/// Environment variables read for the API key, in order.
pub const API_KEY_ENV: [&str; 2] = ["FOLIO_EMBED_API_KEY", "OPENAI_API_KEY"];

/// Resolved embedding settings; build them with [`EmbedSettings::resolve`].
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct EmbedSettings {
    /// The provider.
    pub provider: ProviderKind,
    /// Where `provider` came from.
    pub provider_source: SettingSource,
    /// Model name for HTTP providers (`None` for `builtin` and `none` unless set).
    pub model: Option<String>,
    /// Base URL of an HTTP provider, without a trailing `/` (and, for
    /// `openai`, without a trailing `/v1`); `None` for `builtin` and `none`.
    pub endpoint: Option<String>,
    /// Where `endpoint` came from.
    pub endpoint_source: SettingSource,
    /// Passages per request, 1–[`MAX_BATCH_SIZE`].
    pub batch_size: usize,
    /// Timeout of one HTTP request, in milliseconds (≥ 1).
    pub timeout_ms: u64,
    /// Whether a non-loopback endpoint is allowed (user config or command line).
    pub allow_remote: bool,
    /// Whether `endpoint` is on this machine.
    pub endpoint_is_loopback: bool,
}

impl EmbedSettings {
    /// Merges the sources (see the module docs) and checks the result.
    ///
    /// Errors (a message naming the key and its source): an HTTP provider
    /// without `model`; an endpoint that is not an `http://` or `https://` URL
    /// with a host; `batch_size` outside 1–[`MAX_BATCH_SIZE`] or
    /// `timeout_ms` outside 1–[`crate::endpoint::MAX_TIMEOUT_MS`]; a non-loopback endpoint that neither the user's config
    /// nor `cli_allow_remote` allows.
    pub fn resolve(
        workspace: &EmbedConfig,
        user: &UserEmbedConfig,
        cli_allow_remote: bool,
    ) -> Result<EmbedSettings, String> {
        let (provider, mut provider_source) =
            SettingSource::pick(&user.provider, &workspace.provider);
        if user.provider_from_env {
            provider_source = SettingSource::Environment;
        }
        let provider = provider.unwrap_or_default();
        let (mut model, model_source) = SettingSource::pick(&user.model, &workspace.model);
        // `model` written for an HTTP provider in one file does not name the built-in
        // model's folder when the provider is overridden to `builtin` (by the user's file
        // or FOLIO_EMBED_PROVIDER).
        let model_written_for = match model_source {
            SettingSource::User if !user.provider_from_env => user.provider,
            SettingSource::Workspace => workspace.provider,
            _ => None,
        };
        if provider == ProviderKind::Builtin
            && model_written_for.is_some_and(|p| p != ProviderKind::Builtin)
        {
            model = None;
        }
        let (endpoint, endpoint_source) = SettingSource::pick(&user.endpoint, &workspace.endpoint);
        let (batch_size, batch_source) =
            SettingSource::pick(&user.batch_size, &workspace.batch_size);
        let (timeout_ms, timeout_source) =
            SettingSource::pick(&user.timeout_ms, &workspace.timeout_ms);
        let batch_size = batch_size.unwrap_or(DEFAULT_BATCH_SIZE);
        if !(1..=MAX_BATCH_SIZE).contains(&batch_size) {
            return Err(format!(
                "[embed].batch_size = {batch_size} (from {}) must be between 1 and {MAX_BATCH_SIZE}",
                batch_source.describe()
            ));
        }
        let timeout_ms =
            crate::endpoint::timeout_ms("embed", timeout_ms, timeout_source, DEFAULT_TIMEOUT_MS)?;
        let allow_remote = cli_allow_remote || user.allow_remote;
        let mut settings = EmbedSettings {
            provider,
            provider_source,
            model: model.clone(),
            endpoint: None,
            endpoint_source,
            batch_size,
            timeout_ms,
            allow_remote,
            endpoint_is_loopback: true,
        };
        let default_endpoint = match provider {
            ProviderKind::Builtin | ProviderKind::None => return Ok(settings),
            ProviderKind::Ollama => DEFAULT_OLLAMA_ENDPOINT,
            ProviderKind::Openai => DEFAULT_OPENAI_ENDPOINT,
        };
        if model.as_deref().is_none_or(|m| m.trim().is_empty()) {
            return Err(format!(
                "[embed] provider = \"{}\" (from {}) needs `model`, the name of the embedding model to request",
                provider.as_str(),
                provider_source.describe()
            ));
        }
        let _ = model_source;
        let raw = endpoint.unwrap_or_else(|| default_endpoint.to_owned());
        let admitted = EndpointChoice {
            table: "embed",
            purpose: "embedding",
            raw: &raw,
            api_prefix: (provider == ProviderKind::Openai).then_some("/v1"),
            endpoint_source,
            provider_source,
            allow_remote,
            allow_flag: Some("--allow-remote-embeddings"),
        }
        .admit()?;
        settings.endpoint_is_loopback = admitted.loopback;
        settings.endpoint = Some(admitted.base);
        Ok(settings)
    }
}

/// Builds the embedder the settings describe. No network request is made:
/// an HTTP endpoint's availability shows at the first embedding (see
/// [`super::pass::probe`]).
///
/// Returns `Ok(None)` for provider `none`, and `Err(reason)` when the provider
/// cannot be built — for `builtin`, when the model files are not installed;
/// callers then run lexical-only and report the reason as the status.
pub fn make_embedder(settings: &EmbedSettings) -> Result<Option<Arc<dyn Embedder>>, String> {
    match settings.provider {
        ProviderKind::None => Ok(None),
        ProviderKind::Builtin => load_builtin(settings).map(Some),
        ProviderKind::Ollama | ProviderKind::Openai => {
            let api = if settings.provider == ProviderKind::Ollama {
                HttpApi::Ollama
            } else {
                HttpApi::OpenAi
            };
            let endpoint = settings
                .endpoint
                .as_deref()
                .ok_or_else(|| "no endpoint configured".to_owned())?;
            let model = settings
                .model
                .as_deref()
                .ok_or_else(|| "no model configured".to_owned())?;
            let embedder = HttpEmbedder::new(
                api,
                endpoint,
                model,
                crate::service_http::api_key_from_env(&API_KEY_ENV),
                settings.batch_size,
                Duration::from_millis(settings.timeout_ms),
                settings.endpoint_is_loopback,
            )?;
            Ok(Some(Arc::new(embedder)))
        }
    }
}

/// Loads the built-in model ([`super::builtin`]) from `model` when it names a
/// folder (`[embed] model = "/path/to/folder"`), else from
/// [`super::builtin::installed_model_dir`].
///
/// With it comes the ensemble model, USE-Multilingual v3, from
/// [`super::use_m3::default_use_model_dir`] when it is installed there; when it is not
/// (or cannot be read) the built-in model runs alone, a warning is logged, and
/// [`super::Embedder::ensemble_missing`] says why.
///
/// Errors: no folder is known, or the model files there are missing or unusable
/// (the message says to run `scripts/fetch-model`).
fn load_builtin(settings: &EmbedSettings) -> Result<Arc<dyn Embedder>, String> {
    let dir = builtin_model_dir(settings)?;
    let embedder = super::builtin::BuiltinEmbedder::load(&dir).map_err(|e| e.to_string())?;
    let ensemble = load_ensemble();
    if let Err(reason) = &ensemble {
        tracing::warn!(%reason, "no ensemble leg: the second built-in model is not loaded");
    }
    Ok(Arc::new(embedder.with_ensemble(ensemble)))
}

/// The folder the built-in model is loaded from: `model` when set, else
/// [`super::builtin::installed_model_dir`].
///
/// Errors: no folder is known (no `FOLIO_MODEL_DIR`, `XDG_DATA_HOME` or `HOME`).
pub fn builtin_model_dir(settings: &EmbedSettings) -> Result<std::path::PathBuf, String> {
    match settings.model.as_deref() {
        Some(dir) => Ok(std::path::PathBuf::from(dir)),
        None => super::builtin::installed_model_dir().ok_or_else(|| {
            "no folder for the built-in model: set FOLIO_MODEL_DIR, XDG_DATA_HOME or HOME"
                .to_owned()
        }),
    }
}

/// Loads the built-in provider's second model, USE-Multilingual v3, from
/// [`super::use_m3::default_use_model_dir`] (reads about 8 MB; [`super::use_m3::UseEncoder::load`]).
///
/// Errors: why it cannot be used, for a person: the folder is unknown, the model is not
/// installed there, or its file is not usable (each names `scripts/fetch-model`).
pub fn load_ensemble() -> Result<super::use_m3::UseEncoder, String> {
    let Some(dir) = super::use_m3::default_use_model_dir() else {
        return Err(
            "the second built-in model (USE-Multilingual v3) has no folder: set FOLIO_USE_MODEL_DIR, XDG_DATA_HOME or HOME, then run `folio model install`"
                .to_owned(),
        );
    };
    if !dir.join(super::use_m3::USE_WEIGHTS_FILE).exists() {
        return Err(format!(
            "the second built-in model (USE-Multilingual v3) is not installed in {}; run `folio model install` to install it",
            dir.display()
        ));
    }
    super::use_m3::UseEncoder::load(&dir).map_err(|err| match err {
        super::EmbedError::Unavailable(why) => why,
        other => other.to_string(),
    })
}

/// For provider `builtin`: whether the model files are installed and intact
/// ([`super::builtin::BuiltinEmbedder::verify`]), without building the model; `Ok`
/// for other providers. `folio status` reports it.
///
/// Errors: why the model cannot be loaded (the message names `scripts/fetch-model`).
pub fn check_builtin(settings: &EmbedSettings) -> Result<(), String> {
    if settings.provider != ProviderKind::Builtin {
        return Ok(());
    }
    let dir = builtin_model_dir(settings)?;
    super::builtin::BuiltinEmbedder::verify(&dir).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::user::UserConfig;
    use crate::endpoint::is_loopback_host;

    fn ws(provider: &str, model: Option<&str>, endpoint: Option<&str>) -> EmbedConfig {
        let mut text = format!("[embed]\nprovider = \"{provider}\"\n");
        if let Some(m) = model {
            text.push_str(&format!("model = \"{m}\"\n"));
        }
        if let Some(e) = endpoint {
            text.push_str(&format!("endpoint = \"{e}\"\n"));
        }
        crate::workspace::Config::from_toml(&text)
            .expect("valid folio.toml")
            .embed
    }

    #[test]
    fn defaults_are_builtin() {
        let s = EmbedSettings::resolve(&EmbedConfig::default(), &UserEmbedConfig::default(), false)
            .unwrap();
        assert_eq!(
            (
                s.provider,
                s.provider_source,
                s.endpoint.clone(),
                s.batch_size,
                s.timeout_ms,
                s.allow_remote
            ),
            (
                ProviderKind::Builtin,
                SettingSource::Default,
                None,
                32,
                30_000,
                false
            )
        );
        let missing = EmbedSettings {
            model: Some("/nonexistent/folio-model".into()),
            ..s.clone()
        };
        assert_eq!(
            make_embedder(&missing).err().as_deref(),
            Some(
                "embedding provider unavailable: built-in model file /nonexistent/folio-model/e5-small-q4.bin is missing; run `folio model install` to install multilingual-e5-small-q4"
            )
        );
        let none =
            EmbedSettings::resolve(&ws("none", None, None), &UserEmbedConfig::default(), false)
                .unwrap();
        assert!(make_embedder(&none).unwrap().is_none());
    }

    #[test]
    fn remote_endpoint_in_folio_toml_is_refused() {
        let cfg = ws(
            "openai",
            Some("text-embedding-3-small"),
            Some("https://embed.example.invalid/v1"),
        );
        let err = EmbedSettings::resolve(&cfg, &UserEmbedConfig::default(), false).unwrap_err();
        assert_eq!(
            err,
            format!(
                "the embedding endpoint `https://embed.example.invalid` is chosen by the workspace's folio.toml \
                 ([embed].endpoint) and is not on this machine; a workspace may only name an endpoint on this machine. To \
                 send your notes to it, set [embed] provider and endpoint in your own config ({}) \
                 and allow it there",
                UserConfig::location()
            )
        );
        // The default OpenAI endpoint is remote too.
        let cfg = ws("openai", Some("m"), None);
        assert!(
            EmbedSettings::resolve(&cfg, &UserEmbedConfig::default(), false)
                .unwrap_err()
                .contains("`https://api.openai.com`")
        );
        // folio.toml cannot allow it itself.
        let err =
            crate::workspace::Config::from_toml("[embed]\nallow_remote = true\n").unwrap_err();
        assert!(
            err.starts_with("[embed].allow_remote cannot be set in a workspace's folio.toml"),
            "{err}"
        );
    }

    #[test]
    fn remote_endpoint_allowed_by_user_config_or_flag() {
        let allow = UserEmbedConfig {
            allow_remote: true,
            ..UserEmbedConfig::default()
        };
        // The user names the endpoint and allows it.
        let user = UserEmbedConfig {
            provider: Some(ProviderKind::Openai),
            model: Some("text-embedding-3-small".to_owned()),
            endpoint: Some("https://embed.example.invalid/v1/".to_owned()),
            ..allow.clone()
        };
        let s = EmbedSettings::resolve(&EmbedConfig::default(), &user, false).unwrap();
        assert_eq!(
            (
                s.endpoint.as_deref(),
                s.endpoint_is_loopback,
                s.allow_remote
            ),
            (Some("https://embed.example.invalid"), false, true)
        );
        // Building the embedder makes no request.
        let e = make_embedder(&s).unwrap().unwrap();
        assert_eq!(
            e.model_id(),
            "openai:text-embedding-3-small@https://embed.example.invalid"
        );
        // The flag allows the user's endpoint for one run.
        let named = UserEmbedConfig {
            allow_remote: false,
            ..user.clone()
        };
        let s = EmbedSettings::resolve(&EmbedConfig::default(), &named, true).unwrap();
        assert_eq!(s.endpoint.as_deref(), Some("https://embed.example.invalid"));
        // The same endpoint named in the user's config is still refused without allow_remote.
        let user = UserEmbedConfig {
            provider: Some(ProviderKind::Ollama),
            model: Some("nomic-embed-text".to_owned()),
            endpoint: Some("http://10.1.2.3:11434".to_owned()),
            ..UserEmbedConfig::default()
        };
        let err = EmbedSettings::resolve(&EmbedConfig::default(), &user, false).unwrap_err();
        assert!(err.starts_with("the embedding endpoint `http://10.1.2.3:11434` (from your config.toml) is not on this machine"), "{err}");
        // A remote endpoint the workspace names, or the default endpoint of a provider the
        // workspace names, stays refused however the user allows remote endpoints.
        let cfg = ws(
            "openai",
            Some("text-embedding-3-small"),
            Some("https://embed.example.invalid/v1/"),
        );
        for (user, flag) in [(&allow, false), (&UserEmbedConfig::default(), true)] {
            let err = EmbedSettings::resolve(&cfg, user, flag).unwrap_err();
            assert!(
                err.contains("chosen by the workspace's folio.toml ([embed].endpoint)"),
                "{err}"
            );
        }
        let err = EmbedSettings::resolve(&ws("openai", Some("m"), None), &allow, true).unwrap_err();
        assert!(
            err.starts_with("the embedding endpoint `https://api.openai.com` is chosen by the workspace's folio.toml ([embed].provider)"),
            "{err}"
        );
        // The user's provider with the workspace's model: the default endpoint is the user's choice.
        let user = UserEmbedConfig {
            provider: Some(ProviderKind::Openai),
            ..allow.clone()
        };
        let s = EmbedSettings::resolve(&ws("openai", Some("m"), None), &user, false).unwrap();
        assert_eq!(s.endpoint.as_deref(), Some("https://api.openai.com"));
    }

    #[test]
    fn loopback_endpoints_are_accepted_from_folio_toml() {
        for endpoint in [
            "http://127.0.0.1:8080",
            "http://localhost:11434/",
            "http://[::1]:9000",
            "http://127.9.9.9",
        ] {
            let s = EmbedSettings::resolve(
                &ws("ollama", Some("m"), Some(endpoint)),
                &UserEmbedConfig::default(),
                false,
            )
            .unwrap_or_else(|e| panic!("{endpoint}: {e}"));
            assert!(s.endpoint_is_loopback, "{endpoint}");
        }
        let s = EmbedSettings::resolve(
            &ws("ollama", Some("m"), None),
            &UserEmbedConfig::default(),
            false,
        )
        .unwrap();
        assert_eq!(s.endpoint.as_deref(), Some("http://127.0.0.1:11434"));
        assert_eq!(
            make_embedder(&s).unwrap().unwrap().model_id(),
            "ollama:m@http://127.0.0.1:11434"
        );
        for host in [
            "0.0.0.0",
            "128.0.0.1",
            "localhost.example.com",
            "::",
            "192.168.1.1",
            "evil-localhost",
        ] {
            assert!(!is_loopback_host(host), "{host}");
        }
    }

    #[test]
    fn user_config_overrides_workspace_per_key() {
        let cfg = ws(
            "ollama",
            Some("workspace-model"),
            Some("http://127.0.0.1:1"),
        );
        let user = UserEmbedConfig {
            model: Some("user-model".to_owned()),
            batch_size: Some(8),
            ..UserEmbedConfig::default()
        };
        let s = EmbedSettings::resolve(&cfg, &user, false).unwrap();
        assert_eq!(
            (
                s.provider,
                s.provider_source,
                s.model.as_deref(),
                s.endpoint.as_deref(),
                s.batch_size
            ),
            (
                ProviderKind::Ollama,
                SettingSource::Workspace,
                Some("user-model"),
                Some("http://127.0.0.1:1"),
                8
            )
        );
    }

    #[test]
    fn invalid_settings_are_errors() {
        // The workspace's ollama model is not taken for the built-in model's folder when
        // FOLIO_EMBED_PROVIDER says builtin.
        let builtin_env = UserEmbedConfig {
            provider: Some(ProviderKind::Builtin),
            provider_from_env: true,
            ..UserEmbedConfig::default()
        };
        let s =
            EmbedSettings::resolve(&ws("ollama", Some("m"), None), &builtin_env, false).unwrap();
        assert_eq!(
            (s.provider, s.provider_source, s.model),
            (ProviderKind::Builtin, SettingSource::Environment, None)
        );
        let s = EmbedSettings::resolve(
            &ws("builtin", Some("/models/e5"), None),
            &builtin_env,
            false,
        )
        .unwrap();
        assert_eq!(s.model.as_deref(), Some("/models/e5"));
        let from_env = UserEmbedConfig {
            provider: Some(ProviderKind::Ollama),
            provider_from_env: true,
            ..UserEmbedConfig::default()
        };
        let err = EmbedSettings::resolve(&EmbedConfig::default(), &from_env, false).unwrap_err();
        assert_eq!(
            err,
            "[embed] provider = \"ollama\" (from FOLIO_EMBED_PROVIDER) needs `model`, the name of the embedding model to request"
        );
        let err = EmbedSettings::resolve(
            &ws("ollama", None, None),
            &UserEmbedConfig::default(),
            false,
        )
        .unwrap_err();
        assert_eq!(
            err,
            "[embed] provider = \"ollama\" (from the workspace's folio.toml) needs `model`, the name of the embedding model to request"
        );
        let err = EmbedSettings::resolve(
            &ws("ollama", Some("m"), Some("ftp://127.0.0.1")),
            &UserEmbedConfig::default(),
            false,
        )
        .unwrap_err();
        assert_eq!(
            err,
            "[embed].endpoint `ftp://127.0.0.1` (from the workspace's folio.toml) is not valid: the scheme must be http or https, not `ftp`"
        );
        let err =
            crate::workspace::Config::from_toml("[embed]\nprovider = \"cohere\"\n").unwrap_err();
        assert!(err.contains("unknown variant `cohere`"), "{err}");
        let user = UserEmbedConfig {
            batch_size: Some(0),
            ..UserEmbedConfig::default()
        };
        let err = EmbedSettings::resolve(&EmbedConfig::default(), &user, false).unwrap_err();
        assert_eq!(
            err,
            "[embed].batch_size = 0 (from your config.toml) must be between 1 and 2048"
        );
        let user = UserEmbedConfig {
            timeout_ms: Some(86_400_000),
            ..UserEmbedConfig::default()
        };
        let err = EmbedSettings::resolve(&EmbedConfig::default(), &user, false).unwrap_err();
        assert_eq!(
            err,
            "[embed].timeout_ms = 86400000 (from your config.toml) must be between 1 and 600000 (10 minutes)"
        );
    }
}
