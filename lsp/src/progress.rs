//! Work-done progress (`$/progress`) for the scans and reindexes the client may show.

use std::sync::atomic::Ordering;

use tower_lsp_server::Client;
use tower_lsp_server::ls_types::*;

use crate::state::ServerState;

/// A work-done progress the client was asked to create (see [`ServerState::begin_work`]).
pub(crate) struct Work {
    client: Client,
    token: ProgressToken,
}

impl Work {
    async fn send(&self, progress: WorkDoneProgress) {
        let params = ProgressParams {
            token: self.token.clone(),
            value: ProgressParamsValue::WorkDone(progress),
        };
        self.client
            .send_notification::<notification::Progress>(params)
            .await;
    }

    /// `$/progress` report with a message.
    pub(crate) async fn report(&self, message: String) {
        self.send(WorkDoneProgress::Report(WorkDoneProgressReport {
            message: Some(message),
            ..Default::default()
        }))
        .await;
    }

    /// `$/progress` end with a message.
    pub(crate) async fn end(self, message: String) {
        self.send(WorkDoneProgress::End(WorkDoneProgressEnd {
            message: Some(message),
        }))
        .await;
    }
}

/// How long the server waits for the client to answer a request it must have answered
/// before going on (creating a progress token, registering file watching): a client
/// that quits meanwhile never answers.
pub(crate) const CLIENT_ANSWER_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

impl ServerState {
    /// Starts a work-done progress when the client shows them: asks it to create the
    /// token `folio/{kind}/{n}`, then sends `begin`. `None` when the client cannot or refused.
    pub(crate) async fn begin_work(
        &self,
        kind: &str,
        title: &str,
        message: String,
    ) -> Option<Work> {
        if !self.lock().flags.work_done_progress {
            return None;
        }
        let n = self.progress_seq.fetch_add(1, Ordering::Relaxed) + 1;
        let token = NumberOrString::String(format!("folio/{kind}/{n}"));
        // A client that quits (exit, or stdin closed) before it answers never will: the
        // message loop would wait for this handler forever, so the wait is bounded.
        let created = self.client.create_work_done_progress(token.clone());
        match tokio::time::timeout(CLIENT_ANSWER_WAIT, created).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::warn!("the client refused progress {kind}: {e}");
                return None;
            }
            Err(_) => {
                tracing::warn!(
                    "the client did not answer window/workDoneProgress/create for {kind}; no progress shown"
                );
                return None;
            }
        }
        let work = Work {
            client: self.client.clone(),
            token,
        };
        let begin = WorkDoneProgressBegin {
            title: title.to_string(),
            cancellable: Some(false),
            message: Some(message),
            percentage: None,
        };
        work.send(WorkDoneProgress::Begin(begin)).await;
        Some(work)
    }
}
