//! Which URLs the external link check leaves alone: those `[links.external].exclude`
//! names, those of hosts reserved for examples, and (unless `include_local`) those of
//! this machine and its networks.

use std::net::IpAddr;

use globset::GlobSet;

/// Why a URL is not checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exclusion {
    /// A glob of `[links.external].exclude` matches it.
    Configured,
    /// Its host is reserved for examples and documentation (RFC 2606, RFC 6761):
    /// `example.com`, `example.net`, `example.org` and their subdomains, and names under
    /// `.example`, `.test` and `.invalid`. A link to one is an illustration, not a page.
    ExampleHost,
    /// Its host is this machine or one of its networks ([`is_local`]) and
    /// `[links.external].include_local` is off.
    Local,
}

/// Why `url` (a URL without its fragment, [`super::ExternalLink::url`]) is not checked,
/// or `None` when it is.
pub fn exclusion(url: &str, exclude: &GlobSet, include_local: bool) -> Option<Exclusion> {
    if exclude.is_match(url) {
        return Some(Exclusion::Configured);
    }
    let parsed = url::Url::parse(url).ok()?;
    if let Some(url::Host::Domain(name)) = parsed.host() {
        let name = name.trim_end_matches('.');
        let under = |suffix: &str| name == suffix || name.ends_with(&format!(".{suffix}"));
        if [
            "example.com",
            "example.net",
            "example.org",
            "example",
            "test",
            "invalid",
        ]
        .into_iter()
        .any(under)
        {
            return Some(Exclusion::ExampleHost);
        }
    }
    (!include_local && is_local(&parsed)).then_some(Exclusion::Local)
}

/// Whether `url`'s host is this machine or one of its networks: `localhost` and names
/// under `.localhost`, `.local` (multicast DNS) and `.internal` (private use), and IP
/// addresses that are not public unicast ones (loopback, private, link-local — the cloud
/// metadata address among them —, documentation ranges: the rule of
/// [`crate::fetch::address::refusal`]). A name is not resolved: one whose address is
/// private is checked.
pub fn is_local(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(name)) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            ["localhost", "local", "internal"]
                .iter()
                .any(|suffix| name == *suffix || name.ends_with(&format!(".{suffix}")))
        }
        Some(url::Host::Ipv4(ip)) => crate::fetch::address::refusal(IpAddr::V4(ip)).is_some(),
        Some(url::Host::Ipv6(ip)) => crate::fetch::address::refusal(IpAddr::V6(ip)).is_some(),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_example_hosts_and_local_hosts_are_left_out() {
        let mut builder = globset::GlobSetBuilder::new();
        builder.add(globset::Glob::new("https://github.com/*/pull/*").unwrap());
        let set = builder.build().unwrap();
        let of = |url: &str, local: bool| exclusion(url, &set, local);
        assert_eq!(
            of("https://github.com/o/r/pull/12", false),
            Some(Exclusion::Configured)
        );
        assert_eq!(of("https://github.com/o/r/issues/12", false), None);
        assert_eq!(
            of("https://www.example.com/x", false),
            Some(Exclusion::ExampleHost)
        );
        assert_eq!(of("http://site.test/", true), Some(Exclusion::ExampleHost));
        assert_eq!(of("https://notexample.com/", false), None);
        for local in [
            "http://localhost:3000/",
            "http://app.localhost/",
            "http://printer.local/",
            "http://127.0.0.1:8080/",
            "http://10.1.2.3/",
            "http://192.168.1.1/",
            "http://169.254.169.254/latest/meta-data",
            "http://[::1]:8000/",
        ] {
            assert_eq!(of(local, false), Some(Exclusion::Local), "{local}");
            assert_eq!(of(local, true), None, "{local}");
        }
        assert_eq!(of("http://93.184.215.14/", false), None);
    }
}
