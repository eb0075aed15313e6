//! Request limits of `folio mcp --http`: a rate per token and a largest request body.
//!
//! The rate is a token bucket per caller (governor's GCRA): `requests_per_minute` on
//! average, with bursts of up to `burst` requests; a request over it gets 429 with
//! `Retry-After` (whole seconds) and changes nothing. The key is the token's id, or
//! `local` with `--no-auth`. The body limit, [`Limits::max_body_bytes`], is enforced where
//! a POST's body is read (`sessions.rs`): a `Content-Length` over it is 413 before any
//! of the body is read, and a body that grows past it while read is 413 too.

use std::num::NonZeroU32;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};

use crate::caller::Caller;

/// Default requests per minute per token.
pub const DEFAULT_REQUESTS_PER_MINUTE: u32 = 600;
/// Default burst per token.
pub const DEFAULT_BURST: u32 = 60;
/// Default largest request body: 16 MiB, the stdio transport's line limit.
pub const DEFAULT_MAX_BODY_BYTES: usize = crate::transport::MAX_LINE_BYTES;

/// The limits, as configured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Average requests per minute per token.
    pub requests_per_minute: NonZeroU32,
    /// Requests a token may send at once before the average applies.
    pub burst: NonZeroU32,
    /// Largest request body in bytes.
    pub max_body_bytes: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            requests_per_minute: NonZeroU32::new(DEFAULT_REQUESTS_PER_MINUTE).expect("non-zero"),
            burst: NonZeroU32::new(DEFAULT_BURST).expect("non-zero"),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
        }
    }
}

/// The rate limiter shared by every request.
#[derive(Clone)]
pub struct RateLimit {
    limiter: Arc<DefaultKeyedRateLimiter<String>>,
    clock: DefaultClock,
}

impl RateLimit {
    /// A limiter for `limits`.
    pub fn new(limits: &Limits) -> RateLimit {
        let quota = Quota::per_minute(limits.requests_per_minute).allow_burst(limits.burst);
        RateLimit {
            limiter: Arc::new(DefaultKeyedRateLimiter::keyed(quota)),
            clock: DefaultClock::default(),
        }
    }

    /// `Err(seconds to wait)` when `key` is over its rate.
    pub fn check(&self, key: &str) -> Result<(), u64> {
        self.limiter
            .check_key(&key.to_string())
            .map_err(|not_until| {
                let wait = not_until.wait_time_from(self.clock.now());
                wait.as_secs() + u64::from(wait.subsec_nanos() > 0)
            })
    }
}

/// Middleware: 429 with `Retry-After` for a caller over its rate. Runs after
/// authentication, so the key is the token's id.
pub async fn rate_limit(State(rate): State<RateLimit>, request: Request, next: Next) -> Response {
    let caller = request.extensions().get::<Caller>();
    let key = caller.map_or("local", |c| c.token_id.as_str()).to_string();
    // Without tokens (`--no-auth`) every caller shares one rate.
    let whose = if caller.is_some() {
        "this token's request rate is"
    } else {
        "the request rate of this server (no tokens: all callers share it) is"
    };
    match rate.check(&key) {
        Ok(()) => next.run(request).await,
        Err(wait) => {
            tracing::warn!(key, wait, "request over the rate limit refused");
            let mut response = (
                StatusCode::TOO_MANY_REQUESTS,
                format!(
                    "Too Many Requests: {whose} over its limit; retry after the time in Retry-After\n"
                ),
            )
                .into_response();
            response.headers_mut().insert(
                header::RETRY_AFTER,
                HeaderValue::from_str(&wait.max(1).to_string()).expect("digits"),
            );
            super::refusal::read_body_then(request, response).await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_passes_then_the_rate_applies_per_key() {
        let rate = RateLimit::new(&Limits {
            requests_per_minute: NonZeroU32::new(60).unwrap(),
            burst: NonZeroU32::new(3).unwrap(),
            max_body_bytes: 1024,
        });
        assert_eq!(
            (0..4).map(|_| rate.check("a").is_ok()).collect::<Vec<_>>(),
            vec![true, true, true, false]
        );
        // One a second: the next one is about a second away.
        assert_eq!(rate.check("a"), Err(1));
        // Another token has its own bucket.
        assert_eq!(rate.check("b"), Ok(()));
    }
}
