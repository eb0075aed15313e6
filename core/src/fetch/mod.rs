//! Downloads from URLs a client hands over (file references), safe against SSRF.
//!
//! A download may only reach a public HTTPS server:
//! - **HTTPS only**, for the first URL and for every redirect (at most [`MAX_REDIRECTS`]);
//!   redirects are followed here, one hop at a time, never by the HTTP library.
//! - **Public addresses only.** Before each hop the host name is resolved through the
//!   [`Resolve`] seam and every address it yields is checked ([`address::refusal`]):
//!   one loopback, private, link-local or otherwise non-public address refuses the whole
//!   name. The connection then goes to exactly those checked addresses (the resolver
//!   given to the HTTP library returns them and nothing else), so a second lookup cannot
//!   swap in another address (DNS rebinding). Proxies from the environment are ignored.
//! - **Bounded.** The body is streamed into memory and the download stops once it passes
//!   [`FetchConfig::max_bytes`]; a `Content-Length` above it is refused before reading.
//!
//! Test-only allowances ([`TestAllowances`]) let the end-to-end tests download from a
//! local HTTPS server: a trusted root certificate and one loopback socket address. They
//! are off by default, are read by the `folio` binary from environment variables only
//! (never from `folio.toml` or the user's configuration), and are logged when set.
//!
//! Messages name URLs without their query string or credentials (signed download URLs
//! carry their token there); nothing here logs a URL.

pub mod address;

use std::io::Read;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

use crate::codes::ErrorCode as Code;

/// How many redirects a download follows.
pub const MAX_REDIRECTS: usize = 5;

/// Resolves a host name to socket addresses (the seam tests replace).
pub trait Resolve: Send + Sync + std::fmt::Debug {
    /// Every address of `host` with `port`.
    ///
    /// Errors: the name does not resolve.
    fn resolve(&self, host: &str, port: u16) -> std::io::Result<Vec<SocketAddr>>;
}

/// The operating system's resolver (`getaddrinfo`).
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemResolver;

impl Resolve for SystemResolver {
    fn resolve(&self, host: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
        Ok((host, port).to_socket_addrs()?.collect())
    }
}

/// Allowances for tests that serve downloads from this machine. Off by default; see the
/// module docs for who may set them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TestAllowances {
    /// A PEM root certificate that replaces the public roots: with it, only servers whose
    /// certificate chains to this root are trusted.
    pub trusted_root_pem: Option<Vec<u8>>,
    /// One loopback socket address (IP and port) that the address rule lets through.
    pub loopback: Option<SocketAddr>,
}

impl TestAllowances {
    /// True when no allowance is set.
    pub fn is_empty(&self) -> bool {
        self.trusted_root_pem.is_none() && self.loopback.is_none()
    }
}

/// Limits and allowances of a [`Fetcher`].
#[derive(Clone, Debug)]
pub struct FetchConfig {
    /// The largest body accepted, in bytes.
    pub max_bytes: u64,
    /// Timeout for establishing one connection.
    pub connect_timeout: Duration,
    /// Timeout for one hop, from connecting to the end of the body.
    pub hop_timeout: Duration,
    /// Test-only allowances.
    pub test: TestAllowances,
}

impl Default for FetchConfig {
    fn default() -> Self {
        FetchConfig {
            max_bytes: 25 * 1024 * 1024,
            connect_timeout: Duration::from_secs(10),
            hop_timeout: Duration::from_secs(120),
            test: TestAllowances::default(),
        }
    }
}

/// Why a download did not happen.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    /// Not a URL.
    #[error("`{url}` is not a valid URL: {reason}")]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// What is wrong.
        reason: String,
    },
    /// A scheme other than `https` (first URL or a redirect).
    #[error("`{url}`: only https:// downloads are allowed{after}")]
    NotHttps {
        /// The URL, without query string.
        url: String,
        /// `""`, or " (reached by a redirect)".
        after: &'static str,
    },
    /// The host resolves to an address downloads may not reach.
    #[error(
        "`{url}`: {host} resolves to {address}, {reason}; downloads only reach public addresses{after}"
    )]
    Refused {
        /// The URL, without query string.
        url: String,
        /// The host as written in the URL.
        host: String,
        /// The refused address.
        address: IpAddr,
        /// Which rule it breaks.
        reason: &'static str,
        /// `""`, or " (reached by a redirect)".
        after: &'static str,
    },
    /// The host name does not resolve.
    #[error("`{url}`: cannot resolve {host}: {message}")]
    Unresolved {
        /// The URL, without query string.
        url: String,
        /// The host.
        host: String,
        /// The resolver's message.
        message: String,
    },
    /// More than [`MAX_REDIRECTS`] redirects, or a redirect without a usable `Location`.
    #[error("`{url}`: {reason}")]
    Redirect {
        /// The URL that redirected, without query string.
        url: String,
        /// What went wrong.
        reason: String,
    },
    /// The server answered with an error status.
    #[error("`{url}` answered HTTP {status}{hint}")]
    Status {
        /// The URL, without query string.
        url: String,
        /// The status code.
        status: u16,
        /// Advice for statuses that usually mean an expired link.
        hint: &'static str,
    },
    /// The body (or its announced length) is over the cap.
    #[error("the download is larger than {cap} bytes (25 MiB); nothing was saved")]
    TooLarge {
        /// The cap in bytes.
        cap: u64,
    },
    /// Connecting, TLS or reading failed.
    #[error("`{url}`: download failed: {message}")]
    Network {
        /// The URL, without query string.
        url: String,
        /// The error.
        message: String,
    },
}

impl FetchError {
    /// The stable code: `PERMISSION_DENIED` for a refused address, `NOT_FOUND` for
    /// HTTP 404 and 410, `INVALID_ARGUMENT` for everything else.
    pub fn code(&self) -> Code {
        match self {
            FetchError::Refused { .. } => Code::PermissionDenied,
            FetchError::Status {
                status: 404 | 410, ..
            } => Code::NotFound,
            _ => Code::InvalidArgument,
        }
    }
}

/// A finished download.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Downloaded {
    /// The body.
    pub bytes: Vec<u8>,
    /// The `Content-Type` the server sent, without parameters, lowercase.
    pub content_type: Option<String>,
    /// The last URL of the redirect chain, without query string.
    pub final_url: String,
}

/// Downloads over HTTPS under the rules of the module docs.
#[derive(Clone, Debug)]
pub struct Fetcher {
    config: FetchConfig,
    resolver: Arc<dyn Resolve>,
    roots: ureq::tls::RootCerts,
}

/// The URL without credentials, query string or fragment, for messages.
pub fn redact(url: &url::Url) -> String {
    let mut shown = url.clone();
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.set_query(None);
    shown.set_fragment(None);
    shown.to_string()
}

impl Fetcher {
    /// A fetcher with `config` and the system resolver.
    ///
    /// Errors: the test root certificate is not PEM, or the test loopback allowance is
    /// not a loopback address with a port.
    pub fn new(config: FetchConfig) -> Result<Fetcher, String> {
        let roots = match &config.test.trusted_root_pem {
            None => ureq::tls::RootCerts::WebPki,
            Some(pem) => {
                let cert = ureq::tls::Certificate::from_pem(pem)
                    .map_err(|e| format!("the test root certificate is not PEM: {e}"))?;
                ureq::tls::RootCerts::new_with_certs(&[cert])
            }
        };
        if let Some(addr) = config.test.loopback
            && (!addr.ip().is_loopback() || addr.port() == 0)
        {
            return Err(format!(
                "the test loopback allowance must be a loopback address with a port, not {addr}"
            ));
        }
        Ok(Fetcher {
            config,
            resolver: Arc::new(SystemResolver),
            roots,
        })
    }

    /// The same fetcher resolving names with `resolver` (tests).
    pub fn with_resolver(mut self, resolver: Arc<dyn Resolve>) -> Fetcher {
        self.resolver = resolver;
        self
    }

    /// The limits and allowances.
    pub fn config(&self) -> &FetchConfig {
        &self.config
    }

    /// Checks `url` for one hop: HTTPS, and a host whose every address is public (or is
    /// the test loopback allowance). Returns the addresses to connect to.
    ///
    /// Errors: [`FetchError::NotHttps`], [`FetchError::InvalidUrl`],
    /// [`FetchError::Unresolved`], [`FetchError::Refused`]; nothing is sent anywhere.
    pub fn vet(&self, url: &url::Url, redirected: bool) -> Result<Vec<SocketAddr>, FetchError> {
        let after = if redirected {
            " (reached by a redirect)"
        } else {
            ""
        };
        if url.scheme() != "https" {
            return Err(FetchError::NotHttps {
                url: redact(url),
                after,
            });
        }
        let port = url.port_or_known_default().unwrap_or(443);
        let (host, addrs) = match url.host() {
            None => {
                return Err(FetchError::InvalidUrl {
                    url: redact(url),
                    reason: "no host".into(),
                });
            }
            Some(url::Host::Ipv4(ip)) => (ip.to_string(), vec![SocketAddr::new(ip.into(), port)]),
            Some(url::Host::Ipv6(ip)) => {
                (format!("[{ip}]"), vec![SocketAddr::new(ip.into(), port)])
            }
            Some(url::Host::Domain(name)) => {
                let addrs =
                    self.resolver
                        .resolve(name, port)
                        .map_err(|e| FetchError::Unresolved {
                            url: redact(url),
                            host: name.to_string(),
                            message: e.to_string(),
                        })?;
                if addrs.is_empty() {
                    return Err(FetchError::Unresolved {
                        url: redact(url),
                        host: name.to_string(),
                        message: "no addresses".into(),
                    });
                }
                (name.to_string(), addrs)
            }
        };
        for addr in &addrs {
            if Some(*addr) == self.config.test.loopback {
                continue;
            }
            if let Some(reason) = address::refusal(addr.ip()) {
                return Err(FetchError::Refused {
                    url: redact(url),
                    host,
                    address: addr.ip(),
                    reason,
                    after,
                });
            }
        }
        Ok(addrs)
    }

    /// Downloads `url`, following redirects one checked hop at a time.
    ///
    /// Errors: every [`FetchError`]; on error nothing is kept.
    pub fn get(&self, url: &str) -> Result<Downloaded, FetchError> {
        let mut current = url::Url::parse(url).map_err(|e| FetchError::InvalidUrl {
            url: url.split(['?', '#']).next().unwrap_or(url).to_string(),
            reason: e.to_string(),
        })?;
        for hop in 0..=MAX_REDIRECTS {
            let addrs = self.vet(&current, hop > 0)?;
            let response = self.request(&current, addrs)?;
            let status = response.status().as_u16();
            if matches!(status, 301 | 302 | 303 | 307 | 308) {
                let location = response
                    .headers()
                    .get("location")
                    .and_then(|v| v.to_str().ok())
                    .ok_or_else(|| FetchError::Redirect {
                        url: redact(&current),
                        reason: format!("HTTP {status} without a Location header"),
                    })?;
                current = current.join(location).map_err(|e| FetchError::Redirect {
                    url: redact(&current),
                    reason: format!("invalid redirect Location: {e}"),
                })?;
                continue;
            }
            if !(200..300).contains(&status) {
                return Err(FetchError::Status {
                    url: redact(&current),
                    status,
                    hint: match status {
                        401 | 403 | 404 | 410 => {
                            "; a client's download link may have expired: pass the file reference again"
                        }
                        _ => "",
                    },
                });
            }
            let content_type = response
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .map(|v| v.split(';').next().unwrap_or(v).trim().to_ascii_lowercase());
            let cap = self.config.max_bytes;
            if response.body().content_length().is_some_and(|n| n > cap) {
                return Err(FetchError::TooLarge { cap });
            }
            let bytes =
                read_capped(response.into_body().into_reader(), cap).map_err(|e| match e {
                    CappedError::TooLarge => FetchError::TooLarge { cap },
                    CappedError::Io(e) => FetchError::Network {
                        url: redact(&current),
                        message: e.to_string(),
                    },
                })?;
            return Ok(Downloaded {
                bytes,
                content_type,
                final_url: redact(&current),
            });
        }
        Err(FetchError::Redirect {
            url: redact(&current),
            reason: format!("more than {MAX_REDIRECTS} redirects"),
        })
    }

    /// One request to `url`, connecting only to `addrs`, redirects not followed.
    fn request(
        &self,
        url: &url::Url,
        addrs: Vec<SocketAddr>,
    ) -> Result<ureq::http::Response<ureq::Body>, FetchError> {
        let tls = ureq::tls::TlsConfig::builder()
            .root_certs(self.roots.clone())
            .build();
        let config = ureq::Agent::config_builder()
            .https_only(true)
            .max_redirects(0)
            .http_status_as_error(false)
            .proxy(None)
            .tls_config(tls)
            .user_agent(concat!("folio/", env!("CARGO_PKG_VERSION")))
            .timeout_connect(Some(self.config.connect_timeout))
            .timeout_global(Some(self.config.hop_timeout))
            .build();
        let agent = ureq::Agent::with_parts(
            config,
            ureq::unversioned::transport::DefaultConnector::default(),
            Pinned(addrs),
        );
        agent
            .get(url.as_str())
            .header("accept", "image/png, image/jpeg, image/webp, image/gif")
            .call()
            .map_err(|e| FetchError::Network {
                url: redact(url),
                message: e.to_string(),
            })
    }
}

/// A resolver that answers with addresses checked beforehand and nothing else.
#[derive(Debug)]
struct Pinned(Vec<SocketAddr>);

impl ureq::unversioned::resolver::Resolver for Pinned {
    fn resolve(
        &self,
        _uri: &ureq::http::Uri,
        _config: &ureq::config::Config,
        _timeout: ureq::unversioned::transport::NextTimeout,
    ) -> Result<ureq::unversioned::resolver::ResolvedSocketAddrs, ureq::Error> {
        let mut out = self.empty();
        for addr in self.0.iter().take(16) {
            out.push(*addr);
        }
        if out.is_empty() {
            return Err(ureq::Error::HostNotFound);
        }
        Ok(out)
    }
}

/// Why [`read_capped`] stopped.
#[derive(Debug)]
pub enum CappedError {
    /// More than the cap.
    TooLarge,
    /// Reading failed.
    Io(std::io::Error),
}

/// Reads `reader` to its end into memory, failing as soon as it passes `cap` bytes (it
/// reads at most `cap + 1`).
pub fn read_capped(reader: impl Read, cap: u64) -> Result<Vec<u8>, CappedError> {
    let mut bytes = Vec::new();
    reader
        .take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(CappedError::Io)?;
    if bytes.len() as u64 > cap {
        return Err(CappedError::TooLarge);
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests;
