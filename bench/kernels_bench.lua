-- Every kernel against NumPy at 1 M elements (1000 x 1000): ops x dtypes x
-- layouts {contiguous, transposed, stepped, broadcast row}, conversions
-- between dtype pairs, fill_, reductions along each dim. NumPy's side is
-- its closest expression with out= (one Python process, all cells, 1
-- thread); nd runs with 1 thread, then 2 (the last column). Medians of
-- interleaved rounds. The machine is shared: figures are noisy.
local lib = require "lib"
local nd = require "nd"

local N = 1000
local DT = { "float32", "float64", "int32", "int64", "uint8", "bool" }
local FLOAT = { float32 = true, float64 = true }
local LAYOUTS = { "contiguous", "transposed", "stepped", "row" }

-- Operands in a layout: nd tensor and the NumPy expression that makes it.
local base = {}
local function operand(dt, layout, k)
  local key = dt .. layout .. k
  if base[key] then return base[key] end
  local t
  local r = nd.rand(N, 2 * N):mul(10):add(k == 2 and 1 or 0)
  if dt == "bool" then r = r:gt(5) end
  r = r:to(dt)
  if layout == "contiguous" then t = r:narrow(2, 1, N):contiguous()
  elseif layout == "transposed" then t = r:narrow(2, 1, N):contiguous():t()
  elseif layout == "stepped" then t = r[{ {}, { 1, 2 * N, 2 } }]
  else t = r[1]:narrow(1, 1, N) end
  base[key] = t
  return t
end
local NP = {
  contiguous = "np.ascontiguousarray(r[:, :N])", transposed = "np.ascontiguousarray(r[:, :N]).T",
  stepped = "r[:, ::2]", row = "np.ascontiguousarray(r[0, :N])",
}
local npdt = { float32 = "np.float32", float64 = "np.float64", int32 = "np.int32",
  int64 = "np.int64", uint8 = "np.uint8", bool = "np.bool_" }

-- ND_BENCH_ONLY: a Lua pattern; only cells whose "op dtype layout" matches run.
local only = os.getenv("ND_BENCH_ONLY")
local cells = {}
-- f: a function that makes the cell's outputs and returns the timed call.
local function cell(name, dt, layout, f, np_stmt)
  if only and not (name .. " " .. dt .. " " .. layout):find(only) then return end
  cells[#cells + 1] = { name = name, dt = dt, layout = layout, f = f, np = np_stmt }
end

-- Unary and binary ops: { name, nd fn(a, b, out), numpy stmt, dtypes, result }
local function res(dt, kind) -- result dtype
  if kind == "float" then return FLOAT[dt] and dt or "float64" end
  if kind == "bool" then return "bool" end
  return dt
end
local OPS = {
  { "add", 2, function(a, b, o) nd.add(a, b, o) end, "np.add(a, b, out=c)", "same" },
  { "mul", 2, function(a, b, o) nd.mul(a, b, o) end, "np.multiply(a, b, out=c)", "same" },
  { "div", 2, function(a, b, o) nd.div(a, b, o) end, "np.true_divide(a, b, out=c)", "float" },
  { "pow(x,2)", 1, function(a, b, o) nd.pow(a, 2, o) end, "np.power(a, 2, out=c)", "same" },
  { "pow(x,2.5)", 1, function(a, b, o) nd.pow(a, 2.5, o) end, "np.power(a, 2.5, out=c)", "float" },
  { "exp", 1, function(a, b, o) nd.exp(a, o) end, "np.exp(a, out=c)", "float" },
  { "log", 1, function(a, b, o) nd.log(a, o) end, "np.log(a, out=c)", "float" },
  { "sin", 1, function(a, b, o) nd.sin(a, o) end, "np.sin(a, out=c)", "float" },
  { "tanh", 1, function(a, b, o) nd.tanh(a, o) end, "np.tanh(a, out=c)", "float" },
  { "sigmoid", 1, function(a, b, o) nd.sigmoid(a, o) end,
    "np.negative(a, out=c); np.exp(c, out=c); np.add(c, 1, out=c); np.reciprocal(c, out=c)", "float" },
  { "sqrt", 1, function(a, b, o) nd.sqrt(a, o) end, "np.sqrt(a, out=c)", "float" },
  { "abs", 1, function(a, b, o) nd.abs(a, o) end, "np.abs(a, out=c)", "same" },
  { "lt", 2, function(a, b, o) nd.lt(a, b, o) end, "np.less(a, b, out=c)", "bool" },
  { "where", 2, function(a, b, o, m) nd.where(m, a, b, o) end, "np.where(m, a, b)", "same" },
  { "clamp", 1, function(a, b, o) nd.clamp(a, 2, 7, o) end, "np.clip(a, 2, 7, out=c)", "same" },
}
local FLOAT_ONLY = { exp = true, log = true, sin = true, tanh = true, sigmoid = true,
  sqrt = true, ["pow(x,2.5)"] = true, div = true }

for _, op in ipairs(OPS) do
  local name, arity, f, np_stmt, kind = op[1], op[2], op[3], op[4], op[5]
  for _, dt in ipairs(DT) do
    local ok = dt ~= "bool" or name == "add" or name == "mul" or name == "lt" or name == "where"
    if FLOAT_ONLY[name] and not FLOAT[dt] then ok = false end
    if ok then
      for _, layout in ipairs(LAYOUTS) do
        local a = operand(dt, layout == "row" and "contiguous" or layout, 1)
        local b = operand(dt, layout, 2)
        if arity == 1 and layout == "row" then a = b:expand(N, N) end
        local rdt = res(dt, kind)
        local m = operand("bool", "contiguous", 3)
        cell(name, dt, layout, function()
          local o = nd.empty(N, N, rdt)
          return function() f(a, b, o, m) end
        end,
          { a = layout == "row" and arity == 1 and "np.broadcast_to(B, (N, N))" or "A",
            stmt = np_stmt, res = res(dt, kind) })
      end
    end
  end
end

-- fill_ and conversions (contiguous)
for _, dt in ipairs(DT) do
  cell("fill_", dt, "contiguous", function()
    local o = nd.empty(N, N, dt)
    return function() o:fill_(dt == "bool" and true or 1) end
  end,
    { a = "A", stmt = "c.fill(1)", res = dt })
  for _, to in ipairs(DT) do
    if to ~= dt then
      local a = operand(dt, "contiguous", 1)
      cell("convert->" .. to, dt, "contiguous", function()
        local c = nd.empty(N, N, to)
        return function() c:copy_(a) end
      end,
        { a = "A", stmt = "np.copyto(c, a, casting='unsafe')", res = to })
    end
  end
end

-- reductions along each dim
for _, dt in ipairs({ "float32", "float64", "int32", "int64" }) do
  local a = operand(dt, "contiguous", 1)
  for _, r in ipairs({ "sum", "mean", "max" }) do
    for d = 1, 2 do
      cell(r .. "(" .. d .. ")", dt, "contiguous", function() return function() return a[r](a, d) end end,
        { a = "A", stmt = ("a.%s(axis=%d)"):format(r, d - 1), res = dt, noout = true })
    end
  end
end

-- NumPy: every cell in one process.
local np_times = {}
if lib.has_numpy() then
  local script = os.tmpname()
  local f = assert(io.open(script, "w"))
  f:write(("import timeit, statistics\nimport numpy as np\nN = %d\nrng = np.random.default_rng(1)\n"):format(N))
  f:write("cache = {}\nR = [rng.random((N, 2 * N)) * 10 + k for k in range(2)]\n")
  f:write("def mk(dt, layout, k):\n    key = (dt, layout, k)\n    if key in cache: return cache[key]\n")
  f:write("    r = R[1 if k == 2 else 0]\n")
  f:write("    r = (r > 5) if dt == np.bool_ else r\n    r = r.astype(dt)\n")
  f:write("    cache[key] = v = mk1(r, layout)\n    return v\n")
  f:write("def mk1(r, layout):\n")
  f:write("    return {'contiguous': lambda: np.ascontiguousarray(r[:, :N]), 'transposed': lambda: np.ascontiguousarray(r[:, :N]).T,\n")
  f:write("            'stepped': lambda: r[:, ::2], 'row': lambda: np.ascontiguousarray(r[0, :N])}[layout]()\n")
  f:write("m = mk(np.bool_, 'contiguous', 3)\n")
  for i, c in ipairs(cells) do
    local lay = c.layout
    f:write(("a = mk(%s, %q, 1)\nb = mk(%s, %q, 2)\nA = a\nB = b\n"):format(
      npdt[c.dt], lay == "row" and "contiguous" or lay, npdt[c.dt], lay))
    f:write(("a = %s\nc = np.empty((N, N), %s)\n"):format(c.np.a, npdt[c.np.res]))
    -- about 20 ms per sample, 5 samples: the table stays a few minutes
    f:write(("t = timeit.Timer(%q, globals=globals())\nn = max(1, int(0.02 / max(t.timeit(1), 1e-7)))\n"):format(c.np.stmt))
    f:write(("print(%d, statistics.median([t.timeit(n) / n for _ in range(5)]), flush=True)\n"):format(i))
  end
  f:close()
  local p = io.popen("OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 /usr/bin/python3 " .. script .. " 2>&1")
  for line in p:lines() do
    local i, t = line:match("^(%d+) (%S+)$")
    if i then np_times[tonumber(i)] = tonumber(t) else io.stderr:write(line .. "\n") end
  end
  p:close()
  os.remove(script)
end

local threads = nd.get_num_threads()
local function measure(n)
  nd.set_num_threads(n)
  local r = {}
  -- each cell's result tensor is made just before it runs, as NumPy's
  -- side makes `c`: memory left idle for minutes can come back slower
  for i, c in ipairs(cells) do r[i] = lib.interleave({ f = c.f() }, 3).f end
  return r
end
local t1, t2 = measure(1), measure(2)
nd.set_num_threads(threads)

print(("\n%-18s %-8s %-11s %10s %10s %7s %10s"):format("op", "dtype", "layout", "nd 1T", "NumPy", "ratio", "nd 2T"))
local logsum, count, misses = 0, 0, {}
for i, c in ipairs(cells) do
  local ratio = np_times[i] and t1[i] / np_times[i]
  if ratio then
    logsum, count = logsum + math.log(ratio), count + 1
    if ratio > 1 then misses[#misses + 1] = c end
  end
  print(("%-18s %-8s %-11s %10s %10s %7s %10s"):format(c.name, c.dt, c.layout, lib.fmt_time(t1[i]),
    lib.fmt_time(np_times[i]), ratio and ("%.2fx"):format(ratio) or "-", lib.fmt_time(t2[i])))
end
if count > 0 then
  print(("\ncells: %d, geometric mean nd/NumPy %.2fx (target <= 0.70x), cells above 1.0x: %d"):format(
    count, math.exp(logsum / count), #misses))
end
