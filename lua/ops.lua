-- Elementwise operators and value comparisons over the C ops (lops.c):
-- the arithmetic metamethods, nd.equal / nd.allclose, and under LuaJIT a
-- fast path for binary ops given an out tensor (the FFI calls the C core
-- directly: no Lua C API frame, no argument parsing).
return function(ext)
  local nd, methods, mt, C = ext.nd, ext.methods, ext.metatable, ext.C
  local getmt, error = getmetatable, error

  -- Elementwise, a number on either side; `*` is not matmul. Lua's `==`
  -- and `<` stay identity / undefined (use eq, lt, nd.equal).
  mt.__add, mt.__sub, mt.__mul, mt.__div, mt.__pow = C.add, C.sub, C.mul, C.div, C.pow
  -- `%` is remainder (the sign of the divisor, as Lua's own %); `//` (Lua
  -- 5.3+; unused elsewhere) is floor_divide.
  mt.__mod, mt.__idiv = C.remainder, C.floor_divide
  local neg = C.neg
  mt.__unm = function(a) return neg(a) end -- Lua passes the operand twice

  local function define(name, f)
    nd[name] = f
    methods[name] = f
  end

  local function same_size(a, b)
    if a:dim() ~= b:dim() then return false end
    for i = 1, a:dim() do
      if a:size(i) ~= b:size(i) then return false end
    end
    return true
  end

  -- Same shape and equal values (NaN is not equal to itself).
  define("equal", function(a, b)
    if getmt(a) ~= mt or getmt(b) ~= mt then
      error("equal: expected two tensors", 2)
    end
    return same_size(a, b) and C.eq(a, b):all()
  end)

  -- |a - b| <= atol + rtol * |b| everywhere (equal infinities are close),
  -- broadcasting as the other ops do.
  define("allclose", function(a, b, rtol, atol)
    if getmt(a) ~= mt or getmt(b) ~= mt then
      error("allclose: expected two tensors", 2)
    end
    rtol, atol = rtol or 1e-5, atol or 1e-8
    local x, y = a:to("float64"), b:to("float64")
    local close = C.le(C.abs(C.sub(x, y)), C.add(C.mul(C.abs(y), rtol), atol))
    return C.all(C.maximum(close, C.eq(x, y)))
  end)

  if not ext.ffi then return end
  local ffi, lib, header, err = ext.ffi, ext.lib, ext.header, ext.err
  ffi.cdef [[
    int nd_binary_tensors(nd_err *e, nd_tensor *out, int mode, int op,
                          const nd_tensor *a, const nd_tensor *b);
  ]]
  if not pcall(function() return lib.nd_binary_tensors end) then return end
  local ND_OUT = 1
  local ops = { add = 0, sub = 1, mul = 2, div = 3, pow = 4, maximum = 5,
    minimum = 6, eq = 7, ne = 8, lt = 9, le = 10, gt = 11, ge = 12 }
  for name, op in pairs(ops) do
    local slow = C[name]
    define(name, function(a, b, out)
      if out ~= nil and getmt(a) == mt and getmt(b) == mt and getmt(out) == mt then
        if lib.nd_binary_tensors(err, header(out), ND_OUT, op, header(a), header(b)) ~= 0 then
          error(ffi.string(err.msg), 2)
        end
        return out
      end
      return slow(a, b, out)
    end)
  end
end
