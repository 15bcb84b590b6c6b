-- The eleven dtypes against NumPy 1.24 / PyTorch 1.13:
-- spec/fixtures/dtypes_cases.lua, from tools/gen_dtype_fixtures.py. The
-- promotion table for every pair; every binary op and comparison for every
-- pair, and unary ops, reductions, scans, sort, indexing and conversions
-- for every dtype, each in four layouts of the same 2 x 3 values
-- (contiguous, transposed, stepped, flipped). ND_DTYPES_SAMPLE=k (set
-- under valgrind and PUC Lua) runs every k-th binary case only.
local nd = require "nd"
require "nd.testing"
local F = dofile("spec/fixtures/dtypes_cases.lua")
local DT = { "float32", "float64", "int32", "int64", "uint8", "bool", "int8",
  "int16", "uint16", "uint32", "uint64" }
local SAMPLE = tonumber(os.getenv("ND_DTYPES_SAMPLE") or "")
  or ((os.getenv("ND_VALGRIND") == "1" or os.getenv("ND_PUC") == "1") and 7 or 1)

-- {dtype, size, values} as a contiguous tensor; int64/uint64 values are
-- {hi, lo} of their int64 bits.
local function build(c)
  local dt, size, vals = c[1], c[2], c[3]
  local t
  if dt == "int64" or dt == "uint64" then
    local hi, lo = {}, {}
    for i, p in ipairs(vals) do hi[i], lo[i] = p[1], p[2] end
    t = nd.tensor(hi, "int64"):mul(4294967296):add(nd.tensor(lo, "int64")):to(dt)
  else
    t = nd.tensor(#vals > 0 and vals or {}, dt)
    if #vals == 0 then t = nd.empty(0, dt) end
  end
  if #size == 0 then return t:view({}) end
  return t:view(size)
end

-- The same 2 x 3 values in four layouts.
local function layouts(x)
  local r, c = x:size(1), x:size(2)
  local st = nd.zeros(r, 2 * c, x:dtype())
  st[{ {}, { 1, 2 * c, 2 } }] = x
  return {
    contiguous = x,
    transposed = x:t():contiguous():t(),
    stepped = st[{ {}, { 1, 2 * c, 2 } }],
    flipped = x:flip({ 1, 2 }):contiguous():flip({ 1, 2 }),
  }
end
local NAMES = { "contiguous", "transposed", "stepped", "flipped" }

describe("dtype promotion", function()
  it("follows PyTorch's table, NumPy's for uint16/uint32/uint64 pairs", function()
    for _, a in ipairs(DT) do
      for _, b in ipairs(DT) do
        local want = F.promote[a][b]
        assert.equals(want, (nd.zeros(2, a) + nd.zeros(2, b)):dtype(), a .. " + " .. b)
        assert.equals(want, nd.cat({ nd.zeros(2, a), nd.zeros(2, b) }):dtype(), a .. ", " .. b)
      end
    end
    local function add(a, b) return (nd.zeros(1, a) + nd.zeros(1, b)):dtype() end
    assert.equals("int16", add("uint8", "int8"))
    assert.equals("int32", add("uint16", "int8"))
    assert.equals("float64", add("uint64", "int64"))
    assert.equals("int64", add("uint32", "int32"))
  end)

  it("keeps Lua numbers and 0-d tensors weak (PyTorch's categories)", function()
    assert.equals("int8", (nd.tensor({ 1 }, "int8") + 3):dtype())
    local u = nd.tensor({ 0, 5 }, "uint16") + (-1)
    assert.equals("uint16", u:dtype())
    assert.same({ 65535, 4 }, u:totable())
    assert.equals("float64", (nd.tensor({ 1 }, "int16") * 2.5):dtype())
    assert.equals("uint32", (nd.tensor({ 1 }, "uint32") + nd.tensor(7, "int64")):dtype())
  end)

  it("promotes more than two tensor operands left to right", function()
    local a, b, c = nd.ones(2, "uint8"), nd.ones(2, "int8"), nd.ones(2, "uint16")
    -- (uint8, int8) -> int16, then (int16, uint16) -> int32
    assert.equals("int32", nd.cat({ a, b, c }):dtype())
    assert.equals("int32", nd.addcmul(a, b, c):dtype())
    -- (uint16, uint32) -> uint32, then (uint32, int8) -> int64
    assert.equals("int64", nd.cat({ c, nd.ones(2, "uint32"), b }):dtype())
  end)
end)

describe("binary ops on every pair of dtypes", function()
  for k, c in ipairs(F.binary) do
    if (k - 1) % SAMPLE == 0 then
      local op, a, b = c[1], c[2], c[3]
      it(op .. " " .. a .. " " .. b, function()
        local want = build(c[4])
        local xa, xb = layouts(build(F.inputs[a])), layouts(build(F.inputs[b]))
        for _, n in ipairs(NAMES) do
          local got = xa[n][op](xa[n], xb[n])
          assert.tensor_equal(want, got)
        end
      end)
    end
  end
end)

local function red(op, t)
  if op == "sum" then return t:sum() end
  if op == "sum1" then return t:sum(1) end
  if op == "sum2" then return t:sum(2) end
  if op == "prod2" then return t:prod(2) end
  if op == "cumsum2" then return t:cumsum(2) end
  if op == "max" then return t:max() end
  if op == "min1" then return (t:min(1)) end
  if op == "sort2" then return (t:sort(2)) end
  if op == "argsort2" then return t:argsort(2) end
  if op == "index_select2" then return t:index_select(2, nd.tensor({ 3, 1, 3 }, "int64")) end
  if op == "masked_select" then return t:masked_select(t:ne(0)) end
  return t[op](t)
end

describe("unary ops, reductions, scans, sort and indexing per dtype", function()
  for _, c in ipairs(F.unary) do
    local op, d = c[1], c[2]
    it(op .. " " .. d, function()
      local want = build(c[3])
      local x = layouts(build(F.inputs[d]))
      for _, n in ipairs(NAMES) do
        local got = red(op, x[n])
        if nd.is_tensor(got) then
          assert.tensor_equal(want, got)
        else -- a whole reduction gives a Lua value (int64/uint64 cdata too)
          assert.is_true(want:item() == got, tostring(want:item()) .. " vs " .. tostring(got))
        end
      end
    end)
  end
end)

describe("conversions between dtypes", function()
  for _, c in ipairs(F.to) do
    it(c[1] .. " -> " .. c[2], function()
      local want = build(c[3])
      local x = layouts(build(F.inputs[c[1]]))
      for _, n in ipairs(NAMES) do
        assert.tensor_equal(want, x[n]:to(c[2]))
      end
    end)
  end
end)

describe("the new dtypes' shorthands and elements", function()
  it("has t:char() and t:short()", function()
    assert.equals("int8", nd.arange(3):char():dtype())
    assert.equals("int16", nd.arange(3):short():dtype())
    assert.same({ -56 }, nd.tensor({ 200 }):to("int16"):char():totable())
  end)

  it("sums bool and integers up to 32 bits to int64, uint64 to uint64", function()
    for _, d in ipairs({ "bool", "uint8", "int8", "int16", "uint16", "int32", "uint32" }) do
      assert.equals("int64", nd.ones(3, d):sum(1):dtype())
      assert.equals("int64", nd.ones(3, d):prod(1):dtype())
      assert.equals("int64", nd.ones(3, d):cumsum(1):dtype())
    end
    assert.equals("uint64", nd.ones(3, "uint64"):sum(1):dtype())
  end)

  it("wraps integer + - * without raising", function()
    assert.same({ -128 }, (nd.tensor({ 127 }, "int8") + nd.tensor({ 1 }, "int8")):totable())
    assert.same({ 0 }, (nd.tensor({ 65535 }, "uint16") + nd.tensor({ 1 }, "uint16")):totable())
    assert.same({ 1 }, (nd.tensor({ 65535 }, "uint16") * nd.tensor({ 65535 }, "uint16")):totable())
    assert.has_error(function() return nd.tensor({ 1 }, "int16"):floor_divide(nd.tensor({ 0 }, "int16")) end)
  end)

  it("reads uint64 beyond 2^53 as LuaJIT's uint64_t, Lua 5.3+'s wrapped integer, or a double", function()
    local t = nd.tensor({ -1 }, "int64"):to("uint64") -- 2^64 - 1
    local v = t[1]
    if jit then
      if type(v) == "cdata" then
        assert.equals("18446744073709551615ULL", tostring(v))
      else
        assert.equals(2 ^ 64, v) -- the classic path (JIT off): a double
      end
    elseif math.type then
      assert.equals(-1, v)
      assert.is_true(math.ult(1, v))
      t[1] = v -- writes back its bits
      assert.equals(-1, t[1])
    else
      assert.equals(2 ^ 64, v)
    end
    assert.equals(7, nd.tensor({ 7 }, "uint64")[1])
  end)

  it("saves and loads the new dtypes as .npy", function()
    local path = os.tmpname()
    for _, d in ipairs({ "int8", "int16", "uint16", "uint32", "uint64" }) do
      local x = build(F.inputs[d])
      nd.save(path, x)
      local f = assert(io.open(path, "rb"))
      local head = f:read(80)
      f:close()
      local code = ({ int8 = "|i1", int16 = "<i2", uint16 = "<u2", uint32 = "<u4", uint64 = "<u8" })[d]
      assert.truthy(head:find(code, 1, true), d)
      assert.tensor_equal(x, nd.load(path))
      nd.save(path, x:t())
      assert.tensor_equal(x:t(), nd.load(path))
    end
    os.remove(path)
  end)

  it("randint fills the new integer dtypes within their range", function()
    for _, d in ipairs({ "int8", "int16", "uint16", "uint32", "uint64" }) do
      local t = nd.randint(0, 100, { 50 }, d)
      assert.equals(d, t:dtype())
      assert.is_true(t:min() >= 0 and t:max() < 100)
    end
    assert.has_error(function() nd.randint(0, 300, { 5 }, "int8") end)
  end)

  it("matmul keeps integer dtypes, accumulating in the result dtype", function()
    local a = nd.tensor({ { 100, 100 } }, "int8")
    local b = nd.tensor({ { 2 }, { 1 } }, "int8")
    local r = a:matmul(b)
    assert.equals("int8", r:dtype())
    assert.same({ { 44 } }, r:totable()) -- 300 wraps to 44
    assert.equals("float64", nd.linalg.inv(nd.eye(2):to("uint16")):dtype())
  end)
end)
