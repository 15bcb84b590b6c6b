-- Small tensors (lua/small.lua, lua/ops.lua, lua/matmul.lua): under
-- LuaJIT with the JIT on, new results of up to 128 bytes of elements --
-- constructors, float elementwise ops and matmul -- are cdata holding
-- their elements, made without a C API call or a finalizer. They must be
-- the same tensors as the C binding's (nd.use_ffi(false)), work with every
-- function, raise the same errors, and keep their elements while anything
-- -- a view, a C reference -- still reaches them.
local nd = require "nd"
local unpack = unpack or table.unpack
require "nd.testing"

describe("small tensors", function()
  if not (jit and nd.use_ffi()) then
    it("are made only by LuaJIT with the JIT on, of the one tensor type", function()
      local one = type(nd.zeros(100, 100))
      assert.equals(one, type(nd.zeros(3)))
      assert.equals(one, type(nd.ones(3) + nd.ones(3)))
    end)
    return
  end
  after_each(function() nd.use_ffi(true) end)

  -- Values as strings: NaN equals itself, -0 differs from 0.
  local function values(t)
    local flat = t:contiguous():view(t:numel()):totable()
    for i, v in ipairs(flat) do flat[i] = type(v) == "number" and ("%.17g"):format(v) or tostring(v) end
    return flat
  end
  local function layout(t, skip_values)
    return { t:size(), t:stride(), t:storage_offset(), t:dtype(), skip_values or values(t) }
  end
  local both = both_paths -- the FFI fast path and the C binding

  local f32 = nd.tensor({ 1.5, -2, 0 }, "float32")
  local g32 = nd.tensor({ 4, 0, -0.5 }, "float32")
  local f64 = nd.tensor({ 0.25, 0 / 0, -3 })
  local g64 = nd.tensor({ 2, 2, 1 / 0 })
  local m32 = nd.arange(16, "float32"):view(4, 4) / 7
  local n32 = nd.arange(16, "float32"):view(4, 4):t():contiguous() - 3
  local m64 = nd.arange(16):view(4, 4) / 7 -- 16 doubles: 128 bytes, the most
  local row, col = nd.tensor({ { 1, 2, 3 } }), nd.tensor({ { 1 }, { 2 }, { 3 } })
  local zero_d = nd.tensor(2.5)

  it("are cdata, and the same tensors as the C binding's", function()
    local cases = {
      function() return nd.zeros(3) end,
      function() return nd.zeros(2, 3, "int32") end,
      function() return nd.zeros({ 4 }, "uint8") end,
      function() return nd.zeros({ 2, 8 }) end,
      function() return nd.zeros(128, "bool") end,
      function() return nd.ones(2, 2, "bool") end,
      function() return nd.ones({ 3, 1 }) end,
      function() return nd.ones(1, 3, "int64") end,
      function() return nd.full({ 2, 2 }, 7, "int64") end,
      function() return nd.full({ 3 }, 1.5, "float32") end,
      function() return nd.full({ 2 }, -0.0) end,
      function() return nd.full({ 2 }, true) end,
      function() return nd.full({ 16 }, 2 ^ 40, "int64") end,
      function() return nd.full({ 3 }, 3.7, "int32") end,
      function() return nd.full({ 2 }, 255, "uint8") end,
      function() return nd.full({ 2 }, 0 / 0, "float32") end,
      function() return f32 + g32 end,
      function() return f32 - g32 end,
      function() return f32 * g32 end,
      function() return f32 / g32 end,
      function() return f32 ^ g32 end,
      function() return f64 + g64 end,
      function() return f64 / g64 end,
      function() return nd.maximum(f64, g64) end,
      function() return nd.minimum(f32, g32) end,
      function() return f32:eq(g32) end,
      function() return f64:ne(g64) end,
      function() return nd.lt(f32, g32) end,
      function() return f64:le(g64) end,
      function() return f32:gt(g32) end,
      function() return f64:ge(g64) end,
      function() return 2 - f32 end,
      function() return f32 / 0 end,
      function() return f64 ^ 0.5 end,
      function() return f32 ^ 2 end,
      function() return f32 * -0.0 end,
      function() return f32 * 1e300 end, -- a number never widens a float32
      function() return 3 * f64 end,
      function() return f64:gt(0) end,
      function() return nd.maximum(f32, 1) end,
      function() return m32 + n32 end,
      function() return m64 * m64 end,
      function() return m64 - 1 end,
      function() return row + row end,
      function() return col * col end,
      function() return zero_d + zero_d end,
      function() return zero_d * 2 end,
      function() return m32[2] + m32[3] end, -- FFI views as operands
      function() return -f32 end,
      function() return -m64 end,
      function() return m32:matmul(n32) end,
      function() return m64:matmul(m64) end,
      function() return nd.matmul(m32:t(), n32) end, -- a transposed operand
      function() return nd.arange(6, "float32"):view(2, 3):matmul(nd.ones(3, 2, "float32")) end,
      function() return row:matmul(col) end,
    }
    for _, name in ipairs({ "neg", "abs", "exp", "log", "sqrt", "sin", "cos", "tanh",
                            "sigmoid", "relu", "floor", "ceil", "round", "isnan", "isfinite" }) do
      cases[#cases + 1] = function() return f32[name](f32) end
      cases[#cases + 1] = function() return nd[name](f64) end
      cases[#cases + 1] = function() return m64[name](m64) end
    end
    for i, make in ipairs(cases) do
      local f, c = both(make)
      assert.equals("cdata", type(f), "case " .. i)
      assert.equals("cdata", type(c), "case " .. i)
      assert.same(layout(c), layout(f), "case " .. i)
    end
    local e = nd.empty(2, 3, "float32") -- values unspecified
    assert.equals("cdata", type(e))
    nd.use_ffi(false)
    assert.same(layout(nd.empty(2, 3, "float32"), true), layout(e, true))
  end)

  it("leave to the C binding what they do not make, with the same result", function()
    local i32 = nd.tensor({ 1, 2, 3 }, "int32")
    for i, make in ipairs({
      function() return nd.zeros(17) end, -- 136 bytes
      function() return nd.zeros(33, "float32") end,
      function() return nd.zeros(129, "uint8") end,
      function() return nd.zeros(2, 2, 2) end,
      function() return nd.zeros(0) end,
      function() return nd.zeros(3, 0) end,
      function() return nd.zeros({}) end,
      function() return nd.full({ 2, 2, 2 }, 1) end,
      function() return i32 + i32 end,
      function() return i32 * 2 end,
      function() return -i32 end,
      function() return f32 + f64 end,
      function() return f32 + nd.tensor({ 1 }, "float32") end, -- broadcast
      function() return row + col end,
      function() return m32:t() + n32 end, -- not row-major
      function() return m32:t():exp() end,
      function() return nd.arange(17) * 2 end,
      function() return f32 + true end,
      function() return m32:matmul(m64) end,
      function() return nd.ones(2, 5):matmul(nd.ones(5, 9)) end, -- 144 bytes
    }) do
      local f, c = both(make)
      assert.equals("cdata", type(f), "case " .. i)
      assert.same(layout(c), layout(f), "case " .. i)
    end
  end)

  it("raise the C binding's errors for bad arguments", function()
    local same_error = assert_same_error_both_paths
    same_error(function() return nd.zeros(-1) end)
    same_error(function() return nd.zeros(2.5) end)
    same_error(function() return nd.zeros(3, "complex64") end)
    same_error(function() return nd.zeros(3, "float32", 1) end)
    same_error(function() return nd.empty({ 3, "x" }) end)
    same_error(function() return nd.ones(2, {}) end)
    same_error(function() return nd.full(3, 1) end)
    same_error(function() return nd.full({ 3 }, "x") end)
    same_error(function() return nd.full({ 3 }, 1, "half") end)
    same_error(function() return nd.zeros({ 2, false }) end)
    same_error(function() return f32 + nd.ones(2, "float32") end)
    same_error(function() return m32:matmul(nd.ones(3, 4, "float32")) end)
    same_error(function() return f32 + "x" end)
    same_error(function() return nd.exp("x") end)
    same_error(function() return f32:exp(nd.zeros(4, "float32")) end)
    same_error(function() return nd.isnan(f32, nd.zeros(3, "float32")) end)
  end)

  it("are tensors for every function, and their views outlive them", function()
    local r = m32 + 0 -- cdata
    assert.equals("cdata", type(r))
    assert.equals(m32:sum(), r:sum())
    assert.tensor_equal(m32:t(), r:t())
    local v, p, s = r:t(), r:permute(2, 1), r[2] -- an FFI view, a C view, an FFI view
    assert.equals("cdata", type(p))
    r:release()
    assert_error_matches(function() return r:sum() end, "sum", "released")
    r = nil
    collectgarbage(); collectgarbage()
    assert.tensor_equal(m32:t(), v)
    assert.tensor_equal(m32:t(), p)
    s:fill_(0) -- writes through one view reach the others
    assert.equals(0, v[{ {}, 2 }]:sum())
    assert.equals(0, p[{ {}, 2 }]:sum())
    local o = nd.empty(3, "float32")
    nd.add(f32, g32, o) -- an out= that is a small tensor
    assert.tensor_equal(f32 + g32, o)
    nd.exp(f32, o)
    assert.tensor_equal(f32:exp(), o)
    assert.is_true(tostring(o):find("float32 tensor of size {3}", 1, true) ~= nil)
    -- Lua and C functions alike, with the FFI paths on or off.
    local x, y = nd.ones(2, 2) * 2, nd.zeros(2, 2)
    for _, on in ipairs({ true, false }) do
      nd.use_ffi(on)
      assert.same({ { 2, 2 }, { 2, 2 }, { 0, 0 }, { 0, 0 } }, nd.cat({ x, y }):totable())
      assert.same({ 2, 2, 2 }, { nd.stack({ x, y }):size(1), nd.stack({ x, y }):size(2), #x })
      assert.same({ { 2, 0 }, { 2, 0 } }, nd.where(nd.tensor({ true, false }), x, y):totable())
      assert.tensor_equal(x:clone(), x:to("float32"):to("float64"))
      assert.is_true(nd.equal(x + y, x) and nd.allclose(x * 0.5, nd.ones(2, 2)))
      assert.equals(8, (x + y):sum())
      assert.equals(2, x[{ 2, 1 }])
      x[{ 1, 2 }] = 5 -- writes into the cdata's elements
      assert.equals(5, x:get(1, 2))
      x:set(1, 2, 2)
    end
    nd.use_ffi(true)
    local path = os.tmpname()
    nd.save(path, x)
    assert.tensor_equal(x, nd.load(path))
    os.remove(path)
  end)

  it("stay while C holds their storage, and go when it lets go", function()
    -- Results that share a small tensor's storage (reshape, flatten) keep
    -- its elements after it is garbage: the memory of a freed cdata would
    -- be reused by the churn below.
    local function churn()
      for _ = 1, 2000 do local _ = nd.full({ 2, 3 }, -1) + 0 end
      collectgarbage(); collectgarbage()
    end
    -- In functions of their own: a dead local's stack slot would keep it.
    local function reshaped() return (nd.ones(2, 3) * 7):reshape(6) end
    local function through_view() return (nd.ones(2, 3) * 5):permute(2, 1):t():flatten() end
    local function through_ffi_view() return (nd.ones(2, 3) * 3)[2]:reshape(1, 3) end
    local r, f, g = reshaped(), through_view(), through_ffi_view()
    assert.equals("cdata", type(r))
    for _ = 1, 3 do churn() end
    assert.same({ 7, 7, 7, 7, 7, 7 }, r:totable())
    assert.same({ 5, 5, 5, 5, 5, 5 }, f:totable())
    assert.same({ { 3, 3, 3 } }, g:totable())
    r:fill_(1) -- still writable, and views of it too
    assert.equals(6, r:view(2, 3):sum())
    -- Views made before such a result see its writes, and it theirs.
    local s = nd.ones(2, 3) * 2
    local row, col = s[1], s:permute(2, 1)[3] -- an FFI view, a C view
    local flat = s:reshape(6)
    row:fill_(9)
    assert.same({ 9, 9, 9, 2, 2, 2 }, flat:totable())
    flat[6] = 4
    assert.same({ 9, 4 }, col:totable())
    assert.equals(9 * 3 + 2 * 2 + 4, s:sum())
    assert.is_true(nd.same_storage(row, flat) and nd.same_storage(s, col))
    -- An address taken stays the elements' address.
    local u = nd.ones(3) * 2
    local p, c = u:data_ptr(), u:cdata()
    local w = u:reshape(1, 3)
    assert.equals(p, u:data_ptr())
    assert.equals(p, w:data_ptr())
    c[1] = 7
    assert.same({ { 2, 7, 2 } }, w:totable())
    -- Once their views go they go: a loop of such results stays bounded
    -- (after a first loop, which sizes the tables that anchor views:
    -- about 250 KB here, more or less with the collector's timing; kept,
    -- the 100,000 tensors of two loops would take over 20 MB).
    r, f, g = nil, nil, nil
    local function loop()
      for _ = 1, 50000 do local _ = (nd.ones(2, 3) * 7):reshape(3, 2) end
      collectgarbage(); collectgarbage()
    end
    loop()
    local before = collectgarbage("count")
    loop(); loop()
    assert.is_true(collectgarbage("count") - before < 2048)
  end)

  it("are tensors to nd.is_tensor, and have the tensor's operators", function()
    local a = nd.tensor({ 4, 6, 8 }, "float32") + 0
    assert.equals("cdata", type(a))
    for _, v in ipairs({ a, a[{ { 2 } }], a:view(3, 1), nd.zeros(100), nd.zeros(4, 4):t() }) do
      assert.is_true(nd.is_tensor(v))
    end
    for _, v in ipairs({ {}, 1, "x", require("ffi").new("int[4]"), io.stdout }) do
      assert.is_false(nd.is_tensor(v))
    end
    -- The contract's metamethods: getmetatable() of a cdata is LuaJIT's
    -- "ffi", but each works (__gc and __close do not apply: no finalizer).
    assert.same({ 5, 7, 9 }, (a + 1):totable())
    assert.same({ 3, 5, 7 }, (a - 1):totable())
    assert.same({ 8, 12, 16 }, (a * 2):totable())
    assert.same({ 2, 3, 4 }, (a / 2):totable())
    assert.same({ -4, -6, -8 }, (-a):totable())
    assert.same({ 16, 36, 64 }, (a ^ 2):totable())
    assert.same({ 1, 0, 2 }, (a % 3):totable())
    assert.equals(3, #a)
    assert.is_true(tostring(a):find("float32 tensor of size {3}", 1, true) ~= nil)
    assert.equals(6, a[2])
    a[2] = 1
    assert.equals(1, a[2])
  end)

  it("matmul plans a new result once per pair of operands", function()
    local a = nd.arange(16, "float32"):view(4, 4)
    local bs = { nd.eye(4, "float32"), nd.ones(4, 4, "float32"), a:t(), nd.ones(4, 2, "float32") }
    for round = 1, 3 do
      for i, b in ipairs(bs) do
        local r = a:matmul(b)
        assert.equals("cdata", type(r), "operand " .. i)
        nd.use_ffi(false)
        assert.same(layout(a:matmul(b)), layout(r), "operand " .. i .. ", round " .. round)
        nd.use_ffi(true)
      end
    end
    for _ = 1, 3 do -- operands collected and made again: never a stale plan
      local b = nd.full({ 4, 3 }, 2, "float32")
      assert.same(layout(a:contiguous():matmul(nd.full({ 4, 3 }, 2, "float32"))), layout(a:matmul(b)))
      b = nil
      collectgarbage()
    end
  end)

  it("keep allocating loops bounded, with no finalizer", function()
    collectgarbage()
    local before = collectgarbage("count")
    local a, b = nd.ones(3, "float32"), nd.ones(3, "float32")
    for _ = 1, 200000 do
      local p = a + b
      local q = p * 0.016
      local _ = q:exp()
    end
    collectgarbage()
    assert.is_true(collectgarbage("count") - before < 1024)
  end)

  it("clone makes the C binding's tensor, small or not, any layout", function()
    local cases = {
      nd.rand(3), nd.rand(2, 2), nd.rand(1, 3), nd.rand(3, 1), nd.zeros(3, 1):t(),
      nd.arange(4, "int32"):view(2, 2), nd.rand(4, 4):t(), nd.rand(2, 2)[1], nd.tensor(3),
      nd.rand(5):narrow(1, 2, 3), nd.rand(4, 4)[{ {}, 2 }], nd.ones(3, "bool"), nd.rand(5, 5),
    }
    for i, a in ipairs(cases) do
      local f, c = both(function() return a:clone() end)
      assert.same(layout(c), layout(f), "case " .. i)
      assert.is_false(nd.same_storage(f, a), "case " .. i)
      f:fill_(0) -- its own elements
      assert.same(layout(c), layout(a:clone()), "case " .. i)
    end
  end)

  it("matmul of any float shapes, new or into out, is the C binding's", function()
    local R, v, M = nd.rand(3, 3), nd.rand(3), nd.rand(2, 3, 3)
    local R32, v32 = nd.rand(3, 3, "float32"), nd.rand(3, "float32")
    local cases = { { R, v }, { v, R }, { v, v }, { R, R }, { M, v }, { M, R }, { R:t(), v },
      { R32, v32 }, { R, v32 }, { v:view(1, 3), R } }
    for i, c in ipairs(cases) do
      local f, k = both(function() return nd.matmul(c[1], c[2]) end)
      assert.same(layout(k), layout(f), "case " .. i)
      local o1, o2 = nd.empty(k:size(), k:dtype()), nd.empty(k:size(), k:dtype())
      nd.use_ffi(true); assert.equals(o1, nd.matmul(c[1], c[2], o1))
      nd.use_ffi(false); nd.matmul(c[1], c[2], o2); nd.use_ffi(true)
      assert.same(layout(o2), layout(o1), "case " .. i .. " with out")
    end
    assert_error_matches(function() return nd.matmul(R, nd.rand(4)) end, "matmul", "cannot be multiplied")
    assert_error_matches(function() return nd.matmul(R, v, nd.empty(4)) end, "matmul")
  end)

  it("every op of the table, new, into out and in place, is the C binding's", function()
    local optable = require("nd.internal").optable
    local function operands(dt)
      local a = nd.tensor({ { 1.5, -2, 3 }, { 0, 4, -1 } }):to(dt)
      return a, nd.tensor({ { 2, 1, -3 }, { 1, 2, 5 } }):to(dt)
    end
    local function run(form, name, arity, dt, other)
      local a, b = operands(dt)
      local args = { a }
      if arity == 2 then args[2] = other == "tensor" and b or other end
      local ok, r = pcall(function()
        if form == "new" then return nd[name](unpack(args, 1, arity)) end
        if form == "in-place" then return a[name .. "_"](unpack(args, 1, arity)) end
        nd.use_ffi(false)
        local k = nd[name](unpack(args, 1, arity)) -- the result's shape and dtype
        nd.use_ffi(true)
        local o = nd.zeros(k:size(), k:dtype())
        args[arity + 1] = o
        return nd[name](unpack(args, 1, arity + 1))
      end)
      if not ok then return tostring(r):match("%w+:.*$") end
      return tostring(form == "in-place" and a or r) .. type(r) -- NaN prints alike
    end
    local tried = 0
    for _, row in ipairs(optable) do
      local fam, name = row.family, row.name
      if (fam == "op" or fam == "math") and nd.methods[name] then
        for _, dt in ipairs({ "float32", "float64", "int32", "uint8", "bool" }) do
          for _, other in ipairs(row.arity == 2 and { "tensor", 0.5, 3, -0.0 } or { "none" }) do
            for _, form in ipairs({ "new", "out", "in-place" }) do
              if form ~= "in-place" or nd.methods[name .. "_"] then
                nd.use_ffi(true)
                local f = run(form, name, row.arity, dt, other)
                nd.use_ffi(false)
                local c = run(form, name, row.arity, dt, other)
                nd.use_ffi(true)
                tried = tried + 1
                assert.equals(c, f, ("%s %s %s %s"):format(form, name, dt, tostring(other)))
              end
            end
          end
        end
      end
    end
    assert.is_true(tried > 500)
  end)
end)
