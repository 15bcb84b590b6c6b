-- Indexing with tensors: values checked against PyTorch (fixtures from
-- tools/gen_index_fixtures.py) in four memory layouts, the t[tensor]
-- sugar, and every refusal (named, value quoted, target untouched).
local nd = require "nd"
local fx = dofile("spec/support/fixture_cases.lua")

local I = function(t) return nd.tensor(t, "int64") end

describe("indexing with tensors matches PyTorch", function()
  fx.describe_all({ index_select = true, gather = true, take = true, scatter_ = true,
    scatter_add_ = true, index_add_ = true, index_fill_ = true, index_copy_ = true,
    masked_select = true, masked_fill_ = true, masked_scatter_ = true, nonzero = true }, it)
end)

describe("indexing with tensors", function()
  local m = nd.arange(12):reshape(3, 4)

  it("is a module function and a method", function()
    assert.same(m:index_select(2, I { 2 }):totable(), nd.index_select(m, 2, I { 2 }):totable())
    assert.same(m:nonzero():totable(), nd.nonzero(m):totable())
    local a, b = nd.zeros(3), nd.zeros(3)
    a:scatter_add_(1, I { 1, 1 }, nd.ones(2))
    nd.scatter_add_(b, 1, I { 1, 1 }, nd.ones(2))
    assert.same(a:totable(), b:totable())
  end)

  it("copies, never views", function()
    local r = m:index_select(1, I { 1, 2 })
    assert.is_false(nd.same_storage(r, m))
    assert.is_true(r:is_contiguous())
    assert.is_false(nd.same_storage(m:masked_select(m:gt(3)), m))
    assert.is_false(nd.same_storage(m:gather(1, I { { 1 } }), m))
  end)

  it("reads expanded inputs and expanded indices", function()
    local row = nd.arange(4):view(1, 4):expand(3, 4)
    assert.same({ { 3, 0 }, { 3, 0 }, { 3, 0 } }, row:gather(2, I { { 4, 1 } }:expand(3, 2)):totable())
    assert.same({ 1, 2, 1, 2, 1, 2 }, row:masked_select(nd.tensor({ false, true, true, false }):view(1, 4):expand(3, 4)):totable())
  end)

  it("copies whole rows of wide tensors (the block path), any outer layout", function()
    local x = nd.arange(2 * 5 * 20):reshape(2, 5, 20)
    for _, c in ipairs({ { x, 2 }, { x:transpose(1, 2), 2 }, { x:transpose(1, 2), 1 },
      { x:flip(1), 2 }, { x:view(10, 20), 1 } }) do
      local t, dim = c[1], c[2]
      local ix = nd.tensor({ 2, -1, 1, 2 }, "int32")
      local r = t:index_select(dim, ix)
      for j, p in ipairs({ 2, -1, 1, 2 }) do
        if p < 0 then p = p + t:size(dim) + 1 end
        assert.is_true(nd.equal(r:select(dim, j), t:select(dim, p)))
      end
    end
  end)

  it("gives int64 1-based row-major positions from nonzero", function()
    local r = nd.tensor({ { 0, 2 }, { 3, 0 } }):nonzero()
    assert.equals("int64", r:dtype())
    assert.same({ { 1, 2 }, { 2, 1 } }, r:totable())
    assert.same({ 0, 2 }, plain(nd.zeros(2, 2):nonzero():size()))
  end)

  it("scatter_add_ counts like bincount, int32 indices too", function()
    local c = nd.zeros(4, "int64")
    c:scatter_add_(1, nd.tensor({ 1, 4, 4, -1, 2 }, "int32"), nd.ones(5, "int64"))
    assert.same({ 1, 1, 0, 3 }, c:totable())
  end)

  it("adds a long index into a small target (the histogram path) as into a strided one", function()
    local g = nd.generator(7)
    for _, dt in ipairs({ "float32", "float64", "int32", "int64", "uint8", "bool", "float16", "bfloat16" }) do
      for _, idt in ipairs({ "int32", "int64" }) do
        local ix = g:randint(-10, 11, { 500 }):to(idt)
        ix:masked_fill_(ix:eq(0), 3) -- 0 is no position when counting from 1
        local src = g:randint(0, 3, { 500 }):to(dt)
        local dense = nd.zeros(10, dt)
        local strided = nd.zeros(10, 2, dt):select(2, 1) -- stride 2: not staged
        dense:scatter_add_(1, ix, src)
        strided:scatter_add_(1, ix, src)
        assert.same(strided:totable(), dense:totable())
        local expanded = nd.zeros(10, dt):scatter_add_(1, ix, nd.ones(1, dt):expand(500))
        local counted = nd.zeros(10, 2, dt):select(2, 1):scatter_add_(1, ix, nd.ones(500, dt))
        assert.same(counted:totable(), expanded:totable())
        if dt ~= "bool" then
          local a = nd.zeros(10, dt):index_add_(1, ix, src, 2)
          local b = nd.zeros(10, 2, dt):select(2, 1):index_add_(1, ix, src, 2)
          assert.same(b:totable(), a:totable())
        end
        local before = dense:totable()
        ix[400] = 11
        assert_error_matches(function() dense:scatter_add_(1, ix, src) end,
          "scatter_add_", "11", "size 10")
        assert.same(before, dense:totable())
        ix[400] = -11
        assert_error_matches(function() dense:index_add_(1, ix, src) end, "index_add_", "-11")
        assert.same(before, dense:totable())
        if dt ~= "bool" then -- alpha 2 takes the strided adding loop
          assert_error_matches(function() dense:index_add_(1, ix, src, 2) end, "index_add_", "-11")
          assert.same(before, dense:totable())
        end
        -- a target of one element (its dim is never stepped)
        local one = nd.zeros(1, dt)
        assert_error_matches(function() one:scatter_add_(1, nd.tensor({ 1, 1, 2, 1, 2 }, idt), nd.ones(5, dt)) end,
          "scatter_add_", "2")
        assert.same(nd.zeros(1, dt):totable(), one:totable())
      end
    end
  end)

  -- float16 / bfloat16: each add reads the 16-bit element, adds in float32
  -- and rounds on store (PyTorch's per-element accumulation), so repeated
  -- positions round once per add, not once per sum
  local function f32(x) return nd.tensor({ x }, "float32")[1] end
  local function add16(cur, s, alpha, dt)
    return nd.tensor({ f32(cur + f32(alpha * s)) }, "float32"):to(dt)[1]
  end
  it("float16 and bfloat16 accumulate in float32, rounded after each add", function()
    local g = nd.generator(11)
    for _, dt in ipairs({ "float16", "bfloat16" }) do
      -- 2048 (float16) and 256 (bfloat16) are 2 apart from the next value:
      -- adding 1 four times rounds back each time (ties to even)
      local big = dt == "float16" and 2048 or 256
      local t = nd.full({ 2 }, big, dt)
      t:index_add_(1, I { 1, 1, 1, 1 }, nd.ones(4, dt))
      t:scatter_add_(1, I { 2, 2, 2, 2 }, nd.ones(4, dt))
      assert.same({ big, big }, t:totable())
      for _, alpha in ipairs({ 1, 0.3 }) do
        for dim = 1, 2 do
          for _, layout in ipairs({ "contiguous", "transposed", "stepped" }) do
            local base = g:randn({ 3, 4 }):mul(100):to(dt)
            local src = g:randn(dim == 1 and { 6, 4 } or { 3, 6 }):mul(10):to(dt)
            local ix = I { 2, 1, 2, 2, 3, 2 }
            if dim == 2 then ix = I { 2, 4, 2, 2, 1, 2 } end
            local t
            if layout == "contiguous" then
              t = base:clone()
            elseif layout == "transposed" then
              t = nd.empty({ 4, 3 }, dt):t():copy_(base)
              src = src:t():contiguous():t()
            else
              t = nd.zeros({ 6, 8 }, dt)[{ { 1, 6, 2 }, { 1, 8, 2 } }]:copy_(base)
              local r, c = src:size(1), src:size(2)
              src = nd.zeros({ 2 * r, 2 * c }, dt)[{ { 1, 2 * r, 2 }, { 1, 2 * c, 2 } }]:copy_(src)
            end
            local want = base:clone()
            for j = 1, ix:size(1) do
              local q = ix[j]
              for k = 1, base:size(3 - dim) do
                local tp, sp = dim == 1 and { q, k } or { k, q }, dim == 1 and { j, k } or { k, j }
                want[tp] = add16(want[tp], src[sp], alpha, dt)
              end
            end
            t:index_add_(dim, ix, src, alpha)
            assert.equals(dt, t:dtype())
            assert.is_true(nd.equal(want, t), dt .. " index_add_ " .. layout .. " dim " .. dim)
            if alpha == 1 then -- scatter_add_: index of src's shape
              local six = ix:view(dim == 1 and { 6, 1 } or { 1, 6 }):expand(src:size(1), src:size(2)):contiguous()
              local u = base:clone()
              u:scatter_add_(dim, six, src)
              assert.is_true(nd.equal(want, u), dt .. " scatter_add_ " .. layout .. " dim " .. dim)
            end
          end
        end
      end
      -- a float32 source is converted to the target's dtype first, as for
      -- every other target dtype
      local src32 = g:randn({ 5 })
      local a = nd.zeros(3, dt):index_add_(1, I { 1, 2, 1, 3, 1 }, src32)
      local b = nd.zeros(3, dt):index_add_(1, I { 1, 2, 1, 3, 1 }, src32:to(dt))
      assert.is_true(nd.equal(a, b))
    end
  end)

  it("integer accumulation wraps as integer arithmetic does (no overflow trap)", function()
    local t = nd.full({ 1 }, 2147483647, "int32")
    t:scatter_add_(1, I { 1 }, nd.ones(1, "int32"))
    assert.equals(-2147483648, t[1])
    local u = nd.full({ 2 }, 250, "uint8"):index_add_(1, I { 2 }, nd.full({ 1 }, 10, "uint8"))
    assert.same({ 250, 4 }, u:totable())
  end)

  it("index_add_ into an int tensor refuses float sources and fractional alpha", function()
    local t = nd.zeros(3, "int32")
    assert_error_matches(function() t:index_add_(1, I { 1 }, nd.ones(1)) end,
      "index_add_", "float64", "int32")
    assert_error_matches(function() t:index_add_(1, I { 1 }, nd.ones(1, "int32"), 0.5) end,
      "index_add_", "alpha", "0.5")
    assert_error_matches(function() t:index_add_(1, I { 1 }, nd.ones(1, "int32"), 1e300) end,
      "index_add_", "alpha")
  end)

  it("converts copied sources to the target's dtype", function()
    local t = nd.zeros(4, "int32")
    t:index_copy_(1, I { 2, 3 }, nd.tensor({ 7.9, -2.5 }))
    assert.same({ 0, 7, -2, 0 }, t:totable())
    t:masked_scatter_(t:eq(0), nd.tensor({ 1, 2 }, "uint8"))
    assert.same({ 1, 7, -2, 2 }, t:totable())
  end)

  it("reads a source that overlaps the target through a copy", function()
    local t = nd.arange(6)
    t:index_copy_(1, I { 2, 3, 4 }, t:narrow(1, 1, 3))
    assert.same({ 0, 0, 1, 2, 4, 5 }, t:totable())
    local u = nd.arange(4)
    u:masked_scatter_(nd.tensor({ false, true, true, true }), u)
    assert.same({ 0, 0, 1, 2 }, u:totable())
  end)

  it("handles size-0 tensors and indices", function()
    local e = nd.zeros(0, 3)
    assert.same({ 0 }, plain(e:masked_select(e:gt(0)):size()))
    assert.same({ 0, 2 }, plain(e:nonzero():size()))
    local t = nd.arange(3)
    t:index_fill_(1, nd.zeros(0, "int64"), 9)
    assert.same({ 0, 1, 2 }, t:totable())
    assert.same({ 0 }, plain(t:take(nd.zeros(0, "int64")):size()))
  end)

  it("works on 0-d tensors where it means something", function()
    local s = nd.tensor(5.0)
    assert.same({ 5 }, s:masked_select(nd.tensor(true)):totable())
    assert.same({ 1, 0 }, plain(s:nonzero():size()))
    assert.equals(5, s:take(I { 1 })[1])
    s:masked_fill_(nd.tensor(true), 2)
    assert.equals(2, s:item())
  end)
end)

describe("t[tensor] sugar", function()
  it("t[mask] is masked_select, with a broadcast mask", function()
    local m = nd.arange(6):reshape(2, 3)
    assert.same({ 3, 4, 5 }, m[m:gt(2)]:totable())
    assert.same({ 0, 2, 3, 5 }, m[nd.tensor({ true, false, true })]:totable())
  end)

  it("t[mask] = v fills, t[mask] = tensor scatters", function()
    local m = nd.arange(6):reshape(2, 3)
    m[m:gt(3)] = -1
    assert.same({ { 0, 1, 2 }, { 3, -1, -1 } }, m:totable())
    m[m:lt(0)] = nd.tensor({ 8, 9 })
    assert.same({ { 0, 1, 2 }, { 3, 8, 9 } }, m:totable())
    local b = nd.zeros(3, "bool")
    b[nd.tensor({ true, false, true })] = true
    assert.same({ true, false, true }, b:totable())
  end)

  it("t[index] is index_select along dim 1", function()
    local m = nd.arange(6):reshape(3, 2)
    assert.same({ { 4, 5 }, { 0, 1 }, { 4, 5 } }, m[I { 3, 1, -1 }]:totable())
    assert.same({ 2, 1 }, nd.arange(4)[nd.tensor({ 3, 2 }, "int32")]:totable())
  end)

  it("t[index] = v fills rows, t[index] = tensor copies rows (broadcast)", function()
    local m = nd.zeros(3, 2, "int64")
    m[I { 1, 3 }] = 7
    assert.same({ { 7, 7 }, { 0, 0 }, { 7, 7 } }, m:totable())
    m[I { 2 }] = nd.tensor({ { 1, 2 } }, "int64")
    assert.same({ { 7, 7 }, { 1, 2 }, { 7, 7 } }, m:totable())
    m[I { 1, 3 }] = nd.tensor({ 5, 6 }, "int64")
    assert.same({ { 5, 6 }, { 1, 2 }, { 5, 6 } }, m:totable())
  end)

  it("refuses other index tensors and tensors inside a table index", function()
    local m = nd.arange(6):reshape(3, 2)
    assert_error_matches(function() return m[nd.tensor(1, "int64")] end, "index", "1-D")
    assert_error_matches(function() return m[I { { 1 } }] end, "index", "1-D", "{1,1}")
    assert_error_matches(function() return m[nd.tensor({ 1.0 })] end, "index", "float64")
    assert_error_matches(function() return m[{ I { 1 } }] end, "index", "entry 1")
    assert_error_matches(function() m[I { { 1 } }] = 0 end, "newindex", "1-D")
    assert_error_matches(function() m[{ I { 1 } }] = 0 end, "newindex")
    assert_error_matches(function() return m[I { 4 }] end, "index", "index 4", "size 3")
    assert_error_matches(function() return nd.tensor(1)[I { 1 }] end, "index", "0-d")
  end)
end)

describe("indexing errors", function()
  local m = nd.arange(12):reshape(3, 4)

  it("refuses non-integer index tensors, naming the function and dtype", function()
    for _, dt in ipairs({ "float32", "float64", "bool", "uint8" }) do
      assert_error_matches(function() m:index_select(1, nd.zeros(1, dt)) end, "index_select", dt)
      assert_error_matches(function() m:gather(1, nd.zeros(1, 1, dt)) end, "gather", dt)
      assert_error_matches(function() m:take(nd.zeros(1, dt)) end, "take", dt)
    end
  end)

  it("refuses out-of-range positions, quoting the value", function()
    assert_error_matches(function() m:index_select(2, I { 1, 5 }) end, "index_select", "index 5", "size 4")
    assert_error_matches(function() m:index_select(2, I { 0 }) end, "index_select", "index 0")
    assert_error_matches(function() m:index_select(2, I { -5 }) end, "index_select", "index -5")
    assert_error_matches(function() m:gather(1, I { { 4 } }) end, "gather", "index 4", "size 3")
    assert_error_matches(function() m:take(I { 13 }) end, "take", "index 13", "size 12")
    assert_error_matches(function() m:take(I { -13 }) end, "take", "index -13")
    -- the edges, in both index dtypes, contiguous and strided
    for _, dt in ipairs({ "int32", "int64" }) do
      local v = nd.arange(5)
      assert.same({ 4, 0 }, v:index_select(1, nd.tensor({ 5, -5 }, dt)):totable())
      assert.same({ 4, 0 }, v:index_select(1, nd.tensor({ 5, 9, -5 }, dt)[{ { 1, 3, 2 } }]):totable())
      for _, bad in ipairs({ 6, -6, 0, dt == "int32" and -2 ^ 31 or -2 ^ 63, 2 ^ 31 - 1 }) do
        assert_error_matches(function() v:index_select(1, nd.tensor({ 1, bad }, dt)) end, "index_select")
        assert_error_matches(function() nd.zeros(5):scatter_add_(1, nd.tensor({ 1, bad }, dt), nd.ones(2)) end,
          "scatter_add_")
      end
      assert_error_matches(function() nd.zeros(0):scatter_(1, nd.tensor({ 1 }, dt), 1) end, "scatter_", "size 0")
      assert_error_matches(function() nd.zeros(0):index_fill_(1, nd.tensor({ -1 }, dt), 1) end, "index_fill_")
    end
    -- also when the result is empty, and on the row-block path
    assert_error_matches(function() nd.zeros(0, 3):index_select(2, I { 5 }) end, "index_select", "index 5")
    assert_error_matches(function() nd.zeros(2, 30):index_select(1, I { 1, 3 }) end, "index_select", "index 3")
  end)

  it("refuses bad shapes and dims", function()
    assert_error_matches(function() m:index_select(1, I { { 1 } }) end, "index_select", "1-D")
    assert_error_matches(function() m:index_select(3, I { 1 }) end, "index_select", "dim 3")
    assert_error_matches(function() m:gather(1, I { 1 }) end, "gather", "dims")
    assert_error_matches(function() m:gather(1, I { { 1, 1, 1, 1, 1 } }) end, "gather", "larger")
    assert_error_matches(function() m:index_copy_(1, I { 1 }, nd.zeros(2, 4, "int64")) end,
      "index_copy_", "{1,4}", "{2,4}")
    assert_error_matches(function() m:scatter_(2, I { { 1, 2 } }, nd.zeros(1, 1, "int64")) end,
      "scatter_", "src")
  end)

  it("refuses float masks and masks that do not broadcast", function()
    assert_error_matches(function() m:masked_select(nd.ones(3, 4)) end, "masked_select", "bool", "float64")
    assert_error_matches(function() m:masked_fill_(nd.ones(3, 4, "uint8"), 0) end, "masked_fill_", "bool", "uint8")
    assert_error_matches(function() m:masked_select(nd.zeros(3, "bool")) end,
      "masked_select", "{3}", "{3,4}")
    -- the mask broadcasts to t, never t to the mask
    assert_error_matches(function() nd.arange(4):masked_select(nd.zeros(2, 4, "bool")) end,
      "masked_select", "{2,4}", "{4}")
    assert_error_matches(function() m:masked_scatter_(m:ge(0), nd.zeros(3, "int64")) end,
      "masked_scatter_", "3 elements", "12")
  end)

  it("leaves the target untouched when it refuses", function()
    local t = nd.arange(6)
    local before = t:totable()
    for _, f in ipairs({
      function() t:index_fill_(1, I { 1, 2, 9 }, 0) end,
      function() t:index_copy_(1, I { 1, -7 }, nd.zeros(2, "int64")) end,
      function() t:index_add_(1, I { 1, 7 }, nd.ones(2, "int64")) end,
      function() t:scatter_(1, I { 2, 0 }, 5) end,
      function() t:scatter_add_(1, I { 1, 2, 3, 100 }, nd.ones(4, "int64")) end,
      function() t:masked_scatter_(t:ge(0), nd.zeros(2, "int64")) end,
    }) do
      assert.has_error(f)
      assert.same(before, t:totable())
    end
  end)

  it("refuses to write into overlapping (expanded) targets", function()
    local x = nd.zeros(1, 3):expand(2, 3)
    assert_error_matches(function() x:masked_fill_(nd.ones(2, 3, "bool"), 1) end, "masked_fill_", "memory location")
    assert_error_matches(function() x:index_fill_(1, I { 1 }, 1) end, "index_fill_")
    assert_error_matches(function() x:scatter_(2, I { { 1 } }, 1) end, "scatter_")
    assert_error_matches(function() x:masked_scatter_(nd.ones(2, 3, "bool"), nd.ones(6)) end, "masked_scatter_")
  end)
end)
