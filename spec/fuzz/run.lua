-- The differential fuzzer: runs random programs (program.lua) through nd
-- and checks every step against an independent reference.
--
--   bin/nd spec/fuzz/run.lua [--seed S] [--count N] [--steps K] [--corpus FILE]
--
-- Without --corpus: N programs of K steps from seeds S, S+1, ..., checked
-- against the plain-Lua reference model; each disagreement is shrunk to a
-- minimal program and printed as a runnable reproducer. With --corpus
-- (spec/fuzz/corpus.lua, made once by numpy_eval.py): the programs there,
-- checked against what NumPy (and PyTorch's type promotion) computed.
-- The last line is "fuzz: N cases, S steps (E errors raised), D disagreements";
-- the exit status is 1 when D > 0.
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
package.path = here .. "?.lua;" .. package.path
local nd = require "nd"
local P = require "program"
-- Tiny tensors: threads would only add noise (and OpenBLAS spin time).
nd.set_num_threads(1)

local opts = { seed = 1, count = 200, steps = 12 }

-- Programs as JSON, one per line (for numpy_eval.py).
local function json(v)
  if type(v) == "table" then
    if #v > 0 or next(v) == nil then
      local p = {}
      for i, x in ipairs(v) do p[i] = json(x) end
      return "[" .. table.concat(p, ",") .. "]"
    end
    local p, keys = {}, {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys)
    for _, k in ipairs(keys) do p[#p + 1] = string.format("%q:%s", k, json(v[k])) end
    return "{" .. table.concat(p, ",") .. "}"
  elseif type(v) == "string" then return string.format("%q", v)
  elseif type(v) == "boolean" then return tostring(v)
  else return string.format("%.17g", v) end
end
do
  local i = 1
  while arg[i] do
    local k = arg[i]:match("^%-%-(.*)")
    if not k or not arg[i + 1] then error("usage: run.lua [--seed S] [--count N] [--steps K] [--corpus FILE]") end
    opts[k] = (k == "corpus" or k == "emit") and arg[i + 1] or tonumber(arg[i + 1])
    i = i + 2
  end
end

-- A uint64 above 2^63 - 1 reads as the integer of its bits on Lua 5.3+:
-- its value, as the model's and the corpus's (and LuaJIT's tonumber).
local ubits = math.type and function(v) return v < 0 and v + 2.0 ^ 64 or v end

local function flat(t)
  local vals = t:dim() == 0 and { t:item() } or t:reshape({ t:numel() }):totable()
  local u64 = ubits and t:dtype() == "uint64"
  for k, v in ipairs(vals) do
    if v == true then vals[k] = 1 elseif v == false then vals[k] = 0
    else vals[k] = tonumber(v) end
    if u64 then vals[k] = ubits(vals[k]) end
  end
  return vals
end

local function is_tensor(x) -- userdata, or under LuaJIT an FFI view (cdata)
  return (type(x) == "userdata" or type(x) == "cdata") and pcall(function() return x:dim() end)
end

-- nd's outcome, in the reference's form.
local function run_nd(prog)
  local env = { nd = nd, select = select }
  local out = { steps = {}, final = {} }
  for i, s in ipairs(prog) do
    local deps_ok = (not s.a or env["v" .. s.a]) and (type(s.b) ~= "number" or env["v" .. s.b])
    if not deps_ok then
      out.steps[i] = { skipped = true }
    else
      local f = assert(load("return " .. P.code(s), "=step" .. i, "t", env))
      local ok, r = pcall(f)
      if not ok then
        out.steps[i] = { err = true, msg = tostring(r) }
      elseif P.OPS[s.kind].write then
        out.steps[i] = { ok = true }
      elseif not is_tensor(r) then
        out.steps[i] = { err = true, msg = "returned a " .. type(r) }
      else
        env["v" .. i] = r
        out.steps[i] = { dtype = r:dtype(), size = r:size(), values = flat(r) }
      end
    end
  end
  for i = 1, #prog do
    if env["v" .. i] then out.final[i] = flat(env["v" .. i]) end
  end
  return out
end

local function close(dtype, e, g)
  if e ~= e then return g ~= g end
  if e == g then return true end
  local tol = dtype == "float32" and 1e-5 or dtype == "float64" and 1e-12 or 0
  return math.abs(e - g) <= tol * math.max(1, math.abs(e))
end

local function same_values(dtype, e, g)
  if #e ~= #g then return false end
  for k = 1, #e do if not close(dtype, e[k], g[k]) then return false end end
  return true
end

local function list(l)
  local p = {}
  for i = 1, math.min(#l, 24) do p[i] = string.format("%.10g", l[i]) end
  return "{" .. table.concat(p, ", ") .. (#l > 24 and ", ..." or "") .. "}"
end

-- The first disagreement between expected e and got g, as a message.
local function compare(prog, e, g)
  for i = 1, #prog do
    local x, y = e.steps[i] or { skipped = true }, g.steps[i]
    local what = "step " .. i .. " (" .. P.code(prog[i]) .. "): "
    if x.skipped ~= y.skipped then return what .. "skipped in one run only", i end
    if x.err and not y.err then return what .. "expected an error, nd succeeded", i end
    if y.err and not x.err then return what .. "nd raised: " .. y.msg, i end
    if x.values then
      if x.dtype ~= y.dtype then return what .. "dtype " .. y.dtype .. ", expected " .. x.dtype, i end
      if list(x.size) ~= list(y.size) then return what .. "size " .. list(y.size) .. ", expected " .. list(x.size), i end
      if not same_values(x.dtype, x.values, y.values) then
        return what .. "values " .. list(y.values) .. ", expected " .. list(x.values), i
      end
    end
  end
  for i = 1, #prog do
    local x, y = e.final[i], g.final[i]
    if (x == nil) ~= (y == nil) then return "final v" .. i .. ": present in one run only", #prog end
    local st = e.steps[i]
    if x and not same_values(st and st.dtype, x, y) then
      return "final v" .. i .. " (after the writes): " .. list(y) .. ", expected " .. list(x), #prog
    end
  end
end

local function reproducer(prog, msg, header)
  local lines = { "-- " .. header, "-- " .. msg, 'local nd = require "nd"' }
  for i, s in ipairs(prog) do
    local code = P.code(s)
    if P.OPS[s.kind].write then
      lines[#lines + 1] = string.format("print(pcall(function() return %s end))", code)
    else
      lines[#lines + 1] = string.format("local ok%d, v%d = pcall(function() return %s end) print(%d, ok%d, v%d)",
        i, i, code, i, i, i)
    end
  end
  return table.concat(lines, "\n")
end

-- Greedy shrinking: drop steps while the model and nd still disagree.
-- Steps keep their numbers (a removed step's variable just never exists).
local function shrink(prog)
  local function renumber(p)
    local map, r = {}, {}
    for i, s in ipairs(p) do
      local c = {}
      for k, v in pairs(s) do c[k] = v end
      if c.a then c.a = map[c.a] or 1e9 end
      if type(c.b) == "number" then c.b = map[c.b] or 1e9 end
      r[#r + 1] = c
      map[s.n] = #r
    end
    return r
  end
  for i, s in ipairs(prog) do s.n = i end
  local cur = prog
  local changed = true
  while changed do
    changed = false
    for i = #cur, 1, -1 do
      local try = {}
      for j, s in ipairs(cur) do if j ~= i then try[#try + 1] = s end end
      local p = renumber(try)
      local ok, msg = pcall(function() return compare(p, P.reference(p), run_nd(p)) end)
      if ok and msg then cur = try; changed = true end
    end
  end
  return renumber(cur)
end

local cases, steps, errors, bad = 0, 0, 0, 0
local function check(prog, expected, header, can_shrink)
  cases = cases + 1
  local got = run_nd(prog)
  for _, st in ipairs(got.steps) do
    if not st.skipped then steps = steps + 1 end
    if st.err then errors = errors + 1 end
  end
  local msg = compare(prog, expected, got)
  if not msg then return end
  bad = bad + 1
  if can_shrink then prog = shrink(prog); msg = compare(prog, P.reference(prog), run_nd(prog)) or msg end
  print(reproducer(prog, msg, header))
  print()
end

if opts.emit then -- --emit json: print the programs, run nothing
  for k = 0, opts.count - 1 do print(json(P.generate(opts.seed + k, opts.steps))) end
  os.exit(0, true)
end

if opts.corpus then
  local corpus = dofile(opts.corpus)
  for k, f in ipairs(corpus) do
    local c = f()
    check(c.prog, c.expect, string.format("corpus %s case %d (NumPy says otherwise)", opts.corpus, k), false)
  end
else
  for k = 0, opts.count - 1 do
    local seed = opts.seed + k
    local prog = P.generate(seed, opts.steps)
    check(prog, P.reference(prog), string.format("fuzz --seed %d --count 1 --steps %d", seed, opts.steps), true)
  end
end
print(string.format("fuzz: %d cases, %d steps (%d errors raised), %d disagreements", cases, steps, errors, bad))
os.exit(bad == 0 and 0 or 1, true) -- close the state: LSan sees every tensor freed
