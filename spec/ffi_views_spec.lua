-- FFI views (lua/views.lua): under LuaJIT with the JIT on, t(), transpose,
-- narrow, select and m[i] return cdata views made in compiled code. They
-- must be the same views as the C binding's (nd.use_ffi(false)), tensors
-- for every Lua and C function, raise the same errors, and keep their
-- elements alive as userdata views do.
local nd = require "nd"
require "nd.testing"

describe("FFI views", function()
  if not (jit and nd.use_ffi()) then
    it("are made only by LuaJIT with the JIT on", function()
      assert.equals(type(nd.zeros(2, 2)), type(nd.zeros(2, 2):t()))
    end)
    return
  end
  after_each(function() nd.use_ffi(true) end)

  local function layout(v)
    return { v:size(), v:stride(), v:storage_offset(), v:dtype(), v:totable() }
  end
  -- Each view both ways: FFI (cdata) and the C binding (userdata).
  local both = both_paths

  it("are cdata, and the same views as the C binding's", function()
    local m = nd.arange(60, "float32"):view(3, 4, 5)
    local cases = {
      function() return m:select(2, 3):t() end,
      function() return m:transpose(1, 3) end,
      function() return m:transpose(-1, 2) end,
      function() return m:narrow(3, 2, 3) end,
      function() return m:narrow(2, -2, 2) end,
      function() return m:narrow(1, 4, 0) end, -- empty, at the end
      function() return m:select(1, -1) end,
      function() return m:select(3, 5) end,
      function() return m[2] end,
      function() return m[-3] end,
      function() return m[2][4] end,
      function() return m[1]:t() end,
      function() return nd.t(m[3]) end,
      function() return nd.narrow(m, 1, 2, 2):select(1, 2) end,
      function() return m:select(2, 1):unsqueeze(2):squeeze(2) end,
      function() return m:squeeze(2) end, -- size 4: the same view
      function() return m:narrow(2, 2, 1):squeeze(2) end,
      function() return m:select(1, 2):view(20) end,
      function() return m[2][3]:view(5) end,
      function() return m[3]:view(2, -1) end,
      function() return m[3]:view(-1, 4) end,
      function() return m[1]:view(-1) end,
      function() return m[2]:t():t():view(20, 1) end,
      function() return m:unsqueeze(1) end,
      function() return m:unsqueeze(-1) end,
      function() return m:unsqueeze(3) end,
      function() return m:squeeze(2) end, -- size 4: the same view
      function() return m[{ {}, { 1, -1, 2 } }] end, -- index tables of one or two entries
      function() return m[{ 2, { 2, 3 } }] end,
      function() return m[{ { 2, 3 }, 4 }] end,
      function() return m[{ 3, 2 }] end,
      function() return m[{ -1 }] end,
      function() return m[{ { 2 } }] end,
      function() return m[{ { -2, -1 }, { 1, 4, 3 } }] end,
      function() return m[{ {}, {} }] end,
      function() return m[{ { 1, 3, 5 } }] end, -- a step past the end: one element
      function() return m[2][{ { 1, 4, 2 }, { 2, 5, 2 } }] end,
      function() return m[2][{ 4, { 2, -1 } }] end,
      function() return m[1]:t()[{ { 2, 4 }, 1 }] end,
      function() return m[{ 1, {} }]:t() end,
    }
    for i, make in ipairs(cases) do
      local f, c = both(make)
      assert.equals("cdata", type(f), "case " .. i)
      assert.equals("cdata", type(c), "case " .. i)
      assert.same(layout(c), layout(f), "case " .. i)
      assert.is_true(nd.same_storage(f, m), "case " .. i)
    end
  end)

  it("leave to the C binding what they do not make, with the same result", function()
    local m = nd.arange(24, "int32"):view(2, 3, 4)
    for i, make in ipairs({
      function() return m[{ 1, 2, { 2, 3 } }] end, -- three entries: C views
      function() return m[{ {}, {}, { 1, 4, 2 } }] end,
      function() return m[{ { 3, 1, -1 } }] end, -- a negative step
      function() return m[{ { 1, 2, 2 ^ 62 } }] end, -- a step whose stride overflows
      function() return m[{ 1, 2 }] end, -- both dims of three: an FFI view
      function() return m:permute(3, 1, 2) end,
      function() return m:expand(2, 2, 3, 4) end,
      function() return m:squeeze() end,
      function() return m:view(4, 3, 2) end,
      function() return m[{ { 2, 1 } }] end, -- empty ranges
      function() return m[{ {}, { 1, 0 } }] end,
      function() return m[{ {}, {}, { 5, 4 } }] end,
      function() return m[{ {}, { 1, 3, 7 } }] end, -- a step past the dim
      function() return m:narrow(3, 5, 0) end,
      function() return m:view(4, 0, 6) end,
      function() return nd.zeros(0, 3):view(3, 0) end,
      function() return m:permute(3, 2, 1):view(24) end,
    }) do
      local ok1, f = pcall(make)
      nd.use_ffi(false)
      local ok2, c = pcall(make)
      nd.use_ffi(true)
      assert.equals(ok2, ok1, "case " .. i)
      if ok1 then assert.same(layout(c), layout(f), "case " .. i) end
    end
  end)

  it("are tensors for every function, C and Lua, and views of them too", function()
    local m = nd.arange(12, "float64"):view(3, 4)
    local v = m:t() -- cdata
    assert.equals(66, v:sum())
    assert.tensor_equal(m:t():contiguous(), v:clone())
    assert.same({ 4, 3 }, { v:permute(1, 2):size(1), v:permute(1, 2):size(2) })
    local c = v:flip(1):flip(1) -- C views of an FFI view
    assert.equals("cdata", type(c))
    assert.same(v:totable(), c:totable())
    assert.same(m:totable(), v:permute(2, 1):totable())
    assert.same({ 1, 5, 9 }, v[2]:totable())
    v[2]:fill_(0) -- writes go to m
    assert.same({ 0, 0, 0 }, m[{ {}, 2 }]:totable())
    local o = nd.zeros(4, 3)
    nd.add(v, 1, o)
    assert.equals(4 * 3 + 66 - 15, o:sum())
    assert.tensor_equal(nd.matmul(v, m), nd.matmul(m:t():contiguous(), m))
    assert.is_true(tostring(v):find("tensor of size {4, 3}", 1, true) ~= nil)
    assert.equals(4, #v)
    assert.tensor_equal(v + v, v * 2)
  end)

  it("outlive their owner, its release and its collection", function()
    for _, kill in ipairs({ "release", "drop" }) do
      local m = nd.tensor({ { 1, 2, 3, 4 }, { 5, 6, 7, 8 }, { 9, 10, 11, 12 } })
      local row, sub, deep = m[2], m:narrow(1, 2, 2):t(), m:t():narrow(1, 2, 2):select(2, 3)
      assert.equals("cdata", type(deep))
      if kill == "release" then m:release() else m = nil end
      collectgarbage(); collectgarbage()
      assert.same({ 5, 6, 7, 8 }, row:totable())
      assert.same({ { 5, 9 }, { 6, 10 }, { 7, 11 }, { 8, 12 } }, sub:totable())
      assert.same({ 10, 11 }, deep:totable())
      row:fill_(0)
      assert.same({ { 0, 9 }, { 0, 10 }, { 0, 11 }, { 0, 12 } }, sub:totable())
    end
  end)

  it("keep a wrapped buffer's owner exactly while one of them lives", function()
    local ffi = require "ffi"
    local buf = ffi.new("double[64]")
    for i = 0, 63 do buf[i] = i end
    local weak = setmetatable({}, { __mode = "v" })
    do
      local owner = {}
      weak[1] = owner
      local w = nd.wrap(buf, 64 * 8, "float64", { 8, 8 }, nil, owner)
      local v = w:t()[3] -- column 3: 2, 10, ..., 58
      assert.equals("cdata", type(v))
      w, owner = nil, nil
      for _ = 1, 3 do collectgarbage(); nd.wrap(buf, 8, "float64", { 1 }) end
      assert.is_not_nil(weak[1])
      assert.equals(240, v:sum())
    end
    -- The views and the owner's tensor are garbage: a few cycles (the
    -- views' anchor goes one cycle after them; nd.wrap sweeps owners).
    for _ = 1, 4 do collectgarbage(); nd.wrap(buf, 8, "float64", { 1 }) end
    assert.is_nil(weak[1])
  end)

  it("release() makes one unusable and leaves the rest", function()
    local m = nd.ones(3, 3)
    local a, b = m:t(), m[1]
    a:release()
    assert_error_matches(function() return a:sum() end, "sum", "released")
    assert_error_matches(function() return a:t() end, "t", "released")
    assert_error_matches(function() return a[1] end, "index", "released")
    assert.equals(9, m:sum())
    assert.equals(3, b:sum())
    a:release() -- idempotent
  end)

  it("raise the C binding's errors for bad arguments", function()
    local m = nd.zeros(3, 4)
    local same_error = assert_same_error_both_paths
    same_error(function() return m:narrow(1, 0, 1) end)
    same_error(function() return m:narrow(1, 3, 2) end)
    same_error(function() return m:narrow(1, 1, -1) end)
    same_error(function() return m:narrow(3, 1, 1) end)
    same_error(function() return m:narrow(1, 1.5, 1) end)
    same_error(function() return m:select(1, 4) end)
    same_error(function() return m:select(0, 1) end)
    same_error(function() return m:select(2, "x") end)
    same_error(function() return m:transpose(1, 3) end)
    same_error(function() return m[4] end)
    same_error(function() return m[0] end)
    same_error(function() return nd.zeros(2, 2, 2):t() end)
    same_error(function() return m:t():narrow(2, 4, 1) end)
    same_error(function() return m[{ { 0 } }] end)
    same_error(function() return m[{ { 1, 9 } }] end)
    same_error(function() return m[{ { 1, 2, 0 } }] end)
    same_error(function() return m[{ 1, 2, 3 }] end)
    same_error(function() return m[{ { 1.5 } }] end)
    same_error(function() return m[{ "x" }] end)
    same_error(function() return m[{ { 1, 2, false } }] end)
    same_error(function() return m[{ {}, { 1, "2" } }] end)
    same_error(function() return m:unsqueeze(4) end)
    same_error(function() return m:squeeze(3) end)
    same_error(function() return m:permute(1, 1) end)
    same_error(function() return m:permute(1) end)
    same_error(function() return m:expand(3, 5) end)
    same_error(function() return m:expand(4) end)
    same_error(function() return m:expand(-1, 3, 4) end)
    same_error(function() return m:expand(2.5, 4) end)
    same_error(function() return m:view(7) end)
    same_error(function() return m:view(-1, -1) end)
    same_error(function() return m:view(2.5) end)
    same_error(function() return m:view(5, -1) end)
    same_error(function() return m:t():view(12) end) -- not expressible: C's message
  end)

  -- Index tables are read up to their first nil (lviews.c's entries(), and
  -- ext.entries the same way, which LuaJIT can compile without building
  -- the table); a nil with an entry after it within the tensor's dims
  -- (within a range's four places) is the entry at fault.
  it("read index tables up to their first nil, as the C binding does", function()
    local m = nd.arange(1, 13):view(3, 4)
    local t3 = nd.arange(1, 25):view(2, 3, 4)
    local same_error = assert_same_error_both_paths
    same_error(function() return m[{ 1, nil, 2 }] end)
    same_error(function() return m[{ nil, 2 }] end)
    same_error(function() return t3[{ 1, nil, nil, 2 }] end)
    same_error(function() return m[{ { 1, nil, 2 } }] end)
    same_error(function() return m[{ { nil, 2 } }] end)
    same_error(function() return m[{ { 1, 2, nil, 1 } }] end)
    same_error(function() return m[{ { 1, 2, 1, 1 } }] end)
    same_error(function() m[{ 1, nil, 2 }] = 0 end)
    local ok, err = pcall(function() return m[{ 1, nil, 2 }] end)
    assert.is_false(ok)
    assert.matches("index entry 2 must be a number or a range table, got nil", err)
    ok, err = pcall(function() return m[{ { 1, 3, nil, 1 } }] end)
    assert.is_false(ok)
    assert.matches("step must be an integer, got nil", err)
    local cases = {
      function() return m[{ 2, nil }] end, -- a trailing nil ends it
      function() return m[{ 2, nil, nil, 4 }] end, -- past the dims: not read
      function() return t3[{ 2, nil, nil, nil, 1 }] end,
      function() return m[{ {}, { 2, 4, nil } }] end,
      function() return m[{ { 2 }, { 1, -1, 2 } }] end,
    }
    for _, make in ipairs(cases) do
      local f, c = both_paths(make)
      assert.same(c:size(), f:size())
      assert.same(c:totable(), f:totable())
    end
    for i = 1, 3 do
      for j = 1, 4 do
        local f, c = both_paths(function() return m[{ i, j }] end)
        assert.equals(m:get(i, j), f)
        assert.equals(c, f)
      end
    end
    assert.equals(t3:get(2, 3, 4), t3[{ 2, 3, 4 }])
  end)

  it("foreign cdata is not a tensor, and nothing crashes", function()
    local ffi = require "ffi"
    for _, x in ipairs({ ffi.new("int[4]"), ffi.new("char"), ffi.new("double[64]"),
                         ffi.new("struct { uint64_t a, b, c, d, e; }") }) do
      assert_error_matches(function() return nd.add(x, 1) end, "add", "tensor")
      assert_error_matches(function() return nd.t(x) end, "t", "tensor")
      assert_error_matches(function() return nd.narrow(x, 1, 1, 1) end, "narrow", "tensor")
    end
  end)
end)
