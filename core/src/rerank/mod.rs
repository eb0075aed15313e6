//! Reranking: a cross-encoder behind an HTTP endpoint rescoring the search pipeline's
//! candidate pool (stage 3 of [`crate::search::pipeline`]).
//!
//! No cross-encoder ships with folio (none is carried by a Cargo or PyPI package); a
//! user who runs one (text-embeddings-inference, vLLM, llama.cpp's server, Infinity) or
//! pays for one (Cohere, Jina) names it in `[rerank]` ([`settings`]), and the client of
//! [`http`] sends it the pool. Which searches rerank is [`select`]'s rule.

pub mod http;
pub mod settings;

use crate::config::RerankConfig;
use crate::config::user::{UserConfig, UserRerankConfig};
use crate::search::pipeline::PipelineError;

pub use http::HttpReranker;
pub use settings::RerankSettings;

/// What a server knows about reranking: the reranker its settings describe
/// (`Ok(None)`: none configured), or why the settings were refused.
pub type RerankSetup = Result<Option<HttpReranker>, String>;

/// The [`RerankSetup`] of a workspace's and the user's `[rerank]` tables
/// ([`RerankSettings::resolve`], then [`setup_of`]); no request is made.
pub fn setup(workspace: &RerankConfig, user: &UserRerankConfig) -> RerankSetup {
    setup_of(RerankSettings::resolve(workspace, user))
}

/// The [`RerankSetup`] of resolved settings (`crate::host::Options::rerank`): the
/// reranker they describe, none, or why they were refused.
pub fn setup_of(settings: Result<Option<RerankSettings>, String>) -> RerankSetup {
    Ok(settings?.map(|s| HttpReranker::new(&s)))
}

/// The reranker one search uses, given what it asked (`requested`, the request's
/// `rerank`) and what is configured:
///
/// | `requested` | configured reranker | refused settings |
/// |---|---|---|
/// | `None` | used | error |
/// | `Some(true)` | used | error |
/// | `Some(false)` | not used | not used |
///
/// and with nothing configured, `Some(true)` is an error while `None` and `Some(false)`
/// search without a reranker. A configured reranker is so used by default: whoever
/// set one up wants their searches reranked.
///
/// Errors: [`PipelineError::NotConfigured`] saying what to set (nothing configured)
/// or why the settings were refused (and that `rerank: false` searches without them).
pub fn select(
    requested: Option<bool>,
    setup: &RerankSetup,
) -> Result<Option<&HttpReranker>, PipelineError> {
    match (requested, setup) {
        (Some(false), _) => Ok(None),
        (_, Ok(Some(reranker))) => Ok(Some(reranker)),
        (None, Ok(None)) => Ok(None),
        (Some(true), Ok(None)) => Err(PipelineError::NotConfigured(format!(
            "rerank needs a cross-encoder and none is configured: set [rerank] provider (with model and endpoint) \
             in the workspace's folio.toml or in your own config ({}), where provider = \"none\" turns it off \
             (docs/configuration.md; folio mcp reads them when it starts), or search without rerank",
            UserConfig::location()
        ))),
        (_, Err(why)) => Err(PipelineError::NotConfigured(format!(
            "the [rerank] settings are refused: {why}; fix them, or search without the reranker \
             (rerank: false, folio search --no-rerank)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_configured_reranker_is_used_unless_the_request_says_false() {
        let user = UserRerankConfig {
            provider: Some(crate::config::RerankProvider::Tei),
            ..UserRerankConfig::default()
        };
        let configured = setup(&RerankConfig::default(), &user);
        let url = |r: Option<&HttpReranker>| r.map(|r| r.url().to_owned());
        assert_eq!(
            url(select(None, &configured).unwrap()).as_deref(),
            Some("http://127.0.0.1:8080/rerank")
        );
        assert_eq!(
            url(select(Some(true), &configured).unwrap()).as_deref(),
            Some("http://127.0.0.1:8080/rerank")
        );
        assert_eq!(url(select(Some(false), &configured).unwrap()), None);

        let none = setup(&RerankConfig::default(), &UserRerankConfig::default());
        assert!(matches!(none, Ok(None)));
        assert_eq!(url(select(None, &none).unwrap()), None);
        assert_eq!(url(select(Some(false), &none).unwrap()), None);
        assert_eq!(
            select(Some(true), &none).unwrap_err().to_string(),
            format!(
                "not configured: rerank needs a cross-encoder and none is configured: set [rerank] provider (with \
                 model and endpoint) in the workspace's folio.toml or in your own config ({}), where provider = \
                 \"none\" turns it off (docs/configuration.md; folio mcp reads them when it starts), or search \
                 without rerank",
                UserConfig::location()
            )
        );

        let refused: RerankSetup = Err("why".into());
        assert_eq!(url(select(Some(false), &refused).unwrap()), None);
        for requested in [None, Some(true)] {
            assert_eq!(
                select(requested, &refused).unwrap_err().to_string(),
                "not configured: the [rerank] settings are refused: why; fix them, or search without the reranker \
                 (rerank: false, folio search --no-rerank)"
            );
        }
    }
}
