-- The common views under LuaJIT, made in compiled code: t(), transpose,
-- narrow, select, m[i], unsqueeze, squeeze(d) and view (sizes of at most
-- two dims, of a contiguous tensor of at most two) build an FFI view
-- (lua/ffi.lua's new_view) instead of calling the C binding, which costs a
-- C API call and a 320-byte userdata with an environment: about half of
-- m:t(). Anything else (other ranks or forms, arguments out of range or
-- not integers, released tensors) goes to the C binding, which makes the
-- same view or raises the error naming the function.
--
-- No loops here: a short loop inside a fast path becomes hot before the
-- code around it, fails as a root trace ("leaving loop in root trace"),
-- gets blacklisted, and then every trace through it aborts (a permute
-- and expand written with loops made unrelated cases 5x slower). Dims are
-- moved with ffi.copy instead.
return function(ext)
  if not ext.new_view then return end
  local nd, methods, live, new_view = ext.nd, ext.methods, ext.live, ext.new_view
  local type, floor, tonumber, copy = type, math.floor, tonumber, ext.ffi.copy
  local MAX_DIMS = ext.consts.MAX_DIMS

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

  -- select(d, i) and m[i]: dim d dropped at index k.
  local function drop(a, h, d, k)
    local v, vh = new_view(a, h)
    local rest = h.ndim - 1 - d
    vh.offset = h.offset + k * h.stride[d]
    if rest > 0 then
      copy(vh.size + d, h.size + d + 1, 8 * rest)
      copy(vh.stride + d, h.stride + d + 1, 8 * rest)
    end
    vh.ndim = h.ndim - 1
    return v, vh
  end
  ext.view_drop = drop -- lua/elements.lua's m[i]: loaded before this file, looks it up per call

  -- m[{...}] with one or two entries (lua/elements.lua asks, as for
  -- m[i]): entry e on dim d of h, read as lviews.c's apply_index reads it
  -- (raw, its entries as ext.entries counts them), gives the 0-based first position, count
  -- and step of a non-empty range with a positive step, or the position
  -- alone of a number; nil leaves the entry to C (empty or reversed
  -- ranges, bounds past the end, errors).
  local rawget, huge, entries = rawget, 2 ^ 53, ext.entries
  local function entry(h, d, e)
    local n = tonumber(h.size[d])
    if type(e) == "number" then return pos(e, n) end
    if type(e) ~= "table" then return nil end
    local m = entries(e, 4)
    if m == 0 then return 0, n, 1 end
    if m == nil or m > 3 then return nil end
    local a, b, st = rawget(e, 1), rawget(e, m >= 2 and 2 or 1), 1
    if m == 3 then st = rawget(e, 3) end -- false too: C names it
    if type(st) ~= "number" or st < 1 or st ~= floor(st) then return nil end
    local f, l = pos(a, n), pos(b, n)
    if f == nil or l == nil or l < f then return nil end
    local c = floor((l - f) / st) + 1
    local hs = tonumber(h.stride[d]) * st
    if hs >= huge or hs <= -huge then return nil end -- C's overflow rule, left to C
    return f, c, st
  end
  -- Dim d of vh becomes that range of h's dim hd.
  local function range(vh, d, h, hd, f, c, st)
    vh.offset = vh.offset + f * h.stride[hd]
    vh.size[d] = c
    vh.stride[d] = h.stride[hd] * st
  end
  function ext.view_index(t, h, k, n) -- n: ext.entries(k, h.ndim + 1)
    if n < 1 or n > 2 or n > h.ndim then return nil end
    local f1, c1, s1 = entry(h, 0, rawget(k, 1))
    if f1 == nil then return nil end
    if n == 1 then
      if c1 == nil then return (drop(t, h, 0, f1)) end
      local v, vh = new_view(t, h)
      range(vh, 0, h, 0, f1, c1, s1)
      return v
    end
    local f2, c2, s2 = entry(h, 1, rawget(k, 2))
    if f2 == nil then return nil end
    if c1 ~= nil and c2 ~= nil then
      local v, vh = new_view(t, h)
      range(vh, 0, h, 0, f1, c1, s1)
      range(vh, 1, h, 1, f2, c2, s2)
      return v
    end
    if c1 ~= nil then -- a range, then a number: dim 2 goes
      local v, vh = drop(t, h, 1, f2)
      range(vh, 0, h, 0, f1, c1, s1)
      return v
    end
    if c2 ~= nil then -- a number, then a range: dim 1 goes
      local v, vh = drop(t, h, 0, f1)
      range(vh, 0, h, 1, f2, c2, s2)
      return v
    end
    if h.ndim == 2 then return nil end -- an element: lua/elements.lua's
    local v, vh = drop(t, h, 0, f1)
    local rest = h.ndim - 2
    vh.offset = vh.offset + f2 * h.stride[1]
    copy(vh.size, h.size + 2, 8 * rest)
    copy(vh.stride, h.stride + 2, 8 * rest)
    vh.ndim = rest
    return v
  end

  local c_select = methods.select
  local function select(a, d, k)
    local h = live(a)
    local i = h ~= nil and h.ndim > 0 and pos(d, h.ndim) or nil
    local j = i ~= nil and pos(k, tonumber(h.size[i])) or nil
    if j == nil then return c_select(a, d, k) end
    return (drop(a, h, i, j))
  end

  -- unsqueeze(d): a size-1 dim at d (1..ndim+1, or from the end); its
  -- stride is the next dim's extent (1 at the end), as C's.
  local c_unsqueeze = methods.unsqueeze
  local function unsqueeze(a, d)
    local h = live(a)
    local j = h ~= nil and h.ndim < MAX_DIMS and pos(d, h.ndim + 1) or nil
    if j == nil then return c_unsqueeze(a, d) end
    local n = h.ndim
    local st = 1
    if j < n then
      st = tonumber(h.size[j]) * tonumber(h.stride[j])
      if st >= 2 ^ 53 or st <= -2 ^ 53 then return c_unsqueeze(a, d) end -- C's overflow rule
    end
    local v, vh = new_view(a, h)
    if j < n then
      copy(vh.size + j + 1, h.size + j, 8 * (n - j))
      copy(vh.stride + j + 1, h.stride + j, 8 * (n - j))
    end
    vh.size[j], vh.stride[j] = 1, st
    vh.ndim = n + 1
    return v
  end

  -- squeeze(d): drops dim d if its size is 1 (squeeze() goes to C).
  local c_squeeze = methods.squeeze
  local function squeeze(a, d)
    local h = live(a)
    local j = h ~= nil and h.ndim > 0 and pos(d, h.ndim) or nil
    if j == nil then return c_squeeze(a, d) end
    if h.size[j] == 1 then return (drop(a, h, j, 0)) end
    return (new_view(a, h))
  end

  -- view(n [, m]) of a contiguous tensor of at most 2 dims: row-major
  -- strides over the same elements (one size may be -1).
  local c_view = methods.view
  local function whole(s) return type(s) == "number" and s == floor(s) and s >= -1 and s < 2 ^ 53 end
  local function view(a, ...)
    local h = live(a)
    local s1, s2, s3 = ...
    if h == nil or s3 ~= nil or not whole(s1) or (s2 ~= nil and not whole(s2)) then
      return c_view(a, ...)
    end
    local numel
    if h.ndim == 1 then
      if h.stride[0] ~= 1 and h.size[0] ~= 1 then return c_view(a, ...) end
      numel = tonumber(h.size[0])
    elseif h.ndim == 2 then
      local r, c = tonumber(h.size[0]), tonumber(h.size[1])
      if (c ~= 1 and h.stride[1] ~= 1) or (r ~= 1 and tonumber(h.stride[0]) ~= c) then
        return c_view(a, ...)
      end
      numel = r * c
    else
      return c_view(a, ...)
    end
    if numel == 0 then return c_view(a, ...) end -- empty: C's strides
    if s2 == nil then
      if s1 == -1 then s1 = numel end
      if s1 ~= numel then return c_view(a, ...) end
    else
      if s1 == -1 and s2 == -1 then return c_view(a, ...) end
      if s1 == -1 and s2 ~= 0 then s1 = numel / s2 end
      if s2 == -1 and s1 ~= 0 then s2 = numel / s1 end
      if s1 ~= floor(s1) or s2 ~= floor(s2) or s1 * s2 ~= numel then return c_view(a, ...) end
    end
    local v, vh = new_view(a, h)
    if s2 == nil then
      vh.ndim, vh.size[0], vh.stride[0] = 1, s1, 1
    else
      vh.ndim, vh.size[0], vh.stride[0], vh.size[1], vh.stride[1] = 2, s1, s2, s2, 1
    end
    return v
  end

  for name, f in pairs({ t = t, transpose = transpose, narrow = narrow, select = select,
                         view = view, unsqueeze = unsqueeze, squeeze = squeeze }) do
    ext.fast(nd, name, f)
    ext.fast(methods, name, f)
  end
end
