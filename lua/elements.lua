-- int64 elements beyond 2^53 under LuaJIT. A Lua number (a double) holds
-- every integer up to 2^53 exactly, so the C functions' numbers stay the
-- answer there; a larger int64 element is read again through the FFI and
-- comes back as a boxed int64_t (1LL << 60), as the contract says. Values
-- written may be int64_t/uint64_t cdata too (t:set(i, t:get(i)) round-trips).
-- On PUC Lua 5.3+ the C side pushes integers and this file does nothing.
return function(ext)
  local ffi = ext.ffi
  if not ffi then return end
  local nd, methods, C = ext.nd, ext.methods, ext.C
  local header = ext.header
  local INT64 = 3 -- ND_INT64 in nd.h's ND_DTYPES order
  local EXACT = 2 ^ 53
  local int64_t, i64ptr = ffi.typeof("int64_t"), ffi.typeof("int64_t *")
  local c_get, c_set, c_item, c_totable = C.get, C.set, C.item, C.totable
  local c_index, c_newindex = C.index, C.newindex
  local select, type, tonumber = select, type, tonumber

  -- The element at 1-based (or negative) positions; the C call before has
  -- checked them, so only the arithmetic is left.
  local function at(h, ...)
    local off = h.offset
    for d = 0, h.ndim - 1 do
      local i = select(d + 1, ...)
      local n = h.size[d]
      i = i < 0 and n + i or i - 1
      off = off + i * h.stride[d]
    end
    return ffi.cast(i64ptr, h.storage.data)[off]
  end

  local function exact(v) -- an int64_t cdata as a number when exact
    if v >= -EXACT and v <= EXACT then return tonumber(v) end
    return v
  end

  local function big(v)
    return type(v) == "number" and (v >= EXACT or v <= -EXACT)
  end

  local mt = ext.metatable
  local function int64(t)
    return getmetatable(t) == mt and header(t).dtype == INT64
  end

  -- Calls a C function; its error is raised again at the caller's caller,
  -- so messages point at the user's line, not this file.
  local function call(f, ...)
    local ok, v = pcall(f, ...)
    if not ok then error(v, 3) end
    return v
  end

  local function get(t, ...)
    if not int64(t) then return c_get(t, ...) end
    local v = call(c_get, t, ...)
    if big(v) then return exact(at(header(t), ...)) end
    return v
  end

  local function item(t)
    if not int64(t) then return c_item(t) end
    local v = call(c_item, t)
    if big(v) then
      local h = header(t)
      return exact(ffi.cast(i64ptr, h.storage.data)[h.offset])
    end
    return v
  end

  local function is_int(v)
    return type(v) == "cdata" and (ffi.istype(int64_t, v) or
                                   ffi.istype("uint64_t", v))
  end

  -- set(t, i1, ..., in, value): the C call checks positions and
  -- writability (with the value as a double); an int64 tensor then gets
  -- the exact integer.
  local function set(t, ...)
    local n = select("#", ...)
    local v = select(n, ...)
    if not is_int(v) then return c_set(t, ...) end
    local args = { ... }
    args[n] = tonumber(v)
    call(c_set, t, unpack(args, 1, n))
    if int64(t) then
      local h = header(t)
      local off = h.offset
      for d = 0, h.ndim - 1 do
        local i = args[d + 1]
        off = off + (i < 0 and h.size[d] + i or i - 1) * h.stride[d]
      end
      ffi.cast(i64ptr, h.storage.data)[off] = ffi.cast(int64_t, v)
    end
    return t
  end

  -- totable keeps int64 exact: the C table, then big entries fixed up.
  local function totable(t)
    if not int64(t) then return c_totable(t) end
    local r = call(c_totable, t)
    local h = header(t)
    if type(r) ~= "table" then
      return big(r) and item(t) or r
    end
    local nd_ = h.ndim
    local idx = {}
    local function fix(tab, d)
      for i = 1, #tab do
        idx[d] = i
        local v = tab[i]
        if d < nd_ then
          fix(v, d + 1)
        elseif big(v) then
          tab[i] = exact(at(h, unpack(idx, 1, nd_)))
        end
      end
    end
    fix(r, 1)
    return r
  end

  -- t[i] on a 1-D int64 tensor reads one element (the C index has
  -- checked the position).
  local index = mt.__index
  -- So does M[{i, j}] selecting every dim with numbers.
  mt.__index = function(t, k)
    local v = index(t, k)
    if big(v) then
      local h = header(t)
      if h.dtype ~= INT64 then return v end
      if type(k) == "number" and h.ndim == 1 then return exact(at(h, k)) end
      if type(k) == "table" and #k == h.ndim then
        for i = 1, #k do if type(k[i]) ~= "number" then return v end end
        return exact(at(h, unpack(k, 1, #k)))
      end
    end
    return v
  end
  -- t[i] = 1LL << 60 on a 1-D int64 tensor.
  local newindex = mt.__newindex
  mt.__newindex = function(t, k, v)
    if is_int(v) and type(k) == "number" and header(t).ndim == 1 then
      return set(t, k, v)
    end
    return newindex(t, k, v)
  end

  for name, f in pairs({ get = get, set = set, item = item,
                         totable = totable }) do
    nd[name] = f
    methods[name] = f
  end
end
