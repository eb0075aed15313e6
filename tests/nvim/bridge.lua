-- Neovim side of the live-bridge end-to-end tests: starts `folio lsp` for the current
-- buffer and exposes `T.run(json)` so a test can drive and inspect the editor over
-- `nvim --server <socket> --remote-expr "luaeval('T.run(_A)', '<json>')"`.
-- Inputs (environment): FOLIO_BIN (the folio binary), FOLIO_ROOT (workspace root).
-- `g:folio_ready` becomes 1 once the language server is initialized.
local bin, root = os.getenv('FOLIO_BIN'), os.getenv('FOLIO_ROOT')
local client_id = assert(vim.lsp.start({ name = 'folio', cmd = { bin, 'lsp' }, root_dir = root }))
local client = assert(vim.lsp.get_client_by_id(client_id))

-- Times (vim.uv.hrtime, CLOCK_MONOTONIC in ns) of buffer changes, for the benchmark.
local changes = {}
vim.api.nvim_buf_attach(0, false, {
  on_lines = function() table.insert(changes, vim.uv.hrtime()) end,
})

local timer = assert(vim.uv.new_timer())
timer:start(20, 20, vim.schedule_wrap(function()
  if client.initialized then
    timer:stop()
    vim.g.folio_ready = 1
  end
end))

local function buf_for(path)
  if not path then return vim.api.nvim_get_current_buf() end
  return vim.fn.bufnr(root .. '/' .. path)
end

local function text(buf)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local s = table.concat(lines, '\n')
  if vim.bo[buf].eol then s = s .. '\n' end
  return s
end

local ops = {}

-- The current buffer: text, changedtick, modified.
function ops.state(a)
  local buf = buf_for(a.path)
  return { text = text(buf), tick = vim.b[buf].changedtick, modified = vim.bo[buf].modified, name = vim.api.nvim_buf_get_name(buf) }
end

-- Replaces line `line` (1-based) as a user would, as its own undo step.
function ops.set_line(a)
  vim.api.nvim_buf_set_lines(0, a.line - 1, a.line, false, { a.text })
  -- Setting 'undolevels' to itself closes the undo block, like leaving insert mode.
  vim.o.undolevels = vim.o.undolevels
  return ops.state({})
end

-- The next `workspace/applyEdit` finds the buffer changed: line `line` is replaced just
-- before Neovim's own handler runs, as if the user typed while the edit was on its way.
function ops.arm_race(a)
  local original = vim.lsp.handlers['workspace/applyEdit']
  vim.lsp.handlers['workspace/applyEdit'] = function(...)
    vim.lsp.handlers['workspace/applyEdit'] = original
    ops.set_line(a)
    return original(...)
  end
  return ops.state({})
end

function ops.undo()
  vim.cmd('undo')
  return ops.state({})
end

function ops.write()
  vim.cmd('write')
  return ops.state({})
end

-- Edits another file in the current window (attached to the server explicitly: there
-- are no filetype autocommands with -u NONE) and returns its buffer state.
function ops.open(a)
  vim.cmd('edit ' .. vim.fn.fnameescape(root .. '/' .. a.path))
  vim.lsp.buf_attach_client(0, client_id)
  return ops.state({})
end

-- Deletes the buffer of a file (closing the document in the server).
function ops.close(a)
  vim.api.nvim_buf_delete(buf_for(a.path), { force = true })
  return {}
end

-- Diagnostics of a file's buffer: { {lnum, code}, ... } sorted.
function ops.diagnostics(a)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(buf_for(a.path))) do
    table.insert(out, { d.lnum, d.code })
  end
  table.sort(out, function(x, y) return x[1] < y[1] end)
  return out
end

-- Change times recorded since the last call.
function ops.changes()
  local out = changes
  changes = {}
  return out
end

function ops.messages()
  return vim.api.nvim_exec2('messages', { output = true }).output
end

_G.T = {
  run = function(json)
    local a = vim.json.decode(json)
    return vim.json.encode(ops[a.op](a))
  end,
}
