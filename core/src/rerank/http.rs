//! The HTTP client of a rerank endpoint.
//!
//! - `cohere`: `POST {endpoint}/v1/rerank` with `{"model", "query", "documents": [..],
//!   "top_n"}` (`top_n` = the batch's length, so that every passage is scored), answer
//!   `{"results": [{"index", "relevance_score"}, ..]}` in any order.
//! - `tei`: `POST {endpoint}/rerank` with `{"query", "texts": [..], "truncate": true}`
//!   (plus `"model"` when one is set), answer `[{"index", "score"}, ..]` in any order.
//!
//! Passages go in batches of `batch_size`. Answers are checked: every index of the batch
//! exactly once, finite scores. Any failure (a transport error, a timeout, an HTTP error
//! status, an answer of another shape) is an error naming the URL: the search fails with
//! `UNAVAILABLE` rather than present an order nobody asked for. Redirects are not
//! followed and proxies apply to remote endpoints only ([`crate::service_http`]).

use std::time::Duration;

use serde::Deserialize;

use super::settings::{API_KEY_ENV, RerankSettings};
use crate::config::RerankProvider;
use crate::search::pipeline::Reranker;

/// Largest answer body read, in bytes.
const MAX_BODY_BYTES: u64 = 16 * 1024 * 1024;

/// A reranker behind an HTTP endpoint.
pub struct HttpReranker {
    provider: RerankProvider,
    url: String,
    model: Option<String>,
    api_key: Option<String>,
    batch_size: usize,
    agent: ureq::Agent,
}

impl std::fmt::Debug for HttpReranker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpReranker")
            .field("provider", &self.provider)
            .field("url", &self.url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("batch_size", &self.batch_size)
            .finish()
    }
}

#[derive(Deserialize)]
struct CohereAnswer {
    results: Vec<CohereResult>,
}

#[derive(Deserialize)]
struct CohereResult {
    index: usize,
    relevance_score: f64,
}

#[derive(Deserialize)]
struct TeiResult {
    index: usize,
    score: f64,
}

impl HttpReranker {
    /// The client `settings` describe, with the API key of the environment
    /// ([`super::settings::API_KEY_ENV`]). No request is made here.
    pub fn new(settings: &RerankSettings) -> HttpReranker {
        let path = if settings.provider == RerankProvider::Tei {
            "/rerank"
        } else {
            "/v1/rerank"
        };
        HttpReranker {
            provider: settings.provider,
            url: format!("{}{path}", settings.endpoint),
            model: settings.model.clone(),
            api_key: crate::service_http::api_key_from_env(&API_KEY_ENV),
            batch_size: settings.batch_size.max(1),
            agent: crate::service_http::agent(
                settings.endpoint_is_loopback,
                Duration::from_millis(settings.timeout_ms),
            ),
        }
    }

    /// The full URL requests go to.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The provider (the wire format).
    pub fn provider(&self) -> RerankProvider {
        self.provider
    }

    /// The model name sent, when one is set.
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    /// The scores of one batch, in the batch's order.
    fn request(&self, query: &str, passages: &[&str]) -> Result<Vec<f64>, String> {
        let tei = self.provider == RerankProvider::Tei;
        let body = if tei {
            let mut body = serde_json::json!({
                "query": query,
                "texts": passages,
                "truncate": true,
            });
            if let Some(model) = &self.model {
                body["model"] = model.as_str().into();
            }
            body
        } else {
            serde_json::json!({
                "model": self.model,
                "query": query,
                "documents": passages,
                "top_n": passages.len(),
            })
        }
        .to_string();
        let answer = crate::service_http::post_json(
            &self.agent,
            &self.url,
            &body,
            self.api_key.as_deref(),
            MAX_BODY_BYTES,
        )?;
        if !answer.is_success() {
            return Err(answer.status_message(&self.url));
        }
        let bytes = answer.body;
        let invalid = |err: serde_json::Error| {
            format!("the answer of {} is not a rerank answer: {err}", self.url)
        };
        let pairs: Vec<(usize, f64)> = if tei {
            serde_json::from_slice::<Vec<TeiResult>>(&bytes)
                .map_err(invalid)?
                .into_iter()
                .map(|r| (r.index, r.score))
                .collect()
        } else {
            serde_json::from_slice::<CohereAnswer>(&bytes)
                .map_err(invalid)?
                .results
                .into_iter()
                .map(|r| (r.index, r.relevance_score))
                .collect()
        };
        let mut scores: Vec<Option<f64>> = vec![None; passages.len()];
        for (index, score) in pairs {
            let slot = scores.get_mut(index).ok_or_else(|| {
                format!(
                    "{} scored passage index {index} of a batch of {} (indexes start at 0)",
                    self.url,
                    passages.len()
                )
            })?;
            if !score.is_finite() {
                return Err(format!(
                    "{} sent a score that is not a finite number",
                    self.url
                ));
            }
            if slot.replace(score).is_some() {
                return Err(format!("{} scored passage index {index} twice", self.url));
            }
        }
        let scored = scores.iter().filter(|s| s.is_some()).count();
        if scored != passages.len() {
            return Err(format!(
                "{} scored {scored} of {} passages",
                self.url,
                passages.len()
            ));
        }
        Ok(scores.into_iter().flatten().collect())
    }
}

impl Reranker for HttpReranker {
    fn score(&self, query: &str, passages: &[&str]) -> Result<Vec<f64>, String> {
        let mut out = Vec::with_capacity(passages.len());
        for batch in passages.chunks(self.batch_size) {
            out.extend(self.request(query, batch)?);
        }
        Ok(out)
    }
}
