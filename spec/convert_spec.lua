-- dtype conversion for every (source, destination) pair over edge values:
-- spec/fixtures/convert_cases.lua, from tools/gen_convert_fixtures.py
-- (NumPy where C defines the cast; saturation and NaN -> 0 where it does
-- not). Each case runs contiguous (tiled, so the vector loops' bodies and
-- tails both run), on strided, transposed and flipped sources, into a
-- strided destination, and as fill_ with each value.
local nd = require "nd"
require "nd.testing"
local cases = dofile("spec/fixtures/convert_cases.lua")

local REP = 5

-- A 1-D tensor of dtype dt holding vals (int64 and uint64 ones as {hi, lo}
-- of the int64 bits: exact in every Lua, beyond 2^53 too; int64 -> uint64
-- keeps the bits).
local function build(vals, dt)
  if dt ~= "int64" and dt ~= "uint64" then return nd.tensor(vals, dt) end
  local hi, lo = {}, {}
  for i, p in ipairs(vals) do hi[i], lo[i] = p[1], p[2] end
  return nd.tensor(hi, "int64"):mul(4294967296):add(nd.tensor(lo, "int64")):to(dt)
end
local function tiled(vals)
  local t = {}
  for _ = 1, REP do
    for _, v in ipairs(vals) do t[#t + 1] = v end
  end
  return t
end

-- Valgrind's CPU emulation converts int64 to float32 through float64 (two
-- roundings: 2^53 + 2^29 + 1 comes out 2^53), so under `make
-- check-valgrind` (ND_VALGRIND=1) that pair is left to the other runs.
local emulated = os.getenv("ND_VALGRIND") == "1"
for _, c in ipairs(cases) do
  local describe = (emulated and c.from == "int64" and c.to == "float32") and pending or describe
  describe(c.from .. " -> " .. c.to, function()
    local n = #c.values
    local src, want = build(tiled(c.values), c.from), build(tiled(c.want), c.to)

    it("converts contiguous elements", function()
      assert.tensor_equal(want, nd.empty(n * REP, c.to):copy_(src))
      assert.tensor_equal(want, src:to(c.to))
    end)

    it("converts strided, transposed and flipped sources", function()
      local big = nd.zeros(n * REP, 3, c.from)
      big:select(2, 2):copy_(src)
      assert.tensor_equal(want, nd.empty(n * REP, c.to):copy_(big:select(2, 2)))
      local t = src:view(REP, n):t()
      assert.tensor_equal(want:view(REP, n):t(), nd.empty(n, REP, c.to):copy_(t))
      assert.tensor_equal(want:flip(1), nd.empty(n * REP, c.to):copy_(src:flip(1)))
    end)

    it("writes a strided destination only where it points", function()
      local big = nd.zeros(n * REP, 2, c.to)
      big:select(2, 1):copy_(src)
      assert.tensor_equal(want, big:select(2, 1))
      assert.tensor_equal(nd.zeros(n * REP, c.to), big:select(2, 2))
    end)

    it("fills with each value", function()
      local whole, strided = nd.empty(37, c.to), nd.zeros(37, 2, c.to)
      for i = 1, n do
        local v, w = src:narrow(1, i, 1):view({}), want:narrow(1, i, 1)
        assert.tensor_equal(w:expand(37), whole:fill_(v))
        strided:select(2, 2):fill_(v)
        assert.tensor_equal(w:expand(37), strided:select(2, 2))
        assert.tensor_equal(nd.zeros(37, c.to), strided:select(2, 1))
      end
    end)
  end)
end

describe("conversion of signed zeros", function()
  it("keeps the sign between float dtypes", function()
    for _, p in ipairs({ { "float64", "float32" }, { "float32", "float64" } }) do
      local z = nd.tensor({ -1 / math.huge, 0 }, p[1]):to(p[2])
      assert.equals(-math.huge, 1 / z[1])
      assert.equals(math.huge, 1 / z[2])
    end
  end)
end)

describe("fill_ with Lua values", function()
  it("writes the values the dtype holds, fractions truncated toward zero", function()
    -- integral numbers and booleans travel as int64, others as float64
    local checks = {
      { "uint8", 255.9, 255 }, { "uint8", -0.5, 0 }, { "int8", -128.7, -128 },
      { "int16", 32767, 32767 }, { "uint16", 65535, 65535 }, { "uint32", 2 ^ 32 - 1, 2 ^ 32 - 1 },
      { "int32", -2147483648, -2147483648 }, { "int64", -2.5, -2 },
      { "bool", 0 / 0, true }, { "bool", -0.0, false }, { "bool", 256, true },
      { "float32", 16777217, 16777216 }, { "float32", math.huge, math.huge },
      { "float64", true, 1 }, { "int64", 2 ^ 53, 2 ^ 53 }, { "uint64", 2 ^ 53, 2 ^ 53 },
    }
    for _, k in ipairs(checks) do
      for _, t in ipairs({ nd.empty(70, k[1]), nd.zeros(70, 3, k[1]):select(2, 2) }) do
        t:fill_(k[2])
        assert.tensor_equal(nd.tensor({ k[3] }, k[1]):expand(70), t)
      end
    end
  end)

  it("raises for a value the dtype cannot hold, naming the value and dtype", function()
    local bad = {
      { "uint8", 300 }, { "uint8", 300.5 }, { "uint8", -1 }, { "uint8", 0 / 0 },
      { "int8", 128 }, { "int8", -129 }, { "int16", 32768 }, { "uint16", 65536 },
      { "uint16", -1 }, { "uint32", 2 ^ 32 }, { "int32", 2 ^ 32 + 5 }, { "int32", 1e300 },
      { "int32", -1e300 }, { "int64", 0 / 0 }, { "int64", 2 ^ 63 }, { "uint64", -1.5 },
      { "uint64", 2 ^ 64 }, { "float32", 1e300 }, { "int32", math.huge },
    }
    for _, k in ipairs(bad) do
      local t = nd.zeros(4, k[1])
      local ok, msg = pcall(t.fill_, t, k[2])
      assert.is_false(ok, k[1] .. " " .. tostring(k[2]))
      assert.matches("fill_: value .* cannot be converted to dtype " .. k[1], msg)
      assert.tensor_equal(nd.zeros(4, k[1]), t) -- nothing written
      for _, f in ipairs({
        function() nd.full({ 2 }, k[2], k[1]) end,
        function() t:set(1, k[2]) end,
        function() t[1] = k[2] end,
        function() t[{ { 1, 2 } }] = k[2] end,
        function() t:masked_fill_(nd.tensor({ true, false, true, false }), k[2]) end,
      }) do
        local ok2, msg2 = pcall(f)
        assert.is_false(ok2)
        assert.matches("cannot be converted to dtype " .. k[1], msg2)
      end
      assert.tensor_equal(nd.zeros(4, k[1]), t)
    end
    assert.matches("^full: value 300 ", select(2, pcall(nd.full, { 2 }, 300, "uint8")))
  end)

  it("keeps in-place arithmetic scalars weak: they wrap as the op does", function()
    assert.same({ 44, 45 }, nd.tensor({ 0, 1 }, "uint8"):add_(300):totable())
    assert.same({ 65535 }, nd.tensor({ 0 }, "uint16"):add_(-1):totable())
    assert.equals("int8", (nd.tensor({ 1 }, "int8") + 3):dtype())
  end)
end)
