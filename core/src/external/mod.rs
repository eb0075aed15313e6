//! External links: the `http://` and `https://` links of a workspace's documents, checked
//! over HTTP (`folio check --external`, docs/cli.md), as a docs site's link checker
//! does, and polite to the servers it asks: few requests in flight, each host asked at
//! a bounded rate, a server that answers 429 left alone as long as it says.
//!
//! One job per file:
//! - [`collect`](mod@collect): the links, one entry per URL without its fragment, with every place
//!   that uses it;
//! - [`exclude`]: the URLs not checked (`[links.external].exclude`, hosts reserved for
//!   examples, this machine's unless `include_local`);
//! - [`cache`]: the successes of earlier runs, in the state folder;
//! - [`rate`]: the per-host gate (requests spaced out, `Retry-After` honoured);
//! - [`in_flight`]: the bound on requests in flight at once;
//! - [`retry_after`]: the `Retry-After` header (seconds or HTTP-date);
//! - [`probe`]: one URL checked once (HEAD then GET, redirects, timeout);
//! - [`schedule`]: the worker threads, which URL is next, the retries.
//!
//! Here: the entry point [`check`], its [`Settings`] and [`Report`], and the diagnostics
//! (`broken-external-link`, `rate-limited-external-link`) the report makes.

pub mod cache;
pub mod collect;
pub mod exclude;
pub mod in_flight;
pub mod probe;
pub mod rate;
pub mod retry_after;
pub mod schedule;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use globset::GlobSet;

pub use collect::{ExternalLink, LinkUse, collect};
pub use exclude::Exclusion;

use crate::codes::DiagnosticCode;
use crate::config::ExternalLinksConfig;
use crate::links::Diagnostic;
use crate::workspace::Workspace;

/// How a check runs: `[links.external]` with its units resolved.
#[derive(Clone, Debug)]
pub struct Settings {
    /// URLs not checked (compiled `exclude`).
    pub exclude: GlobSet,
    /// Check links to this machine and its networks too: `localhost`, `*.localhost`,
    /// `.local`, `.internal`, loopback, private and link-local addresses (off by default:
    /// they name the reader's machine, not a published page). Only the user turns it on
    /// (`folio check --external-include-local`), never a workspace's `folio.toml`, so a
    /// cloned repository cannot make a check probe the network it runs in.
    pub include_local: bool,
    /// Requests in flight at once, over every host.
    pub max_concurrency: usize,
    /// The least time between two requests to one host.
    pub per_host_interval: Duration,
    /// Most time one request may take.
    pub timeout: Duration,
    /// Further attempts after a 429 or 503.
    pub retries: u32,
    /// The cache file and the age its entries count for; `None`: no cache.
    pub cache: Option<(PathBuf, Duration)>,
}

impl Settings {
    /// The settings of `config` for the workspace whose state folder is `state_dir`
    /// ([`crate::workspace::state_dir`]; the cache lives there).
    ///
    /// Errors: a value out of range or a bad glob ([`ExternalLinksConfig::exclude_set`]).
    pub fn new(config: &ExternalLinksConfig, state_dir: &Path) -> Result<Settings, String> {
        Ok(Settings {
            exclude: config.exclude_set()?,
            include_local: false,
            max_concurrency: config.max_concurrency,
            per_host_interval: Duration::from_secs_f64(1.0 / config.per_host_per_second),
            timeout: Duration::from_millis(config.timeout_ms),
            retries: config.retries,
            cache: (config.cache_max_age_s > 0).then(|| {
                (
                    state_dir.join(cache::CACHE_FILE),
                    Duration::from_secs(config.cache_max_age_s),
                )
            }),
        })
    }
}

/// Why a link is broken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// An error status (4xx, 5xx, or a 3xx that is not a redirect).
    Status(u16),
    /// A redirect status without a `Location` header.
    RedirectWithoutLocation(u16),
    /// A redirect whose `Location` is not a URL.
    BadLocation {
        /// The redirect's status.
        status: u16,
        /// Why the `Location` does not parse.
        reason: String,
    },
    /// A redirect to a URL that is not `http(s)`.
    RedirectElsewhere(String),
    /// A redirect to a local address, not followed ([`exclude::is_local`]).
    RedirectToLocal(String),
    /// A redirect back to this URL, seen earlier in the chain.
    RedirectLoop(String),
    /// More than [`probe::MAX_REDIRECTS`] redirects.
    TooManyRedirects,
    /// No answer within the timeout.
    Timeout(Duration),
    /// No answer: the host name, the connection or TLS failed (in words).
    Transport(String),
    /// The destination is not a URL (why, from the URL parser).
    InvalidUrl(String),
}

/// What checking one URL came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A 2xx answer.
    Ok {
        /// The status.
        status: u16,
        /// The URL that answered, after redirects.
        final_url: String,
    },
    /// A link that does not work.
    Broken {
        /// Why.
        problem: Problem,
        /// The last URL reached (after the redirects followed).
        final_url: String,
    },
    /// The server still asked to come back later after the retries.
    RateLimited {
        /// The last status, 429 or 503.
        status: u16,
        /// The URL that answered it.
        final_url: String,
        /// Requests made for it (1 + retries).
        attempts: u32,
        /// The wait the last `Retry-After` asked for.
        asked_wait: Option<Duration>,
    },
}

/// One URL and what its check came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checked {
    /// The URL and its uses.
    pub link: ExternalLink,
    /// The outcome.
    pub outcome: Outcome,
    /// True when the outcome is an earlier run's success, from the cache.
    pub from_cache: bool,
}

/// The result of [`check`].
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Every URL checked (or found in the cache), sorted by URL.
    pub checked: Vec<Checked>,
    /// The URLs left out, with why.
    pub excluded: Vec<(ExternalLink, Exclusion)>,
    /// Requests sent.
    pub requests: usize,
    /// Problems with the cache file (not fatal: the check went on without it).
    pub warnings: Vec<String>,
}

impl Report {
    /// URLs answered from the cache.
    pub fn n_from_cache(&self) -> usize {
        self.checked.iter().filter(|c| c.from_cache).count()
    }

    /// URLs found broken.
    pub fn n_broken(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Broken { .. }))
    }

    /// URLs still rate-limited after the retries.
    pub fn n_rate_limited(&self) -> usize {
        self.count(|o| matches!(o, Outcome::RateLimited { .. }))
    }

    fn count(&self, f: impl Fn(&Outcome) -> bool) -> usize {
        self.checked.iter().filter(|c| f(&c.outcome)).count()
    }

    /// The diagnostics of the broken and rate-limited links, by document path, each
    /// document's in source order; without those `[diagnostics]` silences (by code, or
    /// by `silence_targets` matching the URL) and those the document silences itself
    /// (`<!-- folio-ignore … -->`), as for every other code.
    pub fn diagnostics(&self, ws: &Workspace) -> BTreeMap<String, Vec<Diagnostic>> {
        let config = &ws.config().diagnostics;
        let mut by_path: BTreeMap<String, Vec<Diagnostic>> = BTreeMap::new();
        for checked in &self.checked {
            let code = match checked.outcome {
                Outcome::Ok { .. } => continue,
                Outcome::Broken { .. } => DiagnosticCode::BrokenExternalLink,
                Outcome::RateLimited { .. } => DiagnosticCode::RateLimitedExternalLink,
            };
            if config.is_silenced(code, Some(&checked.link.url)) {
                continue;
            }
            let message = message(&checked.link.url, &checked.outcome);
            for place in &checked.link.uses {
                by_path
                    .entry(place.path.clone())
                    .or_default()
                    .push(Diagnostic {
                        code,
                        severity: code.severity(),
                        range: place.range.clone(),
                        message: message.clone(),
                        fix: None,
                    });
            }
        }
        for (path, diags) in &mut by_path {
            diags.sort_by_key(|d| (d.range.start, d.code));
            crate::links::drop_silenced_in_document(ws, path, diags);
        }
        by_path.retain(|_, diags| !diags.is_empty());
        by_path
    }
}

/// `{seconds} s`, with a fraction only when there is one (`0.3 s`, `20 s`).
fn seconds(d: Duration) -> String {
    let ms = d.as_millis();
    if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{} s", d.as_secs_f64())
    }
}

/// `HTTP 404 Not Found` (the reason phrase when the status has a standard one).
fn status_words(status: u16) -> String {
    let reason = ureq::http::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason());
    match reason {
        Some(reason) => format!("HTTP {status} {reason}"),
        None => format!("HTTP {status}"),
    }
}

/// The message of a link to `url` whose check came to `outcome`: what went wrong, with
/// the status and the URL that answered when redirects led elsewhere. Empty for
/// [`Outcome::Ok`].
pub fn message(url: &str, outcome: &Outcome) -> String {
    // A password in a URL is shown as `***`: reports go to CI logs and annotations.
    let url = &shown(url);
    let (final_url, what) = match outcome {
        Outcome::Ok { .. } => return String::new(),
        Outcome::Broken { problem, final_url } => {
            let what = match problem {
                Problem::Status(status) => format!("answers {}", status_words(*status)),
                Problem::RedirectWithoutLocation(status) => {
                    format!("answers {} without a Location", status_words(*status))
                }
                Problem::BadLocation { status, reason } => format!(
                    "answers {} with a Location that is not a URL ({reason})",
                    status_words(*status)
                ),
                Problem::RedirectElsewhere(next) => {
                    format!(
                        "redirects to `{}`, which is not an http(s) URL",
                        shown(next)
                    )
                }
                Problem::RedirectToLocal(next) => format!(
                    "redirects to `{}`, a local address, which is not followed (`--external-include-local` follows it)",
                    shown(next)
                ),
                Problem::RedirectLoop(back) => {
                    format!("redirects back to `{}`: a redirect loop", shown(back))
                }
                Problem::TooManyRedirects => {
                    format!("redirects more than {} times", probe::MAX_REDIRECTS)
                }
                Problem::Timeout(t) => format!("did not answer within {}", seconds(*t)),
                Problem::Transport(why) => format!("cannot be reached: {why}"),
                Problem::InvalidUrl(why) => return format!("`{url}` is not a valid URL: {why}"),
            };
            (final_url, what)
        }
        Outcome::RateLimited {
            status,
            final_url,
            attempts,
            asked_wait,
        } => {
            let times = if *attempts == 1 {
                "once".to_string()
            } else {
                format!("{attempts} times")
            };
            let asked = match asked_wait {
                Some(wait) if *wait > ONE_DAY => {
                    "; it asks to wait more than a day, longer than folio waits".to_string()
                }
                Some(wait) if *wait > schedule::MAX_RETRY_WAIT => format!(
                    "; it asks to wait {}, longer than folio waits",
                    seconds(*wait)
                ),
                _ => String::new(),
            };
            (
                final_url,
                format!(
                    "answers {} (asked {times}{asked}): rate-limited, so not known to work; check it later",
                    status_words(*status)
                ),
            )
        }
    };
    let final_url = &shown(final_url);
    if final_url == url {
        format!("`{url}` {what}")
    } else if let Some(Problem::TooManyRedirects) = problem_of(outcome) {
        format!("`{url}` {what} (the last: `{final_url}`)")
    } else {
        format!("`{url}` redirects to `{final_url}`, which {what}")
    }
}

/// A `Retry-After` longer than this is said as "more than a day" (a server may send any
/// number).
const ONE_DAY: Duration = Duration::from_secs(24 * 60 * 60);

/// `url` as a report shows it: a password it carries (`https://user:pass@host/`) as `***`.
fn shown(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            if parsed.set_password(Some("***")).is_ok() {
                parsed.to_string()
            } else {
                url.to_string()
            }
        }
        _ => url.to_string(),
    }
}

fn problem_of(outcome: &Outcome) -> Option<&Problem> {
    match outcome {
        Outcome::Broken { problem, .. } => Some(problem),
        _ => None,
    }
}

/// Checks every external link of `ws` under `settings` ([`collect()`], then the module's
/// rules): the excluded ones are counted, the fresh successes of the cache reused, the
/// rest asked over HTTP; the cache is then brought up to date. `progress` hears
/// `(done, total)` of the URLs asked. Blocks until every URL has an outcome: at least
/// `links of the busiest host / per_host_per_second`, at worst (every host silent) about
/// `timeout × links / max_concurrency`.
pub fn check(
    ws: &Workspace,
    settings: &Settings,
    progress: Option<schedule::Progress<'_>>,
) -> Report {
    let mut report = Report::default();
    let mut cache = settings.cache.as_ref().map(|(path, max_age)| {
        let (cache, warning) = cache::Cache::load(path, *max_age);
        report.warnings.extend(warning);
        cache
    });
    let started = SystemTime::now();
    let mut to_ask: Vec<ExternalLink> = Vec::new();
    for link in collect(ws) {
        if let Some(why) = exclude::exclusion(&link.url, &settings.exclude, settings.include_local)
        {
            report.excluded.push((link, why));
            continue;
        }
        let hit = cache.as_ref().and_then(|c| c.fresh(&link.url, started));
        match hit {
            Some(entry) => report.checked.push(Checked {
                outcome: Outcome::Ok {
                    status: entry.status,
                    final_url: entry.final_url.clone(),
                },
                link,
                from_cache: true,
            }),
            None => to_ask.push(link),
        }
    }
    let urls: Vec<String> = to_ask.iter().map(|l| l.url.clone()).collect();
    let prober = probe::Prober::new(
        settings.max_concurrency,
        settings.timeout,
        settings.include_local,
    );
    let gate = rate::HostGate::new(settings.per_host_interval);
    let plan = schedule::Plan {
        max_concurrency: settings.max_concurrency,
        retries: settings.retries,
    };
    let outcomes = schedule::run(&urls, plan, &prober, &gate, progress);
    report.requests = prober.requests();
    let now = SystemTime::now();
    for (link, outcome) in to_ask.into_iter().zip(outcomes) {
        if let Some(cache) = cache.as_mut() {
            match &outcome {
                Outcome::Ok { status, final_url } => {
                    cache.record(&link.url, *status, final_url, now)
                }
                _ => cache.forget(&link.url),
            }
        }
        report.checked.push(Checked {
            link,
            outcome,
            from_cache: false,
        });
    }
    report.checked.sort_by(|a, b| a.link.url.cmp(&b.link.url));
    if let Some(cache) = cache.as_mut()
        && let Err(e) = cache.save(now)
    {
        report.warnings.push(e);
    }
    report
}
