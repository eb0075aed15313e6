-- Loads editors/nvim from the repo with setup() and drives it (headless); writes JSON results.
-- Environment: FOLIO_PLUGIN (editors/nvim), FOLIO_CMD (the folio binary, or a missing path),
-- FOLIO_ROOT (workspace root), FOLIO_FILE (file to open, relative), FOLIO_QUERY, FOLIO_OUT.
local root, out = os.getenv('FOLIO_ROOT'), os.getenv('FOLIO_OUT')
local results = { notifications = {} }

local function finish(err)
  if err then results.error = err end
  local f = assert(io.open(out, 'w'))
  f:write(vim.json.encode(results))
  f:close()
  vim.cmd('qa!')
end

local function rel(path)
  return path:sub(#root + 2)
end

local ok, err = pcall(function()
  vim.opt.runtimepath:prepend(os.getenv('FOLIO_PLUGIN'))
  vim.cmd('filetype on')
  vim.notify = function(msg, level)
    table.insert(results.notifications, { msg, level or vim.log.levels.INFO })
  end
  vim.ui.select = function(items, opts, on_choice)
    results.select = { count = #items, first = opts.format_item(items[1]) }
    on_choice(items[1])
  end
  -- FOLIO_MIN_VERSION makes the running server count as too old.
  local min = os.getenv('FOLIO_MIN_VERSION')
  if min and min ~= '' then require('folio').min_version = min end
  require('folio').setup({ cmd = { os.getenv('FOLIO_CMD'), 'lsp' } })
  vim.cmd.edit(vim.fn.fnameescape(root .. '/' .. os.getenv('FOLIO_FILE')))
  local buf = vim.api.nvim_get_current_buf()

  if not require('folio').available then
    -- Bad setup: commands still answer, with one message each.
    vim.cmd('FolioSearch orphans')
    vim.cmd('FolioReindex')
    vim.wait(500)
    results.clients = #vim.lsp.get_clients()
    return
  end

  assert(vim.wait(20000, function() return #vim.lsp.get_clients({ name = 'folio', bufnr = buf }) > 0 end, 20), 'folio did not attach')
  local c = vim.lsp.get_clients({ name = 'folio', bufnr = buf })[1]
  assert(vim.wait(20000, function() return c.initialized end, 20), 'server did not initialize')
  results.root_dir = c.root_dir

  if os.getenv('FOLIO_EXPECT') == 'empty' then
    -- A workspace without Markdown: one message, then the commands still answer.
    assert(vim.wait(20000, function() return #results.notifications > 0 end, 20), 'no message')
    vim.wait(500)
    results.first = vim.deepcopy(results.notifications)
    vim.cmd('FolioSearch anything')
    assert(vim.wait(20000, function() return #results.notifications > #results.first end, 20), 'FolioSearch said nothing')
    vim.cmd('FolioReindex')
    assert(vim.wait(20000, function() return #results.notifications > #results.first + 1 end, 20), 'FolioReindex said nothing')
    vim.wait(500)
    results.diagnostics = #vim.diagnostic.get(buf)
    return
  end

  assert(vim.wait(20000, function() return #vim.diagnostic.get(buf) > 0 end, 20), 'no diagnostics')
  results.diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(results.diagnostics, { d.lnum, d.col, d.code })
  end

  -- Code lenses: the note's reference count on its first line; running it lists them.
  assert(vim.wait(20000, function() return #vim.lsp.codelens.get(buf) > 0 end, 20), 'no code lenses')
  results.lenses = {}
  for _, l in ipairs(vim.lsp.codelens.get(buf)) do
    table.insert(results.lenses, { l.range.start.line, l.command.title })
  end
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  vim.lsp.codelens.run()
  assert(vim.wait(5000, function() return #vim.fn.getqflist() > 0 end, 20), 'the lens listed nothing')
  results.quickfix = {}
  for _, item in ipairs(vim.fn.getqflist()) do
    table.insert(results.quickfix, { rel(vim.api.nvim_buf_get_name(item.bufnr)), item.lnum })
  end
  vim.cmd('cclose')
  assert(vim.api.nvim_get_current_buf() == buf, 'closing the list did not return to the note')

  vim.cmd('FolioSearch ' .. os.getenv('FOLIO_QUERY'))
  assert(vim.wait(20000, function() return vim.api.nvim_get_current_buf() ~= buf end, 20), 'FolioSearch did not jump')
  results.landed = { rel(vim.api.nvim_buf_get_name(0)), vim.api.nvim_win_get_cursor(0)[1] }

  local before = #results.notifications
  vim.cmd('FolioReindex')
  assert(vim.wait(20000, function() return #results.notifications > before end, 20), 'FolioReindex said nothing')

  vim.cmd('checkhealth folio')
  local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  results.health = {}
  for _, l in ipairs(lines) do
    if l:match('OK') or l:match('ERROR') or l:match('WARNING') or l:match('root:') then
      table.insert(results.health, l)
    end
  end

  -- The quick fix on the broken wiki link: the server creates the note from the
  -- template and shows it.
  vim.cmd('buffer ' .. buf)
  vim.api.nvim_win_set_cursor(0, { 11, 36 })
  vim.lsp.buf.code_action({ apply = true, filter = function(a) return a.title:match('^Create') ~= nil end })
  assert(vim.wait(10000, function() return vim.api.nvim_get_current_buf() ~= buf end, 20), 'the new note was not shown')
  results.created = { rel(vim.api.nvim_buf_get_name(0)), vim.api.nvim_buf_get_lines(0, 0, -1, false) }
  -- :FolioToday opens today's note, made when missing.
  vim.cmd('buffer ' .. buf)
  vim.cmd('FolioToday')
  assert(vim.wait(10000, function() return vim.api.nvim_buf_get_name(0):match('journal') ~= nil end, 20), ':FolioToday showed nothing')
  results.today = { rel(vim.api.nvim_buf_get_name(0)), vim.api.nvim_buf_get_lines(0, 0, -1, false), os.date('%Y-%m-%d') }
end)
finish(not ok and tostring(err) or nil)
