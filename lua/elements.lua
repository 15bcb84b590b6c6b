-- One element at a time under LuaJIT: t:get, t:set, t:item, t[i] and
-- M[{i, j}] read and write through the FFI (a few ns instead of a classic
-- C API call), and int64 elements come back exact: a number up to 2^53, a
-- boxed int64_t beyond (1LL << 60), as the contract says. Values written
-- may be int64_t/uint64_t cdata too. Whenever a position is out of range,
-- not an integer, or a value needs a conversion rule (a fraction into an
-- integer dtype, an integer beyond the dtype), the C function is called
-- instead: it raises the error or applies the rule, so both paths agree.
-- Outside LuaJIT this file does nothing (PUC 5.3+ pushes integers).
return function(ext)
  local ffi = ext.ffi
  if not ffi then return end
  local nd, methods, C, mt, lib = ext.nd, ext.methods, ext.C, ext.metatable, ext.lib
  local writable = ext.writable
  local live = ext.live
  local c_get, c_set, c_item, c_totable = C.get, C.set, C.item, C.totable
  local select, type, tonumber = select, type, tonumber
  local floor, cast, istype = math.floor, ffi.cast, ffi.istype

  -- Per dtype id (ext.dtype: nd.h's ND_DTYPES): its elements' pointer
  -- type (bool is read as its byte) and for integers the range of exact
  -- integral writes (int64's: the numbers exact in a double).
  local EXACT = 2 ^ 53
  local ptr, lo, hi = {}, {}, {}
  for id, d in pairs(ext.dtype) do
    ptr[id] = ffi.typeof(d.ctype .. " *")
    local bits = 8 * d.size
    if d.kind == "i" then
      lo[id], hi[id] = -math.min(2 ^ (bits - 1), EXACT), math.min(2 ^ (bits - 1) - 1, EXACT)
    elseif d.kind == "u" then
      lo[id], hi[id] = 0, math.min(2 ^ bits - 1, EXACT)
    end
  end
  local INT64 = ext.dtype_id.int64 -- read and written exactly as int64_t cdata
  local BOOL, is_float = ext.dtype_id.bool, ext.is_float
  local int64_t, uint64_t = ffi.typeof("int64_t"), ffi.typeof("uint64_t")

  -- The element offset of positions i1..in (or of the table k's entries),
  -- or nil when they are not n in-range integers (then C explains).
  local function step(h, d, i)
    if type(i) ~= "number" or i ~= floor(i) then return nil end
    local size = tonumber(h.size[d])
    if i < 0 then i = i + size + 1 end
    if i < 1 or i > size then return nil end
    return (i - 1) * h.stride[d]
  end
  -- One and two dims without a loop: a loop this short fails as a root
  -- trace when the code around it is hot, and every trace through it
  -- aborts (see lua/views.lua).
  local function offset(h, n, i1, i2, ...)
    if n ~= h.ndim then return nil end
    if n == 0 then return h.offset end
    local s1 = step(h, 0, i1)
    if not s1 then return nil end
    if n == 1 then return h.offset + s1 end
    local s2 = step(h, 1, i2)
    if not s2 then return nil end
    local off = h.offset + s1 + s2
    for d = 2, n - 1 do
      local s = step(h, d, (select(d - 1, ...)))
      if not s then return nil end
      off = off + s
    end
    return off
  end
  -- The entries of an index or range table as lviews.c's entries() reads
  -- them: those before the first nil, or nil when an entry follows that
  -- nil at or before position upto (C names it). Probed one by one, never
  -- by `#`, which makes LuaJIT build m[{i, j}]'s table; written out so
  -- that short tables take no loop (an inner loop aborts the trace).
  local rawget = rawget
  local function entries(k, upto)
    local n = rawget(k, 1) == nil and 0 or rawget(k, 2) == nil and 1
      or rawget(k, 3) == nil and 2 or rawget(k, 4) == nil and 3 or nil
    if n == nil then
      n = 4
      while rawget(k, n + 1) ~= nil do n = n + 1 end
    end
    if upto >= n + 2 and rawget(k, n + 2) ~= nil then return nil end
    if upto >= n + 3 and rawget(k, n + 3) ~= nil then return nil end
    if upto >= n + 4 and rawget(k, n + 4) ~= nil then return nil end
    for p = n + 5, upto do
      if rawget(k, p) ~= nil then return nil end
    end
    return n
  end
  ext.entries = entries

  local function offset_of(h, k, n) -- n >= 1
    local s1 = step(h, 0, k[1])
    if not s1 then return nil end
    if n == 1 then return h.offset + s1 end
    local s2 = step(h, 1, k[2])
    if not s2 then return nil end
    local off = h.offset + s1 + s2
    for d = 2, n - 1 do
      local s = step(h, d, k[d + 1])
      if not s then return nil end
      off = off + s
    end
    return off
  end

  local function read(h, off)
    local dt = h.dtype
    local v = cast(ptr[dt], h.storage.data)[off]
    if dt == BOOL then return v ~= 0 end
    if dt == INT64 then
      if v >= -EXACT and v <= EXACT then return tonumber(v) end
      return v
    end
    return v
  end

  local function is_int(v)
    return type(v) == "cdata" and (istype(int64_t, v) or istype(uint64_t, v))
  end

  -- Writes v at off when no conversion rule is involved; false otherwise.
  local function write(h, off, v)
    local dt, tv = h.dtype, type(v)
    local p = cast(ptr[dt], h.storage.data)
    if dt == BOOL then
      if tv ~= "boolean" then return false end
      p[off] = v and 1 or 0
    elseif is_float(dt) then
      if tv ~= "number" then return false end
      p[off] = v
    elseif tv == "number" then
      if v ~= floor(v) or v < lo[dt] or v > hi[dt] then return false end
      p[off] = v
    elseif dt == INT64 and is_int(v) then
      p[off] = cast(int64_t, v) -- wraps a uint64_t, as integer casts do
    else
      return false
    end
    return true
  end

  local function get(t, ...)
    local h = live(t)
    if h then
      local off = offset(h, select("#", ...), ...)
      if off then return read(h, off) end
    end
    return c_get(t, ...)
  end

  -- set(t, i1, ..., in, value)
  local function set(t, ...)
    local n = select("#", ...)
    local h = live(t)
    if h and n >= 1 then
      local off = offset(h, n - 1, ...)
      if off and writable(t, h) and write(h, off, (select(n, ...))) then
        return t
      end
      local v = select(n, ...)
      if is_int(v) then -- the C function takes numbers: let it check, then write exactly
        local args = { ... }
        args[n] = tonumber(v)
        c_set(t, unpack(args, 1, n))
        if h.dtype == INT64 then cast(ptr[INT64], h.storage.data)[off] = cast(int64_t, v) end
        return t
      end
    end
    return c_set(t, ...)
  end

  local function item(t)
    local h = live(t)
    if h then
      local one = true
      for d = 0, h.ndim - 1 do one = one and h.size[d] == 1 end
      if one then return read(h, h.offset) end
    end
    return c_item(t)
  end

  -- totable keeps int64 exact: the C table, then big entries read again.
  local function totable(t, ...)
    local r = c_totable(t, ...) -- C raises on arguments it does not take
    local h = live(t)
    if h.dtype ~= INT64 or type(r) ~= "table" then return r end
    local idx, nd_ = {}, h.ndim
    local function fix(tab, d)
      for i = 1, #tab do
        idx[d] = i
        local v = tab[i]
        if d < nd_ then
          fix(v, d + 1)
        elseif v >= EXACT or v <= -EXACT then
          tab[i] = read(h, offset_of(h, idx, nd_))
        end
      end
    end
    fix(r, 1)
    return r
  end

  -- The classic paths, taken while the FFI paths are off (JIT off,
  -- nd.use_ffi(false)): the C functions, except that an int64 beyond 2^53
  -- (which C reads as a rounded number) is read again exactly, and an
  -- int64_t/uint64_t value (which C does not take) is written by the FFI.
  local function exact(v) return type(v) ~= "number" or v ~= v or (v < EXACT and v > -EXACT) end
  local function get_slow(t, ...)
    local v = c_get(t, ...)
    if exact(v) then return v end
    return get(t, ...)
  end
  local function item_slow(t, ...)
    local v = c_item(t, ...) -- C raises on arguments it does not take
    if exact(v) then return v end
    return item(t)
  end
  local function set_slow(t, ...)
    if type((select(select("#", ...), ...))) == "cdata" then return set(t, ...) end
    return c_set(t, ...)
  end

  -- t[i] on a 1-D tensor and M[{i, j}] selecting every dim read one
  -- element; everything else (views, errors) goes to the C index. Method
  -- names are looked up first, as in nd.lua's __index, which this replaces.
  local c_index = C.index
  local function index_fast(t, k)
    local tk = type(k)
    if tk ~= "table" then -- a table key would have to be built to look up
      local m = methods[k]
      if m ~= nil then return m end
      if tk == "string" then return nil end
    end
    local h = live(t)
    if not h then return c_index(t, k) end
    if tk == "number" then
      local nd_ = h.ndim
      if nd_ == 1 then
        local off = offset(h, 1, k)
        if off then return read(h, off) end
      elseif nd_ > 1 and k == floor(k) then -- a view: lua/views.lua's FFI view
        local drop, n = ext.view_drop, tonumber(h.size[0])
        local j = (k > 0 and k <= n) and k - 1 or (k < 0 and k >= -n) and n + k or nil
        if drop and j then return (drop(t, h, 0, j)) end
      end
    elseif tk == "table" then
      local n = entries(k, h.ndim + 1)
      if n == h.ndim and n > 0 then
        local off = offset_of(h, k, n)
        if off then return read(h, off) end
      end
      local view = ext.view_index -- lua/views.lua's FFI view, or nil
      if view and n then
        local v = view(t, h, k, n)
        if v ~= nil then return v end
      end
    end
    return c_index(t, k)
  end

  local index_slow = mt.__index
  ext.fast(mt, "__index", index_fast, function(t, k)
    if type(k) == "string" then return methods[k] end -- a method: one call less
    local v = index_slow(t, k)
    if exact(v) then return v end
    return index_fast(t, k)
  end)

  -- t[i] = v on a 1-D tensor, and M[{i, j}] = v selecting every dim, write
  -- one element the same way.
  local newindex = mt.__newindex
  local function newindex_fast(t, k, v)
    local tk = type(k)
    if tk == "number" then
      local h = live(t)
      if h and h.ndim == 1 then
        local off = offset(h, 1, k)
        if off and writable(t, h) and write(h, off, v) then return end
        if off and is_int(v) then return set(t, k, v) end
      end
    elseif tk == "table" then
      local h = live(t)
      local n = h and entries(k, h.ndim + 1)
      if n and n == h.ndim and n > 0 then
        local off = offset_of(h, k, n)
        if off and writable(t, h) and write(h, off, v) then return end
      end
    end
    return newindex(t, k, v)
  end
  ext.fast(mt, "__newindex", newindex_fast, function(t, k, v)
    if type(v) == "cdata" then return newindex_fast(t, k, v) end
    return newindex(t, k, v)
  end)

  for name, f in pairs({ get = { get, get_slow }, set = { set, set_slow },
                         item = { item, item_slow } }) do
    ext.fast(nd, name, f[1], f[2])
    ext.fast(methods, name, f[1], f[2])
  end
  nd.totable, methods.totable = totable, totable -- C does the work either way
end
