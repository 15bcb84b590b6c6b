-- tostring(t): aligned columns, nested brackets, one format over the
-- whole tensor, "..." past 1000 elements, a trailer with dtype and size.
local nd = require "nd"

local function lines(s)
  local r = {}
  for l in (s .. "\n"):gmatch("(.-)\n") do r[#r + 1] = l end
  return r
end

describe("printing", function()
  it("aligns integer columns and ends with a trailer", function()
    assert.equals("[[ 0,  1,  2],\n [ 3, 10,  5]]\n[int64 tensor of size {2, 3}]",
      tostring(nd.arange(6):view(2, 3):set(2, 2, 10)))
    assert.equals("[-5,  3]\n[int32 tensor of size {2}]",
      tostring(nd.tensor({ -5, 3 }, "int32")))
    assert.equals("[0, 1, 2]\n[uint8 tensor of size {3}]", tostring(nd.arange(3, "uint8")))
  end)

  it("prints integral floats as '3.' and others with 4 decimals", function()
    assert.equals("[ 1., -2.,  3.]\n[float64 tensor of size {3}]",
      tostring(nd.tensor({ 1, -2, 3 })))
    assert.equals("[ 1.5000, -2.2500,  3.0000]\n[float32 tensor of size {3}]",
      tostring(nd.tensor({ 1.5, -2.25, 3 }, "float32")))
    -- float32 0.1 is 0.100000001490116...: printed as people expect
    assert.equals("[0.1000, 0.2000]\n[float32 tensor of size {2}]",
      tostring(nd.tensor({ 0.1, 0.2 }, "float32")))
  end)

  it("switches to scientific notation for huge, tiny or wide-ranging values", function()
    assert.equals("[1.0000e+10, 1.5000e+00]\n[float64 tensor of size {2}]",
      tostring(nd.tensor({ 1e10, 1.5 })))
    assert.equals("[1.0000e-07, 2.0000e-07]\n[float64 tensor of size {2}]",
      tostring(nd.tensor({ 1e-7, 2e-7 })))
    assert.equals("[1.2346e+05, 5.0000e-01]\n[float64 tensor of size {2}]",
      tostring(nd.tensor({ 123456.789, 0.5 })))
    assert.equals("[1.0000e+12, 1.0000e+00]\n[float64 tensor of size {2}]",
      tostring(nd.tensor({ 1e12, 1 })))
  end)

  it("shows nan and inf without letting them decide the format", function()
    assert.equals("[   nan,    inf,   -inf, 1.5000]\n[float64 tensor of size {4}]",
      tostring(nd.tensor({ 0 / 0, 1 / 0, -1 / 0, 1.5 })))
    assert.equals("[nan, inf]\n[float32 tensor of size {2}]",
      tostring(nd.tensor({ 0 / 0, 1 / 0 }, "float32")))
  end)

  it("prints bool and int64 beyond 2^53", function()
    assert.equals("[ true, false]\n[bool tensor of size {2}]", tostring(nd.tensor({ true, false })))
    if not jit then return pending("LuaJIT's boxed int64_t") end
    local t = nd.zeros(2, "int64")
    t:set(2, LL(2) ^ 60 + 1)
    assert.equals("[                  0, 1152921504606846977]\n[int64 tensor of size {2}]",
      tostring(t))
  end)

  it("nests brackets for 3-D and 4-D with a blank line between blocks", function()
    assert.equals(table.concat({
      "[[[ 0,  1],",
      "  [ 2,  3]],",
      "",
      " [[ 4,  5],",
      "  [ 6,  7]],",
      "",
      " [[ 8,  9],",
      "  [10, 11]]]",
      "[int64 tensor of size {3, 2, 2}]" }, "\n"),
      tostring(nd.arange(12):view(3, 2, 2)))
    local s = tostring(nd.arange(16):view(2, 2, 2, 2))
    assert.equals("[[[[ 0,  1],", lines(s)[1])
    assert.equals("[int64 tensor of size {2, 2, 2, 2}]", lines(s)[#lines(s)])
    assert.truthy(s:find("   [14, 15]]]]", 1, true))
  end)

  it("prints 0-d and empty tensors sensibly", function()
    assert.equals("3.5000\n[float64 tensor of size {}]", tostring(nd.tensor(3.5)))
    assert.equals("7\n[int32 tensor of size {}]", tostring(nd.tensor(7, "int32")))
    assert.equals("true\n[bool tensor of size {}]", tostring(nd.tensor(true)))
    assert.equals("[]\n[float64 tensor of size {0}]", tostring(nd.zeros(0)))
    assert.equals("[]\n[float64 tensor of size {2, 0, 3}]", tostring(nd.zeros(2, 0, 3)))
  end)

  it("summarises past 1000 elements, eliding rows and columns", function()
    local s = tostring(nd.arange(2000):view(40, 50))
    assert.equals(table.concat({
      "[[   0,    1,    2, ...,   47,   48,   49],",
      " [  50,   51,   52, ...,   97,   98,   99],",
      " [ 100,  101,  102, ...,  147,  148,  149],",
      " ...,",
      " [1850, 1851, 1852, ..., 1897, 1898, 1899],",
      " [1900, 1901, 1902, ..., 1947, 1948, 1949],",
      " [1950, 1951, 1952, ..., 1997, 1998, 1999]]",
      "[int64 tensor of size {40, 50}]" }, "\n"), s)
    assert.equals("[   0,    1,    2, ...,  998,  999, 1000]\n[int64 tensor of size {1001}]",
      tostring(nd.arange(1001)))
    -- 1000 elements exactly: printed in full
    assert.is_nil(tostring(nd.arange(1000)):find("...", 1, true))
    local big = tostring(nd.zeros(10, 20, 30))
    assert.truthy(big:find("...", 1, true))
    assert.is_true(#lines(big) < 60)
  end)

  it("prints views in their logical order", function()
    assert.equals("[[0, 3],\n [1, 4],\n [2, 5]]\n[int64 tensor of size {3, 2}]",
      tostring(nd.arange(6):view(2, 3):t()))
  end)
end)
