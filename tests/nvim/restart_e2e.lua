-- Loads editors/nvim with setup{ max_restarts = 1 } and kills its server twice (headless):
-- the first stop starts it again, the second is left stopped with a message. Writes JSON.
-- Environment: FOLIO_PLUGIN (editors/nvim), FOLIO_CMD (the folio binary), FOLIO_PIDS (a
-- file each server start appends its pid to), FOLIO_ROOT, FOLIO_FILE, FOLIO_OUT.
local root, out = os.getenv('FOLIO_ROOT'), os.getenv('FOLIO_OUT')
local results = { notifications = {} }

local function finish(err)
  if err then results.error = err end
  local f = assert(io.open(out, 'w'))
  f:write(vim.json.encode(results))
  f:close()
  vim.cmd('qa!')
end

--- The pids the starts wrote, in order.
local function pids()
  local list = {}
  local f = io.open(os.getenv('FOLIO_PIDS'))
  if not f then return list end
  for line in f:lines() do table.insert(list, tonumber(line)) end
  f:close()
  return list
end

local ok, err = pcall(function()
  vim.opt.runtimepath:prepend(os.getenv('FOLIO_PLUGIN'))
  vim.cmd('filetype on')
  -- The plugin's own messages (Neovim adds one of its own when a client quits).
  vim.notify = function(msg, level)
    if msg:match('^folio: ') then
      table.insert(results.notifications, { msg, level or vim.log.levels.INFO })
    end
  end
  -- The server through a shell that records its pid, then becomes folio (exec).
  local cmd = ('echo $$ >> %s; exec %s lsp'):format(vim.fn.shellescape(os.getenv('FOLIO_PIDS')), vim.fn.shellescape(os.getenv('FOLIO_CMD')))
  require('folio').setup({ cmd = { 'sh', '-c', cmd }, max_restarts = 1 })
  vim.cmd.edit(vim.fn.fnameescape(root .. '/' .. os.getenv('FOLIO_FILE')))
  local buf = vim.api.nvim_get_current_buf()
  local function attached()
    local c = vim.lsp.get_clients({ name = 'folio', bufnr = buf })[1]
    return c and c.initialized and c or nil
  end
  assert(vim.wait(20000, function() return attached() ~= nil end, 20), 'folio did not attach')
  assert(vim.wait(20000, function() return #vim.diagnostic.get(buf) > 0 end, 20), 'no diagnostics')
  local first = attached().id

  -- A crash (SIGKILL): started again, attached to the buffer, answering.
  assert(#pids() == 1, 'one start expected, got ' .. #pids())
  vim.uv.kill(pids()[1], 'sigkill')
  assert(vim.wait(20000, function() local c = attached(); return c ~= nil and c.id ~= first end, 20), 'not started again')
  results.starts_after_first_kill = #pids()
  local symbols = vim.lsp.buf_request_sync(buf, 'textDocument/documentSymbol', { textDocument = vim.lsp.util.make_text_document_params(buf) }, 10000)
  local names = {}
  for _, r in pairs(symbols or {}) do
    for _, s in ipairs(r.result or {}) do table.insert(names, s.name) end
  end
  results.symbols_after_restart = names

  -- A second crash within 3 minutes: over max_restarts, left stopped, with a message.
  local second = attached().id
  vim.uv.kill(pids()[2], 'sigkill')
  local function said(pattern)
    for _, n in ipairs(results.notifications) do
      if n[1]:match(pattern) then return true end
    end
    return false
  end
  assert(vim.wait(10000, function() return said('not started again') end, 20), 'no message after the second stop')
  vim.wait(1000)
  results.starts_after_second_kill = #pids()
  results.clients_after_second_kill = #vim.lsp.get_clients({ name = 'folio' })
  results.second_id_gone = vim.lsp.get_client_by_id(second) == nil or vim.lsp.get_client_by_id(second):is_stopped()
end)
finish(not ok and tostring(err) or nil)
