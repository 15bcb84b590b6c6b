-- nd.wrap: foreign memory from Lua, zero-copy, checked against nbytes,
-- with an owner kept alive while any view lives.
local nd = require "nd"
local ffi_ok, ffi = pcall(require, "ffi")
if not (jit and ffi_ok) then ffi = nil end

describe("nd.wrap", function()
  it("wraps an FFI buffer without copying; writes reach the buffer", function()
    if not ffi then return end
    local buf = ffi.new("double[6]", { 1, 2, 3, 4, 5, 6 })
    local t = nd.wrap(buf, 48, "float64", { 2, 3 })
    assert.same({ { 1, 2, 3 }, { 4, 5, 6 } }, t:totable())
    t:t()[{ 3, 2 }] = 60
    assert.equals(60, buf[5])
    assert.equals(t:data_ptr(), tonumber(ffi.cast("uintptr_t", buf)))
  end)

  it("takes strides (nil for row-major) and checks every view against nbytes", function()
    if not ffi then return end
    local buf = ffi.new("float[8]")
    for i = 0, 7 do buf[i] = i end
    local t = nd.wrap(buf, 32, "float32", { 4 }, { 2 })
    assert.same({ 0, 2, 4, 6 }, t:totable())
    assert_error_matches(function() nd.wrap(buf, 32, "float32", { 5 }, { 2 }) end,
      "wrap", "outside")
    assert_error_matches(function() nd.wrap(buf, 16, "float32", { 5 }) end, "wrap", "outside")
    assert_error_matches(function() t:as_strided({ 9 }, { 1 }, 0) end, "as_strided", "outside")
    assert.equals(8, t:storage():numel())
  end)

  it("keeps the owner (6th argument) alive while any view lives", function()
    if not ffi then return end
    local gone = false
    local owner = ffi.gc(ffi.new("int32_t[4]", { 1, 2, 3, 4 }), function() gone = true end)
    local view = nd.wrap(owner, 16, "int32", { 4 }, nil, owner):narrow(1, 2, 2)
    owner = nil
    for _ = 1, 3 do collectgarbage() end
    assert.is_false(gone)
    assert.same({ 2, 3 }, view:totable())
    view = nil
    for _ = 1, 3 do collectgarbage() end
    nd.wrap(ffi.new("char[1]"), 1, "uint8", { 1 }) -- a wrap sweeps released owners
    for _ = 1, 3 do collectgarbage() end
    assert.is_true(gone)
  end)

  it("refuses NULL with a nonzero size, bad pointers and bad shapes", function()
    assert_error_matches(function() nd.wrap(nil, 4, "float32", { 1 }) end, "wrap", "pointer")
    assert_error_matches(function() nd.wrap(1234, 4, "float32", { 1 }) end, "wrap", "pointer")
    assert_error_matches(function() nd.wrap(nd.zeros(1), 4, "float32", { 1 }) end, "wrap", "pointer")
    if not ffi then return end
    assert_error_matches(function() nd.wrap(ffi.cast("void *", 0), 4, "float32", { 1 }) end,
      "wrap", "NULL")
    local empty = nd.wrap(ffi.cast("void *", 0), 0, "float32", { 0 })
    assert.equals(0, empty:numel())
    local b = ffi.new("float[2]")
    assert_error_matches(function() nd.wrap(b, 8, "complex", { 2 }) end, "wrap", "dtype")
    assert_error_matches(function() nd.wrap(b, 8, "float32", 2) end, "wrap", "sizes")
    assert_error_matches(function() nd.wrap(b, 8, "float32", { 2 }, { 1, 1 }) end, "wrap", "strides")
    assert_error_matches(function() nd.wrap(b, -1, "float32", { 0 }) end, "wrap", "negative")
  end)
end)
