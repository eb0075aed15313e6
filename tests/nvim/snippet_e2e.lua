-- Runs a Neovim snippet of docs/clients.md or editors/nvim/README.md as written (headless),
-- then opens a Markdown file and waits for folio to attach and report diagnostics.
-- Environment: FOLIO_SNIPPET (a file holding the snippet), FOLIO_MODE (`lazy`: the snippet
-- is a lazy.nvim spec, given to lazy.nvim's setup with `dir` set to FOLIO_REPO because
-- this machine cannot clone it; `plain`: the snippet runs as a Lua chunk), FOLIO_LAZY_NVIM
-- (lazy.nvim's folder), FOLIO_ROOT, FOLIO_FILE, FOLIO_OUT. `folio` is found on PATH.
local root, out = os.getenv('FOLIO_ROOT'), os.getenv('FOLIO_OUT')
local results = { notifications = {} }

local function finish(err)
  if err then results.error = err end
  local f = assert(io.open(out, 'w'))
  f:write(vim.json.encode(results))
  f:close()
  vim.cmd('qa!')
end

local ok, err = pcall(function()
  vim.cmd('filetype on')
  vim.notify = function(msg, level)
    table.insert(results.notifications, { msg, level or vim.log.levels.INFO })
  end
  local f = assert(io.open(os.getenv('FOLIO_SNIPPET')))
  local snippet = f:read('*a')
  f:close()
  local mode = os.getenv('FOLIO_MODE')
  if mode == 'lazy' then
    -- `-u NONE` turns 'loadplugins' off, and lazy.nvim does nothing without it; a user's
    -- init.lua has it on.
    vim.go.loadplugins = true
    vim.opt.rtp:prepend(os.getenv('FOLIO_LAZY_NVIM'))
    local spec = assert(loadstring('return ' .. snippet, 'lazy spec'))()
    spec.dir = os.getenv('FOLIO_REPO')
    local state = vim.fn.stdpath('data')
    require('lazy').setup({ spec }, {
      root = state .. '/lazy',
      lockfile = state .. '/lazy-lock.json',
      install = { missing = false },
      checker = { enabled = false },
      change_detection = { enabled = false },
      rocks = { enabled = false },
      performance = { rtp = { reset = false } },
    })
    local plugin = require('lazy.core.config').plugins[spec.name or 'folio']
    results.lazy = { version = require('lazy.core.config').version, name = plugin and plugin.name, loaded_before_open = plugin and plugin._.loaded ~= nil }
  else
    assert(loadstring(snippet, 'snippet'))()
  end
  vim.cmd.edit(vim.fn.fnameescape(root .. '/' .. os.getenv('FOLIO_FILE')))
  local buf = vim.api.nvim_get_current_buf()
  if mode == 'lazy' then
    local plugin = require('lazy.core.config').plugins['folio']
    results.lazy.loaded_by = plugin and plugin._.loaded and plugin._.loaded.ft
  end
  assert(vim.wait(20000, function() return #vim.lsp.get_clients({ name = 'folio', bufnr = buf }) > 0 end, 20), 'folio did not attach')
  local c = vim.lsp.get_clients({ name = 'folio', bufnr = buf })[1]
  assert(vim.wait(20000, function() return c.initialized end, 20), 'server did not initialize')
  results.cmd = c.config.cmd
  results.root_dir = c.root_dir
  assert(vim.wait(20000, function() return #vim.diagnostic.get(buf) > 0 end, 20), 'no diagnostics')
  results.diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(results.diagnostics, { d.lnum, d.col, d.code })
  end
  results.commands = vim.fn.exists(':FolioSearch') == 2
end)
finish(not ok and tostring(err) or nil)
