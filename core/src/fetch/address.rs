//! Which addresses a download may connect to: public unicast only.
//!
//! Refused (the SSRF rule): loopback, private (RFC 1918, IPv6 unique local), link-local
//! (including the cloud metadata address 169.254.169.254), shared (carrier-grade NAT),
//! unspecified, broadcast, multicast, documentation, benchmarking and reserved ranges, and
//! IPv6 addresses that embed a refused IPv4 address (mapped, compatible, NAT64, 6to4).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why `ip` may not be contacted, or `None` when it is a public unicast address.
pub fn refusal(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => refusal_v4(v4),
        IpAddr::V6(v6) => refusal_v6(v6),
    }
}

fn refusal_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    Some(match (a, b, c) {
        (0, _, _) => "an unspecified (0.0.0.0/8) address",
        (10, _, _) => "a private address (10.0.0.0/8)",
        (100, 64..=127, _) => "a shared carrier-grade NAT address (100.64.0.0/10)",
        (127, _, _) => "a loopback address (127.0.0.0/8)",
        (169, 254, _) => "a link-local address (169.254.0.0/16, cloud metadata)",
        (172, 16..=31, _) => "a private address (172.16.0.0/12)",
        (192, 0, 0) => "an IETF protocol address (192.0.0.0/24)",
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "a documentation address",
        (192, 88, 99) => "a deprecated 6to4 relay address (192.88.99.0/24)",
        (192, 168, _) => "a private address (192.168.0.0/16)",
        (198, 18..=19, _) => "a benchmarking address (198.18.0.0/15)",
        (224..=239, _, _) => "a multicast address",
        (240..=255, _, _) => "a reserved or broadcast address (240.0.0.0/4)",
        _ => return None,
    })
}

fn refusal_v6(ip: Ipv6Addr) -> Option<&'static str> {
    if ip.is_unspecified() {
        return Some("the unspecified address (::)");
    }
    if ip.is_loopback() {
        return Some("a loopback address (::1)");
    }
    let s = ip.segments();
    let embedded_v4 =
        |hi: u16, lo: u16| Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8);
    match s {
        // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible, deprecated).
        [0, 0, 0, 0, 0, 0xffff, hi, lo] | [0, 0, 0, 0, 0, 0, hi, lo] => {
            return refusal_v4(embedded_v4(hi, lo));
        }
        // NAT64 (64:ff9b::/96) reaches the embedded IPv4 address.
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => return refusal_v4(embedded_v4(hi, lo)),
        _ => {}
    }
    match s[0] {
        0xfe80..=0xfebf => Some("a link-local address (fe80::/10)"),
        0xfec0..=0xfeff => Some("a site-local address (fec0::/10)"),
        0xfc00..=0xfdff => Some("a unique local (private) address (fc00::/7)"),
        0xff00..=0xffff => Some("a multicast address (ff00::/8)"),
        // 6to4 (2002::/16) reaches the IPv4 address in the next 32 bits.
        0x2002 => refusal_v4(embedded_v4(s[1], s[2])),
        0x2001 if s[1] == 0x0db8 => Some("a documentation address (2001:db8::/32)"),
        // Teredo tunnels (2001::/32) hide their real endpoint.
        0x2001 if s[1] == 0 => Some("a Teredo tunnel address (2001::/32)"),
        0x0100 if s[1..4] == [0, 0, 0] => Some("a discard-only address (100::/64)"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_every_non_public_range_and_allows_public_unicast() {
        let refused = [
            "0.0.0.0",
            "10.1.2.3",
            "100.64.0.1",
            "127.0.0.1",
            "127.255.0.9",
            "169.254.169.254",
            "172.16.0.1",
            "172.31.255.255",
            "192.0.0.8",
            "192.0.2.1",
            "192.168.1.1",
            "198.18.0.1",
            "198.51.100.7",
            "203.0.113.9",
            "224.0.0.1",
            "255.255.255.255",
            "::",
            "::1",
            "fe80::1",
            "fd00::1",
            "fc00::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::127.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "2002:c0a8:0101::1",
            "2001:db8::1",
            "2001::1",
        ];
        for ip in refused {
            let parsed: IpAddr = ip.parse().unwrap();
            assert!(refusal(parsed).is_some(), "{ip} must be refused");
        }
        let allowed = [
            "93.184.216.34",
            "8.8.8.8",
            "172.32.0.1",
            "100.128.0.1",
            "192.169.0.1",
            "2606:4700::1111",
            "::ffff:93.184.216.34",
            "2002:5db8:d822::1",
        ];
        for ip in allowed {
            let parsed: IpAddr = ip.parse().unwrap();
            assert_eq!(refusal(parsed), None, "{ip} is public");
        }
        assert_eq!(
            refusal("169.254.169.254".parse().unwrap()),
            Some("a link-local address (169.254.0.0/16, cloud metadata)")
        );
    }
}
