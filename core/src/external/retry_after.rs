//! The `Retry-After` header (RFC 9110 §10.2.3): how long a server that answered 429 or
//! 503 asks to be left alone.

use std::time::{Duration, SystemTime};

/// The wait `value` asks for, seen at `now`: a number of seconds (`120`), or an
/// HTTP-date in any of the three forms RFC 9110 §5.6.7 says a recipient must read
/// (`Sun, 06 Nov 1994 08:49:37 GMT`, its RFC 850 and asctime forms), a date in the past
/// being no wait. `None` for anything else: the caller then waits as it would without
/// the header.
pub fn parse(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        // More digits than a u64 holds is still "a very long time".
        return Some(Duration::from_secs(value.parse().unwrap_or(u64::MAX)));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_and_the_three_date_forms() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_777); // 08:49:37
        let secs = |v: &str| parse(v, now).map(|d| d.as_secs());
        assert_eq!(secs("1"), Some(1));
        assert_eq!(secs(" 120 "), Some(120));
        assert_eq!(secs("99999999999999999999999"), Some(u64::MAX));
        assert_eq!(secs("Sun, 06 Nov 1994 08:49:47 GMT"), Some(10));
        assert_eq!(secs("Sunday, 06-Nov-94 08:50:37 GMT"), Some(60));
        assert_eq!(secs("Sun Nov  6 08:49:39 1994"), Some(2));
        assert_eq!(secs("Sun, 06 Nov 1994 08:00:00 GMT"), Some(0));
        for bad in ["", "-1", "1.5", "soon", "Sun, 06 Nov 1994 25:00:00 GMT"] {
            assert_eq!(secs(bad), None, "{bad}");
        }
    }
}
