-- The Lua layer of nd, compiled into the C module. It receives the raw C
-- functions and arranges them into the module table and the tensor
-- methods; printing lives in print.lua, the LuaJIT fast paths in ffi.lua.
local C, import = ...

local nd = { _VERSION = "0.1.0" }
local methods = {}
local mt = C.metatable

-- Functions that do not take a tensor first: module functions only.
local module_only = {
  tensor = true, empty = true, zeros = true, ones = true, full = true,
  arange = true, linspace = true, eye = true, rand = true, randn = true,
  randint = true, manual_seed = true, from_string = true, cat = true,
  stack = true, set_num_threads = true, get_num_threads = true, where = true,
  matmul_plan = false, save = true, load = true, use_ffi = true,
  wrap = true,
  linalg = true, image = true, safetensors = true,
  normal = true, uniform = true, randperm = true, generator = true,
  default_generator = true, clock = true, einsum = true, einsum_plan = true,
}
-- Internal entry points, neither functions nor methods.
local internal = {
  metatable = true, size_metatable = true, index = true, newindex = true,
  header = true, __len = true, modules = true, library_path = true,
  struct_sizes = true, state = true, check = true, tags = true,
  ffi_api = true, shared = true, wrap_raw = true,
  anchor = true, view_keep = true, set_maker = true, arm = true, debt = true, charge_step = true,
  nargs = true, too_many = true, call_as = true, typename = true,
  optable = true, consts = true, fviews = true, ffamily = true, ffi_api_decl = true,
  layout_facts = true, fcalls = true, fqueries = true, allocations = true,
}

for name, f in pairs(C) do
  if not internal[name] then
    nd[name] = f
    if not module_only[name] then methods[name] = f end
  end
end

local size_mt = C.size_metatable
size_mt.__tostring = function(s)
  local parts = {}
  for i = 1, #s do parts[i] = string.format("%.17g", s[i]) end
  return "{" .. table.concat(parts, ", ") .. "}"
end

local index, newindex = C.index, C.newindex
mt.__index = function(t, k)
  local m = methods[k]
  if m ~= nil or type(k) == "string" then return m end
  return index(t, k)
end
mt.__newindex = newindex
mt.__len = C.__len
mt.__tostring = import("print")(nd)
mt.__name = "nd.Tensor"
-- Lua's < and <= must give a boolean, never a tensor: say what to use.
local function compare(op, name)
  return function()
    error(("%s: tensors cannot be compared with %s (Lua needs a boolean); "
      .. "use a:%s(b) for an elementwise bool tensor, or nd.equal(a, b)")
      :format(op, op, name), 2)
  end
end
mt.__lt, mt.__le = compare("<", "lt"), compare("<=", "le")

nd.methods = methods

-- Every other embedded module (lua/NAME.lua) is an extension: a function
-- of this table that adds functions and methods. ffi.lua goes first: it
-- sets ext.ffi (nil outside LuaJIT) for the fast paths of the others, and
-- under LuaJIT makes every tensor one cdata type whose metamethods are
-- mt's (ext.loaded, once the others have set theirs).
local getmetatable = getmetatable
local function is_tensor(v) return getmetatable(v) == mt end
-- checked(name, f): f, raising as the C functions do (lcall.c's dispatch)
-- when called with more arguments than src/lua/largs.c lists for name.
local select, nargs, too_many = select, C.nargs, C.too_many
local function checked(name, f)
  local n = nargs(name)
  if n < 0 then return f end
  return function(...)
    if select("#", ...) > n then too_many(name, ...) end
    return f(...)
  end
end
local ext = { nd = nd, methods = methods, metatable = mt, C = C,
  is_tensor = is_tensor, checked = checked }
local skip = { nd = true, print = true, ffi = true, testing = true }
import("ffi")(ext)
local names = C.modules()
table.sort(names)
for _, name in ipairs(names) do
  if not skip[name] then import(name)(ext) end
end

if ext.loaded then ext.loaded() end -- lua/ffi.lua: the objects' metatable

-- nd.is_tensor(v): v is an nd tensor (live or released): a userdata, or
-- under LuaJIT a cdata (whose getmetatable() is "ffi").
nd.is_tensor = checked("is_tensor", ext.is_tensor)

-- require "nd.testing" (luassert assertions): on demand, never at load.
-- require "nd.internal": C.optable and C.consts (src/lua/lconsts.c) for
-- specs and benches that cover every op; not part of the API.
if package and package.preload then
  package.preload["nd.testing"] = function() return import("testing")(ext) end
  package.preload["nd.internal"] = function()
    return { optable = C.optable(), consts = C.consts, fcalls = C.fcalls(), fqueries = C.fqueries,
      params = function(name) return select(2, pcall(function() return select(2, C.nargs(name)) end)) end }
  end
end

return nd
