-- Shape helpers: values against PyTorch (fixtures from
-- tools/gen_index_fixtures.py) in four layouts; views where the contract
-- says so; errors naming the function the user called.
local nd = require "nd"
local fx = dofile("spec/support/fixture_cases.lua")
local unpack = table.unpack or unpack

describe("shape helpers match PyTorch", function()
  fx.describe_all({ split = true, chunk = true, unbind = true, tile = true, roll = true,
    tril = true, triu = true, diag = true, trace = true, pad = true, meshgrid = true,
    hstack = true, vstack = true }, it)
end)

describe("shape helpers", function()
  local m = nd.arange(12):reshape(3, 4)

  it("split, chunk and unbind return views", function()
    for _, list in ipairs({ m:split(2), m:split({ 1, 2 }), m:chunk(2, 2), m:unbind(2) }) do
      for _, v in ipairs(list) do assert.is_true(nd.same_storage(v, m)) end
    end
    local parts = m:split({ 2, 0, 1 })
    assert.same({ 0, 4 }, plain(parts[2]:size()))
    assert.equals(3, #nd.arange(6):chunk(4))
    assert.equals(3, #nd.split(m, 1))
  end)

  it("results of the others are fresh row-major copies", function()
    local t = m:t()
    for _, r in ipairs({ t:tile(1), t:roll(0), t:roll(0, 1), t:tril(), t:triu(), t:diag(),
      nd.pad(t, { 0, 0 }), t:pad({ 1, 1 }) }) do
      assert.is_false(nd.same_storage(r, m))
      assert.is_true(r:is_contiguous())
    end
    local a, b = nd.meshgrid(nd.arange(2), nd.arange(3))
    assert.is_true(a:is_contiguous() and b:is_contiguous())
  end)

  it("trace returns a number; diag of a matrix copies", function()
    assert.equals(15, m:trace())
    assert.equals("number", type(nd.trace(m:t())))
    assert.equals(0, nd.zeros(0, 0):trace())
    local d = m:diag()
    d[1] = 100
    assert.equals(0, m[{ 1, 1 }])
  end)

  it("reads expanded and flipped inputs", function()
    local e = nd.arange(3):view(1, 3):expand(2, 3)
    assert.same({ { 0, 1, 2, 0, 1, 2 }, { 0, 1, 2, 0, 1, 2 } }, e:tile(1, 2):totable())
    assert.same({ { 0, 0 }, { 0, 1 } }, e:narrow(2, 1, 2):tril():totable())
    assert.same({ 1, 0, 2 }, nd.arange(3):flip(1):roll(-1):totable())
  end)

  it("pads crop with negative values, on bool too", function()
    assert.same({ { 1, 2 } }, nd.pad(nd.arange(6):reshape(2, 3), { -1, 0, 0, -1 }):totable())
    assert.same({ false, true, false }, nd.tensor({ true }):pad({ 1, 1 }):totable())
    assert.same({ true, true, true }, nd.tensor({ true }):pad({ 1, 1 }, true):totable())
  end)

  it("hstack and vstack keep 0-d and 1-D inputs as NumPy does", function()
    assert.same({ 1, 2 }, nd.hstack({ nd.tensor(1), nd.tensor(2) }):totable())
    assert.same({ { 1 }, { 2 } }, nd.vstack({ nd.tensor(1), nd.tensor(2) }):totable())
  end)
end)

describe("shape helper errors", function()
  local m = nd.arange(12):reshape(3, 4)
  local cases = {
    { function() m:chunk(0) end, "chunk", "0" },
    { function() m:chunk(-2) end, "chunk", "-2" },
    { function() m:chunk(1.5) end, "chunk", "1.5" },
    { function() m:split(0) end, "split", "0" },
    { function() m:split({ 1, 1 }) end, "split", "sum to 2", "size 3" },
    { function() m:split({ 4, -1 }) end, "split", "-1" },
    { function() m:split(1, 3) end, "split", "dim 3" },
    { function() m:unbind(0) end, "unbind", "dim 0" },
    { function() nd.tensor(1):unbind() end, "unbind", "0-d" },
    { function() m:tile(-1) end, "tile", "-1" },
    { function() m:tile({ 2, -3 }) end, "tile", "-3" },
    { function() m:tile(1.5) end, "tile", "1.5" },
    { function() m:roll({ 1, 2 }) end, "roll", "2 shifts" },
    { function() m:roll({ 1, 2 }, { 1 }) end, "roll", "2 shifts but 1 dims" },
    { function() m:roll(1, 3) end, "roll", "dim 3" },
    { function() nd.arange(3):tril() end, "tril", "2 dims", "got 1" },
    { function() m:triu(0.5) end, "triu", "0.5" },
    { function() nd.zeros(2, 2, 2):diag() end, "diag", "3 dims" },
    { function() nd.arange(3):trace() end, "trace", "1 dims" },
    { function() nd.pad(m, { 1 }) end, "pad", "even length", "got 1" },
    { function() nd.pad(m, { 1, 1, 1, 1, 1, 1 }) end, "pad", "at most", "got 6" },
    { function() nd.pad(m, { -3, -2 }) end, "pad", "-3", "negative" },
    { function() nd.pad(m, { 1, 1 }, "x") end, "pad", "mode", '"x"' },
    { function() nd.pad(m, { 1, 1 }, "constant", "x") end, "pad", "value", "string" },
    { function() nd.meshgrid(m) end, "meshgrid", "2 dims" },
    { function() nd.meshgrid() end, "meshgrid" },
    { function() nd.hstack({ nd.zeros(2, 2), nd.zeros(3, 3) }) end, "hstack", "{3,3}" },
    { function() nd.vstack({ nd.zeros(2), nd.zeros(3) }) end, "vstack", "{1,3}" },
    { function() nd.hstack({}) end, "hstack", "non-empty" },
    { function() nd.vstack(m) end, "vstack", "list" },
    { function() nd.hstack({ 1 }) end, "hstack", "entry 1" },
  }
  for i, c in ipairs(cases) do
    it("raises, naming " .. c[2] .. " (" .. i .. ")", function()
      local err = assert_error_matches(unpack(c))
      assert.is_nil(err:find("cat:", 1, true))
      assert.truthy(err:find("shape_spec.lua:", 1, true), "points at the caller: " .. err)
    end)
  end
end)
