//! Who is calling: the agent and scope of the bearer token an HTTP request carried.
//!
//! The HTTP layer ([`crate::http::auth`]) puts a [`Caller`] into the request's extensions;
//! rmcp hands the request's `http::request::Parts` to the handler, where
//! [`crate::server`] reads it back and refuses writing tools to a read-only token. Over
//! stdio, and over HTTP with `--no-auth`, there is no caller and the server's own
//! `allow_writes` decides alone.

use folio_core::config::tokens::Scope;
use folio_core::host::{ErrorCode, HostError};
use rmcp::model::Extensions;

/// The tools that change the knowledge base: those that edit, move or delete files, then
/// [`CONTRIBUTING_TOOLS`] (the last three). A read-only token gets `PERMISSION_DENIED` from them before
/// they run. (`kb_reindex` rebuilds the index from the files and changes no file, so a
/// read-only token may run it.)
pub const WRITING_TOOLS: [&str; 12] = [
    "kb_patch",
    "kb_edit_table",
    "kb_create",
    "kb_move",
    "kb_delete",
    "kb_save_image",
    "kb_delete_image",
    "kb_move_image",
    "kb_create_pdf_book",
    "kp_contribute_skill",
    "kp_contribute_knowledge",
    "kp_validate_unit",
];

/// The KnowledgePulse writing tools (`kp_contribute_skill`, `kp_contribute_knowledge`,
/// `kp_validate_unit`): a `contribute` token may run these, and no other writing tool.
pub const CONTRIBUTING_TOOLS: &[&str] = WRITING_TOOLS.split_at(9).1;

/// The authenticated caller of one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller {
    /// The token's agent id (the `agent_id` of what the caller contributes).
    pub agent: String,
    /// What the token may do.
    pub scope: Scope,
    /// The token's public id (`folio token list`).
    pub token_id: String,
}

impl Caller {
    /// The caller of a request, from the HTTP request parts rmcp put into its extensions.
    pub fn of(extensions: &Extensions) -> Option<&Caller> {
        extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Caller>())
    }

    /// The narrowest scope that may run `tool`, when this caller's may not: `contribute`
    /// for a KnowledgePulse writing tool, `read-write` for another writing tool.
    pub fn lacks(&self, tool: &str) -> Option<Scope> {
        if !WRITING_TOOLS.contains(&tool) {
            return None;
        }
        if CONTRIBUTING_TOOLS.contains(&tool) {
            (!self.scope.allows_contributions()).then_some(Scope::Contribute)
        } else {
            (!self.scope.allows_file_writes()).then_some(Scope::ReadWrite)
        }
    }

    /// `PERMISSION_DENIED` when this caller may not run `tool`: a writing tool with a
    /// `read` token, or a writing tool other than contributing and validating with a
    /// `contribute` token.
    pub fn refuse(&self, tool: &str) -> Option<HostError> {
        self.lacks(tool).map(|_| {
            let what = match self.scope {
                Scope::Read => "is read-only (scope `read`)",
                _ => "may contribute and validate but not edit files (scope `contribute`)",
            };
            let needs = if CONTRIBUTING_TOOLS.contains(&tool) {
                format!(
                    "a contribute or read-write token (`folio token add {} --scope contribute`)",
                    self.agent
                )
            } else {
                format!(
                    "a read-write token (`folio token add {} --scope read-write`)",
                    self.agent
                )
            };
            HostError::new(
                ErrorCode::PermissionDenied,
                format!(
                    "the token of agent `{}` {what}; `{tool}` needs {needs}",
                    self.agent
                ),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_contributing_tools_are_the_kp_writes() {
        assert_eq!(
            CONTRIBUTING_TOOLS,
            [
                "kp_contribute_skill",
                "kp_contribute_knowledge",
                "kp_validate_unit"
            ]
        );
    }
}
