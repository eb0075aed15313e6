-- :checkhealth folio
local M = {}

function M.check()
  local folio = require('folio')
  local health = vim.health
  health.start('folio')
  local bin = folio.config.cmd[1]
  local path = vim.fn.exepath(bin)
  if path == '' then
    health.error(('`%s` not found on PATH'):format(bin), { 'Install folio and put it on PATH, or pass cmd = { "/path/to/folio", "lsp" } to require("folio").setup()' })
  else
    health.ok('binary: ' .. path)
    local version, err = folio.version(path)
    if version then
      local v = version:match('(%d+%.%d+%.%d+)')
      if v and vim.version.lt(v, folio.min_version) then
        health.warn(('%s is older than %s, which this plugin needs'):format(version, folio.min_version))
      else
        health.ok('version: ' .. version)
      end
    else
      health.error('`' .. path .. ' --version` failed: ' .. tostring(err))
    end
  end
  -- :checkhealth runs in its own buffer: the root is the one of the file it was run from.
  local buf = folio.subject_buffer()
  local root, marked = folio.root(buf or 0)
  health.info('root: ' .. root)
  if not marked then
    health.warn(('no %s in %s or above it: folio runs on the open file alone (single-file mode), without the other notes'):format(
      table.concat(folio.config.root_markers, ', '), root), { 'Create folio.toml (it may be empty) at the root of your notes' })
  end
  local clients = vim.lsp.get_clients({ name = 'folio' })
  if #clients > 0 then
    for _, c in ipairs(clients) do
      health.ok(('server running (client %d) on %s'):format(c.id, c.root_dir or c.config.root_dir or '?'))
    end
  else
    health.info('no folio language server running (it starts on the first Markdown buffer)')
  end
end

return M
