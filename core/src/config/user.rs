//! The user's own configuration: `$XDG_CONFIG_HOME/folio/config.toml`, else
//! `~/.config/folio/config.toml`.
//!
//! It holds what a workspace must not decide for itself (docs/configuration.md, "Your own configuration"): a
//! `folio.toml` inside a workspace cannot turn writes on, but the user can.

use std::path::PathBuf;

use crate::serde_wording::{Format, plain};
use serde::Deserialize;

/// Tables of a workspace's `folio.toml` that the user's own configuration does not hold:
/// they describe one collection (what to index, which diagnostics, how links resolve, the
/// ranking's numbers), not the user.
pub const WORKSPACE_ONLY_TABLES: &[&str] = &[
    "index",
    "diagnostics",
    "wiki",
    "best_practice",
    "links",
    "search",
];

/// The user's configuration; every field defaults to the safe choice. An unknown table
/// is an error (a typo is reported, not ignored); a table that only a workspace's
/// `folio.toml` holds ([`WORKSPACE_ONLY_TABLES`]) gets an error saying where it belongs.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct UserConfig {
    /// `[mcp]` settings.
    pub mcp: UserMcpConfig,
    /// `[embed]` settings: override the workspace's, and may allow remote endpoints.
    pub embed: UserEmbedConfig,
    /// `[knowledge]` settings: the KnowledgePulse registry this instance uses or is.
    pub knowledge: UserKnowledgeConfig,
    /// `[rerank]` settings: override the workspace's, and may allow a remote endpoint.
    pub rerank: UserRerankConfig,
}

/// `[knowledge]` in the user's configuration: the KnowledgePulse network registry
/// (docs/knowledgepulse.md, "Network registry"). Only the user's own file may hold it:
/// a cloned workspace must not redirect the user's contributions, or their registry
/// token, to another server.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct UserKnowledgeConfig {
    /// The registry's MCP endpoint (`http://127.0.0.1:8765/mcp`, `https://kb.example.com/mcp`):
    /// `visibility: network` contributions go there, and `kp_search_*` merge its results.
    pub registry: Option<String>,
    /// A file holding the bearer token for `registry` (its first line; outside any
    /// knowledge base). [`REGISTRY_TOKEN_ENV`] wins when set.
    pub registry_token_file: Option<PathBuf>,
    /// Be a registry: `folio mcp` keeps `visibility: network` contributions in this
    /// knowledge base, as the calling token's agent. Cannot be combined with `registry`.
    pub serve_registry: bool,
}

/// Environment variable holding the bearer token for `[knowledge] registry` (wins over
/// `registry_token_file`).
pub const REGISTRY_TOKEN_ENV: &str = "FOLIO_REGISTRY_TOKEN";

impl UserKnowledgeConfig {
    /// The registry token: [`REGISTRY_TOKEN_ENV`], else the first line of
    /// `registry_token_file` (a UTF-8 byte order mark dropped), trimmed. `Ok(None)` when
    /// neither is set.
    ///
    /// Errors: the file cannot be read or holds no token, or the token has a character
    /// an HTTP header cannot carry (anything but visible ASCII); the message names where
    /// the token came from.
    pub fn registry_token(&self) -> Result<Option<String>, String> {
        let checked = |token: &str, from: &str| -> Result<Option<String>, String> {
            if token.bytes().all(|b| b.is_ascii_graphic()) {
                Ok(Some(token.to_string()))
            } else {
                Err(format!(
                    "{from} holds a token with a character other than visible ASCII (a space, a control or non-ASCII character); folio tokens are `folio_` and letters, digits, `-` and `_`"
                ))
            }
        };
        if let Some(token) = std::env::var_os(REGISTRY_TOKEN_ENV).filter(|v| !v.is_empty()) {
            return checked(token.to_string_lossy().trim(), REGISTRY_TOKEN_ENV);
        }
        let Some(path) = &self.registry_token_file else {
            return Ok(None);
        };
        let text = std::fs::read_to_string(path).map_err(|e| {
            format!(
                "[knowledge] registry_token_file: cannot read {}: {e}",
                path.display()
            )
        })?;
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        let token = text.lines().next().unwrap_or("").trim();
        if token.is_empty() {
            return Err(format!(
                "[knowledge] registry_token_file: {} holds no token on its first line",
                path.display()
            ));
        }
        checked(
            token,
            &format!("[knowledge] registry_token_file: {}", path.display()),
        )
    }
}

/// `[embed]` in the user's configuration: the keys of a workspace's `[embed]`
/// (each one set here wins over the workspace's), plus `allow_remote`.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct UserEmbedConfig {
    /// `builtin`, `none`, `ollama` or `openai`.
    pub provider: Option<super::ProviderKind>,
    /// Model name sent to an HTTP provider.
    pub model: Option<String>,
    /// Base URL of an HTTP provider.
    pub endpoint: Option<String>,
    /// Passages per request (1–2048).
    pub batch_size: Option<usize>,
    /// Timeout of one HTTP request in milliseconds.
    pub timeout_ms: Option<u64>,
    /// Allow an endpoint that is not on this machine (not loopback). Only this
    /// file or `--allow-remote-embeddings` can allow it.
    pub allow_remote: bool,
    /// True when `provider` came from [`EMBED_PROVIDER_ENV`] rather than the file
    /// (for messages that name where a setting came from).
    #[serde(skip)]
    pub provider_from_env: bool,
}

/// `[rerank]` in the user's configuration: the keys of a workspace's `[rerank]` (each
/// one set here wins over the workspace's), plus `allow_remote`.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct UserRerankConfig {
    /// `none`, `cohere` or `tei`.
    pub provider: Option<super::RerankProvider>,
    /// Model name sent with each request.
    pub model: Option<String>,
    /// Base URL of the provider.
    pub endpoint: Option<String>,
    /// Passages per request (1–1000).
    pub batch_size: Option<usize>,
    /// Timeout of one request in milliseconds.
    pub timeout_ms: Option<u64>,
    /// Allow an endpoint that is not on this machine (not loopback); only this file
    /// can allow it.
    pub allow_remote: bool,
}

/// `[mcp]` in the user's configuration.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct UserMcpConfig {
    /// Let `folio mcp` write (patch, create, move, delete) without `--allow-writes`.
    pub allow_writes: bool,
    /// The agent id the KnowledgePulse tools record (`folio mcp --agent-id` wins).
    pub agent_id: Option<String>,
    /// `[mcp.http]`: `folio mcp --http`.
    pub http: UserHttpConfig,
}

/// `[mcp.http]` in the user's configuration: settings of `folio mcp --http`.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct UserHttpConfig {
    /// The token file (default: `tokens.toml` beside this file); never inside a knowledge base.
    pub tokens_file: Option<PathBuf>,
    /// Issuer URLs of OAuth authorization servers, published in the protected-resource
    /// metadata (`/.well-known/oauth-protected-resource/mcp`).
    pub authorization_servers: Vec<String>,
    /// `Host` values allowed besides loopback names (as `--allowed-host`).
    pub allowed_hosts: Vec<String>,
    /// Browser origins allowed (as `--allowed-origin`).
    pub allowed_origins: Vec<String>,
    /// Average requests per minute per token (default 600).
    pub requests_per_minute: Option<u32>,
    /// Requests a token may send at once (default 60).
    pub burst: Option<u32>,
    /// Largest request body in bytes (default 16 MiB).
    pub max_body_bytes: Option<usize>,
    /// Live sessions one token may hold (default 32); opening one more closes the token's
    /// least recently used idle session.
    pub sessions_per_token: Option<usize>,
    /// Live sessions in all (default 1024); opening one more closes the least recently
    /// used idle session.
    pub max_sessions: Option<usize>,
    /// Seconds after which a session no request names ends (default 300).
    pub session_idle_seconds: Option<u64>,
    /// Connections open at once (default 512); one more is closed as soon as it is
    /// accepted.
    pub max_connections: Option<usize>,
    /// Seconds a client has to send a request's headers (default 10), from the
    /// connection's start or the end of the previous answer; then the connection closes.
    pub header_read_seconds: Option<u64>,
    /// The agent id whose tokens (of the token file, or OAuth ones whose agent claim is
    /// it) may see and fill the private KnowledgePulse folder, as a stdio client does.
    /// Unset (the default): no HTTP caller may.
    pub private_owner: Option<String>,
    /// `[mcp.http.oauth]`: access tokens issued by OAuth 2.1 authorization servers.
    pub oauth: UserOAuthConfig,
}

/// `[mcp.http.oauth]`: `folio mcp --http` as an OAuth 2.1 resource server (the MCP
/// authorization specification): access tokens of the `issuers` are accepted beside the
/// token file's. Empty `issuers`: OAuth is off.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct UserOAuthConfig {
    /// Issuer identifiers (RFC 8414 `issuer`, e.g. `https://id.example.com/realms/kb`):
    /// their metadata and keys are discovered, and a token's `iss` must be one of them.
    /// `https://`, or `http://` on a loopback address.
    pub issuers: Vec<String>,
    /// The audience a token must name (`aud`, RFC 8707's resource indicator). Default: this
    /// server's resource URI, `{--public-url}/mcp`, else the URL the request reached.
    pub audience: Option<String>,
    /// The scope that grants reading (default `read`).
    pub read_scope: Option<String>,
    /// The scope that grants contributing to KnowledgePulse (default `contribute`).
    pub contribute_scope: Option<String>,
    /// The scope that grants reading and writing (default `read-write`).
    pub read_write_scope: Option<String>,
    /// The claim whose value is the caller's agent id (default `sub`, else `client_id`).
    pub agent_claim: Option<String>,
    /// Clock skew allowed on `exp` and `nbf`, in seconds (default 60, at most 300).
    pub leeway_seconds: Option<u64>,
    /// RFC 7662 token introspection: the client id folio authenticates with (HTTP Basic)
    /// at each issuer's `introspection_endpoint`. When set, every OAuth token is
    /// introspected (a revocation at the issuer takes effect at once) instead of checked
    /// against the issuer's keys.
    pub introspection_client_id: Option<String>,
    /// The client secret for introspection; the environment variable
    /// `FOLIO_OAUTH_CLIENT_SECRET` overrides it.
    pub introspection_client_secret: Option<String>,
}

impl UserHttpConfig {
    /// The token file: `tokens_file`, else the default beside the configuration file.
    pub fn tokens_path(&self) -> Option<PathBuf> {
        self.tokens_file
            .clone()
            .or_else(super::tokens::TokenFile::default_path)
    }
}

/// Environment variable that overrides `[embed] provider` of both configuration files
/// (the user's own setting, like a command-line flag): `builtin`, `none`, `ollama` or
/// `openai`. Tests set it to `none` for lexical-only, deterministic results.
pub const EMBED_PROVIDER_ENV: &str = "FOLIO_EMBED_PROVIDER";

impl UserConfig {
    /// The file's location, if a home or config folder is known.
    pub fn path() -> Option<PathBuf> {
        let base = std::env::var_os("XDG_CONFIG_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
        Some(base.join("folio").join("config.toml"))
    }

    /// The file's location as messages name it: [`UserConfig::path`] (so a user with
    /// `XDG_CONFIG_HOME` set is sent to the file folio reads), else, when neither
    /// `XDG_CONFIG_HOME` nor `HOME` is set, the conventional `~/.config/folio/config.toml`.
    pub fn location() -> String {
        Self::path()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "~/.config/folio/config.toml".to_owned())
    }

    /// Reads the file (a missing file gives the defaults), then applies
    /// [`EMBED_PROVIDER_ENV`].
    ///
    /// Errors: the file exists but is unreadable or not valid TOML (message).
    pub fn load() -> Result<UserConfig, String> {
        let mut config = Self::load_file()?;
        if let Some(value) = std::env::var_os(EMBED_PROVIDER_ENV).filter(|v| !v.is_empty()) {
            let value = value.to_string_lossy();
            let provider = toml::Value::String(value.trim().to_owned()).try_into().map_err(|_| {
                format!("{EMBED_PROVIDER_ENV}=`{value}` is not an embedding provider (builtin, none, ollama or openai)")
            })?;
            config.embed.provider = Some(provider);
            config.embed.provider_from_env = true;
        }
        Ok(config)
    }

    /// Parses the user's configuration text. Errors name the key; a workspace-only table
    /// says it belongs in `folio.toml`.
    pub fn from_toml(text: &str) -> Result<UserConfig, String> {
        if let Ok(table) = text.parse::<toml::Table>()
            && let Some(name) = WORKSPACE_ONLY_TABLES
                .iter()
                .find(|t| table.contains_key(**t))
        {
            return Err(format!(
                "[{name}] is set per workspace: put it in the folio.toml at the workspace's root"
            ));
        }
        toml::from_str(text).map_err(|e| plain(&e.to_string(), Format::Toml))
    }

    fn load_file() -> Result<UserConfig, String> {
        let Some(path) = Self::path() else {
            return Ok(UserConfig::default());
        };
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                Self::from_toml(&text).map_err(|e| format!("invalid {}: {e}", path.display()))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(UserConfig::default()),
            Err(e) => Err(format!("cannot read {}: {e}", path.display())),
        }
    }
}
