-- folio for Neovim: registers `folio lsp` for Markdown and adds :FolioSearch, :FolioReindex.
-- See editors/nvim/README.md.
local M = {}

--- The oldest server this plugin works with (it needs the folio/search request).
M.min_version = '0.1.0'

local defaults = {
  -- Command that starts the language server.
  cmd = { 'folio', 'lsp' },
  filetypes = { 'markdown' },
  -- A folder holding one of these is the knowledge-base root.
  root_markers = { 'folio.toml', '.folio', '.git' },
  -- Sent as initializationOptions and workspace/didChangeConfiguration (see docs/lsp.md).
  settings = nil,
  -- Hits asked for by :FolioSearch.
  search_limit = 20,
  -- Show reference counts above each note and its linked headings (code lenses; run the
  -- one on the cursor's line with vim.lsp.codelens.run() to list them in the quickfix list).
  codelens = true,
  -- A server that stops unexpectedly (a crash, a kill) is started again for the open
  -- Markdown buffers, at most this many times in 3 minutes (0: never).
  max_restarts = 5,
}

M.config = vim.deepcopy(defaults)

local function notify(msg, level)
  vim.notify('folio: ' .. msg, level or vim.log.levels.INFO, { title = 'folio' })
end

--- The first line of `<bin> --version`, or nil and an error.
function M.version(bin)
  local ok, res = pcall(function() return vim.system({ bin or M.config.cmd[1], '--version' }, { text = true }):wait(5000) end)
  if not ok then return nil, tostring(res) end
  if res.code ~= 0 then return nil, (res.stderr or ''):gsub('%s+$', '') end
  return (res.stdout or ''):match('^[^\n]*')
end

--- Compares dotted versions: true when `a` < `b`.
local function older(a, b)
  local pa, pb = vim.split(a, '.', { plain = true }), vim.split(b, '.', { plain = true })
  for i = 1, math.max(#pa, #pb) do
    local x, y = tonumber(pa[i]) or 0, tonumber(pb[i]) or 0
    if x ~= y then return x < y end
  end
  return false
end

-- The server's own messages (e.g. "folio: no Markdown files under <root>", sent once per
-- folder) go to vim.notify as they are, without the "LSP[folio]" prefix of the default handler.
local message_levels = { vim.log.levels.ERROR, vim.log.levels.WARN, vim.log.levels.INFO, vim.log.levels.DEBUG }
local handlers = {
  ['window/showMessage'] = function(_, params)
    vim.notify(params.message, message_levels[params.type] or vim.log.levels.INFO, { title = 'folio' })
    return vim.NIL
  end,
}

local warned_old = false
local function on_init(client)
  local v = client.server_info and client.server_info.version
  if v and older(v, M.min_version) and not warned_old then
    warned_old = true
    notify(('the server is version %s; this plugin needs %s or newer'):format(v, M.min_version), vim.log.levels.WARN)
  end
end

--- Whether a buffer is a file on disk (not `health://`, `term://`, an unnamed buffer…).
local function is_file_buffer(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  return name ~= '' and not name:match('^%a[%w+.-]*://'), name
end

--- The root of a buffer: the nearest folder above it with a root marker, else its folder;
--- for a buffer that is no file, the same from the working folder. The second value is
--- false when no root marker was found (the server then runs on the file alone).
function M.root(bufnr)
  bufnr = bufnr or 0
  local file, name = is_file_buffer(bufnr)
  local start = file and name or vim.uv.cwd()
  local root = vim.fs.root(file and bufnr or start, M.config.root_markers)
  if root then return root, true end
  if file then return vim.fs.dirname(name), false end
  return start, false
end

--- The buffer a command that is not run from a Markdown buffer (:checkhealth) is about:
--- the current buffer when it is a file, else the alternate one when that is, else nil.
function M.subject_buffer()
  if is_file_buffer(0) then return vim.api.nvim_get_current_buf() end
  local alt = vim.fn.bufnr('#')
  if alt > 0 and is_file_buffer(alt) then return alt end
  return nil
end

--- The folio client for the current buffer (or any folio client).
local function client()
  local clients = vim.lsp.get_clients({ name = 'folio', bufnr = 0 })
  if #clients == 0 then clients = vim.lsp.get_clients({ name = 'folio' }) end
  return clients[1]
end

local function with_client(f)
  local c = client()
  if not c and M.available == false then
    notify(('`%s` not found; see :checkhealth folio'):format(M.config.cmd[1]), vim.log.levels.WARN)
    return
  elseif not c then
    notify('no folio language server is running: open a Markdown file (see :checkhealth folio)', vim.log.levels.WARN)
    return
  end
  f(c)
end

--- Opens a hit: its file, at its first line.
function M.jump(hit)
  vim.cmd.edit(vim.fn.fnameescape(vim.uri_to_fname(hit.file_uri)))
  local last = vim.api.nvim_buf_line_count(0)
  vim.api.nvim_win_set_cursor(0, { math.min(hit.start_line, last), 0 })
end

--- Searches the knowledge base and lets the user pick a hit with vim.ui.select.
function M.search(query)
  if not query or vim.trim(query) == '' then
    notify('usage: :FolioSearch {query}', vim.log.levels.WARN)
    return
  end
  with_client(function(c)
    c:request('folio/search', { query = query, limit = M.config.search_limit }, function(err, result)
      if err then
        notify('search failed: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
        return
      end
      local hits = result and result.results or {}
      local indexing = (result and result.partial) and ' (still indexing: results may be incomplete)' or ''
      if #hits == 0 then
        notify('no results for ' .. query .. indexing)
        return
      end
      vim.ui.select(hits, {
        prompt = 'folio: ' .. query .. indexing,
        format_item = function(hit)
          local where = #hit.heading_path > 0 and (' — ' .. table.concat(hit.heading_path, ' > ')) or ''
          return ('%s:%d%s'):format(hit.path, hit.start_line, where)
        end,
      }, function(hit)
        if hit then M.jump(hit) end
      end)
    end, 0)
  end)
end

--- Runs an incremental reindex and reports its summary.
function M.reindex()
  with_client(function(c)
    c:request('folio/reindex', vim.NIL, function(err, r)
      if err then
        notify('reindex failed: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
        return
      end
      notify(('indexed %d of %d files (%d unchanged, %d removed) in %d ms'):format(r.indexed, r.files, r.unchanged, r.removed, r.elapsed_ms))
    end, 0)
  end)
end

--- The command of folio's code lenses (`folio.showReferences`, arguments `{uri, position,
--- locations}`): the references they count, in the quickfix list.
local function show_references(command, ctx)
  local c = vim.lsp.get_client_by_id(ctx.client_id)
  local locations = (command.arguments or {})[3] or {}
  local items = vim.lsp.util.locations_to_items(locations, c and c.offset_encoding or 'utf-16')
  vim.fn.setqflist({}, ' ', { title = 'folio: ' .. command.title, items = items })
  if #items > 0 then vim.cmd('botright copen') end
end

--- Keeps the code lenses of a buffer the folio client attached to current.
local function codelens_on_attach(ev)
  local c = vim.lsp.get_client_by_id(ev.data.client_id)
  if not c or c.name ~= 'folio' or not M.config.codelens then return end
  local function refresh() vim.lsp.codelens.refresh({ bufnr = ev.buf }) end
  refresh()
  vim.api.nvim_create_autocmd({ 'BufEnter', 'InsertLeave', 'BufWritePost' }, {
    group = vim.api.nvim_create_augroup('folio_codelens_' .. ev.buf, { clear = true }),
    buffer = ev.buf,
    callback = refresh,
  })
end

--- Opens today's daily note, which the server creates from `[notes]` when missing.
function M.today()
  with_client(function(c)
    local args = {}
    if is_file_buffer(0) then args = { { uri = vim.uri_from_bufnr(0) } } end
    c:exec_cmd({ title = 'today', command = 'folio.today', arguments = args }, { bufnr = 0 }, function(err)
      if err then notify('today: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR) end
    end)
  end)
end

local function commands()
  vim.api.nvim_create_user_command('FolioToday', function() M.today() end, { nargs = 0, desc = "folio: open today's note" })
  vim.api.nvim_create_user_command('FolioSearch', function(a) M.search(a.args) end, { nargs = '+', desc = 'folio: search the knowledge base' })
  vim.api.nvim_create_user_command('FolioReindex', function() M.reindex() end, { nargs = 0, desc = 'folio: reindex the knowledge base' })
end

-- When the server stopped unexpectedly, in milliseconds of vim.uv.now(), within the last 3 minutes.
local restarts = {}
local RESTART_WINDOW_MS = 180000
local start_buffer -- set by setup(): starts (or reuses) the folio client of a buffer

--- Starts the server again after it stopped unexpectedly (exit code or signal not 0,
--- Neovim not quitting), for every loaded buffer of the plugin's filetypes; after
--- `max_restarts` stops within 3 minutes it says so and leaves it stopped.
local function on_exit(code, signal)
  if (code == 0 and signal == 0) or vim.v.exiting ~= vim.NIL then return end
  vim.schedule(function()
    local now = vim.uv.now()
    restarts = vim.tbl_filter(function(t) return now - t < RESTART_WINDOW_MS end, restarts)
    local why = ('the language server stopped (exit code %d, signal %d)'):format(code, signal)
    if #restarts >= M.config.max_restarts then
      notify(('%s; it stopped %d times in 3 minutes, so it is not started again: see :LspLog and :checkhealth folio, then reopen a Markdown file'):format(why, #restarts + 1), vim.log.levels.ERROR)
      return
    end
    table.insert(restarts, now)
    notify(('%s; starting it again (%d of %d in 3 minutes)'):format(why, #restarts, M.config.max_restarts), vim.log.levels.WARN)
    for _, buf in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(buf) and vim.tbl_contains(M.config.filetypes, vim.bo[buf].filetype) then
        start_buffer(buf)
      end
    end
  end)
end

--- Registers the server. `opts` overrides the defaults above.
function M.setup(opts)
  M.config = vim.tbl_deep_extend('force', vim.deepcopy(defaults), opts or {})
  if opts and opts.cmd then M.config.cmd = opts.cmd end
  commands()
  local bin = M.config.cmd[1]
  if vim.fn.executable(bin) ~= 1 then
    notify(('`%s` not found: install folio (cargo install --path . in the folio repository) or set cmd in require("folio").setup{}'):format(bin), vim.log.levels.ERROR)
    M.available = false
    return
  end
  M.available = true
  vim.lsp.commands['folio.showReferences'] = show_references
  vim.api.nvim_create_autocmd('LspAttach', {
    group = vim.api.nvim_create_augroup('folio_attach', { clear = true }),
    callback = codelens_on_attach,
  })
  local config = {
    cmd = M.config.cmd,
    filetypes = M.config.filetypes,
    root_markers = M.config.root_markers,
    settings = M.config.settings,
    init_options = M.config.settings,
    on_init = on_init,
    on_exit = on_exit,
    handlers = handlers,
  }
  start_buffer = function(buf)
    local root, marked = M.root(buf)
    vim.lsp.start(vim.tbl_extend('force', config, {
      name = 'folio', root_dir = (marked or vim.fn.has('nvim-0.11') == 0) and root or nil,
    }), { bufnr = buf })
  end
  if vim.lsp.config and vim.lsp.enable then
    vim.lsp.config('folio', config)
    vim.lsp.enable('folio')
  else
    -- Neovim < 0.11: start a client for each Markdown buffer.
    vim.api.nvim_create_autocmd('FileType', {
      group = vim.api.nvim_create_augroup('folio', { clear = true }),
      pattern = M.config.filetypes,
      callback = function(ev) start_buffer(ev.buf) end,
    })
  end
end

return M
