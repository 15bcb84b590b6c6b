-- The cost of one call of every op on tiny float32 operands (3 elements
-- and 4x4), with NumPy's same call beside it (same run, one thread each
-- side, medians of interleaved samples of one thread's CPU time: other
-- jobs on a shared machine do not count). Run it from the repository's
-- root (about 80 s of CPU per run):
--   make bench BENCH=calls                         LuaJIT (the FFI paths)
--   ND_LUA=bin/luajit-joff make bench BENCH=calls  the JIT off (C API paths)
--   ND_BUILD=../prev-build bin/nd bench/run.lua calls
--                                                  another build (before /
--                                                  after); ND_LUA works too
-- The elementwise, math and reduction rows are made from the core's op
-- table (C.optable, via require "nd.internal"): an op added to nd.h's
-- lists appears here by itself. A build older than that table gets the
-- rows of this tree's build/ (or of ND_OPTABLE_BUILD); an op it lacks is
-- left out. NumPy's name for an op is below when it is not np.<name>.
-- Views, copies, clamp/where/lerp and matmul come from the list further
-- down. In-place rows write into a copy of a (NumPy's: a fresh copy per
-- sample). Last, each elementwise op with out= on 1,000,000 elements: the
-- 3-element call minus 3 elements at that per-element time is the op's
-- per-call overhead, shown against add's.
local lib = require "lib"
local nd = require "nd"

local ROUNDS = 5
local saved = { lib.sample_s, lib.warm_s, lib.clock, lib.settle, nd.get_num_threads() }
lib.sample_s, lib.warm_s = 0.005, 0.02 -- tiny calls: 5 ms samples suffice
lib.clock = 3 -- one thread's CPU time: other processes' turns left out
lib.settle = true -- each row pays for its own garbage only
nd.set_num_threads(1)

local function optable()
  local ok, internal = pcall(require, "nd.internal")
  if ok then return internal.optable end
  local here = arg[0]:match("^(.*)/[^/]*$") or "."
  local build = os.getenv("ND_OPTABLE_BUILD") or "build"
  if not build:match("^/") then build = here .. "/../" .. build end
  local script = os.tmpname()
  local f = assert(io.open(script, "w"))
  f:write([[
package.cpath = ]] .. ("%q"):format(build .. "/?.so;") .. [[ .. package.cpath
require "nd"
for _, r in ipairs(require("nd.internal").optable) do
  print(r.family, r.name, r.id, r.arity, r.result, r.integers and "integers" or "-")
end
]])
  f:close()
  local p = io.popen("luajit " .. script)
  local rows = {}
  for line in p:lines() do
    local family, name, id, arity, result, ints = line:match("^(%S+)\t(%S+)\t(%S+)\t(%S+)\t(%S+)\t(%S+)$")
    rows[#rows + 1] = { family = family, name = name, id = tonumber(id), arity = tonumber(arity),
      result = result, integers = ints == "integers" or nil }
  end
  p:close()
  os.remove(script)
  assert(#rows > 0, "calls bench: no op table in this build nor in " .. build)
  return rows
end

-- NumPy's function for an op: np.<name> unless given here; false: none.
local NP = {
  sub = "np.subtract", mul = "np.multiply", div = "np.divide", pow = "np.power",
  eq = "np.equal", ne = "np.not_equal", lt = "np.less", le = "np.less_equal",
  gt = "np.greater", ge = "np.greater_equal", neg = "np.negative", abs = "np.absolute",
  round = "np.rint", sigmoid = "scipy.special.expit", relu = "np.maximum",
  asin = "np.arcsin", acos = "np.arccos", atan = "np.arctan", asinh = "np.arcsinh",
  acosh = "np.arccosh", atanh = "np.arctanh", erf = "scipy.special.erf",
  erfc = "scipy.special.erfc", lgamma = "scipy.special.gammaln", rsqrt = false,
  frac = false, bitwise_not = "np.invert", atan2 = "np.arctan2",
  norm = "np.linalg.norm",
}
local NP_EXTRA = { relu = "0" } -- relu is np.maximum(a, 0)

local SHAPES = { { key = "3", size = { 3 }, np = "(3,)" }, { key = "44", size = { 4, 4 }, np = "(4, 4)" } }
local NP_SETUP = { "try:\n  import scipy.special\nexcept ImportError:\n  pass", -- absent: "-"
  "rng = np.random.default_rng(1)" }
for _, s in ipairs(SHAPES) do
  local k = s.key
  NP_SETUP[#NP_SETUP + 1] = ([[
a%s = rng.random(%s, dtype=np.float32); b%s = rng.random(%s, dtype=np.float32)
i%s = rng.integers(1, 100, %s).astype(np.int32); j%s = rng.integers(1, 100, %s).astype(np.int32)
o%s = np.empty(%s, np.float32); ob%s = np.empty(%s, bool); oi%s = np.empty(%s, np.int32)]])
    :format(k, s.np, k, s.np, k, s.np, k, s.np, k, s.np, k, s.np, k, s.np)
end

-- nd's operands for one shape: a, b (float32, or int32 for the integer
-- ops), an out of each result dtype, and a scratch copy for in-place.
local function operands(size, ints)
  local a, b
  if ints then
    a = nd.randint(1, 100, size):to("int32")
    b = nd.randint(1, 100, size):to("int32")
  else
    a, b = nd.rand(size, "float32"), nd.rand(size, "float32")
  end
  return { nd = nd, a = a, b = b, x = a:clone(), o = nd.empty(size, ints and "int32" or "float32"),
    ob = nd.empty(size, "bool") }
end

-- A function calling `src` with env's values as upvalues: a prototype of
-- its own per row (see lib.lua on one shared call site).
local unpack = unpack or table.unpack
local function compile(src, env)
  local names, vals = {}, {}
  for k, v in pairs(env) do names[#names + 1], vals[#vals + 1] = k, v end
  local chunk = ("local %s = ... return function() return %s end"):format(table.concat(names, ", "), src)
  return assert((loadstring or load)(chunk, "=" .. src))(unpack(vals, 1, #names))
end

-- The generated rows: per op, its forms on each shape (nd source, NumPy
-- statement or { statement, setup }).
local function op_forms(row)
  local name, forms = row.name, {}
  local out = row.result == "bool" and "ob" or "o"
  if row.family == "reduce" then
    local f = NP[name]
    forms[1] = { "all", "a:" .. name .. "()", f and f .. "(a#)" or "a#." .. name .. "()" }
    forms[2] = { "dim 1", name == "norm" and "a:norm(2, 1)" or "a:" .. name .. "(1)",
      f and f .. "(a#, axis=0)" or "a#." .. name .. "(axis=0)" }
    return forms
  end
  local f = NP[name]
  if f == nil then f = "np." .. name end
  local A, B = row.integers and "i#" or "a#", row.integers and "j#" or "b#"
  local O = row.result == "bool" and "ob#" or row.integers and "oi#" or "o#"
  local extra = NP_EXTRA[name] and ", " .. NP_EXTRA[name] or ""
  local function np(args, o)
    if not f then return nil end
    return ("%s(%s%s%s)"):format(f, args, extra, o and ", out=" .. o or "")
  end
  local args = row.arity == 2 and A .. ", " .. B or A
  local lua_b = row.arity == 2 and "b" or ""
  local comma = row.arity == 2 and ", " or ""
  forms[#forms + 1] = { "new", ("a:%s(%s)"):format(name, lua_b), np(args) }
  forms[#forms + 1] = { "out", ("a:%s(%s%s%s)"):format(name, lua_b, comma, out), np(args, O) }
  if nd.methods[name .. "_"] then
    local xargs = row.arity == 2 and "x, " .. B or "x"
    forms[#forms + 1] = { "in-place", ("x:%s_(%s)"):format(name, lua_b),
      f and { np(xargs, "x"), "x = " .. A .. ".copy()" } }
  end
  return forms
end

local function fmt_ns(t)
  if not t then return "-" end
  if t < 1e-5 then return ("%.1f"):format(t * 1e9) end
  return ("%.0f"):format(t * 1e9)
end
local function fmt_ratio(a, b) return (a and b) and ("%.2fx"):format(a / b) or "-" end

local ops = {}
for _, row in ipairs(optable()) do
  if nd[row.name] and nd.methods[row.name] then ops[#ops + 1] = row end
end

-- nd's side, op by op (all forms and shapes of one op interleaved), then
-- NumPy's in one process.
local results, np_stmts, np_index = {}, {}, {}
for _, row in ipairs(ops) do
  local fns, forms = {}, op_forms(row)
  for _, s in ipairs(SHAPES) do
    local env = operands(s.size, row.integers)
    for _, form in ipairs(forms) do
      fns[form[1] .. "|" .. s.key] = compile(form[2], env)
      local st = form[3]
      if st then
        local function sub(x) return (x:gsub("#", s.key)) end
        st = type(st) == "table" and { sub(st[1]), sub(st[2]) } or sub(st)
        np_stmts[#np_stmts + 1] = st
        np_index[row.name .. "|" .. form[1] .. "|" .. s.key] = #np_stmts
      end
    end
  end
  results[row.name] = { row = row, forms = forms, t = lib.interleave(fns, ROUNDS) }
end

-- The list: views, copies, clamp/where/lerp, matmul (nd source, NumPy
-- statement; operands below, NumPy's of the same names).
local m, v3 = nd.rand(4, 4, "float32"), nd.rand(3, "float32")
local list_env = {
  nd = nd, a = v3, b = nd.rand(3, "float32"), o = nd.empty(3, "float32"),
  x = v3:clone(), m = m, n = nd.rand(4, 4, "float32"), p = nd.empty(4, 4, "float32"),
  mt = m:t(), u = v3:unsqueeze(1), mu = m:unsqueeze(1), c = v3:gt(0.5),
  M3 = nd.rand(3, 3, "float32"), c31 = nd.rand(3, 1, "float32"), o31 = nd.empty(3, 1, "float32"),
  y = m:clone(), ix = nd.tensor({ 1, 2 }, "int64"), a2 = nd.rand(2, "float32"),
  v4 = nd.rand(4, "float32"), bm = nd.rand(2, 4, 4, "float32"), pr = nd.tensor({ 0.2, 0.3, 0.5 }),
}
list_env.S = nd.matmul(list_env.M3, list_env.M3:t()) + nd.eye(3, "float32") * 3
list_env.ym = list_env.y:gt(0.5)
list_env.w4, list_env.W3, list_env.bw = list_env.v4:clone(), list_env.M3:clone(), list_env.bm:clone()
local LIST_SETUP = [[
a = rng.random(3, dtype=np.float32); b = rng.random(3, dtype=np.float32); o = np.empty(3, np.float32)
m = rng.random((4, 4), dtype=np.float32); n = rng.random((4, 4), dtype=np.float32); p = np.empty((4, 4), np.float32)
mt = m.T; u = a[:, None]; mu = m[:, None]; c = a > 0.5
M3 = rng.random((3, 3), dtype=np.float32); c31 = rng.random((3, 1), dtype=np.float32); o31 = np.empty((3, 1), np.float32)
x = a.copy(); y = m.copy(); ix = np.array([0, 1]); a2 = rng.random(2, dtype=np.float32)
v4 = rng.random(4, dtype=np.float32); bm = rng.random((2, 4, 4), dtype=np.float32)
S = M3 @ M3.T + 3 * np.eye(3, dtype=np.float32); ym = y > 0.5; pr = np.array([0.2, 0.3, 0.5])
]]
local list = {
  { "m:t()", "m.T" },
  { "m:transpose(1, 2)", "m.swapaxes(0, 1)" },
  { "m:permute(2, 1)", "m.transpose(1, 0)" },
  { "m:narrow(1, 2, 2)", "m[1:3]" },
  { "a:narrow(1, 2, 2)", "a[1:3]" },
  { "m:select(1, 2)", "m[1]" },
  { "a:select(1, 2)", "a[1, ...]" },
  { "m[2]", "m[1]" },
  { "m[{2, {1, 3}}]", "m[1, 0:3]" },
  { "m[{{1, 2}, {2, 3}}]", "m[0:2, 1:3]" },
  { "a[{{1, 2}}]", "a[0:2]" },
  { "m:view(16)", "m.reshape(16)" },
  { "a:view(3, 1)", "a.reshape(3, 1)" },
  { "m:reshape(2, 8)", "m.reshape(2, 8)" },
  { "mt:reshape(16)", "mt.reshape(16)" },
  { "a:expand(4, 3)", "np.broadcast_to(a, (4, 3))" },
  { "m:expand(2, 4, 4)", "np.broadcast_to(m, (2, 4, 4))" },
  { "a:unsqueeze(1)", "a[None]" },
  { "m:unsqueeze(2)", "m[:, None]" },
  { "u:squeeze(2)", "u.squeeze(1)" },
  { "mu:squeeze(2)", "mu.squeeze(1)" },
  { "a:flip(1)", "np.flip(a, 0)" },
  { "m:flip(1)", "np.flip(m, 0)" },
  { "a:clone()", "a.copy()" },
  { "m:clone()", "m.copy()" },
  { "m:contiguous()", "np.ascontiguousarray(m)" },
  { "mt:contiguous()", "np.ascontiguousarray(mt)" },
  { "o:copy_(a)", "np.copyto(o, a)" },
  { "p:copy_(mt)", "np.copyto(p, mt)" },
  { "a:to(\"float64\")", "a.astype(np.float64)" },
  { "m:to(\"float64\")", "m.astype(np.float64)" },
  { "a:clamp(0.2, 0.8)", "np.clip(a, 0.2, 0.8)" },
  { "a:clamp(0.2, 0.8, o)", "np.clip(a, 0.2, 0.8, out=o)" },
  { "x:clamp_(0.2, 0.8)", { "np.clip(x, 0.2, 0.8, out=x)", "x = a.copy()" } },
  { "y:clamp_(0.2, 0.8)", { "np.clip(y, 0.2, 0.8, out=y)", "y = m.copy()" } },
  { "nd.where(c, a, b)", "np.where(c, a, b)" },
  { "nd.where(c, a, b, o)", nil },
  { "nd.lerp(a, b, 0.5)", nil },
  { "nd.lerp(a, b, 0.5, o)", nil },
  { "x:lerp_(b, 0.5)", nil },
  { "nd.matmul(M3, a, o)", "np.matmul(M3, a, out=o)" },
  { "nd.matmul(M3, c31, o31)", "np.matmul(M3, c31, out=o31)" },
  { "nd.matmul(m, n)", "np.matmul(m, n)" },
  { "nd.matmul(m, n, p)", "np.matmul(m, n, out=p)" },
}
-- The rows of C.fcalls (src/lua/lfcall.c), generated: each on the
-- operands FC names (default the vec3 a and the 4x4 m; in-place rows on
-- the copies x and y), with its arguments and NumPy's statement (# the
-- operand; nil: none beside it). A row FC does not know is called
-- without arguments, on a and m, if that runs; else it is listed untimed.
local FC = {
  to = { '"float64"', "#.astype(np.float64)" }, float = { "", "#.astype(np.float32)" },
  double = { "", "#.astype(np.float64)" }, int = { "", "#.astype(np.int32)" },
  long = { "", "#.astype(np.int64)" }, byte = { "", "#.astype(np.uint8)" },
  bool = { "", "#.astype(bool)" }, contiguous = { "", "np.ascontiguousarray(#)", on = { "a", "mt" } },
  copy_ = { "y:t()", "np.copyto(#, y.T)", on = { "y" } },
  cumsum = { "1", "np.cumsum(#, axis=0)" }, cumprod = { "1", "np.cumprod(#, axis=0)" },
  softmax = { "1" }, log_softmax = { "1" }, sort = { "", "np.sort(#)" },
  argsort = { "", "np.argsort(#)" }, topk = { "2" }, kthvalue = { "2" },
  median = { "", "np.median(#)" }, var = { "1", "np.var(#, axis=0, ddof=1)" },
  std = { "1", "np.std(#, axis=0, ddof=1)" }, logsumexp = { "1" },
  count_nonzero = { "", "np.count_nonzero(#)" }, histc = { "4", "np.histogram(#, 4)" },
  unique = { "", "np.unique(#)" }, searchsorted = { "b", "np.searchsorted(#, b)", on = { "a" } },
  dot = { "b", "np.dot(#, b)", on = { "a" } }, mm = { "n", "np.matmul(#, n)", on = { "m" } },
  mv = { "v4", "np.matmul(#, v4)", on = { "m" } }, bmm = { "bm", "np.matmul(#, bm)", on = { "bm" } },
  outer = { "b", "np.outer(#, b)", on = { "a" } }, addmm = { "m, n", "# + m @ n", on = { "y" } },
  -- the fused updates; in place with beta 0.5, alpha 0.1 (bounded values)
  addmv = { "m, v4", "# + m @ v4", on = { "v4" } }, addr = { "a, b", "# + np.outer(a, b)", on = { "M3" } },
  baddbmm = { "bm, bm", "# + bm @ bm", on = { "bm" } }, addbmm = { "bm, bm", "# + (bm @ bm).sum(0)", on = { "m" } },
  addmm_ = { "m, n, 0.5, 0.1", nil, on = { "y" } }, addmv_ = { "m, v4, 0.5, 0.1", nil, on = { "w4" } },
  addr_ = { "a, b, 0.5, 0.1", nil, on = { "W3" } }, baddbmm_ = { "bm, bm, 0.5, 0.1", nil, on = { "bw" } },
  addbmm_ = { "bm, bm, 0.5, 0.1", nil, on = { "y" } },
  addcmul = { "a, b, 0.5", "# + 0.5 * a * b", on = { "x" } }, addcmul_ = { "a, b, 1e-3", nil, on = { "x" } },
  addcdiv = { "a, b, 0.5", "# + 0.5 * a / b", on = { "x" } }, addcdiv_ = { "a, b, 1e-3", nil, on = { "x" } },
  -- contractions
  tensordot = { "n, 1", "np.tensordot(#, n, 1)", on = { "m" } }, inner = { "b", "np.inner(#, b)", on = { "a" } },
  kron = { "M3", "np.kron(#, M3)", on = { "M3" } }, cross = { "b", "np.cross(#, b)", on = { "a" } },
  dist = { "b", "np.linalg.norm(# - b)", on = { "a" } },
  normalize = { "2, 1", "# / max(np.linalg.norm(#), 1e-12)", on = { "a" } },
  index_select = { "1, ix", "np.take(#, ix, axis=0)" }, gather = { "1, ix", "np.take_along_axis(#, ix, 0)", on = { "a" } },
  take = { "ix", "np.take(#, ix)" }, masked_select = { "c", "#[c]", on = { "a" } },
  nonzero = { "", "np.nonzero(#)" }, scatter_ = { "1, ix, 0", nil, on = { "x" } },
  scatter_add_ = { "1, ix, a2", nil, on = { "x" } }, index_fill_ = { "1, ix, 0", "np.put(#, ix, 0)", on = { "x" } },
  index_copy_ = { "1, ix, a2", "np.put(#, ix, a2)", on = { "x" } },
  index_add_ = { "1, ix, a2", "np.add.at(#, ix, a2)", on = { "x" } },
  masked_fill_ = { "ym, 0", "np.putmask(#, ym, 0)", on = { "y" } },
  masked_scatter_ = { "ym, y", nil, on = { "y" } },
  inv = { "", "np.linalg.inv(#)", on = { "S" } }, cholesky = { "", "np.linalg.cholesky(#)", on = { "S" } },
  svdvals = { "", "np.linalg.svd(#, compute_uv=False)", on = { "S" } },
  eigvalsh = { "", "np.linalg.eigvalsh(#)", on = { "S" } }, pinv = { "", "np.linalg.pinv(#)", on = { "S" } },
  det = { "", "np.linalg.det(#)", on = { "S" } }, cond = { "", "np.linalg.cond(#)", on = { "S" } },
  matrix_rank = { "", "np.linalg.matrix_rank(#)", on = { "S" } },
  solve = { "M3", "np.linalg.solve(#, M3)", on = { "S" } }, lstsq = { "M3", "np.linalg.lstsq(#, M3)", on = { "S" } },
  slogdet = { "", "np.linalg.slogdet(#)", on = { "S" } }, qr = { "", "np.linalg.qr(#)", on = { "S" } },
  eigh = { "", "np.linalg.eigh(#)", on = { "S" } }, svd = { "", "np.linalg.svd(#)", on = { "S" } },
  matrix_power = { "3", "np.linalg.matrix_power(#, 3)", on = { "S" } },
  norm = { "", "np.linalg.norm(#)", on = { "S" } },
  fill_ = { "1", "#.fill(1)", on = { "x", "y" } }, zero_ = { "", "#.fill(0)", on = { "x", "y" } },
  nan_to_num = { "", "np.nan_to_num(#)" }, nan_to_num_ = { "", "np.nan_to_num(#, copy=False)", on = { "x", "y" } },
  isclose = { "#", "np.isclose(#, #)" },
  tensor = { "{ 1, 2, 3 }", "np.array([1., 2., 3.])", on = { "" } },
  arange = { "5", "np.arange(5)", on = { "" } }, linspace = { "0, 1, 5", "np.linspace(0, 1, 5)", on = { "" } },
  eye = { "3", "np.eye(3)", on = { "" } },
  rand = { "3", "rng.random(3)", on = { "" } }, randn = { "3", "rng.standard_normal(3)", on = { "" } },
  randint = { "0, 10, 3", "rng.integers(0, 10, 3)", on = { "" } },
  uniform = { "-1, 1, 3", "rng.uniform(-1, 1, 3)", on = { "" } },
  normal = { "0, 2, 3", "rng.normal(0, 2, 3)", on = { "" } },
  bernoulli = { "0.5, 3", "rng.random(3) < 0.5", on = { "" } },
  randperm = { "5", "rng.permutation(5)", on = { "" } },
  multinomial = { "2, true", "rng.choice(3, 2, p=pr)", on = { "pr" } },
  uniform_ = { "-1, 1", nil, on = { "x", "y" } }, normal_ = { "0, 1", nil, on = { "x", "y" } },
  rand_like = { "", "rng.random(#.shape, dtype=np.float32)" },
  randn_like = { "", "rng.standard_normal(#.shape, dtype=np.float32)" },
}
local has_internal, internal = pcall(require, "nd.internal")
local fcalls = has_internal and internal.fcalls
if not fcalls then -- a build before the table (for the comparison): FC's rows
  fcalls = {}
  for name in pairs(FC) do
    fcalls[#fcalls + 1] = { name = name, module = (FC[name].on or {})[1] == "S" and "linalg" or "" }
  end
  table.sort(fcalls, function(x, y) return x.name < y.name end)
end
local untimed = {}
for _, row in ipairs(fcalls) do
  local fc = FC[row.name] or { "" }
  for _, x in ipairs(fc.on or { "a", "m" }) do
    local args = fc[1]:gsub("#", x)
    local src = row.module == "linalg"
        and ("nd.linalg.%s(%s%s)"):format(row.name, x, args ~= "" and ", " .. args or "")
        or x == "" and ("nd.%s(%s)"):format(row.name, args)
        or ("%s:%s(%s)"):format(x, row.name, args)
    -- (run once: a row another build lacks, e.g. the build before an op
    -- was added, when comparing, is listed as untimed)
    if pcall(compile(src, list_env)) then
      list[#list + 1] = { src, fc[2] and (fc[2]:gsub("#", x)) }
    else
      untimed[#untimed + 1] = src
    end
  end
end
local list_fns = {}
for _, r in ipairs(list) do
  list_fns[r[1]] = compile(r[1], list_env)
  if r[2] then
    np_stmts[#np_stmts + 1] = r[2]
    np_index["list|" .. r[1]] = #np_stmts
  end
end
local list_t = lib.interleave(list_fns, ROUNDS)

-- Each elementwise op with out= on 1 M elements.
local big = {}
for _, row in ipairs(ops) do
  if row.family ~= "reduce" then
    local env = operands({ 1000000 }, row.integers)
    local form = op_forms(row)[2]
    big[row.name] = lib.time(compile(form[2], env), ROUNDS)
  end
end

local np_t = lib.numpy_batch(table.concat(NP_SETUP, "\n") .. "\n" .. LIST_SETUP, np_stmts, ROUNDS)

print(("\n== calls: every op of C's table, ns per call (%s, ND_BUILD=%s; NumPy float32, 1 thread)")
  :format(jit and (jit.status() and "LuaJIT" or "LuaJIT -joff") or _VERSION, os.getenv("ND_BUILD") or "build"))
print(("%-14s %-8s %9s %9s %7s   %9s %9s %7s"):format("op", "form", "nd 3", "NumPy 3", "ratio",
  "nd 4x4", "NumPy 4x4", "ratio"))
for _, row in ipairs(ops) do
  local r = results[row.name]
  for _, form in ipairs(r.forms) do
    local cells = {}
    for _, s in ipairs(SHAPES) do
      local t = r.t[form[1] .. "|" .. s.key]
      local i = np_index[row.name .. "|" .. form[1] .. "|" .. s.key]
      local n = i and np_t[i]
      cells[#cells + 1] = ("%9s %9s %7s"):format(fmt_ns(t), fmt_ns(n), fmt_ratio(t, n))
    end
    print(("%-14s %-8s %s   %s"):format(row.name, form[1], cells[1], cells[2]))
  end
end

print("\n== calls: views, copies, clamp/where/lerp, matmul, C.fcalls (float32), ns per call")
print(("%-26s %9s  %-32s %9s %7s"):format("nd", "nd", "NumPy", "NumPy", "ratio"))
for _, r in ipairs(list) do
  local i = np_index["list|" .. r[1]]
  local n = i and np_t[i]
  local st = r[2] and (type(r[2]) == "table" and r[2][1] or r[2]) or "-"
  print(("%-26s %9s  %-32s %9s %7s"):format(r[1], fmt_ns(list_t[r[1]]), st, fmt_ns(n),
    fmt_ratio(list_t[r[1]], n)))
end

if #untimed > 0 then print("(rows of C.fcalls without arguments here: " .. table.concat(untimed, ", ") .. ")") end

print("\n== calls: per-call overhead of out= (3 elements minus 3 x the per-element time at 1 M)")
-- C 3: the same call from C (bench/ref_core.c, the build's own core, the
-- same values), timed in turn with the call from Lua (medians of both),
-- so "binding" is what the call from Lua adds to the core's own time;
-- the rest of an op's overhead is the core's.
local has_core, ref_core = pcall(require, "ref_core")
local env3 = operands({ 3 })
local a3, b3 = {}, {}
for i = 1, 3 do a3[i], b3[i] = env3.a:get(i), env3.b:get(i) end
local function median(xs)
  table.sort(xs)
  return xs[math.floor((#xs + 1) / 2)]
end
local function core3(row) -- C's time, Lua's time (nil: no C reference)
  if not has_core or row.integers or not pcall(ref_core.time, row.family, row.id, row.arity, a3, b3, 1) then
    return nil
  end
  local form = op_forms(row)[2]
  local fn = compile(form[2], env3)
  local tc, tl = {}, {}
  for r = 1, ROUNDS do
    tl[r] = lib.time(fn, 1)
    tc[r] = ref_core.time(row.family, row.id, row.arity, a3, b3, 1)
  end
  return median(tc), median(tl)
end
print(("%-14s %10s %10s %12s %13s %8s %8s %9s"):format("op", "out 3 ns", "1M us", "ns/element",
  "overhead ns", "vs add", "C 3 ns", "binding"))
-- (binding: the Lua call timed again beside C's, not the "out 3" column)
local function overhead(name)
  local t3, t1m = results[name] and results[name].t["out|3"], big[name]
  if not t3 or not t1m then return nil end
  return t3 - 3 * t1m / 1e6, t3, t1m
end
local add_over = overhead("add")
local binds = {}
for _, row in ipairs(ops) do
  local over, t3, t1m = overhead(row.name)
  if over then
    local c3, l3 = core3(row)
    local bind = c3 and l3 - c3
    if bind then binds[#binds + 1] = { bind, row.name } end
    print(("%-14s %10.1f %10.1f %12.3f %13.1f %8s %8s %9s"):format(row.name, t3 * 1e9, t1m * 1e6,
      t1m / 1e6 * 1e9, over * 1e9, add_over and ("%.2fx"):format(over / add_over) or "-",
      c3 and ("%.1f"):format(c3 * 1e9) or "-", bind and ("%.1f"):format(bind * 1e9) or "-"))
  end
end
if #binds > 0 then
  table.sort(binds, function(x, y) return x[1] < y[1] end)
  local med, top = binds[math.floor((#binds + 1) / 2)], binds[#binds]
  print(("binding (out 3 from Lua minus C 3, timed in turn) over %d ops: median %.1f ns, max %.1f ns (%s)")
    :format(#binds, med[1] * 1e9, top[1] * 1e9, top[2]))
end

lib.sample_s, lib.warm_s, lib.clock, lib.settle = saved[1], saved[2], saved[3], saved[4]
nd.set_num_threads(saved[5])
