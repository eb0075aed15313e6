//! One URL checked once over HTTP: a HEAD request, a GET where the HEAD answer is an
//! error, redirects followed one hop at a time; each request waits for its host's turn
//! ([`HostGate`]) and a place among the requests in flight ([`InFlight`]).
//!
//! The rules:
//! - **HEAD, then GET.** A HEAD answer of 4xx or 5xx (other than 429 and 503, which ask
//!   to come back later, and are then asked again with GET) is asked again with GET
//!   before it counts: 405 and 501 are how a
//!   server says it does not do HEAD, and many answer 400, 403 or 404 to HEAD alone
//!   (object stores, single-page applications that route GET only). A link that is
//!   really broken costs one request more; one that works is never reported.
//! - **Redirects** (301, 302, 303, 307, 308) are followed, keeping the method, up to
//!   [`MAX_REDIRECTS`] hops; a `Location` that leads back to a URL of the chain is a
//!   redirect loop. A redirect to a local address (the rule of [`super::exclude`]) is not
//!   followed unless local links are checked, so that a page cannot make the check
//!   reach this machine's services.
//! - **Bodies are never read:** the status and headers are the answer; the connection of
//!   a GET is dropped with its body.
//! - **One timeout per request** (connect, send, answer's headers); a failure is not
//!   retried (retries are for answers that ask for them: [`super::schedule`]).
//!
//! Certificates are checked against the system's store (as browsers do, so a TLS
//! inspecting proxy whose root the system trusts works); proxies come from the
//! environment (`HTTPS_PROXY`, `ALL_PROXY`, `NO_PROXY`), except for loopback addresses.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use super::in_flight::InFlight;
use super::rate::{HostGate, host_key};
use super::{Outcome, Problem};

/// How many redirects one link may go through.
pub const MAX_REDIRECTS: usize = 10;

/// What one probe of a URL came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Probe {
    /// A final answer: the link works or is broken.
    Done(Outcome),
    /// A server of the chain asked to come back later (HTTP 429 or 503).
    Later {
        /// The status, 429 or 503.
        status: u16,
        /// The URL that answered it.
        final_url: String,
        /// Its host ([`host_key`]).
        host: String,
        /// The wait its `Retry-After` asked for, when it had a readable one.
        retry_after: Option<Duration>,
        /// Whether it answered a HEAD request (the next attempt asks with GET).
        to_head: bool,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Method {
    Head,
    Get,
}

/// One answer's status and the headers the check reads.
struct Answer {
    status: u16,
    location: Option<String>,
    retry_after: Option<String>,
}

/// The HTTP side of the check: its agents, the bound on requests in flight and the
/// count of requests sent.
#[derive(Debug)]
pub struct Prober {
    direct: ureq::Agent,
    proxied: ureq::Agent,
    timeout: Duration,
    include_local: bool,
    in_flight: InFlight,
    requests: AtomicUsize,
}

impl Prober {
    /// A prober with at most `max_in_flight` requests out at once, each ending within
    /// `timeout`, following redirects to local addresses only with `include_local`.
    pub fn new(max_in_flight: usize, timeout: Duration, include_local: bool) -> Prober {
        let agent = |proxy: Option<ureq::Proxy>| {
            let tls = ureq::tls::TlsConfig::builder()
                .root_certs(ureq::tls::RootCerts::PlatformVerifier)
                .build();
            ureq::Agent::config_builder()
                .tls_config(tls)
                .http_status_as_error(false)
                .max_redirects(0)
                .timeout_connect(Some(
                    Duration::from_secs(crate::service_http::CONNECT_TIMEOUT_SECS).min(timeout),
                ))
                .timeout_global(Some(timeout))
                .proxy(proxy)
                .user_agent(concat!(
                    "folio/",
                    env!("CARGO_PKG_VERSION"),
                    " (link check)"
                ))
                .build()
                .new_agent()
        };
        Prober {
            direct: agent(None),
            proxied: agent(ureq::Proxy::try_from_env()),
            timeout,
            include_local,
            in_flight: InFlight::new(max_in_flight),
            requests: AtomicUsize::new(0),
        }
    }

    /// How many requests were sent so far.
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::Relaxed)
    }

    /// Checks `url` once (the module's rules), each request after its host's turn at
    /// `gate`; with `head`, HEAD first, else GET only (an attempt after a 429 or 503 to
    /// HEAD: some servers answer HEAD so and GET with the page).
    pub fn probe(&self, url: &str, gate: &HostGate, head: bool) -> Probe {
        let mut current = match url::Url::parse(url) {
            Ok(u) => u,
            Err(e) => {
                return Probe::Done(Outcome::Broken {
                    problem: Problem::InvalidUrl(e.to_string()),
                    final_url: url.to_string(),
                });
            }
        };
        current.set_fragment(None);
        let mut chain = vec![current.to_string()];
        let mut method = if head { Method::Head } else { Method::Get };
        loop {
            let host = host_key(&current);
            let permit = gate.wait_turn(&host, &self.in_flight);
            let sent = self.send(method, &current);
            drop(permit);
            let answer = match sent {
                Ok(a) => a,
                Err(err) => {
                    let problem = match err {
                        ureq::Error::Timeout(_) => Problem::Timeout(self.timeout),
                        ureq::Error::Protocol(e) => {
                            Problem::Transport(format!("its answer is not HTTP ({e})"))
                        }
                        other => Problem::Transport(crate::service_http::describe_error(&other)),
                    };
                    return Probe::Done(Outcome::Broken {
                        problem,
                        final_url: current.to_string(),
                    });
                }
            };
            let status = answer.status;
            let broken = |problem: Problem, at: &url::Url| {
                Probe::Done(Outcome::Broken {
                    problem,
                    final_url: at.to_string(),
                })
            };
            match status {
                200..=299 => {
                    return Probe::Done(Outcome::Ok {
                        status,
                        final_url: current.to_string(),
                    });
                }
                429 | 503 => {
                    return Probe::Later {
                        status,
                        final_url: current.to_string(),
                        host,
                        retry_after: answer
                            .retry_after
                            .as_deref()
                            .and_then(|v| super::retry_after::parse(v, SystemTime::now())),
                        to_head: method == Method::Head,
                    };
                }
                301 | 302 | 303 | 307 | 308 => {
                    let Some(location) = answer.location else {
                        return broken(Problem::RedirectWithoutLocation(status), &current);
                    };
                    let mut next = match current.join(&location) {
                        Ok(next) => next,
                        Err(e) => {
                            return broken(
                                Problem::BadLocation {
                                    status,
                                    reason: e.to_string(),
                                },
                                &current,
                            );
                        }
                    };
                    next.set_fragment(None);
                    let next_text = next.to_string();
                    if !matches!(next.scheme(), "http" | "https") {
                        return broken(Problem::RedirectElsewhere(next_text), &current);
                    }
                    if !self.include_local && super::exclude::is_local(&next) {
                        return broken(Problem::RedirectToLocal(next_text), &current);
                    }
                    if chain.contains(&next_text) {
                        return broken(Problem::RedirectLoop(next_text), &current);
                    }
                    if chain.len() > MAX_REDIRECTS {
                        return broken(Problem::TooManyRedirects, &next);
                    }
                    chain.push(next_text);
                    current = next;
                }
                400..=599 if method == Method::Head => method = Method::Get,
                _ => return broken(Problem::Status(status), &current),
            }
        }
    }

    /// One request, redirects not followed, the body not read.
    fn send(&self, method: Method, url: &url::Url) -> Result<Answer, ureq::Error> {
        let loopback = match url.host() {
            Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        };
        let agent = if loopback {
            &self.direct
        } else {
            &self.proxied
        };
        self.requests.fetch_add(1, Ordering::Relaxed);
        let response = match method {
            Method::Head => agent.head(url.as_str()).call()?,
            Method::Get => agent.get(url.as_str()).call()?,
        };
        // A header as text: UTF-8 (servers send raw UTF-8 in `Location`, which browsers
        // follow; `Url::join` percent-encodes it), else it is not there.
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| std::str::from_utf8(v.as_bytes()).ok())
                .map(str::to_owned)
        };
        Ok(Answer {
            status: response.status().as_u16(),
            location: header("location"),
            retry_after: header("retry-after"),
        })
    }
}
