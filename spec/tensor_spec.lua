-- Introspection and element access: size stride storage_offset dim numel
-- dtype element_size nbytes is_contiguous storage data_ptr same_storage,
-- get set item totable fill_ zero_, t[i]; int64 beyond 2^53; bad input.
local nd = require "nd"

describe("the suite", function()
  it("runs under LuaJIT with the in-tree module", function()
    if os.getenv("ND_PUC") then return pending("a PUC Lua run (make check-puc)") end
    assert.is_table(jit)
    assert.equals(6, nd.zeros(2, 3):numel())
  end)
end)

describe("introspection", function()
  it("size and stride, as tables or one dim (negative counts from the end)", function()
    local t = nd.zeros(2, 3, 4)
    assert_close({ 2, 3, 4 }, t:size())
    assert_close({ 12, 4, 1 }, t:stride())
    assert.equals(3, t:size(2))
    assert.equals(4, t:size(-1))
    assert.equals(12, t:stride(1))
    assert.equals(1, t:stride(-1))
    assert.equals("{2, 3, 4}", tostring(t:size()))
    assert.equals("{24, 12, 4, 1}", tostring(nd.zeros(1, 2, 3, 4):stride()))
    assert.equals("{}", tostring(nd.zeros({}):size()))
    assert.equals(2, #t)
  end)

  it("dim, numel, dtype, element_size, nbytes", function()
    local t = nd.zeros(2, 3, "int32")
    assert.equals(2, t:dim())
    assert.equals(6, t:numel())
    assert.equals("int32", t:dtype())
    assert.equals(4, t:element_size())
    assert.equals(24, t:nbytes())
    local sizes = { float32 = 4, float64 = 8, int32 = 4, int64 = 8, uint8 = 1, bool = 1 }
    for dt, n in pairs(sizes) do assert.equals(n, nd.empty(1, dt):element_size()) end
    local s = nd.zeros({})
    assert.equals(0, s:dim())
    assert.equals(1, s:numel())
    assert.equals(8, s:nbytes())
    assert.equals(0, nd.zeros(3, 0):nbytes())
  end)

  it("storage_offset and is_contiguous on views (PyTorch's rule)", function()
    local t = nd.zeros(3, 4)
    assert.is_true(t:is_contiguous())
    assert.is_false(t:t():is_contiguous())
    local n = t:narrow(2, 2, 2)
    assert.equals(1, n:storage_offset())
    assert.is_false(n:is_contiguous())
    assert.equals(4, t:select(1, 2):storage_offset())
    assert.is_true(t:narrow(1, 2, 1):is_contiguous())
    assert.is_true(nd.zeros(3, 1):t():is_contiguous()) -- size-1 dims are free
    assert.is_true(nd.zeros(0, 4):t():is_contiguous()) -- empty is contiguous
  end)

  it("storage views the whole storage from its first element", function()
    local t = nd.arange(6):view(2, 3)
    local s = t:narrow(2, 2, 2):storage()
    assert.equals(1, s:dim())
    assert.equals(0, s:storage_offset())
    assert_close({ 0, 1, 2, 3, 4, 5 }, s:totable())
    assert.is_true(nd.same_storage(s, t))
    s:set(1, 42)
    assert.equals(42, t:get(1, 1))
  end)

  it("data_ptr is the address of the first element", function()
    local t = nd.zeros(4, 4)
    local p = t:data_ptr()
    assert.equals("number", type(p))
    assert.equals(math.floor(p), p)
    assert.equals(p + 8 * 5, t:narrow(1, 2, 1):narrow(2, 2, 1):data_ptr())
    assert.equals(p, t:t():data_ptr())
    if jit then
      local ffi = require "ffi"
      assert.equals(p, tonumber(ffi.cast("uintptr_t", ffi.cast("void *", p))))
    end
  end)

  it("same_storage tells views from copies", function()
    local a = nd.zeros(2, 3)
    assert.is_true(nd.same_storage(a, a:t()))
    assert.is_true(a:same_storage(a:select(1, 1)))
    assert.is_false(nd.same_storage(a, a:clone()))
    assert.is_false(nd.same_storage(a, nd.zeros(2, 3)))
  end)

  it("refuses bad dims and non-tensors, naming the function", function()
    local t = nd.zeros(2, 3)
    assert_error_matches(function() t:size(0) end, "size:", "0")
    assert_error_matches(function() t:size(3) end, "size:", "3")
    assert_error_matches(function() t:stride(-3) end, "stride:", "-3")
    assert_error_matches(function() t:size(1.5) end, "size:", "1.5")
    assert_error_matches(function() t:size("x") end, "size:", "string")
    assert_error_matches(function() nd.zeros({}):size(1) end, "size:", "0-d")
    for _, name in ipairs({ "size", "stride", "storage_offset", "dim", "numel",
      "dtype", "element_size", "nbytes", "is_contiguous", "storage",
      "data_ptr", "item", "totable", "zero_", "to_string" }) do
      assert_error_matches(function() nd[name](nil) end, name .. ":", "nil")
      assert_error_matches(function() nd[name]("x") end, name .. ":", "string")
      assert_error_matches(function() nd[name]({}) end, name .. ":", "table")
      assert_error_matches(function() nd[name](io.stdout) end, name .. ":", "userdata")
    end
    assert_error_matches(function() nd.same_storage(t, 5) end, "same_storage:", "number")
    assert_error_matches(function() nd.same_storage(io.stdout, t) end, "same_storage:", "userdata")
    assert_error_matches(function() return #nd.zeros({}) end, "0-d")
  end)
end)

describe("elements", function()
  it("get and set with 1-based and negative indices", function()
    local t = nd.arange(12):view(3, 4)
    assert.equals(0, t:get(1, 1))
    assert.equals(6, t:get(2, 3))
    assert.equals(11, t:get(-1, -1))
    assert.equals(8, t:get(-1, 1))
    assert.equals(t, t:set(2, 3, 60))
    assert.equals(60, t:get(2, 3))
    t:t():set(4, 1, -3) -- through a view
    assert.equals(-3, t:get(1, 4))
    local b = nd.zeros(2, "bool")
    b:set(2, true)
    assert.same({ false, true }, b:totable())
    local u = nd.zeros(1, "uint8")
    assert.has_error(function() u:set(1, 300) end) -- uint8 cannot hold it
    assert.has_error(function() u:set(1, 300.5) end)
    u:set(1, 255.5)
    assert.equals(255, u:get(1)) -- a fraction truncates toward zero
  end)

  it("item and get on 0-d tensors", function()
    local s = nd.tensor(2.5)
    assert.equals(2.5, s:item())
    assert.equals(2.5, s:get())
    s:set(4)
    assert.equals(4, s:item())
    assert.equals(7, nd.full({ 1, 1 }, 7):item())
  end)

  it("totable gives nested tables (numbers, booleans; empty dims)", function()
    assert.same({ { 0, 1, 2 }, { 3, 4, 5 } }, nd.arange(6):view(2, 3):totable())
    assert.same({ { 0, 3 }, { 1, 4 }, { 2, 5 } }, nd.arange(6):view(2, 3):t():totable())
    assert.same({ {}, {} }, nd.zeros(2, 0):totable())
    assert.equals(3, nd.tensor(3):totable())
    assert.same({ true }, nd.tensor({ true }):totable())
  end)

  it("fill_ and zero_ write every element and return the tensor", function()
    local t = nd.zeros(2, 3)
    assert.equals(t, t:fill_(2.5))
    assert.same({ { 2.5, 2.5, 2.5 }, { 2.5, 2.5, 2.5 } }, t:totable())
    t:narrow(2, 1, 1):fill_(-1)
    assert.same({ { -1, 2.5, 2.5 }, { -1, 2.5, 2.5 } }, t:totable())
    assert.equals(t, t:zero_())
    assert.same({ { 0, 0, 0 }, { 0, 0, 0 } }, t:totable())
    assert.same({ 1, 1 }, nd.zeros(2, "int32"):fill_(true):totable())
    assert.same({ 5, 5 }, nd.zeros(2):fill_(nd.tensor(5)):totable())
    nd.zeros(0):fill_(1) -- empty: nothing to do
  end)

  it("t[i] reads and writes on 1-D and selects on higher ranks", function()
    local v = nd.arange(5)
    assert.equals(2, v[3])
    assert.equals(4, v[-1])
    v[2] = 10
    assert.equals(10, v:get(2))
    local m = nd.arange(6):view(2, 3)
    local row = m[2]
    assert.is_true(type(row) == "userdata" or type(row) == "cdata") -- cdata: an FFI view
    assert.same({ 3, 4, 5 }, row:totable())
    assert.is_true(nd.same_storage(row, m))
    m[1] = 7
    assert.same({ { 7, 7, 7 }, { 3, 4, 5 } }, m:totable())
    assert.equals(5, m[2][3])
  end)

  it("refuses out-of-range and malformed positions and values", function()
    local t = nd.zeros(2, 3)
    assert_error_matches(function() t:get(3, 1) end, "get:", "index 3", "dim 1", "size 2")
    assert_error_matches(function() t:get(1, -4) end, "get:", "-4", "dim 2")
    assert_error_matches(function() t:get(0, 1) end, "get:", "index 0")
    assert_error_matches(function() t:get(1) end, "get:", "1 index", "2 dims")
    assert_error_matches(function() t:get(1, 2, 3) end, "get:", "3 indices")
    assert_error_matches(function() t:get(1, 1.5) end, "get:", "1.5")
    assert_error_matches(function() t:get(1, "a") end, "get:", "string")
    assert_error_matches(function() t:get(1, nil) end, "get:", "nil")
    assert_error_matches(function() t:set(1, 1) end, "set:", "value")
    for _, ffi_on in ipairs({ true, false }) do -- LuaJIT's classic wrapper too
      nd.use_ffi(ffi_on)
      assert_error_matches(function() t:set() end, "set:", "0 indices")
      assert_error_matches(function() nd.set() end, "set:", "argument 1", "got nil")
    end
    nd.use_ffi(true)
    assert_error_matches(function() t:set(3, 1, 0) end, "set:", "index 3")
    assert_error_matches(function() t:set(1, 1, "x") end, "set:", "string")
    assert_error_matches(function() t:set(1, 1, {}) end, "set:", "table")
    assert_error_matches(function() t:set(1, 1, nil) end, "set:", "nil")
    assert_error_matches(function() t:item() end, "item:", "6 elements")
    assert_error_matches(function() nd.zeros(0):item() end, "item:", "0 elements")
    assert_error_matches(function() t:fill_("x") end, "fill_:", "string")
    assert_error_matches(function() t:fill_() end, "fill_:", "got nil")
    assert_error_matches(function() t:fill_(nd.zeros(2)) end, "fill_:", "1-d tensor")
    assert_error_matches(function() nd.get(io.stdout, 1) end, "get:", "userdata")
    assert_error_matches(function() nd.set("x", 1, 1) end, "set:", "string")
    assert_error_matches(function() return nd.arange(3)[4] end, "index 4")
    assert_error_matches(function() return nd.arange(3)[0] end, "0")
  end)

  it("refuses writes into overlapping (expanded) elements", function()
    local e = nd.zeros(1):expand(3)
    assert_error_matches(function() e:set(2, 1) end, "set:", "expanded")
    assert_error_matches(function() e:fill_(1) end, "fill_:")
    assert_error_matches(function() e:zero_() end, "zero_:")
  end)
end)

describe("int64 elements", function()
  it("come back as numbers within 2^53", function()
    local t = nd.tensor({ 1, -2, 2 ^ 53, -2 ^ 53 }, "int64")
    for i, v in ipairs({ 1, -2, 2 ^ 53, -2 ^ 53 }) do
      assert.equals("number", type(t:get(i)))
      assert.equals(v, t:get(i))
      assert.equals(v, t[i])
    end
    assert.equals("number", type(t:totable()[3]))
  end)

  it("come back exact beyond 2^53 (boxed int64_t under LuaJIT)", function()
    if not jit then return pending("LuaJIT's boxed int64_t") end
    local t = nd.zeros(3, "int64")
    local big = LL(2) ^ 53 + 1
    t:set(1, big)
    t[2] = -(LL(2) ^ 62) - 7
    t:set(3, LL(2) ^ 62)
    if jit then
      assert.equals("cdata", type(t:get(1)))
      assert.equals(big, t:get(1))
      assert.equals(big, t[1])
      assert.equals(-(LL(2) ^ 62) - 7, t:get(2))
      assert.equals(LL(2) ^ 62, t:totable()[3])
      assert.equals(big, t:narrow(1, 1, 1):item())
      assert.equals(-(LL(2) ^ 62) - 7, t:view(3, 1):get(2, 1))
      local m = nd.zeros(2, 2, "int64")
      m:set(-1, -1, big)
      assert.equals(big, m:totable()[2][2])
      assert.equals(big, m[2][2])
      assert.equals(big, m[{ 2, -1 }])
      assert.equals(0, m[{ 1, 1 }])
    end
  end)

  it("keep the location of errors at the caller", function()
    local t = nd.zeros(2, "int64")
    local err = assert_error_matches(function() t:get(5) end, "get:", "index 5")
    assert.is_nil(err:find("elements.lua", 1, true))
  end)
end)

describe("t:cdata()", function()
  it("is a typed pointer to the first element under LuaJIT", function()
    if not jit then return pending("LuaJIT's FFI") end
    local ffi = require "ffi"
    local t = nd.arange(6, "float32"):reshape(2, 3)
    local v = t:narrow(2, 2, 2) -- first element is t[1][2]
    local p = v:cdata()
    assert.is_true(ffi.istype("float *", p))
    assert.equals(1, p[0])
    assert.equals(t:get(2, 3), p[v:stride(1) + v:stride(2)])
    p[0] = 42 -- writes go to the shared storage
    assert.equals(42, t:get(1, 2))
    assert.equals(v:data_ptr(), tonumber(ffi.cast("intptr_t", p)))
    for dt, ct in pairs({ float64 = "double *", int32 = "int32_t *", int64 = "int64_t *",
                          uint8 = "uint8_t *", bool = "bool *" }) do
      assert.is_true(ffi.istype(ct, nd.zeros(1, dt):cdata()), dt)
    end
    assert_error_matches(function() nd.cdata("x") end, "cdata", "tensor")
  end)
end)

describe("one element at a time", function()
  -- Under LuaJIT these go through the FFI (lua/elements.lua) and fall back
  -- to C for errors and conversion rules; the results must not depend on
  -- which path ran.
  it("reads every dtype through views, 1-based and negative", function()
    local m = nd.arange(12):reshape(3, 4)
    for _, dt in ipairs({ "float32", "float64", "int32", "int64", "uint8" }) do
      local v = m:to(dt):t()[{ { 2, 4 }, {} }] -- {3, 3} view, columns 2..4 of m
      assert.equals(11, v:get(3, 3), dt) -- m[3][4]
      assert.equals(11, v:get(-1, -1), dt)
      assert.equals(5, v[{ 1, 2 }], dt)
      assert.equals(2, v:select(1, 2)[1], dt)
      assert.equals("number", type(v:get(1, 1)), dt)
    end
    local b = nd.tensor({ { true, false } })
    assert.equals(false, b:get(1, 2))
    assert.equals(true, b[{ 1, 1 }])
    assert.equals(true, b:t()[1]:item())
  end)

  it("writes with the conversion rules, whatever the path", function()
    local i = nd.zeros(3, "int32")
    i:set(1, 2.9); i[2] = -2.9; i:set(3, 2 ^ 31 - 0.5)
    assert.same({ 2, -2, 2147483647 }, i:totable()) -- fractions truncate
    -- a value int32 cannot hold raises on every path, writing nothing
    for _, v in ipairs({ 2 ^ 40 + 0.5, 2 ^ 32 + 5, -2 ^ 31 - 1, 0 / 0 }) do
      assert.has_error(function() i:set(1, v) end)
      assert.has_error(function() i[1] = v end)
      assert.has_error(function() i[{ 1 }] = v end)
    end
    assert.same({ 2, -2, 2147483647 }, i:totable())
    local u = nd.zeros(2, "uint8")
    u[1] = 255; u:set(2, 0)
    assert.same({ 255, 0 }, u:totable())
    assert.has_error(function() u[1] = 300 end)
    assert.has_error(function() u:set(2, -1) end)
    local f = nd.zeros(2, "float32")
    f[1] = true; f:set(2, 0.1)
    assert.equals(1, f[1])
    assert.is_true(f[2] ~= 0.1 and math.abs(f[2] - 0.1) < 1e-8) -- rounded to float32
    local b = nd.zeros(2, "bool")
    b[1] = 5; b:set(2, true)
    assert.same({ true, true }, b:totable())
  end)

  it("refuses what the C functions refuse, with their messages", function()
    local t = nd.zeros(2, 3)
    assert_error_matches(function() t:get(3, 1) end, "get:", "index 3", "dim 1 of size 2")
    assert_error_matches(function() t:get(1, 1.5) end, "get:", "integer")
    assert_error_matches(function() t:set(1, 0, 1) end, "set:", "0")
    assert_error_matches(function() t:set(1, 1, "x") end, "set:", "number or boolean")
    assert_error_matches(function() nd.zeros(1):expand(3):set(2, 1) end, "set:", "memory location")
    assert_error_matches(function() return nd.zeros(3)[4] end, "index", "4")
  end)
end)
