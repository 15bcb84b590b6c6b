-- One element at a time under LuaJIT: t:get, t:set, t:item, t[i] and
-- M[{i, j}] read and write through the FFI (a few ns instead of a classic
-- C API call), and int64 and uint64 elements come back exact: a number up
-- to 2^53, a boxed int64_t / uint64_t beyond (1LL << 60, as LuaJIT's FFI
-- reads them), as the contract says. Values written may be
-- int64_t/uint64_t cdata too; every write follows C's rule
-- (nd_scalar_fits: a value the dtype cannot hold raises). C finds the element (src/lua/lffi.c's
-- offset: up to four positions, the classic binding's rule) and writes it
-- (store: set's conversion); when a position does not name an element,
-- the classic function is called instead and raises the error.
-- Outside LuaJIT this file does nothing (PUC 5.3+ pushes integers).
return function(ext)
  local ffi = ext.ffi
  if not ffi then return end
  local nd, methods, C, mt, lib = ext.nd, ext.methods, ext.C, ext.metatable, ext.lib
  local err = ext.ffi.new(ext.ffi.typeof(ext.err)) -- unnamed: its message is raised as is
  local writable, live = ext.writable, ext.live
  local offset, store, store_i64 = lib.offset, lib.store, lib.store_i64
  local c_get, c_set, c_item, c_totable = C.get, C.set, C.item, C.totable
  local select, type, tonumber, rawget = select, type, tonumber, rawget
  local cast, istype = ffi.cast, ffi.istype

  -- Per dtype id (ext.dtype: nd.h's ND_DTYPES): its elements' pointer
  -- type (bool is read as its byte).
  local EXACT = 2 ^ 53
  local ptr = {}
  for id, d in pairs(ext.dtype) do ptr[id] = ffi.typeof(d.ctype .. " *") end
  -- int64 and uint64: read and written exactly
  local INT64, UINT64, BOOL = ext.dtype_id.int64, ext.dtype_id.uint64, ext.dtype_id.bool
  -- float16 and bfloat16 elements are their bits: C converts them
  local F16, BF16 = ext.dtype_id.float16, ext.dtype_id.bfloat16
  local half_to_float, bf16_to_float = lib.half_to_float, lib.bf16_to_float
  local int64_t, uint64_t = ffi.typeof("int64_t"), ffi.typeof("uint64_t")

  -- The offset of the element at (i1, ..., in) of h, or -1.
  local function at(h, n, a, b, c, d)
    if n > 4 then return -1 end
    if n < 4 then d = 0 end
    if n < 3 then c = 0 end
    if n < 2 then b = 0 end
    if n < 1 then a = 0 end
    if type(a) ~= "number" or type(b) ~= "number" or type(c) ~= "number"
        or type(d) ~= "number" then
      return -1
    end
    return offset(h, n, a, b, c, d)
  end
  -- ... of the entries of the table k, read raw as lviews.c reads them.
  local function at_table(h, k)
    local n = h.ndim
    if n == 0 or n > 4 or rawget(k, n + 1) ~= nil then return -1 end
    return at(h, n, rawget(k, 1), rawget(k, 2), rawget(k, 3), rawget(k, 4))
  end

  -- Element off of the elements of dtype dt at p, as a Lua value.
  local function value(dt, p, off)
    local v = cast(ptr[dt], p)[off]
    if dt == BOOL then return v ~= 0 end
    if dt == INT64 and v >= -EXACT and v <= EXACT then return tonumber(v) end
    if dt == UINT64 and v <= EXACT then return tonumber(v) end
    if dt == F16 then return tonumber(half_to_float(v)) end
    if dt == BF16 then return tonumber(bf16_to_float(v)) end
    return v
  end
  local function read(h, off) return value(h.dtype, h.storage.data, off) end
  ext.value = value

  -- Writes v (a number, boolean or 64-bit integer cdata) at off; false
  -- for anything else, or a number the dtype cannot hold (the classic
  -- function raises); a cdata it cannot hold raises C's message here.
  local function write(h, off, v)
    local tv = type(v)
    if tv == "number" then
      return store(err, h, off, v) == 0
    elseif tv == "boolean" then
      return store(err, h, off, v and 1 or 0) == 0
    elseif tv == "cdata" and (istype(int64_t, v) or istype(uint64_t, v)) then
      if store_i64(err, h, off, v, istype(uint64_t, v) and 1 or 0) ~= 0 then
        error(ffi.string(err.msg), 3)
      end
      return true
    end
    return false
  end

  local function get(t, ...)
    local h = live(t)
    if h then
      local off = at(h, select("#", ...), ...)
      if off >= 0 then return read(h, off) end
    end
    return c_get(t, ...)
  end

  -- set(t, i1, ..., in, value)
  local function set(t, ...)
    local n = select("#", ...)
    local h = live(t)
    if h and n >= 1 then
      local off = at(h, n - 1, ...)
      if off >= 0 and writable(t, h) and write(h, off, (select(n, ...))) then return t end
    end
    return c_set(t, ...)
  end

  local function item(t)
    local h = live(t)
    if h then
      local off = offset(h, -1, 0, 0, 0, 0)
      if off >= 0 then return read(h, off) end
    end
    return c_item(t)
  end

  -- totable keeps int64 exact: the C table, then big entries read again
  -- from a row-major copy (element k at k).
  local function totable(t, ...)
    local r = c_totable(t, ...) -- C raises on arguments it does not take
    local dt = live(t).dtype
    if (dt ~= INT64 and dt ~= UINT64) or type(r) ~= "table" then return r end
    local c = t:contiguous()
    local p, k = cast(ptr[dt], lib.data(live(c))), 0
    local function fix(tab)
      for i = 1, #tab do
        local v = tab[i]
        if type(v) == "table" then
          fix(v)
        else
          if v >= EXACT or v <= -EXACT then tab[i] = value(dt, p, k) end
          k = k + 1
        end
      end
    end
    fix(r)
    return r
  end

  -- The classic paths, taken while the FFI paths are off (JIT off,
  -- nd.use_ffi(false)): the C functions, except that an int64 beyond 2^53
  -- (which C reads as a rounded number) is read again exactly, and an
  -- int64_t/uint64_t value (which C does not take) is written by the FFI.
  local function exact(v) return type(v) ~= "number" or v ~= v or (v < EXACT and v > -EXACT) end
  ext.exact = exact
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
    local n = select("#", ...)
    if n > 0 and type((select(n, ...))) == "cdata" then return set(t, ...) end
    return c_set(t, ...)
  end

  -- t[i] on a 1-D tensor and M[{i, j}] selecting every dim read one
  -- element, t[i] of more dims is lua/views.lua's view; everything else
  -- goes to the C index. Method names are looked up first, as in nd.lua's
  -- __index, which this replaces.
  local c_index = C.index
  local function index_fast(t, k)
    local tk = type(k)
    if tk ~= "table" then -- a table key would have to be built to look up
      local m = methods[k]
      if m ~= nil then return m end
      if tk == "string" then return nil end
    end
    local h = live(t)
    if h and tk == "number" then
      if h.ndim == 1 then
        local off = offset(h, 1, k, 0, 0, 0)
        if off >= 0 then return read(h, off) end
      elseif h.ndim > 1 and ext.view_index then
        local v = ext.view_index(t, h, k)
        if v ~= nil then return v end
      end
    elseif h and tk == "table" then
      local off = at_table(h, k)
      if off >= 0 then return read(h, off) end
      if ext.view_table then
        local v = ext.view_table(t, h, k)
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
    local h = live(t)
    if h then
      local tk, off = type(k), -1
      if tk == "number" and h.ndim == 1 then
        off = offset(h, 1, k, 0, 0, 0)
      elseif tk == "table" then
        off = at_table(h, k)
      end
      if off >= 0 and writable(t, h) and write(h, off, v) then return end
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
