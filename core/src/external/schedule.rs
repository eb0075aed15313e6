//! The order and the threads of the external link check: worker threads, each taking
//! the URL whose host is free soonest, and the retries of a URL whose server asked to
//! come back later.
//!
//! A worker waiting for its host's turn (the HEAD's GET, a redirect's next hop, a retry)
//! holds no place among the requests in flight, so there are more workers than places:
//! `max_concurrency` plus one per host (at most [`MAX_WORKERS`]), so that every host can
//! have a URL under way while the places are busy with the others.
//!
//! Retries (rule of this module): a 429 or a 503 is asked again up to `retries` times,
//! after the wait its `Retry-After` names (seconds or HTTP-date), or without one after
//! 1 s, 2 s, 4 s… Meanwhile no request goes to that host ([`HostGate::defer`]), whoever
//! sends it. A wait longer than [`MAX_RETRY_WAIT`] is not waited for. When no retry is
//! left, a 429, or a 503 that named a wait, is [`Outcome::RateLimited`]; a 503 that never
//! named one is a server that is down: [`Outcome::Broken`].

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::probe::{Probe, Prober};
use super::rate::{HostGate, host_key};
use super::{Outcome, Problem};

/// The longest `Retry-After` the check waits for; a server that asks for more is
/// reported as rate-limited at once (a CI run should not sleep for an hour).
pub const MAX_RETRY_WAIT: Duration = Duration::from_secs(60);

/// The most worker threads one check starts.
pub const MAX_WORKERS: usize = 128;

/// What to do with the URLs.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// Requests in flight at once (the prober enforces it; here it sizes the workers).
    pub max_concurrency: usize,
    /// Further attempts after a 429 or 503.
    pub retries: u32,
}

/// The URLs not yet taken, by host, and how many workers are on each host.
#[derive(Default)]
struct Queue {
    pending: HashMap<String, VecDeque<usize>>,
    busy: HashMap<String, usize>,
}

/// A callback told `(done, total)` URLs as each URL gets its outcome.
pub type Progress<'a> = &'a (dyn Fn(usize, usize) + Sync);

/// Checks every URL of `urls` with `prober`, its requests spaced per host by `gate`: the
/// outcome of each, in the order of `urls`. `progress` hears of each URL done.
pub fn run(
    urls: &[String],
    plan: Plan,
    prober: &Prober,
    gate: &HostGate,
    progress: Option<Progress<'_>>,
) -> Vec<Outcome> {
    let mut queue = Queue::default();
    for (i, url) in urls.iter().enumerate() {
        let host = url::Url::parse(url)
            .map(|u| host_key(&u))
            .unwrap_or_default();
        queue.pending.entry(host).or_default().push_back(i);
    }
    let n_hosts = queue.pending.len();
    let queue = Mutex::new(queue);
    let results: Mutex<Vec<Option<Outcome>>> = Mutex::new(vec![None; urls.len()]);
    let workers = (plan.max_concurrency + n_hosts)
        .min(MAX_WORKERS)
        .min(urls.len())
        .max(1);
    let done = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                while let Some((i, host)) = take(&queue, gate) {
                    // A bug must not end the whole check: the link is reported instead.
                    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        with_retries(&urls[i], plan.retries, prober, gate)
                    }))
                    .unwrap_or_else(|_| Outcome::Broken {
                        problem: Problem::Transport(
                            "the check of this link failed inside folio".into(),
                        ),
                        final_url: urls[i].clone(),
                    });
                    lock(&results)[i] = Some(outcome);
                    let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                    if let Some(progress) = progress {
                        progress(n, urls.len());
                    }
                    if let Some(n) = lock(&queue).busy.get_mut(&host) {
                        *n = n.saturating_sub(1);
                    }
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .zip(urls)
        .map(|(outcome, url)| {
            // Every index is taken once and answered.
            outcome.unwrap_or_else(|| Outcome::Broken {
                problem: Problem::Transport("the check of this link failed inside folio".into()),
                final_url: url.clone(),
            })
        })
        .collect()
}

/// The next URL to check: from the host that will be free soonest, counting the workers
/// already waiting for it, so that idle workers go to other hosts.
fn take(queue: &Mutex<Queue>, gate: &HostGate) -> Option<(usize, String)> {
    let mut queue = lock(queue);
    let now = Instant::now();
    let interval = gate.interval();
    let host = queue
        .pending
        .keys()
        .min_by_key(|host| {
            let free = gate.next_free(host).map_or(now, |at| at.max(now));
            let waiting = queue.busy.get(*host).copied().unwrap_or(0);
            (free + interval * waiting as u32, (*host).clone())
        })?
        .clone();
    let urls = queue.pending.get_mut(&host)?;
    let i = urls.pop_front()?;
    if urls.is_empty() {
        queue.pending.remove(&host);
    }
    *queue.busy.entry(host.clone()).or_default() += 1;
    Some((i, host))
}

/// Checks `url`, asking again after a 429 or 503 as the module says.
fn with_retries(url: &str, retries: u32, prober: &Prober, gate: &HostGate) -> Outcome {
    let mut attempts = 0u32;
    // HEAD first; after a 429 or 503 to HEAD, GET (a working link is never reported for
    // its answer to HEAD).
    let mut head = true;
    loop {
        attempts += 1;
        let (status, final_url, host, retry_after) = match prober.probe(url, gate, head) {
            Probe::Done(outcome) => return outcome,
            Probe::Later {
                status,
                final_url,
                host,
                retry_after,
                to_head,
            } => {
                head &= !to_head;
                (status, final_url, host, retry_after)
            }
        };
        let backoff = Duration::from_secs(1 << (attempts - 1).min(6));
        let wait = retry_after.unwrap_or(backoff);
        if attempts > retries || wait > MAX_RETRY_WAIT {
            return if status == 429 || retry_after.is_some() {
                Outcome::RateLimited {
                    status,
                    final_url,
                    attempts,
                    asked_wait: retry_after,
                }
            } else {
                Outcome::Broken {
                    problem: Problem::Status(status),
                    final_url,
                }
            };
        }
        gate.defer(&host, Instant::now() + wait);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
