//! The external link check against loopback HTTP servers started here (never the
//! internet): each server answers by a rule on the request's method and path, and
//! records what it was asked and when, so the tests assert requests (count, order,
//! spacing), not speed.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::*;
use crate::config::Config;

/// What a stub server does with one request.
enum Reply {
    /// A status line, the given headers and an empty body.
    Status(u16, Vec<(&'static str, String)>),
    /// A 200 that announces a body of a gigabyte and streams zeros until the client
    /// goes away (at most 64 MiB).
    Huge,
    /// Bytes that are not HTTP.
    Garbage,
    /// Nothing: the connection stays open, silent, for 5 s.
    Silent,
}

/// One request a stub server received.
#[derive(Clone, Debug)]
struct Seen {
    method: String,
    path: String,
    at: Instant,
}

type Rule = dyn Fn(&str, &str, usize) -> Reply + Send + Sync;

/// A loopback HTTP/1.1 server on its own thread, answering each request with
/// `rule(method, path, n)` (`n`: how many requests for that path came before), one
/// connection per request (`Connection: close`), up to a delay of `delay` before
/// answering. It stops when dropped.
struct Stub {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
    stop: Arc<AtomicBool>,
}

impl Stub {
    fn start(
        delay: Duration,
        rule: impl Fn(&str, &str, usize) -> Reply + Send + Sync + 'static,
    ) -> Stub {
        let counters = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        Stub::counting(delay, counters, rule)
    }

    /// [`Stub::start`], counting the requests it holds in `in_flight` and the most ever
    /// held in `max_in_flight`, which several stubs may share.
    fn counting(
        delay: Duration,
        (in_flight, max_in_flight): (Arc<AtomicUsize>, Arc<AtomicUsize>),
        rule: impl Fn(&str, &str, usize) -> Reply + Send + Sync + 'static,
    ) -> Stub {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::<Seen>::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let rule: Arc<Rule> = Arc::new(rule);
        {
            let (seen, stop) = (Arc::clone(&seen), Arc::clone(&stop));
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let (seen, in_flight, max_in_flight, rule) = (
                        Arc::clone(&seen),
                        Arc::clone(&in_flight),
                        Arc::clone(&max_in_flight),
                        Arc::clone(&rule),
                    );
                    std::thread::spawn(move || {
                        answer(stream, delay, &seen, &in_flight, &max_in_flight, &*rule)
                    });
                }
            });
        }
        Stub { addr, seen, stop }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// `METHOD /path` of every request, in order.
    fn requests(&self) -> Vec<String> {
        self.seen()
            .iter()
            .map(|s| format!("{} {}", s.method, s.path))
            .collect()
    }

    /// `METHOD /path` of the requests for `path`, in order.
    fn requests_for(&self, path: &str) -> Vec<String> {
        self.requests()
            .into_iter()
            .filter(|r| r.ends_with(&format!(" {path}")))
            .collect()
    }
}

impl Drop for Stub {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
    }
}

fn answer(
    mut stream: TcpStream,
    delay: Duration,
    seen: &Mutex<Vec<Seen>>,
    in_flight: &AtomicUsize,
    max_in_flight: &AtomicUsize,
    rule: &Rule,
) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && head.len() < 16 * 1024 {
        match stream.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
    }
    let head = String::from_utf8_lossy(&head);
    let mut words = head.split_whitespace();
    let (method, path) = (
        words.next().unwrap_or("").to_string(),
        words.next().unwrap_or("").to_string(),
    );
    let n = {
        let mut seen = seen.lock().unwrap();
        let n = seen.iter().filter(|s| s.path == path).count();
        seen.push(Seen {
            method: method.clone(),
            path: path.clone(),
            at: Instant::now(),
        });
        n
    };
    // Counted from the request read to before the answer is written: a request counted
    // here is one the client is still waiting for.
    let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    max_in_flight.fetch_max(now, Ordering::SeqCst);
    std::thread::sleep(delay);
    let reply = rule(&method, &path, n);
    in_flight.fetch_sub(1, Ordering::SeqCst);
    match reply {
        Reply::Status(status, headers) => {
            let mut text =
                format!("HTTP/1.1 {status} Whatever\r\nContent-Length: 0\r\nConnection: close\r\n");
            for (name, value) in headers {
                text.push_str(&format!("{name}: {value}\r\n"));
            }
            text.push_str("\r\n");
            let _ = stream.write_all(text.as_bytes());
        }
        Reply::Huge => {
            let _ = stream.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Length: 1000000000\r\nConnection: close\r\n\r\n",
            );
            if method == "GET" {
                let chunk = vec![0u8; 64 * 1024];
                for _ in 0..1024 {
                    if stream.write_all(&chunk).is_err() {
                        break;
                    }
                }
            }
        }
        Reply::Garbage => {
            let _ = stream.write_all(b"SPLAT \x00\xff\r\n\r\n");
        }
        Reply::Silent => std::thread::sleep(Duration::from_secs(5)),
    }
}

fn status(code: u16) -> Reply {
    Reply::Status(code, Vec::new())
}

fn redirect(code: u16, to: &str) -> Reply {
    Reply::Status(code, vec![("Location", to.to_string())])
}

/// Settings for the tests: local links checked, no cache, 100 requests a second per
/// host unless a test says otherwise.
fn settings(config: &str) -> Settings {
    let rate = if config.contains("per_host_per_second") {
        ""
    } else {
        "per_host_per_second = 100\n"
    };
    let config = Config::from_toml(&format!(
        "[links.external]\ncache_max_age_s = 0\n{rate}{config}"
    ))
    .unwrap();
    let mut settings = Settings::new(&config.links.external, Path::new("/nonexistent")).unwrap();
    settings.include_local = true;
    settings
}

/// `(code, path, line, message)` of every external diagnostic, by path then line.
fn diagnostics_of(ws: &Workspace, report: &Report) -> Vec<(String, String, u32, String)> {
    let mut out = Vec::new();
    for (path, diags) in report.diagnostics(ws) {
        let doc = &ws.get(&path).unwrap().doc;
        for d in diags {
            let line = doc
                .offset_to_line_col(d.range.start, crate::document::Encoding::Utf8)
                .line
                + 1;
            out.push((d.code.to_string(), path.clone(), line, d.message));
        }
    }
    out
}

fn row(code: &str, path: &str, line: u32, message: &str) -> (String, String, u32, String) {
    (code.into(), path.into(), line, message.into())
}

#[test]
fn links_are_collected_once_per_url_with_every_use() {
    let ws = crate::fixture::workspace(
        "//- /a.md\n\
         [x](https://Example.ORG/a#one) and <https://example.org/a#two>\n\
         ![img](http://img.test/p.png) [local](b.md) [mail](mailto:x@y.z)\n\
         [ref][r] [t](https://x.org/{{version}}/)\n\
         \n\
         [r]: https://ref.org/page?q=1\n\
         //- /b.md\n\
         \u{feff}<a href=\"https://example.org/a\">html</a>\n",
    );
    let links = collect(&ws);
    type Uses = Vec<(String, u32, u32)>;
    let summary: Vec<(String, Uses)> = links
        .into_iter()
        .map(|l| {
            (
                l.url,
                l.uses
                    .into_iter()
                    .map(|u| (u.path, u.line, u.column))
                    .collect(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (
                "http://img.test/p.png".to_string(),
                vec![("a.md".to_string(), 2, 8)]
            ),
            (
                "https://example.org/a".to_string(),
                vec![
                    ("a.md".to_string(), 1, 5),
                    ("a.md".to_string(), 1, 37),
                    ("b.md".to_string(), 1, 10)
                ]
            ),
            (
                "https://ref.org/page?q=1".to_string(),
                vec![("a.md".to_string(), 5, 6)]
            ),
        ]
    );
}

#[test]
fn statuses_redirects_loops_and_bad_answers() {
    let stub = Stub::start(Duration::ZERO, |method, path, _| match path {
        "/ok" | "/dup" | "/end" | "/caf%C3%A9" => status(200),
        "/utf8-location" => redirect(301, "/café"),
        "/gone" => status(404),
        "/moved" => redirect(301, "/step"),
        "/step" => redirect(302, "/end"),
        "/to-gone" => redirect(308, "/gone"),
        "/loop-a" => redirect(301, "/loop-b"),
        "/loop-b" => redirect(307, "/loop-a"),
        "/self" => redirect(302, "/self"),
        "/no-location" => status(302),
        "/head-405" if method == "HEAD" => status(405),
        "/head-405" => status(204),
        "/huge" if method == "HEAD" => status(403),
        "/huge" => Reply::Huge,
        "/garbage" => Reply::Garbage,
        "/error" => status(500),
        "/far" => redirect(301, "/far/1"),
        p if p.starts_with("/far/") => {
            let n: u32 = p["/far/".len()..].parse().unwrap();
            redirect(301, &format!("/far/{}", n + 1))
        }
        _ => status(418),
    });
    let u = |p: &str| stub.url(p);
    let text = format!(
        "# Links\n\n\
         [ok]({}) [dup]({}#a) [dup again]({}#b)\n\
         [gone]({})\n\
         [moved]({})\n\
         [to gone]({})\n\
         [loop]({})\n\
         [self]({})\n\
         [no location]({})\n\
         [head]({}) [huge]({})\n\
         [garbage]({})\n\
         [error]({}) <!-- folio-ignore broken-external-link -->\n\
         [far]({})\n\
         [utf-8]({})\n",
        u("/ok"),
        u("/dup"),
        u("/dup"),
        u("/gone"),
        u("/moved"),
        u("/to-gone"),
        u("/loop-a"),
        u("/self"),
        u("/no-location"),
        u("/head-405"),
        u("/huge"),
        u("/garbage"),
        u("/error"),
        u("/far"),
        u("/utf8-location"),
    );
    let ws = crate::fixture::workspace(&format!("//- /a.md\n{text}"));
    let report = check(&ws, &settings(""), None);
    assert_eq!(report.checked.len(), 14);
    assert_eq!(report.n_broken(), 8);
    assert_eq!(report.n_rate_limited(), 0);
    let base = stub.url("");
    assert_eq!(
        diagnostics_of(&ws, &report),
        [
            row(
                "broken-external-link",
                "a.md",
                4,
                &format!("`{base}/gone` answers HTTP 404 Not Found")
            ),
            row(
                "broken-external-link",
                "a.md",
                6,
                &format!(
                    "`{base}/to-gone` redirects to `{base}/gone`, which answers HTTP 404 Not Found"
                )
            ),
            row(
                "broken-external-link",
                "a.md",
                7,
                &format!(
                    "`{base}/loop-a` redirects to `{base}/loop-b`, which redirects back to `{base}/loop-a`: a redirect loop"
                )
            ),
            row(
                "broken-external-link",
                "a.md",
                8,
                &format!("`{base}/self` redirects back to `{base}/self`: a redirect loop")
            ),
            row(
                "broken-external-link",
                "a.md",
                9,
                &format!("`{base}/no-location` answers HTTP 302 Found without a Location")
            ),
            row(
                "broken-external-link",
                "a.md",
                11,
                &format!(
                    "`{base}/garbage` cannot be reached: its answer is not HTTP (http parse fail: invalid HTTP version)"
                )
            ),
            row(
                "broken-external-link",
                "a.md",
                13,
                &format!("`{base}/far` redirects more than 10 times (the last: `{base}/far/11`)")
            ),
        ]
    );
    // One request per URL however many links use it; HEAD first, GET only after an
    // error status; the redirect chain hop by hop, then the 11th hop is not asked.
    assert_eq!(stub.requests_for("/dup"), ["HEAD /dup"]);
    assert_eq!(stub.requests_for("/ok"), ["HEAD /ok"]);
    assert_eq!(
        stub.requests_for("/head-405"),
        ["HEAD /head-405", "GET /head-405"]
    );
    assert_eq!(stub.requests_for("/huge"), ["HEAD /huge", "GET /huge"]);
    assert_eq!(
        stub.requests_for("/gone").len(),
        4,
        "HEAD and GET, twice (direct, via /to-gone)"
    );
    assert_eq!(stub.requests_for("/error"), ["HEAD /error", "GET /error"]);
    assert_eq!(stub.requests_for("/far/10").len(), 1);
    assert!(stub.requests_for("/far/11").is_empty());
    let moved: Vec<String> = stub
        .requests()
        .into_iter()
        .filter(|r| ["/moved", "/step", "/end"].iter().any(|p| r.ends_with(p)))
        .collect();
    assert_eq!(moved, ["HEAD /moved", "HEAD /step", "HEAD /end"]);
    assert_eq!(
        stub.requests_for("/caf%C3%A9"),
        ["HEAD /caf%C3%A9"],
        "a UTF-8 Location is followed"
    );
    let huge = report
        .checked
        .iter()
        .find(|c| c.link.url.ends_with("/huge"))
        .unwrap();
    assert_eq!(
        huge.outcome,
        Outcome::Ok {
            status: 200,
            final_url: stub.url("/huge")
        }
    );
    assert_eq!(report.requests, stub.requests().len());
}

#[test]
fn a_429_is_asked_again_after_its_retry_after_and_then_reported() {
    let stub = Stub::start(Duration::ZERO, |method, path, n| match (path, n) {
        // Busy to HEAD only: the next attempt asks with GET and finds the page.
        ("/head-busy", _) if method == "HEAD" => status(503),
        ("/head-busy", _) => status(200),
        ("/once", 0) => Reply::Status(429, vec![("Retry-After", "1".into())]),
        ("/once", _) => status(200),
        ("/dated", 0) => Reply::Status(
            503,
            vec![(
                "Retry-After",
                httpdate::fmt_http_date(std::time::SystemTime::now() + Duration::from_secs(2)),
            )],
        ),
        ("/dated", _) => status(200),
        ("/always", _) => Reply::Status(429, vec![("Retry-After", "0".into())]),
        ("/hour", _) => Reply::Status(429, vec![("Retry-After", "3600".into())]),
        ("/down", _) => status(503),
        _ => status(418),
    });
    let text = format!(
        "[a]({})\n[b]({})\n[c]({})\n[d]({})\n[e]({})\n[f]({})\n",
        stub.url("/once"),
        stub.url("/dated"),
        stub.url("/always"),
        stub.url("/hour"),
        stub.url("/down"),
        stub.url("/head-busy"),
    );
    let ws = crate::fixture::workspace(&format!("//- /a.md\n{text}"));
    let report = check(&ws, &settings("retries = 2\n"), None);
    let base = stub.url("");
    assert_eq!(
        diagnostics_of(&ws, &report),
        [
            row(
                "rate-limited-external-link",
                "a.md",
                3,
                &format!(
                    "`{base}/always` answers HTTP 429 Too Many Requests (asked 3 times): rate-limited, so not known to work; check it later"
                )
            ),
            row(
                "rate-limited-external-link",
                "a.md",
                4,
                &format!(
                    "`{base}/hour` answers HTTP 429 Too Many Requests (asked once; it asks to wait 3600 s, longer than folio waits): rate-limited, so not known to work; check it later"
                )
            ),
            row(
                "broken-external-link",
                "a.md",
                5,
                &format!("`{base}/down` answers HTTP 503 Service Unavailable")
            ),
        ]
    );
    // After a 429 or 503 to HEAD, the next attempt asks with GET.
    assert_eq!(stub.requests_for("/once"), ["HEAD /once", "GET /once"]);
    assert_eq!(stub.requests_for("/dated"), ["HEAD /dated", "GET /dated"]);
    assert_eq!(
        stub.requests_for("/head-busy"),
        ["HEAD /head-busy", "GET /head-busy"]
    );
    assert_eq!(stub.requests_for("/always").len(), 3, "1 + retries");
    assert_eq!(
        stub.requests_for("/hour").len(),
        1,
        "an hour is not waited for"
    );
    assert_eq!(stub.requests_for("/down").len(), 3);
    // A lower bound only: the retry came no sooner than the server asked.
    let seen = stub.seen();
    let times = |path: &str| -> Vec<Instant> {
        seen.iter()
            .filter(|s| s.path == path)
            .map(|s| s.at)
            .collect()
    };
    let once = times("/once");
    assert!(
        once[1] - once[0] >= Duration::from_secs(1),
        "{:?}",
        once[1] - once[0]
    );
    let dated = times("/dated");
    assert!(
        dated[1] - dated[0] >= Duration::from_secs(1),
        "{:?}",
        dated[1] - dated[0]
    );
    assert_eq!(report.n_rate_limited(), 2);
    assert_eq!(report.n_broken(), 1);
}

#[test]
fn a_server_that_never_answers_times_out_and_a_closed_port_is_refused() {
    let stub = Stub::start(Duration::ZERO, |_, _, _| Reply::Silent);
    let closed = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let ws = crate::fixture::workspace(&format!(
        "//- /a.md\n[silent]({})\n[closed](http://{closed}/x)\n",
        stub.url("/silent")
    ));
    let report = check(&ws, &settings("timeout_ms = 300\n"), None);
    assert_eq!(
        diagnostics_of(&ws, &report),
        [
            row(
                "broken-external-link",
                "a.md",
                1,
                &format!("`{}` did not answer within 0.3 s", stub.url("/silent"))
            ),
            row(
                "broken-external-link",
                "a.md",
                2,
                &format!("`http://{closed}/x` cannot be reached: connection refused")
            ),
        ]
    );
    assert_eq!(
        stub.requests(),
        ["HEAD /silent"],
        "a timeout is not asked again"
    );
}

#[test]
fn requests_to_one_host_keep_its_rate_and_the_check_its_concurrency() {
    let slow = Duration::from_millis(100);
    let counters = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let stub = || Stub::counting(slow, counters.clone(), |_, _, _| status(200));
    let busy = stub();
    let others: Vec<Stub> = (0..3).map(|_| stub()).collect();
    let mut text = String::new();
    for i in 0..11 {
        text.push_str(&format!("[p{i}]({})\n", busy.url(&format!("/p{i}"))));
    }
    for (h, other) in others.iter().enumerate() {
        for i in 0..3 {
            text.push_str(&format!("[o{h}-{i}]({})\n", other.url(&format!("/o{i}"))));
        }
    }
    let ws = crate::fixture::workspace(&format!("//- /a.md\n{text}"));
    let report = check(
        &ws,
        &settings("per_host_per_second = 5\nmax_concurrency = 3\n"),
        None,
    );
    assert_eq!(report.n_broken(), 0);
    assert_eq!(busy.requests().len(), 11);
    // At most 5 requests in any one-second window of the busy host: the 1st and the 6th
    // of any six in a row are a second apart. The server stamps a request when it has
    // read it, so two stamps can be closer than the two sends by the difference of their
    // trips over the loopback and of their threads' wake-ups: 50 ms are allowed for it.
    let mut at: Vec<Instant> = busy.seen().iter().map(|s| s.at).collect();
    at.sort();
    for pair in at.windows(6) {
        let gap = pair[5] - pair[0];
        assert!(
            gap >= Duration::from_millis(950),
            "6 requests within {gap:?}"
        );
    }
    // The servers count together the requests they hold (from reading one to before
    // answering it, while the check waits for it): never more than `max_concurrency`,
    // and with 100 ms per answer more than one (the check does run them side by side).
    let max = counters.1.load(Ordering::SeqCst);
    assert!((2..=3).contains(&max), "{max} requests in flight at once");
    for other in &others {
        assert_eq!(other.requests().len(), 3);
    }
}

#[test]
fn the_cache_spares_successes_and_asks_failures_again() {
    let stub = Stub::start(Duration::ZERO, |_, path, _| match path {
        "/ok" => status(200),
        _ => status(404),
    });
    let state = tempfile::tempdir().unwrap();
    let config = Config::from_toml("[links.external]\nper_host_per_second = 100\n").unwrap();
    let mut settings = Settings::new(&config.links.external, &state.path().join(".folio")).unwrap();
    settings.include_local = true;
    let ws = crate::fixture::workspace(&format!(
        "//- /a.md\n[ok]({})\n[gone]({})\n",
        stub.url("/ok"),
        stub.url("/gone")
    ));
    let first = check(&ws, &settings, None);
    assert_eq!((first.n_from_cache(), first.n_broken()), (0, 1));
    assert_eq!(stub.requests().len(), 3, "HEAD /ok, HEAD and GET /gone");
    assert!(
        state
            .path()
            .join(".folio")
            .join(cache::CACHE_FILE)
            .is_file()
    );
    let second = check(&ws, &settings, None);
    assert_eq!((second.n_from_cache(), second.n_broken()), (1, 1));
    assert_eq!(
        stub.requests_for("/ok"),
        ["HEAD /ok"],
        "a success is not asked again"
    );
    assert_eq!(
        stub.requests_for("/gone"),
        ["HEAD /gone", "GET /gone", "HEAD /gone", "GET /gone"],
        "a failure is"
    );
    assert_eq!(second.requests, 2);
    assert_eq!(diagnostics_of(&ws, &first), diagnostics_of(&ws, &second));
}

#[test]
fn exclusions_and_silences_apply() {
    let stub = Stub::start(Duration::ZERO, |_, _, _| status(404));
    let ws = crate::fixture::workspace_with(
        &format!(
            "//- /a.md\n[a]({})\n[b]({})\n[c]({}) <!-- folio-ignore broken-external-link -->\n[d](http://localhost:1/x)\n[e](https://www.example.com/)\n",
            stub.url("/skipped/1"),
            stub.url("/silenced"),
            stub.url("/inline"),
        ),
        Config::from_toml(&format!(
            "[diagnostics]\nsilence_targets = [\"{}\"]\n",
            stub.url("/silenced")
        ))
        .unwrap(),
    );
    let config = Config::from_toml(&format!(
        "[links.external]\ncache_max_age_s = 0\nexclude = [\"{}\"]\n",
        stub.url("/skipped/*")
    ))
    .unwrap();
    let settings = Settings::new(&config.links.external, Path::new("/nonexistent")).unwrap();
    let report = check(&ws, &settings, None);
    let excluded: Vec<(String, Exclusion)> = report
        .excluded
        .iter()
        .map(|(l, why)| (l.url.clone(), *why))
        .collect();
    // Without `include_local`, the stub itself is local: only the glob's link is
    // excluded for the glob.
    assert_eq!(
        excluded,
        [
            (stub.url("/inline"), Exclusion::Local),
            (stub.url("/silenced"), Exclusion::Local),
            (stub.url("/skipped/1"), Exclusion::Configured),
            ("http://localhost:1/x".to_string(), Exclusion::Local),
            (
                "https://www.example.com/".to_string(),
                Exclusion::ExampleHost
            ),
        ]
    );
    assert!(stub.requests().is_empty());
    let mut settings = settings;
    settings.include_local = true;
    let report = check(&ws, &settings, None);
    assert_eq!(report.checked.len(), 3);
    assert_eq!(report.n_broken(), 3);
    assert_eq!(
        diagnostics_of(&ws, &report),
        [row(
            "broken-external-link",
            "a.md",
            4,
            "`http://localhost:1/x` cannot be reached: connection refused"
        )],
        "the silenced target and the inline silence are not reported"
    );
}

#[test]
fn bad_settings_are_refused_by_name() {
    for (toml, error) in [
        (
            "max_concurrency = 0",
            "[links.external].max_concurrency must be between 1 and 64, not 0",
        ),
        (
            "per_host_per_second = 0",
            "[links.external].per_host_per_second must be between 0.01 and 100, not 0",
        ),
        (
            "timeout_ms = 5",
            "[links.external].timeout_ms must be between 100 and 600000 (milliseconds), not 5",
        ),
        (
            "retries = 11",
            "[links.external].retries must be between 0 and 10, not 11",
        ),
    ] {
        assert_eq!(
            Config::from_toml(&format!("[links.external]\n{toml}\n")).unwrap_err(),
            error
        );
    }
    let err = Config::from_toml("[links.external]\nexclude = [\"[\"]\n").unwrap_err();
    assert!(
        err.starts_with("invalid glob `[` in [links.external].exclude"),
        "{err}"
    );
    let err = Config::from_toml("[links.external]\nconcurrency = 1\n").unwrap_err();
    assert!(err.contains("unknown field `concurrency`"), "{err}");
}

/// A report never shows a URL's password, and a server's absurd `Retry-After` is said as
/// "more than a day".
#[test]
fn reports_hide_passwords_and_say_a_wait_of_days_in_words() {
    let broken = Outcome::Broken {
        problem: Problem::Status(404),
        final_url: "http://alice:s3cret@example.com/x".into(),
    };
    assert_eq!(
        message("http://alice:s3cret@example.com/x", &broken),
        "`http://alice:***@example.com/x` answers HTTP 404 Not Found"
    );
    let limited = Outcome::RateLimited {
        status: 429,
        final_url: "https://example.com/".into(),
        attempts: 1,
        asked_wait: Some(Duration::from_secs(u64::MAX)),
    };
    assert_eq!(
        message("https://example.com/", &limited),
        "`https://example.com/` answers HTTP 429 Too Many Requests (asked once; it asks to wait more than a day, longer than folio waits): rate-limited, so not known to work; check it later"
    );
}
