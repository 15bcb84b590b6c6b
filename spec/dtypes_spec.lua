-- The thirteen dtypes against NumPy 1.24 / PyTorch 1.13:
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
  "int16", "uint16", "uint32", "uint64", "float16", "bfloat16" }
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

-- float16 / bfloat16 bits of a 1-element tensor (its bytes, little-endian)
local function bits(t)
  local lo, hi = t:contiguous():to_string():byte(1, 2)
  return lo + 256 * hi
end

describe("float16 and bfloat16", function()
  it("have t:half() and t:bfloat16()", function()
    assert.equals("float16", nd.arange(3):half():dtype())
    assert.equals("bfloat16", nd.arange(3):bfloat16():dtype())
    assert.same({ 0, 1, 2 }, nd.arange(3):half():totable())
    assert.equals(2, nd.zeros(1, "float16"):element_size())
  end)

  it("round to nearest-even on conversion, overflow to inf, keep NaN", function()
    local function h(v) return nd.tensor({ v }, "float64"):half() end
    local function b(v) return nd.tensor({ v }, "float64"):bfloat16() end
    assert.equals(0x3C00, bits(h(1)))
    assert.equals(0x3C00, bits(h(1 + 2 ^ -11)))          -- tie: even
    assert.equals(0x3C02, bits(h(1 + 3 * 2 ^ -11)))      -- tie: even
    assert.equals(0x3C01, bits(h(1 + 2 ^ -11 + 2 ^ -40))) -- above the tie: once rounded
    assert.equals(0x7BFF, bits(h(65519)))
    assert.equals(0x7C00, bits(h(65520)))
    assert.equals(0xFC00, bits(h(-1e300)))
    assert.equals(0x0001, bits(h(2 ^ -24)))              -- the least subnormal
    assert.equals(0x0000, bits(h(2 ^ -25)))              -- tie to even: 0
    assert.equals(0x0001, bits(h(2 ^ -25 + 2 ^ -40)))
    assert.equals(0x8000, bits(h(-1 / math.huge)))  -- -0 (Lua 5.1 folds a -0.0 literal to 0)
    assert.is_true(h(0 / 0)[1] ~= h(0 / 0)[1])
    assert.equals(0x3F80, bits(b(1)))
    assert.equals(0x3F80, bits(b(1 + 2 ^ -8)))           -- tie: even
    assert.equals(0x3F81, bits(b(1 + 2 ^ -8 + 2 ^ -30)))  -- float64 rounded once
    assert.equals(0x7F80, bits(b(3.4e38)))
    assert.is_true(b(0 / 0)[1] ~= b(0 / 0)[1])
    -- int64 beyond float64's precision rounds once too (2^62 + 2^54 + 1)
    local big = nd.tensor({ 2 ^ 62 + 2 ^ 54 }, "int64") + 1
    assert.equals(2 ^ 62 + 2 ^ 55, big:bfloat16()[1])
    -- and back: exact
    assert.equals(2 ^ -24, nd.tensor({ 2 ^ -24 }):half():double()[1])
    assert.same({ 65504, -65504 }, nd.tensor({ 65504, -65504 }):half():totable())
  end)

  -- The bulk converters' vector loops (16 or 8 lanes) run only on runs
  -- longer than the short tensors above: every 16-bit pattern, and 2^16
  -- float32 patterns weighted to NaN, inf, subnormals, ties and the
  -- overflow edges, each against the plain rule (15-element pieces, below
  -- the 16-lane loop; and float64 -> half, one element at a time), from
  -- offsets 0 and 1 (unaligned, tails of 0 and 15).
  it("convert long runs bit for bit as one element at a time", function()
    local function bytes(n, f)
      local b = {}
      for i = 0, n - 1 do b[#b + 1] = f(i) end
      return table.concat(b)
    end
    local function pieces(t, f)
      local b, n = {}, t:numel()
      for i = 1, n, 15 do
        b[#b + 1] = f(t[{ { i, math.min(i + 14, n) } }]):to_string()
      end
      return table.concat(b)
    end
    local all = bytes(65536, function(i) return string.char(i % 256, (i - i % 256) / 256) end)
    math.randomseed(23)
    local function u32(u)
      return string.char(u % 256, math.floor(u / 256) % 256,
        math.floor(u / 65536) % 256, math.floor(u / 16777216))
    end
    -- k: 0 inf / NaN, 1 zero / subnormal, 2 float16 ties (and not) in its
    -- range, 3 float32's largest, 4 bfloat16 ties, 5 anything
    local floats = bytes(65536, function()
      local sign, k = math.random(0, 1) * 2 ^ 31, math.random(0, 5)
      local m, tie = math.random(0, 2 ^ 23 - 1), math.random(0, 1)
      local e = k == 0 and 255 or k == 1 and 0 or k == 2 and math.random(100, 142)
        or k == 3 and 254 or math.random(0, 255)
      if k == 2 then m = m - m % 2 ^ 13 + tie * 2 ^ 12 end
      if k == 4 then m = m - m % 2 ^ 16 + tie * 2 ^ 15 end
      return u32(sign + e * 2 ^ 23 + m)
    end)
    for off = 0, 1 do
      for _, dt in ipairs({ "float16", "bfloat16" }) do
        local t = nd.from_string(all, dt)[{ { 1 + off, 65536 } }]
        assert.equals(pieces(t, function(p) return p:float() end), t:float():to_string())
        local x = nd.from_string(floats, "float32")[{ { 1 + off, 65536 } }]
        assert.equals(x:double():to(dt):to_string(), x:to(dt):to_string())
      end
    end
  end)

  it("saturates to integers, NaN to 0", function()
    local x = nd.tensor({ 65504, -65504, 0 / 0, -2.5 }, "float16")
    assert.same({ 127, -128, 0, -2 }, x:to("int8"):totable())
    assert.same({ 255, 0, 0, 0 }, x:to("uint8"):totable())
  end)

  it("takes Lua numbers rounded, refuses finite ones beyond the range (PyTorch's fill_)", function()
    local t = nd.zeros(2, "float16")
    t:fill_(0.1)
    assert.equals(0x2E66, bits(t[{ { 1, 1 } }]))
    t[1] = 1 / 0
    assert.equals(1 / 0, t[1])
    t[1] = 65504
    assert.equals(65504, t[1])
    assert.has_error(function() t:fill_(65520) end)
    assert.has_error(function() t[1] = -1e6 end)
    local b = nd.zeros(1, "bfloat16")
    b[1] = 1e38
    assert.has_error(function() b[1] = 1e39 end)
  end)

  it("promote as PyTorch (NumPy for uint16/32/64), Lua numbers weak", function()
    local function add(a, b) return (nd.zeros(1, a) + nd.zeros(1, b)):dtype() end
    assert.equals("float32", add("float16", "bfloat16"))
    assert.equals("float16", add("float16", "int64"))
    assert.equals("bfloat16", add("bool", "bfloat16"))
    assert.equals("float32", add("float16", "float32"))
    assert.equals("float32", add("uint16", "float16"))
    assert.equals("float32", add("uint16", "bfloat16"))
    assert.equals("float64", add("uint32", "float16"))
    assert.equals("float16", (nd.ones(2, "float16") * 0.5):dtype())
    assert.equals("bfloat16", (nd.ones(2, "bfloat16") + nd.tensor(2.5)):dtype())
  end)

  it("compute in float32 and round once", function()
    -- 1 + 2^-11 and 1 + 3 * 2^-11 are ties in float16; exact in float32
    local a = nd.tensor({ 1, 1 }, "float16")
    local b = nd.tensor({ 2 ^ -11, 3 * 2 ^ -11 }, "float32"):half()
    assert.same({ 1, 1 + 2 ^ -9 }, (a + b):totable()) -- both ties: even
    assert.equals("float16", (a + b):dtype())
    -- a long sum accumulates wider than float16: 4096 ones
    assert.equals(4096, nd.ones(4096, "float16"):sum())
    assert.equals("float16", nd.ones(3, "float16"):sum(1):dtype())
    local e = nd.tensor({ 0, 1, -1, 10 }, "float16"):exp()
    assert.allclose(nd.tensor({ 1, 2.71875, 0.36792, 22032 }), e:float(), 1e-3)
    assert.same({ false, true }, nd.tensor({ 1, 0 / 0 }, "bfloat16"):isnan():totable())
  end)

  it("sort NaN last and -0 with 0, as float32 does", function()
    local x = nd.tensor({ 3, 0 / 0, -1, -1 / math.huge, 0, -1 / 0 }, "float16")
    local v, i = x:sort(1)
    assert.same({ -1 / 0, -1, 0, 0, 3 }, { v[1], v[2], v[3], v[4], v[5] })
    assert.is_true(v[6] ~= v[6])
    assert.same({ 6, 3, 4, 5, 1, 2 }, i:totable())
  end)

  it("saves float16 as <f2 .npy and refuses bfloat16", function()
    local path = os.tmpname()
    local x = build(F.inputs.float16)
    nd.save(path, x)
    local f = assert(io.open(path, "rb"))
    local head = f:read(80)
    f:close()
    assert.truthy(head:find("<f2", 1, true))
    assert.tensor_equal(x, nd.load(path))
    nd.save(path, x:t())
    assert.tensor_equal(x:t(), nd.load(path))
    local ok, err = pcall(nd.save, path, build(F.inputs.bfloat16))
    assert.is_false(ok)
    assert.truthy(tostring(err):find("safetensors", 1, true))
    os.remove(path)
  end)

  it("save and load as safetensors F16 / BF16 (and read the fixture's BF16)", function()
    local path = os.tmpname()
    local h, b = build(F.inputs.float16), build(F.inputs.bfloat16)
    nd.safetensors.save(path, { h = h:t(), b = b })
    local _, info = nd.safetensors.metadata(path)
    assert.equals("F16", info.h.safetensors_dtype)
    assert.equals("BF16", info.b.safetensors_dtype)
    local r = nd.safetensors.load(path)
    assert.tensor_equal(h:t(), r.h)
    assert.tensor_equal(b, r.b)
    os.remove(path)
    local t = nd.safetensors.load("spec/fixtures/safetensors/all_dtypes.safetensors")
    assert.equals("bfloat16", t.bf16:dtype())
    assert.same({ 1, 2 }, t.bf16:totable())
  end)

  it("reads a NumPy-written float16 .npy, both byte orders", function()
    local x = nd.load("spec/fixtures/f16_le.npy")
    assert.equals("float16", x:dtype())
    assert.same({ { 1, -2.25, 65504 }, { 2 ^ -24, 1 / 0, 0 } }, x:totable())
    assert.tensor_equal(x, nd.load("spec/fixtures/f16_be.npy"))
  end)

  it("rand, randn and the in-place samplers fill them", function()
    for _, d in ipairs({ "float16", "bfloat16" }) do
      local r = nd.rand({ 1000 }, d)
      assert.equals(d, r:dtype())
      assert.is_true(r:min() >= 0 and r:max() < 1)
      assert.equals(d, nd.randn({ 10 }, d):dtype())
      local u = nd.zeros(100, d):uniform_(2, 3)
      assert.is_true(u:min() >= 2 and u:max() < 3)
    end
  end)

  it("matmul in float32 with sgemm, rounded once; matmul_plan says so", function()
    local a, b = nd.randn(5, 7):half(), nd.randn(7, 3):half()
    local want = a:float():matmul(b:float()):half()
    assert.tensor_equal(want, a:matmul(b))
    assert.tensor_equal(want, a:matmul(b:t():contiguous():t()))
    local o = nd.empty(5, 3, "float16")
    nd.matmul(a, b, o)
    assert.tensor_equal(want, o)
    local ab, bb = a:bfloat16(), b:bfloat16()
    assert.tensor_equal(ab:float():matmul(bb:float()):bfloat16(), ab:matmul(bb))
    assert.tensor_equal(a:float():mv(b[{ {}, 1 }]:float()):half(), nd.mv(a, b[{ {}, 1 }]))
    local p = nd.matmul_plan(a, b)
    assert.equals("sgemm", p.routine)
    assert.equals("float32", p.compute_dtype)
    assert.equals("float16", p.dtype)
  end)

  it("nan_to_num's default bounds are their largest finite values", function()
    local x = nd.tensor({ 0 / 0, 1 / 0, -1 / 0 }, "float16"):nan_to_num()
    assert.same({ 0, 65504, -65504 }, x:totable())
    assert.equals(0x7F7F, bits(nd.tensor({ 1 / 0 }, "bfloat16"):nan_to_num()))
  end)

  it("nd.linalg computes them in float32 and gives float32", function()
    local A = nd.tensor({ { 4, 1, 0.5 }, { 1, 3, 0.25 }, { 0.5, 0.25, 2 } })
    local B = nd.stack({ A, A * 2 }) -- a batch of two
    for _, dt in ipairs({ "float16", "bfloat16" }) do
      -- contiguous, transposed and batched; the same values in float32
      for _, h in ipairs({ A:to(dt), A:to(dt):t(), B:to(dt), B:to(dt):transpose(2, 3) }) do
        local f = h:to("float32")
        for _, name in ipairs({ "inv", "cholesky", "pinv", "eigvalsh", "svdvals" }) do
          local r = nd.linalg[name](h)
          assert.equals("float32", r:dtype(), name)
          assert.is_true(nd.equal(nd.linalg[name](f), r), dt .. " " .. name)
        end
        local d1, d2 = nd.linalg.det(f), nd.linalg.det(h)
        if type(d1) == "number" then assert.equals(d1, d2) else assert.is_true(nd.equal(d1, d2)) end
        assert.is_true(nd.equal(nd.linalg.matrix_power(f, 3), nd.linalg.matrix_power(h, 3)))
        assert.is_true(nd.equal(nd.linalg.matrix_power(f, -2), nd.linalg.matrix_power(h, -2)))
      end
      local x = nd.linalg.solve(A:to(dt), nd.tensor({ 1, 2, 3 }, dt))
      assert.equals("float32", x:dtype())
      assert.is_true(x:allclose(nd.linalg.solve(A, nd.tensor({ 1, 2, 3 })):float(), 1e-5, 1e-5))
      assert.equals("float64", nd.linalg.solve(A:to(dt), nd.tensor({ 1, 2, 3 })):dtype())
    end
  end)
end)
