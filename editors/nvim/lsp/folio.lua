-- folio's language server for Neovim 0.11+, without a plugin: with this folder's parent
-- (editors/nvim) on 'runtimepath', or this file copied to ~/.config/nvim/lsp/folio.lua,
--
--   vim.lsp.enable('folio')
--
-- starts `folio lsp` (from PATH: the release installer, `:MasonInstall folio`, pipx,
-- cargo install) for Markdown buffers. Settings as docs/lsp.md "Configuration", with
-- vim.lsp.config('folio', { settings = { ... } }).
return {
  cmd = { 'folio', 'lsp' },
  filetypes = { 'markdown' },
  -- The nearest folder above the buffer holding one of these is the knowledge base's root;
  -- without one, Neovim starts folio on the buffer alone (single-file mode).
  root_markers = { 'folio.toml', '.folio', '.git' },
}
