-- t:release(), __close and nd.layout (the contract's "Lifetime and layout").
local nd = require "nd"
local unpack = table.unpack or unpack

describe("release", function()
  it("later use raises naming the method and saying released", function()
    local t = nd.zeros(2, 3)
    t:release()
    local calls = { size = { 1 }, dim = {}, sum = { 1 }, transpose = { 1, 2 }, clone = {},
      exp = {}, fill_ = { 1 } }
    for name, args in pairs(calls) do
      assert_error_matches(function() return t[name](t, unpack(args)) end, name, "released")
    end
    assert_error_matches(function() return nd.layout(t) end, "layout", "released")
  end)

  it("a second release does nothing; nd.release is the same function", function()
    local t = nd.ones(3)
    assert.is_nil(t:release())
    t:release()
    nd.release(t)
    assert_error_matches(function() nd.release(42) end, "release", "must be a tensor")
  end)

  it("tostring of a released tensor says so instead of raising", function()
    local t = nd.ones(3)
    t:release()
    assert.is_truthy(tostring(t):find("released", 1, true))
  end)

  it("releasing a view leaves its base usable, and the other way round", function()
    local base = nd.arange(12):reshape(3, 4)
    local row = base[2]
    row:release()
    assert.equals(66, base:sum())
    local col = base:select(2, 3)
    base:release()
    assert.same({ 2, 6, 10 }, col:totable()) -- the view keeps the storage alive
    col[1] = 7
    assert.equals(7, col:get(1))
  end)

  it("frees the storage now when nothing else holds it", function()
    -- a wrapped buffer's owner sees the release at once, not at collection
    local big = nd.empty(2 ^ 20)
    local s = big:storage()
    big:release()
    assert.equals(2 ^ 20, s:numel()) -- a view of the storage keeps it
    s:release()
  end)

  it("__close releases at scope exit (Lua 5.4)", function()
    if _VERSION ~= "Lua 5.4" then return end
    local chunk = assert(load([[
      local nd = ...
      local keep
      do
        local t <close> = nd.ones(4)
        keep = t
        assert(t:sum() == 4)
      end
      return keep
    ]]))
    local t = chunk(nd)
    assert_error_matches(function() return t:sum() end, "sum", "released")
  end)
end)

describe("nd.layout", function()
  it("explains the formula, contiguity and span with numbers", function()
    local t = nd.arange(6):reshape(2, 3):t()
    local s = nd.layout(t)
    assert.is_string(s)
    for _, frag in ipairs({ "int64", "size {3, 2}", "stride {1, 3}",
        "(0 + (i1-1)*1 + (i2-1)*3) * 8 bytes", "contiguous: no", "{2, 1}",
        "6 elements (48 bytes)", "cells 0..5" }) do
      assert.is_truthy(s:find(frag, 1, true), frag .. " not in:\n" .. s)
    end
    assert.equals(s, t:layout())
  end)

  it("draws which cells a view reaches and in which order", function()
    local s = nd.layout(nd.arange(6):reshape(2, 3):t())
    assert.is_truthy(s:find("visit  1  3  5  2  4  6", 1, true), s)
    local e = nd.layout(nd.arange(5):expand(2, 5)[{ {}, { 1, -1, 2 } }])
    assert.is_truthy(e:find("1*  . 2*  . 3*", 1, true), e)
    local n = nd.layout(nd.arange(8)[{ { 7, 2, -2 } }])
    assert.is_truthy(n:find("visit  .  .  3  .  2  .  1  .", 1, true), n)
  end)

  it("says contiguous for a fresh tensor and handles 0-d and empty", function()
    assert.is_truthy(nd.layout(nd.zeros(2, 2)):find("contiguous: yes", 1, true))
    assert.is_truthy(nd.layout(nd.tensor(3)):find("element () is at", 1, true))
    assert.is_truthy(nd.layout(nd.zeros(0, 3)):find("no cell", 1, true))
    assert.is_falsy(nd.layout(nd.zeros(100)):find("visit", 1, true)) -- no picture past 64
  end)
end)
