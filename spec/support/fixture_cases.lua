-- Runs the generated oracle cases of spec/fixtures/index_cases.lua
-- (tools/gen_index_fixtures.py, PyTorch's results) through nd, with every
-- tensor argument in each of several memory layouts holding the same
-- values: contiguous, transposed storage, flipped storage (negative
-- strides), and every other element of a larger tensor.
local nd = require "nd"
local luassert = require "luassert"
local unpack = table.unpack or unpack

local M = {}
M.cases = dofile("spec/fixtures/index_cases.lua")
M.layouts = { "contiguous", "transposed", "flipped", "stepped" }

local function plain(s)
  local r = {}
  for i = 1, #s do r[i] = s[i] end
  return r
end

-- The tensor a spec {t =, dtype =, size =} describes, laid out as asked.
function M.build(spec, layout)
  local x = nd.tensor(spec.t, spec.dtype):reshape(spec.size)
  local n, empty = x:dim(), x:numel() == 0
  if n == 0 or empty or layout == "contiguous" then return x end
  local all = {}
  for d = 1, n do all[d] = n - d + 1 end
  if layout == "transposed" then
    return x:permute(all):contiguous():permute(all)
  elseif layout == "flipped" then
    local dims = {}
    for d = 1, n do dims[d] = d end
    return x:flip(dims):contiguous():flip(dims)
  end
  local big, rng = {}, {}
  for d = 1, n do
    big[d] = 2 * spec.size[d]
    rng[d] = { 1, big[d] - 1, 2 }
  end
  local v = nd.zeros(big, spec.dtype)[rng]
  v:copy_(x)
  return v
end

local function is_spec(a) return type(a) == "table" and a.dtype ~= nil end

local function arg(a, layout)
  if is_spec(a) then return M.build(a, layout) end
  if type(a) == "table" and is_spec(a[1]) then
    local r = {}
    for i, s in ipairs(a) do r[i] = M.build(s, layout) end
    return r
  end
  return a
end

function M.check_tensor(exp, got, what)
  luassert.is_true(nd.same_storage(got, got), what) -- a tensor
  luassert.equals(exp.dtype, got:dtype(), what .. ": dtype")
  luassert.same(exp.size, plain(got:size()), what .. ": size")
  local vals = got:dim() == 0 and got:item() or got:totable()
  luassert.same(exp.t, vals, what .. ": values")
end

-- Runs case c with its tensor arguments in `layout`.
function M.run(c, layout)
  local args = {}
  for i, a in ipairs(c.args) do args[i] = arg(a, layout) end
  local f = c.module and nd[c.fn] or args[1][c.fn]
  local res = { f(unpack(args, 1, #c.args)) }
  local exp = c.expected
  local what = c.name .. " (" .. layout .. ")"
  if exp.number then
    luassert.equals(exp.number, res[1], what)
  elseif exp.list then
    local got = #res > 1 and res or res[1]
    luassert.equals(#exp.list, #got, what .. ": count")
    for i, e in ipairs(exp.list) do M.check_tensor(e, got[i], what .. " [" .. i .. "]") end
  else
    M.check_tensor(exp, res[1], what)
    if c.fn:sub(-1) == "_" then luassert.equals(args[1], res[1], what .. ": returns self") end
  end
  return args, res
end

-- A test per case of the functions named in fns (a set); `it` is busted's.
function M.describe_all(fns, it)
  for _, c in ipairs(M.cases) do
    if fns[c.fn] then
      it(c.fn .. ": " .. c.name, function()
        for _, layout in ipairs(M.layouts) do M.run(c, layout) end
      end)
    end
  end
end

-- t's sizes as a plain table.
function M.sizes(t)
  local s = {}
  for i = 1, t:dim() do s[i] = t:size(i) end
  return s
end

-- got (a tensor) against the spec exp: dtype, sizes, and values exact
-- (tol 0) or within tol of the largest expected magnitude (at least 1).
function M.check_close(exp, got, tol, what)
  luassert.equals(exp.dtype, got:dtype(), what .. ": dtype")
  luassert.same(exp.size, M.sizes(got), what .. ": size")
  if tol == 0 then
    luassert.same(exp.t, got:totable(), what .. ": values")
    return
  end
  local w = nd.tensor(exp.t, "float64"):reshape(exp.size)
  local scale = math.max(1, w:numel() > 0 and w:abs():max() or 0)
  local err = w:numel() > 0 and (got:double() - w):abs():max() or 0
  assert(err <= tol * scale, ("%s: off by %g (tolerance %g)"):format(what, err, tol * scale))
end

-- A test per error case {f, fragments...}: f raises, naming fn and the
-- values, at the caller's line in file (the spec's name); `it` is busted's.
function M.raises_all(it, fn, errors, file)
  for i, c in ipairs(errors) do
    it("raises, naming " .. fn .. " and the values (" .. i .. ")", function()
      local err = assert_error_matches(unpack(c))
      assert(err:find(file .. ":", 1, true), "points at the caller: " .. err)
    end)
  end
end

return M
