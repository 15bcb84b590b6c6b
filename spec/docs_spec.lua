-- The documentation runs and stays inside the repository.
--
-- (a) Every fenced ```lua block of README.md and docs/*.md runs as its own
--     chunk, `local nd = require "nd"` put before it, in a fresh global
--     environment (reads fall through to _G; print and io.write are
--     captured, not shown). Errors name the file and the line in it. Words
--     after `lua` in the info string are markers:
--       ```lua norun   not run: it needs a host (LÖVE, a C program), shows
--                      a session's printed output, or is meant to fail
--       ```lua luajit  needs LuaJIT (ffi, jit, t:cdata()); not run under
--                      PUC Lua (make check-puc)
--     Any other word is an error, so a misspelt marker cannot hide a block.
--     Fences with another info string (sh, text, c, none) are not Lua.
-- (b) No Markdown file links outside the repository: no `../shared`
--     anywhere, and every relative link (inline or reference-style, outside
--     code) names a file or folder that exists inside the repository, and
--     a #fragment names a heading of the page it points to.
local nd = require "nd"
local lfs = require "lfs"

-- The repository root: this file's folder's parent (specs run from the
-- root, but the path Busted gives may be absolute).
local here = debug.getinfo(1, "S").source:match("^@(.*)$") or ""
local root = here:match("^(.*)/spec/[^/]*$") or "."
local function at_root(rel) return root == "." and rel or root .. "/" .. rel end
local function read(rel)
  local f = assert(io.open(at_root(rel), "rb"))
  local s = f:read("*a")
  f:close()
  return s
end
local function kind(rel) return lfs.attributes(at_root(rel), "mode") end

-- README.md and docs/*.md: the pages whose blocks run.
local function pages()
  local list = { "README.md" }
  local docs = {}
  for name in lfs.dir(at_root("docs")) do
    if name:match("%.md$") then docs[#docs + 1] = "docs/" .. name end
  end
  table.sort(docs)
  for _, p in ipairs(docs) do list[#list + 1] = p end
  return list
end

-- Every Markdown file of the repository (not build folders or dot-folders).
local function markdown_files()
  local list = {}
  local function walk(rel)
    for name in lfs.dir(at_root(rel == "" and "." or rel)) do
      local path = rel == "" and name or rel .. "/" .. name
      if name:sub(1, 1) ~= "." and not (rel == "" and name:match("^build")) then
        local mode = kind(path)
        if mode == "directory" then walk(path)
        elseif mode == "file" and name:match("%.md$") then list[#list + 1] = path end
      end
    end
  end
  walk("")
  table.sort(list)
  return list
end

local function lines_of(text)
  local lines = {}
  for line in (text:gsub("\r\n", "\n") .. (text:sub(-1) == "\n" and "" or "\n")):gmatch("([^\n]*)\n") do
    lines[#lines + 1] = line
  end
  return lines
end

-- The fenced blocks of a page: { line = the fence's line, info = {words},
-- code = the body }, and the lines that are inside a fence.
local function fences(lines)
  local blocks, inside, open = {}, {}, nil
  for i, line in ipairs(lines) do
    if open then
      local ind, marks = line:match("^( *)([`~]+)%s*$")
      if marks and #ind <= 3 and marks:sub(1, 1) == open.char and #marks >= open.len then
        open.code = table.concat(open.body, "\n")
        blocks[#blocks + 1] = open
        open = nil
      else
        -- the body loses the fence's own indentation (a fence in a list)
        open.body[#open.body + 1] = line:sub(1, open.indent) == (" "):rep(open.indent)
          and line:sub(open.indent + 1) or line
      end
      inside[i] = true
    else
      local ind, marks, info = line:match("^( *)(```+)%s*([^`]*)$")
      if not marks then ind, marks, info = line:match("^( *)(~~~+)%s*(.*)$") end
      if marks and #ind <= 3 then
        local words = {}
        for w in info:gmatch("%S+") do words[#words + 1] = w end
        open = { line = i, info = words, body = {}, indent = #ind,
                 char = marks:sub(1, 1), len = #marks }
        inside[i] = true
      end
    end
  end
  return blocks, inside, open
end

local MARKERS = { norun = true, luajit = true }

-- Runs one block's code; true, or false and the error.
local function run_block(path, block)
  local src = ("\n"):rep(block.line - 1) .. 'local nd = require "nd"\n' .. block.code
  local out = {}
  local env = setmetatable({}, { __index = _G })
  env._G = env
  env.print = function(...)
    local parts = {}
    for i = 1, select("#", ...) do parts[i] = tostring((select(i, ...))) end
    out[#out + 1] = table.concat(parts, "\t")
  end
  env.io = setmetatable({ write = function(...)
    for i = 1, select("#", ...) do out[#out + 1] = tostring((select(i, ...))) end
  end }, { __index = io })
  local chunk, err
  if setfenv then
    chunk, err = loadstring(src, "@" .. path)
    if chunk then setfenv(chunk, env) end
  else
    chunk, err = load(src, "@" .. path, "t", env)
  end
  if not chunk then return false, err end
  local threads, ffi_on = nd.get_num_threads(), nd.use_ffi()
  local ok, msg = xpcall(chunk, function(e)
    -- the message and the frames inside the page, not the runner's
    local frames = {}
    for line in debug.traceback("", 2):gmatch("[^\n]+") do
      if line:find(path .. ":", 1, true) then frames[#frames + 1] = line end
    end
    return tostring(e) .. (#frames > 1 and "\n" .. table.concat(frames, "\n") or "")
  end)
  -- what a block may change for the specs after it
  if nd.get_num_threads() ~= threads then nd.set_num_threads(threads) end
  if nd.use_ffi() ~= ffi_on then nd.use_ffi(ffi_on) end
  collectgarbage()
  return ok, msg
end

describe("the documentation's Lua blocks", function()
  local puc = not jit or os.getenv("ND_PUC")
  for _, path in ipairs(pages()) do
    local blocks, _, unclosed = fences(lines_of(read(path)))
    it(("%s: every fence is closed and every lua marker known"):format(path), function()
      assert(not unclosed, ("%s:%d: the fence is never closed"):format(path, unclosed and unclosed.line or 0))
      for _, b in ipairs(blocks) do
        if b.info[1] == "lua" then
          for k = 2, #b.info do
            assert(MARKERS[b.info[k]], ("%s:%d: unknown marker %q after ```lua (known: norun, luajit)")
              :format(path, b.line, b.info[k]))
          end
        end
      end
    end)
    for _, b in ipairs(blocks) do
      local marks = {}
      for k = 2, #b.info do marks[b.info[k]] = true end
      if b.info[1] == "lua" and not marks.norun then
        it(("%s:%d runs"):format(path, b.line), function()
          if marks.luajit and puc then return pending("a ```lua luajit block under PUC Lua") end
          local ok, err = run_block(path, b)
          assert(ok, ("the block at %s:%d fails: %s"):format(path, b.line, tostring(err)))
        end)
      end
    end
  end
end)

-- GitHub's anchor for a heading: lower case, punctuation dropped, spaces
-- to hyphens (bytes beyond ASCII kept), -1, -2 ... for repeats.
local function anchors(lines, inside)
  local set, seen = {}, {}
  for i, line in ipairs(lines) do
    local text = not inside[i] and line:match("^ ? ? ?#+%s+(.-)%s*#*%s*$")
    if text then
      text = text:gsub("%[([^%]]*)%]%b()", "%1"):gsub("<[^>]*>", "")
      local slug = text:lower():gsub("[^%w%s%-_\128-\255]", ""):gsub("%s", "-")
      local n = seen[slug]
      seen[slug] = (n or -1) + 1
      set[n and (slug .. "-" .. (n + 1)) or slug] = true
    end
  end
  return set
end

-- Link targets of a page outside code: { line, target }.
local function links(lines, inside)
  local list = {}
  for i, line in ipairs(lines) do
    if not inside[i] then
      local prose = line:gsub("``.-``", ""):gsub("`[^`]*`", "")
      for target in prose:gmatch("%]%(%s*<?([^%s)>]+)>?[^)]*%)") do
        list[#list + 1] = { line = i, target = target }
      end
      local ref = prose:match("^ ? ? ?%[[^%]]+%]:%s*<?([^%s>]+)")
      if ref then list[#list + 1] = { line = i, target = ref } end
      for target in prose:gmatch("<[aA]%s[^>]*href%s*=%s*\"([^\"]+)\"") do
        list[#list + 1] = { line = i, target = target }
      end
      for target in prose:gmatch("<img%s[^>]*src%s*=%s*\"([^\"]+)\"") do
        list[#list + 1] = { line = i, target = target }
      end
    end
  end
  return list
end

-- The repository path a relative link names, or nil and why not.
local function resolve(from, target)
  if target:sub(1, 1) == "/" then return nil, "an absolute path (a link must be relative)" end
  local parts = {}
  for seg in (from:match("^(.*)/[^/]*$") or ""):gmatch("[^/]+") do parts[#parts + 1] = seg end
  for seg in target:gmatch("[^/]+") do
    if seg == ".." then
      if #parts == 0 then return nil, "a path outside the repository" end
      parts[#parts] = nil
    elseif seg ~= "." then
      parts[#parts + 1] = seg
    end
  end
  return #parts == 0 and "." or table.concat(parts, "/")
end

describe("the Markdown files' links", function()
  local cache = {}
  local function page(rel)
    if not cache[rel] then
      local lines = lines_of(read(rel))
      local _, inside = fences(lines)
      cache[rel] = { lines = lines, inside = inside }
    end
    return cache[rel]
  end
  for _, path in ipairs(markdown_files()) do
    it(("%s stays inside the repository"):format(path), function()
      local p, bad = page(path), {}
      for i, line in ipairs(p.lines) do
        if line:find("../shared", 1, true) then
          bad[#bad + 1] = ("%s:%d: mentions ../shared, which is outside the repository"):format(path, i)
        end
      end
      for _, l in ipairs(links(p.lines, p.inside)) do
        local t = l.target
        if not t:match("^%a[%w+.-]*:") then -- not http:, https:, mailto: ...
          local file, frag = t:match("^([^#?]*)[^#]*#?(.*)$")
          file = file:gsub("%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end)
          local rel, why = path, nil
          if file ~= "" then rel, why = resolve(path, file) end
          if not rel then
            bad[#bad + 1] = ("%s:%d: link %s is %s"):format(path, l.line, t, why)
          elseif not kind(rel) then
            bad[#bad + 1] = ("%s:%d: link %s names %s, which does not exist"):format(path, l.line, t, rel)
          elseif frag ~= "" and rel:match("%.md$") and kind(rel) == "file" then
            local target = page(rel)
            if not anchors(target.lines, target.inside)[frag] then
              bad[#bad + 1] = ("%s:%d: link %s: %s has no heading #%s"):format(path, l.line, t, rel, frag)
            end
          end
        end
      end
      assert(#bad == 0, table.concat(bad, "\n"))
    end)
  end
end)
