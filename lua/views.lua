-- The views of C.fviews under LuaJIT (t, transpose, narrow, select,
-- unsqueeze, squeeze, view, expand, permute, movedim, unfold, diagonal,
-- flip, and t[i] of a tensor of 2 or more dims): a view object made here
-- (lua/ffi.lua's new_view) whose header the C core fills through the FFI
-- (src/lua/lffi.c's view: positions and bounds as the classic binding
-- reads them, then the core's own view), instead of a classic C API call.
-- Calls of up to three numbers; anything else, and whatever C declines,
-- goes to the classic function, which makes the view or raises the error
-- naming the function.
return function(ext)
  if not ext.new_view then return end
  local nd, methods, live, new_view, view = ext.nd, ext.methods, ext.live, ext.new_view, ext.lib.view
  local type, select = type, select

  -- How many numbers lead x, y, z with only nils after them, else nil.
  local function numbers(x, y, z)
    if x == nil then return (y == nil and z == nil) and 0 or nil end
    if type(x) ~= "number" then return nil end
    if y == nil then return z == nil and 1 or nil end
    if type(y) ~= "number" then return nil end
    if z == nil then return 2 end
    return type(z) == "number" and 3 or nil
  end

  -- t[i] (lua/elements.lua's __index): the view, or nil.
  local INDEX = ext.C.fviews.index
  function ext.view_index(t, h, i)
    local v, vh = new_view(t)
    if view(vh, h, INDEX, 1, i, 0, 0) == 0 then return v end
    return nil
  end

  -- t[{...}] (lua/elements.lua's __index): up to four entries, each a
  -- number or a range table of up to three numbers, read raw into ent for
  -- C (lffi.c's index: src/lua/lpos.c's rule). Tables with holes or other
  -- values go to the classic function, which reads them itself. The view,
  -- or nil.
  local rawget, index = rawget, ext.lib.index
  local ent, busy = ext.ffi.new("double[16]"), false
  local function entry(e, p)
    if type(e) == "number" then
      ent[p], ent[p + 1] = -1, e
      return true
    end
    if type(e) ~= "table" or rawget(e, 4) ~= nil then return false end
    local a, b, c = rawget(e, 1), rawget(e, 2), rawget(e, 3)
    local m = a == nil and 0 or b == nil and 1 or c == nil and 2 or 3
    if (m == 0 and (b ~= nil or c ~= nil)) or (m == 1 and c ~= nil) then return false end
    if (m > 0 and type(a) ~= "number") or (m > 1 and type(b) ~= "number")
        or (m > 2 and type(c) ~= "number") then
      return false
    end
    ent[p], ent[p + 1], ent[p + 2], ent[p + 3] = m, a or 0, b or 0, c or 0
    return true
  end
  function ext.view_table(t, h, k)
    local k1, k2, k3, k4 = rawget(k, 1), rawget(k, 2), rawget(k, 3), rawget(k, 4)
    local n = k1 == nil and 0 or k2 == nil and 1 or k3 == nil and 2 or k4 == nil and 3 or 4
    if n == 0 or n > h.ndim or (n < 2 and k3 ~= nil) or (n < 3 and k4 ~= nil)
        or rawget(k, 5) ~= nil then
      return nil
    end
    -- busy from ent's filling to C's reading it: a finalizer that calls
    -- nd in between (LuaJIT runs them at allocations, and on leaving a
    -- trace) takes the classic function
    if busy then return nil end
    busy = true
    local v, vh
    if entry(k1, 0) and (n < 2 or entry(k2, 4)) and (n < 3 or entry(k3, 8))
        and (n < 4 or entry(k4, 12)) then
      v, vh = new_view(t)
      if index(vh, h, n, ent) ~= 0 then v = nil end
    end
    busy = false
    return v
  end

  for name, op in pairs(ext.C.fviews) do
    local slow = methods[name]
    if name ~= "index" and slow then
      local function f(a, ...)
        local h = live(a)
        if h and select("#", ...) <= 3 then
          local x, y, z = ...
          local n = numbers(x, y, z)
          if n then
            local v, vh = new_view(a)
            if view(vh, h, op, n, x or 0, y or 0, z or 0) == 0 then return v end
          end
        end
        return slow(a, ...) -- as called: the variadic ones count their arguments
      end
      ext.fast(nd, name, f)
      ext.fast(methods, name, f)
    end
  end

  -- The header's queries (C.fqueries: t:dim(), numel, size(d),
  -- stride(d), dtype, ...), answered by C (lffi.c's query: a dtype by its
  -- id, named from C.consts' list); NaN leaves a call to
  -- the classic function (a bad dim).
  local query, type, dtypes = ext.lib.query, type, ext.dtype
  local setmetatable, size_mt = setmetatable, ext.C.size_metatable
  -- size() and stride() without a dim: every dim's, in a table of the
  -- classic function's metatable (unrolled to four dims: a loop here
  -- would end the caller's trace).
  local function all(h, id)
    local n, r = h.ndim, setmetatable({}, size_mt)
    if n > 4 then
      for i = 1, n do r[i] = query(h, id, 1, i) end
      return r
    end
    if n > 0 then r[1] = query(h, id, 1, 1) end
    if n > 1 then r[2] = query(h, id, 1, 2) end
    if n > 2 then r[3] = query(h, id, 1, 3) end
    if n > 3 then r[4] = query(h, id, 1, 4) end
    return r
  end
  for name, q in pairs(ext.C.fqueries) do
    local slow, id, kind = methods[name], q.id, q.kind
    local dims = name == "size" or name == "stride"
    local function f(t, d)
      local h = live(t)
      if h then
        if d == nil and dims then return all(h, id) end
        local v = query(h, id, d == nil and 0 or 1, type(d) == "number" and d or 0 / 0)
        if v == v then
          if kind == "boolean" then return v ~= 0 end
          if kind == "dtype" then return dtypes[v].name end
          return v
        end
      end
      return slow(t, d)
    end
    ext.fast(nd, name, f, slow)
    ext.fast(methods, name, f, slow)
  end
end
