//! folio-lsp: the language server over folio-core (filled by the LSP issue).
