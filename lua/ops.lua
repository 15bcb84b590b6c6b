-- Elementwise operators and value comparisons over the C ops (lops.c):
-- the arithmetic metamethods, nd.equal / nd.allclose, and under LuaJIT a
-- fast path for the ops of nd.h's ND_OPS (C.optable's family "op"): a new
-- small result or an out tensor, the FFI calling the C core directly (no
-- Lua C API frame, no argument parsing).
return function(ext)
  local nd, methods, mt, C = ext.nd, ext.methods, ext.metatable, ext.C
  local is_tensor, error = ext.is_tensor, error

  -- Elementwise, a number on either side; `*` is not matmul. Lua's `==`
  -- and `<` stay identity / undefined (use eq, lt, nd.equal).
  mt.__add, mt.__sub, mt.__mul, mt.__div, mt.__pow = C.add, C.sub, C.mul, C.div, C.pow
  -- `%` is remainder (the sign of the divisor, as Lua's own %); `//` (Lua
  -- 5.3+; unused elsewhere) is floor_divide.
  mt.__mod, mt.__idiv = C.remainder, C.floor_divide
  local neg = C.neg
  mt.__unm = function(a) return neg(a) end -- Lua passes the operand twice

  local function define(name, f)
    f = ext.checked(name, f)
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
    if not is_tensor(a) or not is_tensor(b) then
      error("equal: expected two tensors", 2)
    end
    return same_size(a, b) and C.eq(a, b):all()
  end)

  -- |a - b| <= atol + rtol * |b| everywhere (equal infinities are close),
  -- broadcasting as the other ops do.
  define("allclose", function(a, b, rtol, atol)
    if not is_tensor(a) or not is_tensor(b) then
      error("allclose: expected two tensors", 2)
    end
    rtol, atol = rtol or 1e-5, atol or 1e-8
    local x, y = a:to("float64"), b:to("float64")
    local close = C.le(C.abs(C.sub(x, y)), C.add(C.mul(C.abs(y), rtol), atol))
    return C.all(C.maximum(close, C.eq(x, y)))
  end)

  if not ext.ffi then return end
  local ffi, lib, live, err = ext.ffi, ext.lib, ext.live, ext.err
  local OUT, INPLACE, OK = ext.consts.OUT, ext.consts.INPLACE, ext.consts.status.OK
  local is_float = ext.is_float -- the fast paths' operands
  local type = type
  -- Scalar operands with out (a:mul(0.016, out)): a number becomes a weak
  -- operand exactly as lops.c's operand() makes it.
  local opnd = ffi.new("ndffi2_operand[2]")
  local scalar = lib.operand_number -- C's rule (nd_internal.h's nd_whole)
  -- New results of float32/float64 row-major operands of one shape whose
  -- elements fit a small tensor (ext.small_like): made here with no C API
  -- call, no userdata and no finalizer; written by the core through the
  -- FFI. Same dtype, shape and strides as the C binding's ND_NEW result
  -- (which follows the inputs' memory order: row-major here).
  local small_like = ext.small_like
  local BOOL = ext.dtype_id.bool
  -- a op b as a new small tensor, or nil (then the C binding does it);
  -- tobool: op's result is bool (else, of float operands, their dtype).
  local function new_binary(fam, op, tobool, a, b)
    local ha, hb = live(a), live(b)
    local h, d = ha or hb, nil
    if h == nil then return nil end
    d = h.dtype
    if not is_float(d) then return nil end
    if ha and hb then
      if hb.dtype ~= d then return nil end
    elseif type(ha and b or a) ~= "number" then
      return nil
    end
    local o, r = small_like(tobool and BOOL or d, h, ha and hb)
    if o == nil then return nil end
    if ha and hb then
      if fam.tensors(err, r, OUT, op, ha, hb) ~= OK then return nil end
      return o
    end
    local x, y = opnd[0], opnd[1]
    if ha then x.t, x.dtype = ha, d; scalar(y, b) else scalar(x, a); y.t, y.dtype = hb, d end
    if fam.binary(err, r, OUT, op, x, y) ~= OK then return nil end
    return o
  end

  -- The binary and unary ops of the core's op table, by family: those
  -- nd_binary and nd_unary take ("op") and nd_math_binary and
  -- nd_math_unary ("math"). An op added to the table is here by itself.
  local function math_tensors(e, o, mode, op, ha, hb)
    local x, y = opnd[0], opnd[1]
    x.t, x.dtype, y.t, y.dtype = ha, ha.dtype, hb, hb.dtype
    return lib.math_binary(e, o, mode, op, x, y)
  end
  local families = {
    op = { binary = lib.binary, unary = lib.unary, tensors = lib.binary_tensors },
    math = { binary = lib.math_binary, unary = lib.math_unary, tensors = math_tensors },
  }
  local binops, unops = {}, {}
  for _, row in ipairs(C.optable) do
    if families[row.family] then
      local list = row.arity == 2 and binops or unops
      list[#list + 1] = row
    end
  end
  local meta = { add = "__add", sub = "__sub", mul = "__mul", div = "__div", pow = "__pow" }
  for _, row in ipairs(binops) do
    local name, op, tobool = row.name, row.id, row.result == "bool"
    local fam = families[row.family]
    local binary, tensors = fam.binary, fam.tensors
    local slow = C[name]
    local function f(a, b, out)
      if out == nil and small_like then
        local o = new_binary(fam, op, tobool, a, b)
        if o ~= nil then return o end
      elseif out ~= nil then
        local ho = live(out)
        if ho then
          local ha, hb = live(a), live(b)
          if ha and hb then
            if tensors(err, ho, OUT, op, ha, hb) ~= OK then
              error(ffi.string(err.msg), 2)
            end
            return out
          end
          local ta, tb = type(a), type(b)
          if (ha and tb == "number") or (hb and ta == "number") then
            local x, y = opnd[0], opnd[1]
            if ha then x.t, x.dtype = ha, ha.dtype else scalar(x, a) end
            if hb then y.t, y.dtype = hb, hb.dtype else scalar(y, b) end
            if binary(err, ho, OUT, op, x, y) ~= OK then
              error(ffi.string(err.msg), 2)
            end
            return out
          end
        end
      end
      return slow(a, b, out)
    end
    ext.fast(nd, name, f, slow)
    ext.fast(methods, name, f, slow)
    if meta[name] then ext.fast(mt, meta[name], f, slow) end -- Lua passes two operands
    -- a:f_(b): written into a (a tensor, b a tensor or a number); what
    -- fails goes to the C binding, which raises it under f_'s name
    local slow_ = C[name .. "_"]
    if slow_ then
      local function f_(a, b)
        local ha = live(a)
        if ha then
          local hb = live(b)
          if hb then
            if tensors(err, ha, INPLACE, op, ha, hb) == OK then return a end
          elseif type(b) == "number" then
            local x, y = opnd[0], opnd[1]
            x.t, x.dtype = ha, ha.dtype
            scalar(y, b)
            if binary(err, ha, INPLACE, op, x, y) == OK then return a end
          end
        end
        return slow_(a, b)
      end
      ext.fast(nd, name .. "_", f_, slow_)
      ext.fast(methods, name .. "_", f_, slow_)
    end
  end

  -- clamp, where and lerp (C.fternary) into out or in place: each operand
  -- a tensor, a number (C applies the scalar rule) or nil (clamp's
  -- missing bound); new results, other operands and whatever C refuses go
  -- to the classic function, which raises the error.
  local ternary = lib.ternary
  local function usable(v) return v == nil or type(v) == "number" or live(v) ~= nil end
  local function call(o, mode, id, a, b, c)
    if not (usable(a) and usable(b) and usable(c)) then return false end
    local ha, hb, hc = live(a), live(b), live(c)
    local absent = (a == nil and 1 or 0) + (b == nil and 2 or 0) + (c == nil and 4 or 0)
    return ternary(err, o, mode, id, ha, ha and 0 or a or 0, hb, hb and 0 or b or 0,
                   hc, hc and 0 or c or 0, absent) == OK
  end
  for name, id in pairs(C.fternary) do
    local slow, slow_ = C[name], C[name .. "_"]
    local function f(a, b, c, out)
      local ho = out ~= nil and live(out)
      if ho and call(ho, OUT, id, a, b, c) then return out end
      return slow(a, b, c, out)
    end
    ext.fast(nd, name, f, slow)
    ext.fast(methods, name, f, slow)
    if slow_ then
      local function f_(a, b, c)
        local ha = live(a)
        if ha and call(ha, INPLACE, id, a, b, c) then return a end
        return slow_(a, b, c)
      end
      ext.fast(nd, name .. "_", f_, slow_)
      ext.fast(methods, name .. "_", f_, slow_)
    end
  end

  -- Unary ops on float32/float64: a new small result, or into out.
  if not small_like then return end
  for _, row in ipairs(unops) do
    local name, op, tobool = row.name, row.id, row.result == "bool"
    local unary = families[row.family].unary
    local slow = C[name]
    local function f(a, out)
      local ha = live(a)
      if ha ~= nil and is_float(ha.dtype) then
        if out == nil then
          local o, r = small_like(tobool and BOOL or ha.dtype, ha)
          if o ~= nil and unary(err, r, OUT, op, ha) == OK then return o end
        else
          local ho = live(out)
          if ho ~= nil and unary(err, ho, OUT, op, ha) == OK then return out end
        end
      end
      return slow(a, out) -- raises what the fast path declined
    end
    ext.fast(nd, name, f, slow)
    ext.fast(methods, name, f, slow)
    local slow_ = C[name .. "_"]
    if slow_ then
      local function f_(a)
        local ha = live(a)
        if ha ~= nil and unary(err, ha, INPLACE, op, ha) == OK then return a end
        return slow_(a)
      end
      ext.fast(nd, name .. "_", f_, slow_)
      ext.fast(methods, name .. "_", f_, slow_)
    end
    if name == "neg" then
      ext.fast(mt, "__unm", function(a) return f(a) end, mt.__unm) -- Lua passes a twice
    end
  end

  -- clone of a small row-major tensor: a new small tensor the core copies
  -- into through the FFI (other layouts, whose strides clone keeps, and
  -- bigger tensors go to the C binding).
  local c_clone = methods.clone
  local function clone(a)
    local ha = live(a)
    if ha ~= nil then
      local o, r = small_like(ha.dtype, ha)
      if o ~= nil and lib.copy(err, r, ha) == OK then return o end
    end
    return c_clone(a)
  end
  ext.fast(nd, "clone", clone, c_clone)
  ext.fast(methods, "clone", clone, c_clone)
end
