//! The per-host gate of the external link check: requests to one host start at least an
//! interval apart, and a host that asked to be left alone (`Retry-After`) gets no request
//! before the time it named.
//!
//! A host is a name (or IP address) and a port: two servers on one machine are two hosts.
//! The interval is measured from the moment a request is let through, on this process's
//! monotonic clock, so a thread that wakes late never shortens the gap to the next one.
//! A request waits for its host's turn holding no place among the requests in flight
//! ([`InFlight`]): it takes its place, then its turn, and sends at once.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::in_flight::{InFlight, Permit};

/// The key of `url`'s host: `host:port` (the scheme's port when the URL names none), or
/// the empty string for a URL without a host.
pub fn host_key(url: &url::Url) -> String {
    match url.host_str() {
        Some(host) => format!("{host}:{}", url.port_or_known_default().unwrap_or(0)),
        None => String::new(),
    }
}

/// When each host may next be sent a request.
#[derive(Debug)]
pub struct HostGate {
    interval: Duration,
    next: Mutex<HashMap<String, Instant>>,
}

impl HostGate {
    /// A gate that spaces the requests to one host `interval` apart.
    pub fn new(interval: Duration) -> HostGate {
        HostGate {
            interval,
            next: Mutex::new(HashMap::new()),
        }
    }

    /// The gap between two requests to one host.
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// When `host` may next be sent a request (now or earlier when it is free).
    pub fn next_free(&self, host: &str) -> Option<Instant> {
        self.lock().get(host).copied()
    }

    /// Blocks until `host` may be sent a request and a place in `in_flight` is free, then
    /// takes both: the host's next turn comes `interval` later, the place is the
    /// returned permit's until it is dropped (when the answer is in).
    pub fn wait_turn<'a>(&self, host: &str, in_flight: &'a InFlight) -> Permit<'a> {
        loop {
            // The host's turn first, holding nothing.
            while let Some(wait) = self.wait_for(host) {
                std::thread::sleep(wait);
            }
            let permit = in_flight.acquire();
            // Another thread may have taken the turn while this one waited for a place.
            let mut next = self.lock();
            let now = Instant::now();
            if next.get(host).is_none_or(|at| *at <= now) {
                next.insert(host.to_string(), now + self.interval);
                return permit;
            }
        }
    }

    /// How long until `host`'s turn, or `None` when it is free now.
    fn wait_for(&self, host: &str) -> Option<Duration> {
        let now = Instant::now();
        self.lock()
            .get(host)
            .filter(|at| **at > now)
            .map(|at| *at - now)
    }

    /// No request goes to `host` before `until` (a `Retry-After`); an earlier `until`
    /// changes nothing.
    pub fn defer(&self, host: &str, until: Instant) {
        let mut next = self.lock();
        let at = next.entry(host.to_string()).or_insert(until);
        *at = (*at).max(until);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Instant>> {
        // The map holds instants only: one a panicking thread left is still valid.
        self.next.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_names_and_ports() {
        let key = |u: &str| host_key(&url::Url::parse(u).unwrap());
        assert_eq!(key("https://Example.ORG/a"), "example.org:443");
        assert_eq!(key("http://127.0.0.1:8080/"), "127.0.0.1:8080");
        assert_eq!(key("http://[::1]/"), "[::1]:80");
    }

    #[test]
    fn turns_of_one_host_are_an_interval_apart_and_a_deferral_holds() {
        let gate = HostGate::new(Duration::from_millis(50));
        let in_flight = InFlight::new(1);
        let start = Instant::now();
        drop(gate.wait_turn("a:80", &in_flight));
        drop(gate.wait_turn("b:80", &in_flight));
        drop(gate.wait_turn("a:80", &in_flight));
        let second = Instant::now();
        assert!(second - start >= Duration::from_millis(50));
        gate.defer("a:80", second + Duration::from_millis(120));
        gate.defer("a:80", second);
        drop(gate.wait_turn("a:80", &in_flight));
        assert!(Instant::now() - second >= Duration::from_millis(120));
    }
}
