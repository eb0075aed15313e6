-- Drives `folio lsp` from real Neovim (headless) and writes what it saw as JSON.
-- Inputs (environment): FOLIO_BIN (the folio binary), FOLIO_ROOT (workspace root, the
-- current buffer is a file under it), FOLIO_OUT (where to write the JSON results).
local bin, root, out = os.getenv('FOLIO_BIN'), os.getenv('FOLIO_ROOT'), os.getenv('FOLIO_OUT')
local results = {}

local function finish(err)
  if err then results.error = err end
  local f = assert(io.open(out, 'w'))
  f:write(vim.json.encode(results))
  f:close()
  vim.cmd('qa!')
end

local function rel(uri)
  return vim.uri_to_fname(uri):sub(#root + 2)
end

local ok, err = pcall(function()
  local buf = vim.api.nvim_get_current_buf()
  local client_id = assert(vim.lsp.start({ name = 'folio', cmd = { bin, 'lsp' }, root_dir = root }, { bufnr = buf }))
  local client = assert(vim.lsp.get_client_by_id(client_id))
  assert(vim.wait(20000, function() return client.initialized end, 20), 'server did not initialize')
  results.encoding = client.offset_encoding
  local uri = vim.uri_from_bufnr(buf)

  local function req(method, params, bufnr)
    local response, e = client:request_sync(method, params, 20000, bufnr or buf)
    assert(response, 'no response to ' .. method .. ': ' .. tostring(e))
    assert(not response.err, method .. ' failed: ' .. vim.inspect(response.err))
    return response.result
  end

  -- Document symbols, flattened: depth, name, zero-based line.
  results.symbols = {}
  local function walk(symbols, depth)
    for _, s in ipairs(symbols) do
      table.insert(results.symbols, { depth, s.name, s.selectionRange.start.line })
      walk(s.children or {}, depth + 1)
    end
  end
  walk(req('textDocument/documentSymbol', { textDocument = { uri = uri } }), 0)

  -- Diagnostics as Neovim shows them (pushed or pulled, whichever the client does).
  assert(vim.wait(20000, function() return #vim.diagnostic.get(buf) > 0 end, 20), 'no diagnostics')
  local diagnostics = vim.diagnostic.get(buf)
  table.sort(diagnostics, function(a, b) return a.lnum < b.lnum or (a.lnum == b.lnum and a.col < b.col) end)
  results.diagnostics = {}
  for _, d in ipairs(diagnostics) do
    table.insert(results.diagnostics, { d.lnum, d.col, d.end_col, d.code, d.severity })
  end

  -- Go to definition: `./moderators.md#slack` on line 229.
  local def = req('textDocument/definition', { textDocument = { uri = uri }, position = { line = 228, character = 20 } })
  results.definition = { rel(def.uri), def.range.start.line, def.range.start.character, def.range['end'].line, def.range['end'].character }

  -- Workspace symbols: the first three hits.
  results.workspace_symbols = {}
  for i, s in ipairs(req('workspace/symbol', { query = 'mod pro tempore' })) do
    if i > 3 then break end
    table.insert(results.workspace_symbols, { s.name, rel(s.location.uri), s.location.range.start.line })
  end

  -- Rename the `## Slack` heading of moderators.md; the link in moderation.md follows.
  local first = vim.api.nvim_get_current_buf()
  vim.cmd('edit ' .. vim.fn.fnameescape(root .. '/communication/moderators.md'))
  local other = vim.api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(other, client_id)
  local edit = req('textDocument/rename',
    { textDocument = { uri = vim.uri_from_bufnr(other) }, position = { line = 110, character = 4 }, newName = 'Slack Workspace' }, other)
  vim.lsp.util.apply_workspace_edit(edit, client.offset_encoding)
  results.renamed_heading = vim.api.nvim_buf_get_lines(other, 110, 111, false)[1]
  results.renamed_link = vim.api.nvim_buf_get_lines(first, 228, 229, false)[1]
  -- Let Neovim's debounced didChange notifications reach the server.
  vim.wait(1000)
  -- The server saw both edits: the link resolves, so going to its definition finds the renamed heading.
  local after = req('textDocument/definition', { textDocument = { uri = uri }, position = { line = 228, character = 20 } }, first)
  results.definition_after_rename = { rel(after.uri), after.range.start.line }
  client:stop()
end)
finish(not ok and tostring(err) or nil)
