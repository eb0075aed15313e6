//! Where folio may send text: the checks every HTTP service endpoint of the user's
//! configuration passes ([`crate::embed::settings`] for `[embed]`,
//! [`crate::rerank::settings`] for `[rerank]`).
//!
//! **The rule.** An endpoint whose host is not loopback (`localhost`, `127.0.0.0/8`,
//! `::1`; names are never resolved) is used only when the user chose it (the endpoint,
//! or the provider whose default endpoint it is, set in the user's own config) and
//! allowed it (`allow_remote = true` in that table of the user's config, or a
//! command-line flag where there is one). An endpoint a workspace's `folio.toml`
//! chose must be on this machine, whatever the user allows: a checked-out repository
//! must not be able to send the notes, or an API key of the environment, elsewhere.

use crate::config::user::UserConfig;

/// Where a setting came from, for messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SettingSource {
    /// The built-in default.
    Default,
    /// The workspace's `folio.toml`.
    Workspace,
    /// The user's `config.toml`.
    User,
    /// A command-line flag.
    CommandLine,
    /// The `FOLIO_EMBED_PROVIDER` environment variable.
    Environment,
}

impl SettingSource {
    /// Where the setting came from, for messages: "the workspace's folio.toml",
    /// "your config.toml", "FOLIO_EMBED_PROVIDER", "the command line" or "the default".
    pub fn describe(self) -> &'static str {
        match self {
            SettingSource::Default => "the default",
            SettingSource::Workspace => "the workspace's folio.toml",
            SettingSource::User => "your config.toml",
            SettingSource::CommandLine => "the command line",
            SettingSource::Environment => "FOLIO_EMBED_PROVIDER",
        }
    }

    /// The value set in the user's config (`user`) wins over the workspace's (`workspace`);
    /// returns it with its source, [`SettingSource::Default`] when neither sets it.
    pub fn pick<T: Clone>(user: &Option<T>, workspace: &Option<T>) -> (Option<T>, SettingSource) {
        match (user, workspace) {
            (Some(v), _) => (Some(v.clone()), SettingSource::User),
            (None, Some(v)) => (Some(v.clone()), SettingSource::Workspace),
            (None, None) => (None, SettingSource::Default),
        }
    }
}

/// One configured endpoint, as [`EndpointChoice::admit`] checks it.
#[derive(Clone, Copy, Debug)]
pub struct EndpointChoice<'a> {
    /// The configuration table naming it, without brackets: `embed`, `rerank`.
    pub table: &'a str,
    /// What it serves, for messages: `embedding`, `rerank`.
    pub purpose: &'a str,
    /// The endpoint as written (or the provider's default).
    pub raw: &'a str,
    /// A path the provider's API adds itself (`/v1`), dropped from the end of `raw`
    /// so that both spellings work.
    pub api_prefix: Option<&'a str>,
    /// Where the endpoint came from ([`SettingSource::Default`]: the provider's default).
    pub endpoint_source: SettingSource,
    /// Where the provider came from.
    pub provider_source: SettingSource,
    /// Whether the user allowed remote endpoints (their config or a flag).
    pub allow_remote: bool,
    /// The command-line flag that allows them too, named in the refusal; `None` when
    /// there is none.
    pub allow_flag: Option<&'a str>,
}

/// An endpoint [`EndpointChoice::admit`] accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdmittedEndpoint {
    /// The base URL requests are built on: `raw` trimmed, without trailing `/` or the
    /// `api_prefix`.
    pub base: String,
    /// Whether it is on this machine (else the user allowed a remote endpoint).
    pub loopback: bool,
}

impl EndpointChoice<'_> {
    /// Checks the endpoint against the module's rule and gives its base URL.
    ///
    /// Errors (messages naming the key, its source and the user's config file): `raw`
    /// is not an `http://` or `https://` URL with a host ([`parse_endpoint`]); a remote
    /// endpoint the workspace chose; a remote endpoint nobody allowed.
    pub fn admit(&self) -> Result<AdmittedEndpoint, String> {
        let mut base = self.raw.trim().trim_end_matches('/');
        if let Some(stripped) = self.api_prefix.and_then(|p| base.strip_suffix(p)) {
            base = stripped;
        }
        let admitted = |loopback| AdmittedEndpoint {
            base: base.to_owned(),
            loopback,
        };
        let url = parse_endpoint(self.raw).map_err(|why| {
            format!(
                "[{}].endpoint `{}` (from {}) is not valid: {why}",
                self.table,
                self.raw,
                self.endpoint_source.describe()
            )
        })?;
        if is_loopback_host(&url.host) {
            return Ok(admitted(true));
        }
        let chosen_by_workspace = self.endpoint_source == SettingSource::Workspace
            || (self.endpoint_source == SettingSource::Default
                && self.provider_source == SettingSource::Workspace);
        if chosen_by_workspace {
            return Err(format!(
                "the {} endpoint `{}` is chosen by the workspace's folio.toml ([{}].{}) and is not on \
                 this machine; a workspace may only name an endpoint on this machine. To send your notes to it, set \
                 [{}] provider and endpoint in your own config ({}) and allow it there",
                self.purpose,
                base,
                self.table,
                if self.endpoint_source == SettingSource::Workspace {
                    "endpoint"
                } else {
                    "provider"
                },
                self.table,
                UserConfig::location()
            ));
        }
        if !self.allow_remote {
            let flag = self
                .allow_flag
                .map(|f| format!(" or with {f}"))
                .unwrap_or_default();
            return Err(format!(
                "the {} endpoint `{}` (from {}) is not on this machine; remote endpoints are refused unless \
                 you allow them in your own config (`[{}] allow_remote = true` in {}){flag}; a workspace's \
                 folio.toml cannot allow them",
                self.purpose,
                base,
                self.endpoint_source.describe(),
                self.table,
                UserConfig::location()
            ));
        }
        Ok(admitted(false))
    }
}

/// The longest wait folio accepts for one request to a model server, in milliseconds
/// (10 minutes): a larger `timeout_ms` would leave a search or an index pass hanging on
/// a server that never answers.
pub const MAX_TIMEOUT_MS: u64 = 600_000;

/// `[table].timeout_ms` as chosen (`None`: `default`), checked to be 1–[`MAX_TIMEOUT_MS`].
///
/// Errors: a value outside that range, naming the key and `source`.
pub fn timeout_ms(
    table: &str,
    chosen: Option<u64>,
    source: SettingSource,
    default: u64,
) -> Result<u64, String> {
    let value = chosen.unwrap_or(default);
    if (1..=MAX_TIMEOUT_MS).contains(&value) {
        Ok(value)
    } else {
        Err(format!(
            "[{table}].timeout_ms = {value} (from {}) must be between 1 and {MAX_TIMEOUT_MS} (10 minutes)",
            source.describe()
        ))
    }
}

/// The parts of an endpoint URL that the policy needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointUrl {
    /// `http` or `https`.
    pub scheme: String,
    /// The host, lowercased; an IPv6 address without its brackets.
    pub host: String,
}

/// Parses an `http://` or `https://` URL with a host and no query or fragment.
pub fn parse_endpoint(raw: &str) -> Result<EndpointUrl, String> {
    let raw = raw.trim();
    let (scheme, rest) = raw.split_once("://").ok_or_else(|| {
        "expected an http:// or https:// URL, such as http://127.0.0.1:8080".to_owned()
    })?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return Err(format!("the scheme must be http or https, not `{scheme}`"));
    }
    if rest.contains(['?', '#']) {
        return Err("a query or fragment is not allowed".to_owned());
    }
    let authority = rest.split('/').next().unwrap_or("");
    if authority.contains('@') {
        return Err(
            "credentials in the URL are not allowed (an API key is read from the environment)"
                .to_owned(),
        );
    }
    let host = if let Some(after) = authority.strip_prefix('[') {
        let (host, tail) = after
            .split_once(']')
            .ok_or_else(|| "an unclosed `[` in the host".to_owned())?;
        if !(tail.is_empty()
            || tail
                .strip_prefix(':')
                .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())))
        {
            return Err("a bad port".to_owned());
        }
        host.to_owned()
    } else {
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        };
        if let Some(port) = port
            && (port.is_empty()
                || !port.bytes().all(|b| b.is_ascii_digit())
                || port.parse::<u16>().is_err())
        {
            return Err(format!("`{port}` is not a port"));
        }
        host.to_owned()
    };
    if host.is_empty() {
        return Err("the URL has no host".to_owned());
    }
    Ok(EndpointUrl {
        scheme,
        host: host.to_ascii_lowercase(),
    })
}

/// True for `localhost` (and `*.localhost`), an IPv4 address in `127.0.0.0/8`,
/// and `::1` (also as an IPv4-mapped loopback address). Names are never resolved.
pub fn is_loopback_host(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if host == "localhost" || host.ends_with(".localhost") {
        return true;
    }
    match host.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(v4)) => v4.is_loopback(),
        Ok(std::net::IpAddr::V6(v6)) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choice<'a>(raw: &'a str, endpoint_source: SettingSource) -> EndpointChoice<'a> {
        EndpointChoice {
            table: "rerank",
            purpose: "rerank",
            raw,
            api_prefix: Some("/v1"),
            endpoint_source,
            provider_source: SettingSource::User,
            allow_remote: false,
            allow_flag: None,
        }
    }

    #[test]
    fn a_table_without_a_flag_is_named_in_each_refusal() {
        assert_eq!(
            choice("http://[::1]:8080/v1/", SettingSource::Workspace).admit(),
            Ok(AdmittedEndpoint {
                base: "http://[::1]:8080".into(),
                loopback: true
            })
        );
        assert_eq!(
            choice("https://rerank.example.invalid/", SettingSource::User).admit(),
            Err(format!(
                "the rerank endpoint `https://rerank.example.invalid` (from your config.toml) is not on this machine; \
                 remote endpoints are refused unless you allow them in your own config (`[rerank] allow_remote = true` \
                 in {}); a workspace's folio.toml cannot allow them",
                UserConfig::location()
            ))
        );
        let allowed = EndpointChoice {
            allow_remote: true,
            ..choice("https://rerank.example.invalid", SettingSource::User)
        };
        assert_eq!(
            allowed.admit(),
            Ok(AdmittedEndpoint {
                base: "https://rerank.example.invalid".into(),
                loopback: false
            })
        );
        let workspace = EndpointChoice {
            allow_remote: true,
            ..choice("https://rerank.example.invalid", SettingSource::Workspace)
        };
        assert_eq!(
            workspace.admit(),
            Err(format!(
                "the rerank endpoint `https://rerank.example.invalid` is chosen by the workspace's folio.toml \
                 ([rerank].endpoint) and is not on this machine; a workspace may only name an endpoint on this \
                 machine. To send your notes to it, set [rerank] provider and endpoint in your own config ({}) \
                 and allow it there",
                UserConfig::location()
            ))
        );
        assert_eq!(
            choice("https://key:secret@rerank.example.invalid", SettingSource::User).admit(),
            Err("[rerank].endpoint `https://key:secret@rerank.example.invalid` (from your config.toml) is not \
                 valid: credentials in the URL are not allowed (an API key is read from the environment)"
                .to_owned())
        );
    }
}
