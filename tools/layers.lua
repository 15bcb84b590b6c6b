-- The layer check, run by make test (make check-layers alone): from `nm` of
-- every object of the core and the binding, which object uses which (an
-- undefined symbol of one defined by another), and a failure, printing the
-- offending edge, for
--   (a) a use of a higher layer ("upward"), or of another folder of the
--       same layer ("sideways");
--   (b) a cycle between files (a strongly connected component of size > 1);
--   (c) a cycle between folders.
-- The last line is the result. The layer order is the Makefile's (LAYERS,
-- from CORE_LAYERS); src/core/README says what each folder holds.
--
--   lua tools/layers.lua "core/base core/shape ... lua" BUILD OBJ...
--
-- LAYERS: folders under BUILD, bottom first; folders joined by a comma are
-- one layer. Runs under Lua 5.1-5.4 and LuaJIT.

local layers, build = arg[1], arg[2]
if not layers or not build or not arg[3] then
  io.stderr:write("usage: lua tools/layers.lua LAYERS BUILD OBJ...\n")
  os.exit(2)
end
local level, nlevels = {}, 0
for l in layers:gmatch("%S+") do
  nlevels = nlevels + 1
  for f in l:gmatch("[^,]+") do level[f] = nlevels end
end

local objs, folder_of = {}, {}
for i = 3, #arg do
  local o = arg[i]
  objs[#objs + 1] = o
  folder_of[o] = o:sub(#build + 2):match("^(.*)/[^/]*$") or "."
end
-- A source's name for messages: core/shape/view.c.
local function name(o) return (o:sub(#build + 2):gsub("%.o$", ".c")) end

-- Definitions and uses. A global symbol (upper-case type) has one home;
-- an indirect function ('i') may be static (target_clones on a static
-- kernel), so it counts only when no object defines that name otherwise
-- and no other object has an 'i' of that name.
local def, idef, uses, ndefs = {}, {}, {}, 0
local p = assert(io.popen("nm -A -P " .. table.concat(objs, " ")))
for line in p:lines() do
  local o, sym, ty = line:match("^(.-): (%S+) (%a)")
  if o then
    if ty == "U" or ty == "w" then
      uses[o] = uses[o] or {}
      uses[o][sym] = true
    elseif ty:match("%u") then
      def[sym], ndefs = o, ndefs + 1
    elseif ty == "i" or ty == "u" then
      idef[sym] = idef[sym] == nil and o or false
    end
  end
end
p:close()
if ndefs == 0 then
  print("layers: nm gave no symbols for these objects: FAILED")
  os.exit(1)
end
for sym, o in pairs(idef) do
  if o and not def[sym] then def[sym] = o end
end

-- File edges a -> b, with the symbols a takes from b (sorted, for output).
local edges, esyms, nedges = {}, {}, 0
for _, a in ipairs(objs) do
  edges[a], esyms[a] = {}, {}
  local list = {}
  for sym in pairs(uses[a] or {}) do list[#list + 1] = sym end
  table.sort(list)
  for _, sym in ipairs(list) do
    local b = def[sym]
    if b and b ~= a then
      if not esyms[a][b] then
        esyms[a][b] = {}
        edges[a][#edges[a] + 1] = b
        nedges = nedges + 1
      end
      table.insert(esyms[a][b], sym)
    end
  end
  table.sort(edges[a])
end

local function syms(a, b)
  local s = esyms[a][b]
  return #s <= 3 and table.concat(s, ", ")
      or table.concat(s, ", ", 1, 3) .. ", +" .. (#s - 3)
end

-- Tarjan's strongly connected components of size > 1.
local function sccs(nodes, succ)
  local index, low, onstack, stack, out, n = {}, {}, {}, {}, {}, 0
  local function visit(v)
    n = n + 1
    index[v], low[v] = n, n
    stack[#stack + 1], onstack[v] = v, true
    for _, w in ipairs(succ[v]) do
      if not index[w] then
        visit(w)
        low[v] = math.min(low[v], low[w])
      elseif onstack[w] then
        low[v] = math.min(low[v], index[w])
      end
    end
    if low[v] == index[v] then
      local c = {}
      repeat
        local w = table.remove(stack)
        onstack[w] = nil
        c[#c + 1] = w
      until w == v
      if #c > 1 then table.sort(c) out[#out + 1] = c end
    end
  end
  for _, v in ipairs(nodes) do
    if not index[v] then visit(v) end
  end
  return out
end

-- A shortest cycle through v inside the component comp (breadth first).
local function cycle(v, comp, succ)
  local inside, prev, queue, i = {}, { [v] = v }, { v }, 1
  for _, w in ipairs(comp) do inside[w] = true end
  while queue[i] do
    local u = queue[i]
    i = i + 1
    for _, w in ipairs(succ[u]) do
      if w == v then
        local path = { v }
        while u ~= v do table.insert(path, 2, u) u = prev[u] end
        path[#path + 1] = v
        return path
      end
      if inside[w] and not prev[w] then prev[w] = u queue[#queue + 1] = w end
    end
  end
end

local bad = { upward = 0, sideways = 0, unplaced = 0, file = 0, folder = 0 }

-- (a) upward and sideways uses.
local unplaced = {}
for _, a in ipairs(objs) do
  for _, b in ipairs(edges[a]) do
    local fa, fb = folder_of[a], folder_of[b]
    local la, lb = level[fa], level[fb]
    if not la or not lb then
      local f = la and fb or fa
      if not unplaced[f] then
        unplaced[f] = true
        bad.unplaced = bad.unplaced + 1
        print(("layers: folder %s is in no layer (the Makefile's LAYERS)")
          :format(f))
      end
    elseif fa ~= fb and lb >= la then
      local kind = lb > la and "upward" or "sideways"
      bad[kind] = bad[kind] + 1
      print(("layers: %s: %s -> %s (%s)"):format(kind, name(a), name(b),
                                                 syms(a, b)))
    end
  end
end

-- (b) cycles between files.
for _, c in ipairs(sccs(objs, edges)) do
  local path = cycle(c[1], c, edges)
  local parts = { name(path[1]) }
  for k = 2, #path do
    parts[#parts + 1] = ("-[%s]-> %s"):format(syms(path[k - 1], path[k]),
                                             name(path[k]))
  end
  local members = {}
  for k, o in ipairs(c) do members[k] = name(o) end
  bad.file = bad.file + 1
  print(("layers: file cycle among {%s}: %s"):format(
    table.concat(members, " "), table.concat(parts, " ")))
end

-- (c) cycles between folders.
local folders, fsucc, seen = {}, {}, {}
for _, a in ipairs(objs) do
  local fa = folder_of[a]
  if not fsucc[fa] then fsucc[fa] = {} folders[#folders + 1] = fa end
end
for _, a in ipairs(objs) do
  local fa = folder_of[a]
  for _, b in ipairs(edges[a]) do
    local fb = folder_of[b]
    if fa ~= fb and not seen[fa .. " " .. fb] then
      seen[fa .. " " .. fb] = true
      table.insert(fsucc[fa], fb)
    end
  end
end
table.sort(folders)
for _, f in ipairs(folders) do table.sort(fsucc[f]) end
for _, c in ipairs(sccs(folders, fsucc)) do
  bad.folder = bad.folder + 1
  print(("layers: folder cycle among {%s}: %s"):format(
    table.concat(c, " "), table.concat(cycle(c[1], c, fsucc), " -> ")))
end

local nbad = bad.upward + bad.sideways + bad.unplaced + bad.file + bad.folder
print(("layers: %d objects in %d folders, %d layers, %d file edges: "
       .. "%d upward, %d sideways, %d file cycles, %d folder cycles: %s")
  :format(#objs, #folders, nlevels, nedges, bad.upward, bad.sideways,
          bad.file, bad.folder, nbad == 0 and "ok" or "FAILED"))
os.exit(nbad == 0 and 0 or 1)
