-- nd.load(path, {mmap = "r" | "r+" | "c"}): a view straight over the
-- mapped .npy file, in NumPy's memmap modes; the mapping lives as long as
-- any view of it; what cannot be viewed in place is refused.
local nd = require "nd"
local internal = require "nd.internal"

local function tmp() return os.tmpname() end
local function slurp(p)
  local f = assert(io.open(p, "rb")); local s = f:read("*a"); f:close(); return s
end
local function spit(p, s)
  local f = assert(io.open(p, "wb")); f:write(s); f:close()
end
-- A version 1.0 .npy file: dict padded so the data starts at data_at.
local function npy(dict, data, data_at)
  data_at = data_at or 128
  local hlen = data_at - 10
  local h = dict .. string.rep(" ", hlen - #dict - 1) .. "\n"
  return "\147NUMPY\1\0" .. string.char(hlen % 256, math.floor(hlen / 256)) .. h .. data
end

describe("nd.load with mmap", function()
  local paths = {}
  after_each(function() for _, p in ipairs(paths) do os.remove(p) end paths = {} end)
  local function saved(t)
    local p = tmp(); paths[#paths + 1] = p
    nd.save(p, t)
    return p
  end

  it('"r": a read-only view of the file, equal to the copying load', function()
    local t = nd.arange(12):view(3, 4):float()
    local p = saved(t)
    local r = nd.load(p, { mmap = "r" })
    assert.is_true(r:is_readonly())
    assert.is_true(nd.equal(r, t))
    assert.is_false(nd.load(p):is_readonly())
    assert_error_matches(function() r:fill_(0) end, "fill_", "read-only")
    assert.is_true(nd.equal(nd.load(p), t))
  end)

  it('"r+": writes reach the file', function()
    local p = saved(nd.zeros(2, 3, "int32"))
    local w = nd.load(p, { mmap = "r+" })
    assert.is_false(w:is_readonly())
    w[{ 2, 3 }] = 42
    w[1]:fill_(7)
    w = nil
    collectgarbage(); collectgarbage()
    assert.same({ { 7, 7, 7 }, { 0, 0, 42 } }, nd.load(p):totable())
  end)

  it('"c": writable, copy-on-write: the file does not change', function()
    local t = nd.arange(6, "float64")
    local p = saved(t)
    local before = slurp(p)
    local c = nd.load(p, { mmap = "c" })
    assert.is_false(c:is_readonly())
    c:mul_(10)
    assert.same({ 0, 10, 20, 30, 40, 50 }, c:totable())
    assert.equals(before, slurp(p))
  end)

  it("the mapping outlives the first tensor: views keep it (and the file) alive", function()
    local p = saved(nd.arange(100, "float64"))
    local v = nd.load(p, { mmap = "r" }):narrow(1, 51, 10)
    for _ = 1, 3 do collectgarbage() end
    os.remove(p) -- the open file keeps its pages
    local x = {}
    for i = 1, 200 do x[i] = nd.ones(100) end -- other allocations in between
    x = nil
    collectgarbage()
    assert.same({ 50, 51, 52, 53, 54, 55, 56, 57, 58, 59 }, v:totable())
    assert.is_true(v:is_readonly())
  end)

  it("a Fortran-order file is viewed with Fortran strides (no copy)", function()
    local t = nd.arange(6, "float32"):view(2, 3)
    local p = saved(t:t()) -- saved as a Fortran-order file of 3x2
    assert.truthy(slurp(p):find("'fortran_order': True", 1, true))
    local f = nd.load(p, { mmap = "r" })
    assert.same({ 3, 2 }, { f:size(1), f:size(2) })
    assert.same({ 1, 3 }, { f:stride(1), f:stride(2) })
    assert.is_true(nd.equal(f, t:t()))
  end)

  it("a 0-size array and a 0-d array", function()
    local z = nd.load(saved(nd.zeros(0, 3)), { mmap = "r" })
    assert.same({ 0, 3 }, { z:size(1), z:size(2) })
    assert.equals(0, z:numel())
    local s = nd.load(saved(nd.tensor(2.5)), { mmap = "c" })
    assert.equals(0, s:dim())
    assert.equals(2.5, s:item())
  end)

  it("every dtype nd has, in every mode", function()
    for _, d in ipairs(internal.consts.dtypes) do
      local t = nd.arange(1, 7):to(d.name):view(2, 3)
      local p = d.name ~= "bfloat16" and saved(t) -- .npy has no bfloat16
      for _, mode in ipairs(p and { "r", "r+", "c" } or {}) do
        local m = nd.load(p, { mmap = mode })
        assert.equals(d.name, m:dtype())
        assert.is_true(nd.equal(m, t), d.name .. " " .. mode)
      end
    end
  end)

  it("refuses big-endian and misaligned data, naming the reason and nd.load(path)", function()
    local p = tmp(); paths[#paths + 1] = p
    spit(p, npy("{'descr': '>f8', 'fortran_order': False, 'shape': (2,), }",
      "\63\240\0\0\0\0\0\0\64\0\0\0\0\0\0\0"))
    assert.same({ 1, 2 }, nd.load(p):totable()) -- the copy swaps
    assert_error_matches(function() nd.load(p, { mmap = "r" }) end,
      "load", p, "big-endian", "nd.load(path)")
    spit(p, npy("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }",
      "\1\0\0\0\2\0\0\0", 126))
    assert.same({ 1, 2 }, nd.load(p):totable())
    assert_error_matches(function() nd.load(p, { mmap = "c" }) end,
      "load", p, "not a multiple of the element size", "nd.load(path)")
    -- bool bytes other than 0 and 1 read as true when copied; a mapping
    -- cannot rewrite them in place
    spit(p, npy("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", "\0\1\2"))
    assert.same({ false, true, true }, nd.load(p):totable())
    assert_error_matches(function() nd.load(p, { mmap = "r" }) end,
      "load", p, "bytes other than 0 and 1", "nd.load(path)")
  end)

  it("checks its options and the file", function()
    local p = saved(nd.ones(2))
    assert_error_matches(function() nd.load(p, { mmap = "w" }) end, "load", 'got "w"')
    assert_error_matches(function() nd.load(p, { mmap = true }) end, "load", "mmap")
    assert_error_matches(function() nd.load(p, { map = "r" }) end, "load", "unknown option map")
    assert_error_matches(function() nd.load(p, "r") end, "load", "argument 2")
    assert_error_matches(function() nd.load("/nonexistent/x.npy", { mmap = "r" }) end,
      "load", "cannot open /nonexistent/x.npy")
    local q = tmp(); paths[#paths + 1] = q
    local bytes = slurp(p)
    for _, n in ipairs({ 0, 5, 9, 40, #bytes - 1 }) do -- truncated anywhere
      spit(q, bytes:sub(1, n))
      assert_error_matches(function() nd.load(q, { mmap = "r" }) end, "load", q)
    end
    spit(q, bytes .. "x") -- more data than the shape
    assert_error_matches(function() nd.load(q, { mmap = "r" }) end, "load", q, "needs 16 bytes")
  end)
end)
