//! HTTP embedding providers: Ollama-compatible and OpenAI-compatible endpoints.
//!
//! - Ollama: `POST {endpoint}/api/embed` with `{"model", "input": [..]}`,
//!   answer `{"embeddings": [[..], ..]}` in input order.
//! - OpenAI: `POST {endpoint}/v1/embeddings` with `{"model", "input": [..]}`,
//!   answer `{"data": [{"index", "embedding"}, ..]}`, put in order by `index`.
//!
//! Each call sends at most `batch_size` inputs per request. Answers are
//! checked (one vector per input, every index once, one dimension count across
//! all answers, finite values) and L2-normalised.
//!
//! Errors map to [`EmbedError`]:
//! - HTTP 400, 413, 422 and other 4xx not listed below → `Refused` (this input);
//! - 401, 403, 404, 405, 407, 408, 429 (credentials, wrong URL, rate limit),
//!   5xx, connection failures and timeouts → `Unavailable` (the provider);
//! - a 2xx answer that is not a valid embedding → `Invalid`.
//!
//! Redirects are not followed (the API key must not travel elsewhere), and
//! proxies from the environment are used for remote endpoints only.

use std::sync::OnceLock;
use std::time::Duration;

use serde::Deserialize;

use super::{EmbedError, Embedder, normalize};

/// Largest answer body read, in bytes.
const MAX_BODY_BYTES: u64 = 256 * 1024 * 1024;

/// Which wire format an endpoint speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HttpApi {
    /// Ollama's `/api/embed`.
    Ollama,
    /// OpenAI's `/v1/embeddings`.
    OpenAi,
}

/// An embedder behind an HTTP endpoint.
pub struct HttpEmbedder {
    api: HttpApi,
    url: String,
    model: String,
    model_id: String,
    api_key: Option<String>,
    batch_size: usize,
    agent: ureq::Agent,
    dims: OnceLock<usize>,
}

impl std::fmt::Debug for HttpEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpEmbedder")
            .field("api", &self.api)
            .field("url", &self.url)
            .field("model_id", &self.model_id)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("batch_size", &self.batch_size)
            .finish()
    }
}

#[derive(Deserialize)]
struct OllamaAnswer {
    embeddings: Vec<Vec<f64>>,
}

#[derive(Deserialize)]
struct OpenAiAnswer {
    data: Vec<OpenAiItem>,
}

#[derive(Deserialize)]
struct OpenAiItem {
    index: usize,
    embedding: Vec<f64>,
}

impl HttpEmbedder {
    /// An embedder for `model` at `endpoint` (base URL without the API path).
    ///
    /// `timeout` bounds each whole request (connect, send, answer). The model
    /// id is `ollama:{model}@{endpoint}` or `openai:{model}@{endpoint}`.
    /// No request is made here. `loopback` says whether the endpoint is on
    /// this machine (then no proxy is used).
    ///
    /// Errors: `batch_size` is 0.
    pub fn new(
        api: HttpApi,
        endpoint: &str,
        model: &str,
        api_key: Option<String>,
        batch_size: usize,
        timeout: Duration,
        loopback: bool,
    ) -> Result<HttpEmbedder, String> {
        if batch_size == 0 {
            return Err("batch_size must be at least 1".to_owned());
        }
        let endpoint = endpoint.trim_end_matches('/');
        let (path, prefix) = match api {
            HttpApi::Ollama => ("/api/embed", "ollama"),
            HttpApi::OpenAi => ("/v1/embeddings", "openai"),
        };
        let agent = crate::service_http::agent(loopback, timeout);
        Ok(HttpEmbedder {
            api,
            url: format!("{endpoint}{path}"),
            model: model.to_owned(),
            model_id: format!("{prefix}:{model}@{endpoint}"),
            api_key,
            batch_size,
            agent,
            dims: OnceLock::new(),
        })
    }

    /// The full URL requests go to.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// One request for at most `batch_size` inputs.
    fn request(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let body = serde_json::json!({ "model": self.model, "input": texts }).to_string();
        let answer = crate::service_http::post_json(
            &self.agent,
            &self.url,
            &body,
            self.api_key.as_deref(),
            MAX_BODY_BYTES,
        )
        .map_err(EmbedError::Unavailable)?;
        if !answer.is_success() {
            let message = answer.status_message(&self.url);
            return Err(if is_refusal(answer.status) {
                EmbedError::Refused(message)
            } else {
                EmbedError::Unavailable(message)
            });
        }
        let bytes = answer.body;
        let raw: Vec<Vec<f64>> = match self.api {
            HttpApi::Ollama => {
                let answer: OllamaAnswer = serde_json::from_slice(&bytes)
                    .map_err(|err| EmbedError::Invalid(format!("answer of {}: {err}", self.url)))?;
                answer.embeddings
            }
            HttpApi::OpenAi => {
                let answer: OpenAiAnswer = serde_json::from_slice(&bytes)
                    .map_err(|err| EmbedError::Invalid(format!("answer of {}: {err}", self.url)))?;
                let mut slots: Vec<Option<Vec<f64>>> = vec![None; answer.data.len()];
                for item in answer.data {
                    let slot = slots.get_mut(item.index).ok_or_else(|| {
                        EmbedError::Invalid(format!(
                            "answer of {}: index {} out of range",
                            self.url, item.index
                        ))
                    })?;
                    if slot.replace(item.embedding).is_some() {
                        return Err(EmbedError::Invalid(format!(
                            "answer of {}: index {} appears twice",
                            self.url, item.index
                        )));
                    }
                }
                slots
                    .into_iter()
                    .map(|s| s.expect("every slot filled: n items, n distinct indexes < n"))
                    .collect()
            }
        };
        if raw.len() != texts.len() {
            return Err(EmbedError::Invalid(format!(
                "{} sent {} vectors for {} inputs",
                self.url,
                raw.len(),
                texts.len()
            )));
        }
        let mut out = Vec::with_capacity(raw.len());
        for values in raw {
            let mut v: Vec<f32> = values.into_iter().map(|x| x as f32).collect();
            normalize(&mut v).map_err(|err| match err {
                EmbedError::Invalid(why) => EmbedError::Invalid(format!("{} sent {why}", self.url)),
                other => other,
            })?;
            let dims = *self.dims.get_or_init(|| v.len());
            if v.len() != dims {
                return Err(EmbedError::Invalid(format!(
                    "{} sent a vector of {} dimensions; earlier ones had {dims}",
                    self.url,
                    v.len()
                )));
            }
            out.push(v);
        }
        Ok(out)
    }
}

/// True for the 4xx statuses that refuse this input rather than the caller.
fn is_refusal(status: u16) -> bool {
    (400..500).contains(&status) && !matches!(status, 401 | 403 | 404 | 405 | 407 | 408 | 429)
}

impl Embedder for HttpEmbedder {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn dimensions(&self) -> usize {
        self.dims.get().copied().unwrap_or(0)
    }

    fn batch_size(&self) -> usize {
        self.batch_size
    }

    fn embed_passages(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        for batch in texts.chunks(self.batch_size) {
            out.extend(self.request(batch)?);
        }
        Ok(out)
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let mut v = self.request(&[text])?;
        Ok(v.pop().expect("request checks one vector per input"))
    }
}
