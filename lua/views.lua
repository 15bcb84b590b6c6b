-- The common views under LuaJIT, made in compiled code: t(), transpose,
-- narrow, select and m[i] build an FFI view (lua/ffi.lua's new_view)
-- instead of calling the C binding, which costs a C API call and a
-- 320-byte userdata with an environment: about half of m:t(). Anything
-- unusual (other ranks, arguments out of range or not integers, released
-- tensors) goes to the C binding, which makes the same view or raises the
-- error naming the function. The views are the same as C's: the specs run
-- every view through both paths.
return function(ext)
  if not ext.new_view then return end
  local nd, methods, live, new_view = ext.nd, ext.methods, ext.live, ext.new_view
  local type, floor = type, math.floor

  -- A dim or index i of n (1..n or -n..-1) as 0-based, or nil.
  local function pos(i, n)
    if type(i) ~= "number" or i ~= floor(i) then return nil end
    if i > 0 and i <= n then return i - 1 end
    if i < 0 and i >= -n then return n + i end
    return nil
  end

  local c_t = methods.t
  local function t(a)
    local h = live(a)
    if h == nil or h.ndim ~= 2 then return c_t(a) end
    local v, vh = new_view(a, h)
    vh.size[0], vh.size[1] = h.size[1], h.size[0]
    vh.stride[0], vh.stride[1] = h.stride[1], h.stride[0]
    return v
  end

  local c_transpose = methods.transpose
  local function transpose(a, d1, d2)
    local h = live(a)
    local i, j
    if h ~= nil and h.ndim > 0 then i, j = pos(d1, h.ndim), pos(d2, h.ndim) end
    if i == nil or j == nil then return c_transpose(a, d1, d2) end
    local v, vh = new_view(a, h)
    vh.size[i], vh.size[j] = h.size[j], h.size[i]
    vh.stride[i], vh.stride[j] = h.stride[j], h.stride[i]
    return v
  end

  -- narrow(d, start, length): start from 1 (or from the end when < 0).
  local c_narrow = methods.narrow
  local function narrow(a, d, start, len)
    local h = live(a)
    local i = h ~= nil and h.ndim > 0 and pos(d, h.ndim) or nil
    if i == nil or type(start) ~= "number" or type(len) ~= "number"
        or start ~= floor(start) or len ~= floor(len) or len < 0 then
      return c_narrow(a, d, start, len)
    end
    local n = tonumber(h.size[i])
    local s = start > 0 and start - 1 or (start < 0 and n + start or -1)
    if s < 0 or s > n or len > n - s then return c_narrow(a, d, start, len) end
    local v, vh = new_view(a, h)
    if len > 0 then vh.offset = h.offset + s * h.stride[i] end
    vh.size[i] = len
    return v
  end

  -- select(d, i) and m[i]: dim d dropped at index i.
  local function drop(a, h, d, k)
    local v, vh = new_view(a, h)
    vh.offset = h.offset + k * h.stride[d]
    for j = d, h.ndim - 2 do
      vh.size[j], vh.stride[j] = h.size[j + 1], h.stride[j + 1]
    end
    vh.ndim = h.ndim - 1
    vh.size[h.ndim - 1], vh.stride[h.ndim - 1] = 0, 0
    return v
  end
  ext.view_drop = drop -- lua/elements.lua's m[i]: loaded before this file, looks it up per call

  local c_select = methods.select
  local function select(a, d, k)
    local h = live(a)
    local i = h ~= nil and h.ndim > 0 and pos(d, h.ndim) or nil
    local j = i ~= nil and pos(k, tonumber(h.size[i])) or nil
    if j == nil then return c_select(a, d, k) end
    return drop(a, h, i, j)
  end

  for name, f in pairs({ t = t, transpose = transpose, narrow = narrow, select = select }) do
    ext.fast(nd, name, f)
    ext.fast(methods, name, f)
  end
end
