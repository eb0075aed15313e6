//! The download rules without a network: names resolve through a fake resolver, so a
//! refusal is shown to happen before any connection is attempted.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use super::*;

/// Resolves a fixed table of names and records every lookup.
#[derive(Debug, Default)]
struct FakeResolver {
    names: HashMap<String, Vec<SocketAddr>>,
    asked: Mutex<Vec<String>>,
}

impl FakeResolver {
    fn with(names: &[(&str, &[&str])]) -> Arc<FakeResolver> {
        Arc::new(FakeResolver {
            names: names
                .iter()
                .map(|(n, addrs)| {
                    (
                        n.to_string(),
                        addrs.iter().map(|a| a.parse().unwrap()).collect(),
                    )
                })
                .collect(),
            asked: Mutex::new(Vec::new()),
        })
    }
}

impl Resolve for FakeResolver {
    fn resolve(&self, host: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
        self.asked.lock().unwrap().push(format!("{host}:{port}"));
        self.names
            .get(host)
            .map(|addrs| {
                addrs
                    .iter()
                    .map(|a| SocketAddr::new(a.ip(), port))
                    .collect()
            })
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "unknown name"))
    }
}

fn fetcher(resolver: Arc<FakeResolver>, test: TestAllowances) -> Fetcher {
    Fetcher::new(FetchConfig {
        test,
        ..FetchConfig::default()
    })
    .unwrap()
    .with_resolver(resolver)
}

fn names() -> Arc<FakeResolver> {
    FakeResolver::with(&[
        ("public.example", &["93.184.216.34:0"]),
        ("loopback.example", &["127.0.0.1:0"]),
        ("private.example", &["10.20.30.40:0"]),
        ("metadata.example", &["169.254.169.254:0"]),
        ("v6-local.example", &["[fd12::1]:0"]),
        ("mapped.example", &["[::ffff:192.168.0.10]:0"]),
        // One public and one private record: the whole name is refused.
        ("mixed.example", &["93.184.216.34:0", "192.168.1.20:0"]),
    ])
}

#[test]
fn names_resolving_to_non_public_addresses_are_refused_before_connecting() {
    let resolver = names();
    let f = fetcher(Arc::clone(&resolver), TestAllowances::default());
    let cases = [
        (
            "https://loopback.example/a.png",
            "127.0.0.1",
            "a loopback address (127.0.0.0/8)",
        ),
        (
            "https://private.example/a.png?sig=secret",
            "10.20.30.40",
            "a private address (10.0.0.0/8)",
        ),
        (
            "https://metadata.example/latest/meta-data",
            "169.254.169.254",
            "a link-local address (169.254.0.0/16, cloud metadata)",
        ),
        (
            "https://v6-local.example/a.png",
            "fd12::1",
            "a unique local (private) address (fc00::/7)",
        ),
        (
            "https://mapped.example/a.png",
            "192.168.0.10",
            "a private address (192.168.0.0/16)",
        ),
        (
            "https://mixed.example/a.png",
            "192.168.1.20",
            "a private address (192.168.0.0/16)",
        ),
    ];
    for (url, address, reason) in cases {
        let err = f.get(url).unwrap_err();
        match &err {
            FetchError::Refused {
                address: a,
                reason: r,
                ..
            } => {
                let shown = match a {
                    IpAddr::V6(v6) => v6
                        .to_ipv4_mapped()
                        .map_or_else(|| v6.to_string(), |v4| v4.to_string()),
                    IpAddr::V4(v4) => v4.to_string(),
                };
                assert_eq!((shown.as_str(), *r), (address, reason), "{url}");
            }
            other => panic!("{url}: {other:?}"),
        }
        assert_eq!(err.code(), Code::PermissionDenied);
        // The signed part of a URL never appears in a message.
        assert!(!err.to_string().contains("secret"), "{err}");
    }
    let asked = resolver.asked.lock().unwrap().clone();
    assert_eq!(
        asked,
        [
            "loopback.example:443",
            "private.example:443",
            "metadata.example:443",
            "v6-local.example:443",
            "mapped.example:443",
            "mixed.example:443"
        ]
    );
}

#[test]
fn literal_addresses_and_other_schemes_are_refused_without_a_lookup() {
    let resolver = names();
    let f = fetcher(Arc::clone(&resolver), TestAllowances::default());
    let err = f.get("http://public.example/a.png").unwrap_err();
    assert_eq!(
        err.to_string(),
        "`http://public.example/a.png`: only https:// downloads are allowed"
    );
    assert_eq!(err.code(), Code::InvalidArgument);
    for url in [
        "https://127.0.0.1/a.png",
        "https://[::1]:8443/a.png",
        "https://10.0.0.1/a.png",
        "https://169.254.169.254/",
        "https://0.0.0.0/",
    ] {
        assert!(
            matches!(f.get(url), Err(FetchError::Refused { .. })),
            "{url}"
        );
    }
    assert!(matches!(
        f.get("file:///etc/passwd"),
        Err(FetchError::NotHttps { .. })
    ));
    assert!(matches!(
        f.get("not a url"),
        Err(FetchError::InvalidUrl { .. })
    ));
    let err = f.get("https://nowhere.example/a.png").unwrap_err();
    assert_eq!(
        err.to_string(),
        "`https://nowhere.example/a.png`: cannot resolve nowhere.example: unknown name"
    );
    // Only the name that is not a literal was looked up.
    assert_eq!(
        *resolver.asked.lock().unwrap(),
        ["nowhere.example:443".to_string()]
    );
}

#[test]
fn the_test_allowance_lets_exactly_one_loopback_socket_through() {
    let allowed: SocketAddr = "127.0.0.1:8443".parse().unwrap();
    let f = fetcher(
        names(),
        TestAllowances {
            trusted_root_pem: None,
            loopback: Some(allowed),
        },
    );
    let url = |s: &str| url::Url::parse(s).unwrap();
    assert_eq!(
        f.vet(&url("https://127.0.0.1:8443/a.png"), false).unwrap(),
        [allowed]
    );
    // The same address on another port, another loopback address, and a name that
    // resolves to loopback on another port stay refused.
    for other in [
        "https://127.0.0.1:8444/a.png",
        "https://127.0.0.2:8443/a.png",
        "https://[::1]:8443/a.png",
        "https://loopback.example/a.png",
    ] {
        assert!(
            matches!(f.vet(&url(other), true), Err(FetchError::Refused { .. })),
            "{other}"
        );
    }
    let err = f.vet(&url("https://[::1]:8443/a.png"), true).unwrap_err();
    assert_eq!(
        err.to_string(),
        "`https://[::1]:8443/a.png`: [::1] resolves to ::1, a loopback address (::1); downloads only reach public addresses (reached by a redirect)"
    );
    // An allowance that is not loopback is a configuration error.
    let bad = Fetcher::new(FetchConfig {
        test: TestAllowances {
            trusted_root_pem: None,
            loopback: Some("10.0.0.1:443".parse().unwrap()),
        },
        ..FetchConfig::default()
    })
    .unwrap_err();
    assert_eq!(
        bad,
        "the test loopback allowance must be a loopback address with a port, not 10.0.0.1:443"
    );
    assert!(
        Fetcher::new(FetchConfig {
            test: TestAllowances {
                trusted_root_pem: Some(b"not pem".to_vec()),
                loopback: None,
            },
            ..FetchConfig::default()
        })
        .unwrap_err()
        .starts_with("the test root certificate is not PEM")
    );
}

#[test]
fn public_names_pass_the_address_rule() {
    let f = fetcher(names(), TestAllowances::default());
    let url = url::Url::parse("https://public.example:8443/a.png").unwrap();
    assert_eq!(
        f.vet(&url, false).unwrap(),
        ["93.184.216.34:8443".parse::<SocketAddr>().unwrap()]
    );
}

#[test]
fn bodies_are_capped_while_streaming() {
    let cap = 10;
    assert_eq!(read_capped(&b"0123456789"[..], cap).unwrap(), b"0123456789");
    assert!(matches!(
        read_capped(&b"0123456789X"[..], cap),
        Err(CappedError::TooLarge)
    ));
    // An endless body stops after cap + 1 bytes.
    let endless = std::io::repeat(7);
    assert!(matches!(
        read_capped(endless, cap),
        Err(CappedError::TooLarge)
    ));
}

#[test]
fn statuses_map_to_codes_and_urls_lose_their_secrets() {
    let err = FetchError::Status {
        url: "https://a.example/x.png".into(),
        status: 404,
        hint: "",
    };
    assert_eq!(err.code(), Code::NotFound);
    let err = FetchError::Status {
        url: "https://a.example/x.png".into(),
        status: 500,
        hint: "",
    };
    assert_eq!(err.code(), Code::InvalidArgument);
    let url = url::Url::parse("https://user:pw@a.example/x.png?token=abc#frag").unwrap();
    assert_eq!(redact(&url), "https://a.example/x.png");
}
