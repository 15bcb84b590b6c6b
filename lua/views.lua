-- The common views under LuaJIT, made in compiled code: t(), transpose,
-- narrow, select, m[i], m[{...}], view (of a contiguous tensor), unsqueeze,
-- squeeze, permute and expand build an FFI view (lua/ffi.lua's new_view)
-- instead of calling the C binding, which costs a C API call and a
-- 320-byte userdata with an environment: about half of m:t(). Anything
-- unusual (other ranks, arguments out of range or not integers, released
-- tensors) goes to the C binding, which makes the same view or raises the
-- error naming the function. The views are the same as C's: the specs run
-- every view through both paths.
return function(ext)
  if not ext.new_view then return end
  local nd, methods, live, new_view = ext.nd, ext.methods, ext.live, ext.new_view
  local type, floor, tonumber, sel, bit = type, math.floor, tonumber, select, require("bit")

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

  -- The sizes (or dims) given as varargs or as one table, copied into a
  -- scratch table (no closure: closures stop LuaJIT's compiler): n, or nil
  -- past 16. Read before anything else can run.
  local scratch = {}
  local function sizes_of(...)
    local n, s1 = sel("#", ...), ...
    if n == 1 and type(s1) == "table" then
      n = #s1
      if n > 16 then return nil end
      for i = 1, n do scratch[i] = s1[i] end
    else
      if n > 16 then return nil end
      for i = 1, n do scratch[i] = (sel(i, ...)) end
    end
    return n
  end

  -- view(sizes) of a contiguous tensor: row-major strides over the same
  -- elements (one size may be -1). Other layouts go to C's stride rules.
  local c_view = methods.view
  local function view(a, ...)
    local h, n = live(a), sizes_of(...)
    if h == nil or not n or n == 0 then return c_view(a, ...) end
    local numel, expect = 1, 1
    for i = h.ndim - 1, 0, -1 do -- contiguous: size-1 dims' strides are free
      local d = tonumber(h.size[i])
      if d ~= 1 and tonumber(h.stride[i]) ~= expect then return c_view(a, ...) end
      expect, numel = expect * d, numel * d
    end
    local known, infer = 1, nil
    for i = 1, n do
      local d = scratch[i]
      if type(d) ~= "number" or d ~= floor(d) or d < -1 or d > 2 ^ 53 then return c_view(a, ...) end
      if d == -1 then
        if infer then return c_view(a, ...) end
        infer = i
      else
        known = known * d
      end
    end
    if numel == 0 then return c_view(a, ...) end -- empty: C's strides
    if infer then
      if known == 0 or numel % known ~= 0 then return c_view(a, ...) end
      scratch[infer] = numel / known
    elseif known ~= numel then
      return c_view(a, ...)
    end
    local v, vh = new_view(a, h)
    vh.ndim = n
    local stride = 1
    for i = n, 1, -1 do
      vh.size[i - 1], vh.stride[i - 1] = scratch[i], stride
      stride = stride * scratch[i]
    end
    return v
  end

  -- m[{...}] (a table of numbers, {} and ranges {first [, last [, step]]})
  -- when every bound lies inside its dim and every range is non-empty;
  -- nil otherwise, and lua/elements.lua's index then asks C (empty ranges,
  -- errors). Numbers drop their dim, ranges keep it.
  local function bound(b, n) -- 1..n or -n..-1 as 0-based, else nil
    if type(b) ~= "number" or b ~= floor(b) then return nil end
    if b > 0 and b <= n then return b - 1 end
    if b < 0 and b >= -n then return n + b end
    return nil
  end
  function ext.view_index(a, h, key)
    local n = #key
    if n == 0 or n > h.ndim then return nil end
    local d, nd_ = 0, h.ndim
    local v, vh
    for k = 1, n do
      local e = key[k]
      local size = v and tonumber(vh.size[d]) or tonumber(h.size[d])
      if type(e) == "number" then
        local j = bound(e, size)
        if j == nil or nd_ == 1 then return nil end -- a 0-d result: C
        if v == nil then v, vh = new_view(a, h) end
        vh.offset = vh.offset + j * vh.stride[d]
        for i = d, nd_ - 2 do vh.size[i], vh.stride[i] = vh.size[i + 1], vh.stride[i + 1] end
        nd_ = nd_ - 1
        vh.ndim = nd_
      elseif type(e) == "table" then
        local m = #e
        if m > 3 then return nil end
        if m > 0 then
          local first = bound(e[1], size)
          local last = m == 1 and first or bound(e[2], size)
          local step = m == 3 and e[3] or 1
          if first == nil or last == nil or type(step) ~= "number" or step ~= floor(step)
              or step == 0 or step > size or step < -size then return nil end
          local span = step > 0 and last - first or first - last
          if span < 0 then return nil end
          local count = floor(span / (step > 0 and step or -step)) + 1
          if v == nil then v, vh = new_view(a, h) end
          vh.offset = vh.offset + first * vh.stride[d]
          vh.size[d], vh.stride[d] = count, vh.stride[d] * step
        end
        d = d + 1
      else
        return nil
      end
    end
    return v or (new_view(a, h)) -- only {}s: the same view
  end

  local function numel(h)
    local m = 1
    for i = 0, h.ndim - 1 do m = m * tonumber(h.size[i]) end
    return m
  end

  -- unsqueeze(d): a size-1 dim at d (1..ndim+1, or from the end).
  local c_unsqueeze = methods.unsqueeze
  local function unsqueeze(a, d)
    local h = live(a)
    local j = h ~= nil and h.ndim < 16 and pos(d, h.ndim + 1) or nil
    if j == nil or numel(h) == 0 then return c_unsqueeze(a, d) end -- empty: C's overflow rule
    local v, vh = new_view(a, h)
    local n = h.ndim
    for i = n, j + 1, -1 do vh.size[i], vh.stride[i] = h.size[i - 1], h.stride[i - 1] end
    vh.size[j] = 1
    vh.stride[j] = j == n and 1 or h.size[j] * h.stride[j]
    vh.ndim = n + 1
    return v
  end

  -- squeeze([d]): drops dim d if its size is 1 (every size-1 dim without d).
  local c_squeeze = methods.squeeze
  local function squeeze(a, d)
    local h = live(a)
    if h == nil or h.ndim == 0 then return c_squeeze(a, d) end
    local j
    if d ~= nil then
      j = pos(d, h.ndim)
      if j == nil then return c_squeeze(a, d) end
    end
    local v, vh = new_view(a, h)
    local k = 0
    for i = 0, h.ndim - 1 do
      if h.size[i] ~= 1 or (j ~= nil and i ~= j) then
        vh.size[k], vh.stride[k] = h.size[i], h.stride[i]
        k = k + 1
      end
    end
    vh.ndim = k
    return v
  end

  -- permute(p): dims in the order p (a permutation, 1-based or from the end).
  local c_permute = methods.permute
  local function permute(a, ...)
    local h = live(a)
    if h == nil then return c_permute(a, ...) end
    local n = sizes_of(...)
    if n ~= h.ndim or n == 0 then return c_permute(a, ...) end
    local seen = 0
    for i = 1, n do
      local j = pos(scratch[i], n)
      if j == nil or bit.band(seen, bit.lshift(1, j)) ~= 0 then return c_permute(a, ...) end
      seen = bit.bor(seen, bit.lshift(1, j))
    end
    local v, vh = new_view(a, h)
    for i = 1, n do
      local j = pos(scratch[i], n)
      vh.size[i - 1], vh.stride[i - 1] = h.size[j], h.stride[j]
    end
    return v
  end

  -- expand(sizes): size-1 dims (and new leading ones) repeated, stride 0;
  -- -1 keeps a dim.
  local c_expand = methods.expand
  local function expand(a, ...)
    local h = live(a)
    if h == nil then return c_expand(a, ...) end
    local n = sizes_of(...)
    local lead = n and n - h.ndim or -1
    if lead < 0 then return c_expand(a, ...) end
    local total = 1
    for i = 1, n do
      local s, j = scratch[i], i - 1 - lead
      if type(s) ~= "number" or s ~= floor(s) or s < -1 or s > 2 ^ 31 then return c_expand(a, ...) end
      if j < 0 then
        if s < 0 then return c_expand(a, ...) end
      elseif s ~= -1 and s ~= h.size[j] and h.size[j] ~= 1 then
        return c_expand(a, ...)
      end
      total = total * (s == -1 and tonumber(h.size[j]) or s)
    end
    if total > 2 ^ 53 then return c_expand(a, ...) end
    local v, vh = new_view(a, h)
    for i = n, 1, -1 do
      local s, j = scratch[i], i - 1 - lead
      if j < 0 then
        vh.size[i - 1], vh.stride[i - 1] = s, 0
      elseif s == -1 or s == h.size[j] then
        vh.size[i - 1], vh.stride[i - 1] = h.size[j], h.stride[j]
      else
        vh.size[i - 1], vh.stride[i - 1] = s, 0
      end
    end
    vh.ndim = n
    return v
  end

  for name, f in pairs({ t = t, transpose = transpose, narrow = narrow, select = select,
                         view = view, unsqueeze = unsqueeze, squeeze = squeeze,
                         permute = permute, expand = expand }) do
    ext.fast(nd, name, f)
    ext.fast(methods, name, f)
  end
end
