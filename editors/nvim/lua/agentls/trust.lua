-- Whether the person trusts a workspace (docs/SECURITY.md, "Workspace
-- trust"), sent to agentls as workspaceTrust: in an untrusted workspace it
-- asks before every command, MCP server start, MCP call and engine run.
--
-- Neovim has no workspace trust of its own: setup()'s workspace_trust says
-- it, 'trusted', 'untrusted' or a function of the root. vim_secure below is
-- such a function, on the trust database of vim.secure (Neovim 0.9+), which
-- it reads without ever prompting.
local M = {}

M.TRUSTED = 'trusted'
M.UNTRUSTED = 'untrusted'

-- of is the trust of root under the workspace_trust option v, and where it
-- came from: 'default' (nothing says otherwise: trusted, as agentls takes
-- an editor that says nothing), 'setup' (a value) or 'function'. A
-- function's true (or 'trusted') is trusted, anything else untrusted; one
-- that raises makes the workspace untrusted, and the third value says why.
function M.of(v, root)
  if v == nil then
    return M.TRUSTED, 'default'
  end
  if v == M.TRUSTED or v == M.UNTRUSTED then
    return v, 'setup'
  end
  local ok, res = pcall(v, root)
  if not ok then
    return M.UNTRUSTED, 'function', string.format('workspace_trust(%q) failed: %s', root, tostring(res))
  end
  if res == true or res == M.TRUSTED then
    return M.TRUSTED, 'function'
  end
  return M.UNTRUSTED, 'function'
end

-- The files Neovim's 'exrc' reads in a directory (0.9+).
M.exrc_files = { '.nvim.lua', '.nvimrc', '.exrc' }

-- database is the path of vim.secure's trust database, or nil where Neovim
-- has none (before 0.9, which has no vim.secure and no stdpath('state')
-- before 0.8).
function M.database()
  if vim.secure == nil then
    return nil
  end
  local ok, dir = pcall(vim.fn.stdpath, 'state')
  if not ok or type(dir) ~= 'string' then
    return nil
  end
  return dir .. '/trust'
end

-- read_database reads a trust database: full path → the SHA-256 of the
-- content trusted, 'directory' for a directory allowed, '!' for denied.
-- A database that is missing or unreadable is empty.
function M.read_database(path)
  local entries = {}
  local f = path and io.open(path, 'r')
  if not f then
    return entries
  end
  local text = f:read('*a') or ''
  f:close()
  for line in vim.gsplit(text, '\n', true) do
    local hash, file = line:match('^(%S+) (.+)$')
    if hash then
      entries[file] = hash
    end
  end
  return entries
end

local function sha256_of(path)
  local f = io.open(path, 'rb')
  if not f then
    return nil
  end
  local text = f:read('*a')
  f:close()
  return text and vim.fn.sha256(text)
end

-- vim_secure is a workspace_trust function: root is trusted when vim.secure's
-- trust database (:trust, or the prompt of 'exrc') allows the root
-- directory itself, or holds one of the root's exrc files (.nvim.lua,
-- .nvimrc, .exrc) with the content it has now; denied ('!') or absent, the
-- root is untrusted, as is every root where Neovim has no vim.secure (before
-- 0.9). It never prompts. db: another database to read (tests).
--
--   require('agentls').setup({ workspace_trust = require('agentls.trust').vim_secure })
function M.vim_secure(root, db)
  db = db or M.database()
  if db == nil then
    return false
  end
  local entries = M.read_database(db)
  local dir = vim.loop.fs_realpath(root) or root
  if entries[dir] == '!' then
    return false
  end
  local trusted = entries[dir] == 'directory'
  for _, name in ipairs(M.exrc_files) do
    local file = vim.loop.fs_realpath(dir .. '/' .. name)
    local want = file and entries[file]
    if want == '!' then
      return false
    end
    if want and want ~= 'directory' and want == sha256_of(file) then
      trusted = true
    end
  end
  return trusted
end

return M
