-- Constructors of small tensors under LuaJIT: nd.empty, nd.zeros, nd.ones
-- and nd.full of one or two sizes whose elements fit a small tensor
-- (lua/ffi.lua's ext.small_sized: one cdata, no finalizer, no C API call) are
-- made here. Anything else -- more dims, sizes that are not positive
-- integers, unknown dtypes, bigger tensors -- goes to the C binding,
-- which makes it or raises the error naming the function. Like
-- lua/views.lua, no loops.
return function(ext)
  if not ext.small_sized then return end
  local nd, small_sized, lib, err = ext.nd, ext.small_sized, ext.lib, ext.err
  -- dims is read again after the object's allocation, which may run a
  -- finalizer that calls nd (lua/ops.lua's busy): that call's C makes it.
  local dims, busy = ext.ffi.new("int64_t[2]"), false
  local function small(dtype, n, a, b)
    if busy then return nil end
    busy = true
    dims[0], dims[1] = a, b or 1
    local o, h = small_sized(dtype, n, dims)
    busy = false
    return o, h
  end
  local type, floor, rawget = type, math.floor, rawget
  local DTYPE, OK = ext.dtype_id, ext.consts.status.OK
  local FLOAT64, BOOL = DTYPE.float64, DTYPE.bool -- the defaults, as lconstruct.c's

  local function whole(v) return type(v) == "number" and v >= 1 and v < 2 ^ 53 and v == floor(v) end
  -- Sizes as a table of one or two (no holes), or nil; read raw, as C
  -- reads them.
  local function listed(s)
    local a, b = rawget(s, 1), rawget(s, 2)
    if rawget(s, 3) ~= nil or #s ~= (b == nil and 1 or 2) or not whole(a) then return nil end
    if b == nil then return 1, a end
    if not whole(b) then return nil end
    return 2, a, b
  end
  -- (s1, s2, s3, s4) of empty/zeros/ones: a new small tensor or nil.
  local function shaped(s1, s2, s3, s4)
    local n, a, b, d
    if type(s1) == "table" then
      if s3 ~= nil then return nil end
      n, a, b = listed(s1)
      d = s2
    elseif whole(s1) then
      if whole(s2) then
        if s4 ~= nil then return nil end
        n, a, b, d = 2, s1, s2, s3
      else
        if s3 ~= nil then return nil end
        n, a, d = 1, s1, s2
      end
    end
    if n == nil then return nil end
    local dtype = FLOAT64
    if d ~= nil then
      dtype = DTYPE[d]
      if dtype == nil then return nil end
    end
    local o, h = small(dtype, n, a, b)
    return o, h
  end

  -- v as the core writes it (C's rule: nd_internal.h's nd_fill_number).
  local function fill(h, v)
    if type(v) == "boolean" then return lib.fill_i64(err, h, v and 1 or 0) == OK end
    return lib.fill_number(err, h, v) == OK
  end

  local c_ones, c_full = nd.ones, nd.full
  -- empty and zeros: every new small tensor is zero-filled already.
  local function zeroed(c)
    return function(...)
      local o = shaped(...)
      if o == nil then return c(...) end
      return o
    end
  end
  local empty, zeros = zeroed(nd.empty), zeroed(nd.zeros)
  local function ones(...)
    local o, h = shaped(...)
    if o == nil or not fill(h, 1) then return c_ones(...) end
    return o
  end
  local function full(s, v, d, x)
    local tv = type(v)
    if type(s) == "table" and x == nil and (tv == "number" or tv == "boolean") then
      local n, a, b = listed(s)
      local dtype = d == nil and (tv == "boolean" and BOOL or FLOAT64) or DTYPE[d]
      if n ~= nil and dtype ~= nil then
        local o, h = small(dtype, n, a, b)
        if o ~= nil and fill(h, v) then return o end
      end
    end
    return c_full(s, v, d, x)
  end
  ext.fast(nd, "empty", empty)
  ext.fast(nd, "zeros", zeros)
  ext.fast(nd, "ones", ones)
  ext.fast(nd, "full", full)
end
