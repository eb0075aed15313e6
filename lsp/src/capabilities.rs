//! What the client can do (reduced to the flags the server uses) and what the server
//! offers in return.

use tower_lsp_server::ls_types::*;

use crate::convert;
use crate::handlers;
use crate::session::{ClientFlags, Session};

/// The client's capabilities as the flags the server uses.
pub(crate) fn flags(caps: &ClientCapabilities) -> ClientFlags {
    let td = caps.text_document.as_ref();
    let ws = caps.workspace.as_ref();
    let resource_operation = |kind: ResourceOperationKind| {
        ws.and_then(|w| w.workspace_edit.as_ref())
            .and_then(|e| e.resource_operations.as_ref())
            .is_some_and(|ops| ops.contains(&kind))
    };
    let diagnostic_refresh = ws
        .and_then(|w| w.diagnostics.as_ref())
        .and_then(|d| d.refresh_support)
        .unwrap_or(false);
    ClientFlags {
        // Pull only from a client that can be asked to pull again: without
        // `workspace/diagnostic/refresh` (Neovim 0.11) a change to another file (a link
        // target edited on disk, say) could not reach its diagnostics, so those clients get pushes.
        pull_diagnostics: td.and_then(|t| t.diagnostic.as_ref()).is_some() && diagnostic_refresh,
        diagnostic_refresh,
        code_action_resolve_edit: td
            .and_then(|t| t.code_action.as_ref())
            .and_then(|c| c.resolve_support.as_ref())
            .is_some_and(|r| r.properties.iter().any(|p| p == "edit")),
        show_document: caps
            .window
            .as_ref()
            .and_then(|w| w.show_document.as_ref())
            .is_some_and(|d| d.support),
        code_lens_refresh: ws
            .and_then(|w| w.code_lens.as_ref())
            .and_then(|c| c.refresh_support)
            .unwrap_or(false),
        watched_files_dynamic: ws
            .and_then(|w| w.did_change_watched_files.as_ref())
            .and_then(|d| d.dynamic_registration)
            .unwrap_or(false),
        create_files: resource_operation(ResourceOperationKind::Create),
        delete_files: resource_operation(ResourceOperationKind::Delete),
        rename_files: resource_operation(ResourceOperationKind::Rename),
        document_changes: ws
            .and_then(|w| w.workspace_edit.as_ref())
            .and_then(|e| e.document_changes)
            .unwrap_or(false),
        work_done_progress: caps
            .window
            .as_ref()
            .and_then(|w| w.work_done_progress)
            .unwrap_or(false),
        status_notification: caps
            .experimental
            .as_ref()
            .and_then(|e| e.get("folioStatus"))
            .and_then(|v| v.as_bool())
            .unwrap_or(false),
    }
}

/// The server's capabilities; diagnostics are advertised for pull only when the client pulls.
pub fn capabilities(s: &Session) -> ServerCapabilities {
    let all_files = FileOperationRegistrationOptions {
        filters: vec![FileOperationFilter {
            scheme: Some("file".to_string()),
            pattern: FileOperationPattern {
                glob: "**/*".to_string(),
                matches: None,
                options: None,
            },
        }],
    };
    ServerCapabilities {
        position_encoding: Some(convert::encoding_kind(s.encoding)),
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::INCREMENTAL),
                ..TextDocumentSyncOptions::default()
            },
        )),
        document_symbol_provider: Some(OneOf::Left(true)),
        workspace_symbol_provider: Some(OneOf::Left(true)),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        execute_command_provider: Some(ExecuteCommandOptions {
            commands: handlers::commands::commands(),
            ..ExecuteCommandOptions::default()
        }),
        code_lens_provider: Some(CodeLensOptions {
            resolve_provider: Some(false),
        }),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(
                handlers::completion::TRIGGER_CHARACTERS
                    .iter()
                    .map(|c| c.to_string())
                    .collect(),
            ),
            ..CompletionOptions::default()
        }),
        rename_provider: Some(OneOf::Right(RenameOptions {
            prepare_provider: Some(true),
            work_done_progress_options: Default::default(),
        })),
        document_link_provider: Some(DocumentLinkOptions {
            resolve_provider: Some(false),
            work_done_progress_options: Default::default(),
        }),
        folding_range_provider: Some(FoldingRangeProviderCapability::Simple(true)),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![
                CodeActionKind::QUICKFIX,
                handlers::actions::toc_kind(),
                handlers::actions::link_mentions_kind(),
            ]),
            resolve_provider: Some(true),
            ..CodeActionOptions::default()
        })),
        diagnostic_provider: s.flags.pull_diagnostics.then(|| {
            DiagnosticServerCapabilities::Options(DiagnosticOptions {
                identifier: Some("folio".to_string()),
                inter_file_dependencies: true,
                workspace_diagnostics: true,
                work_done_progress_options: Default::default(),
            })
        }),
        workspace: Some(WorkspaceServerCapabilities {
            workspace_folders: Some(WorkspaceFoldersServerCapabilities {
                supported: Some(true),
                change_notifications: Some(OneOf::Left(true)),
            }),
            file_operations: Some(WorkspaceFileOperationsServerCapabilities {
                will_rename: Some(all_files),
                ..Default::default()
            }),
        }),
        ..ServerCapabilities::default()
    }
}
