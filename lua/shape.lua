-- Shape helpers built on views and the C copies: split, chunk, unbind
-- (views), tile, roll, tril, triu, diag, trace, meshgrid, hstack, vstack,
-- and the *_like constructors (pad is C's: src/core/kernels/pad.c). Each error names the function the
-- user called, even when a C function underneath raised it.
return function(ext)
  local nd, methods, mt = ext.nd, ext.methods, ext.metatable
  local is_tensor, type, floor, pcall, error = ext.is_tensor, type, math.floor, pcall, error
  local unpack = table.unpack or unpack
  local dbg = debug

  -- Each runs under its own name: the errors of the nd functions it calls
  -- name it (`hstack: ...`, not `cat: ...`; src/lua/lcall.c's call_as).
  local as = ext.C.call_as
  local function define(name, f, module_only)
    local body = f
    f = ext.checked(name, function(...) return as(name, body, ...) end)
    nd[name] = f
    if not module_only then methods[name] = f end
  end

  -- Raises msg at the user's frame: the first one outside nd's Lua layer
  -- and call_as.
  local function raise(fmt, ...)
    local msg = select("#", ...) > 0 and fmt:format(...) or fmt
    local level = 2
    if dbg and dbg.getinfo then
      while true do
        local info = dbg.getinfo(level, "Sf") -- Lua 5.1 marks tail calls
        if not info or info.source:sub(1, 4) ~= "@nd/" and info.what ~= "tail"
            and info.func ~= as then
          break
        end
        level = level + 1
      end
    end
    error(msg, level)
  end

  local typename = ext.C.typename -- "tensor", "released tensor", Lua's
  local function check(fn, t, what)
    if not is_tensor(t) then
      raise("%s: %s must be a tensor, got %s", fn, what or "argument 1", typename(t))
    end
    return t
  end

  local function integer(fn, v, what)
    if type(v) ~= "number" or v ~= floor(v) or not (v >= -2 ^ 63 and v < 2 ^ 63) then
      raise("%s: %s must be an integer, got %s", fn, what,
        type(v) == "number" and tostring(v) or typename(v))
    end
    return v
  end

  -- A 1-based dim (negative from the end) as a positive one.
  local function dimpos(fn, t, d)
    integer(fn, d, "dim")
    local n = t:dim()
    if n == 0 then raise("%s: dim %d out of range for a 0-d tensor", fn, d) end
    if d == 0 or d > n or d < -n then
      raise("%s: dim %d out of range [%d, %d]", fn, d, -n, n)
    end
    return d < 0 and d + n + 1 or d
  end

  local function sizes_of(t)
    local s = {}
    for i = 1, t:dim() do s[i] = t:size(i) end
    return s
  end

  -- ---- split, chunk, unbind: lists of views ----
  local function split(t, size, dim)
    check("split", t)
    local d = dimpos("split", t, dim or 1)
    local n, out, at = t:size(d), {}, 1
    if type(size) == "table" then
      local total = 0
      for i = 1, #size do
        local s = integer("split", size[i], "size")
        if s < 0 then raise("split: size %d is negative", s) end
        total = total + s
      end
      if total ~= n then
        raise("split: sizes {%s} sum to %d, but dim %d has size %d",
          table.concat(size, ","), total, d, n)
      end
      for i = 1, #size do
        out[i] = t:narrow(d, at, size[i])
        at = at + size[i]
      end
      return out
    end
    integer("split", size, "size")
    if size < 1 and not (size == 0 and n == 0) then
      raise("split: size must be at least 1, got %d", size)
    end
    if n == 0 then return { t:narrow(d, 1, 0) } end
    while at <= n do
      local len = math.min(size, n - at + 1)
      out[#out + 1] = t:narrow(d, at, len)
      at = at + len
    end
    return out
  end
  define("split", split)

  -- PyTorch's: chunks of ceil(n / chunks), so fewer chunks may come back.
  define("chunk", function(t, chunks, dim)
    check("chunk", t)
    integer("chunk", chunks, "number of chunks")
    if chunks < 1 then raise("chunk: number of chunks must be at least 1, got %d", chunks) end
    local d = dimpos("chunk", t, dim or 1)
    local n = t:size(d)
    if n == 0 then return { t:narrow(d, 1, 0) } end
    return split(t, math.ceil(n / chunks), d)
  end)

  define("unbind", function(t, dim)
    check("unbind", t)
    local d = dimpos("unbind", t, dim or 1)
    local out = {}
    for i = 1, t:size(d) do out[i] = t:select(d, i) end
    return out
  end)

  -- ---- tile (NumPy's), roll ----
  -- reps is a named parameter, not `local reps = ...`: Debian's LuaJIT
  -- (2022) miscompiles a single-result vararg load now and then (LuaJIT
  -- issue 1046, fixed upstream 2023), which here skipped a `false` first
  -- rep and tiled by the next argument.
  define("tile", function(t, reps, ...)
    check("tile", t)
    if type(reps) ~= "table" then reps = { reps, ... } end
    for i = 1, #reps do
      integer("tile", reps[i], "reps")
      if reps[i] < 0 then raise("tile: reps must not be negative, got %d", reps[i]) end
    end
    local own, size, r = sizes_of(t), {}, {}
    local n = math.max(#own, #reps)
    if n == 0 then return t:clone() end
    for i = 1, n do -- NumPy: the shorter of reps and sizes gets leading 1s
      r[i] = reps[i - (n - #reps)] or 1
      size[i] = own[i - (n - #own)] or 1
    end
    local x = t:reshape(size)
    local inter, big, final = {}, {}, {}
    for i = 1, n do
      inter[2 * i - 1], inter[2 * i] = 1, size[i]
      big[2 * i - 1], big[2 * i] = r[i], size[i]
      final[i] = r[i] * size[i]
    end
    return x:reshape(inter):expand(big):clone():view(final)
  end)

  local function roll1(x, s, d)
    local n = x:size(d)
    if n == 0 then return x end
    s = s % n
    if s == 0 then return x end
    return nd.cat({ x:narrow(d, n - s + 1, s), x:narrow(d, 1, n - s) }, d)
  end

  define("roll", function(t, shifts, dims)
    check("roll", t)
    if type(shifts) ~= "table" then shifts = { shifts } end
    for i = 1, #shifts do integer("roll", shifts[i], "shift") end
    if dims == nil then
      if #shifts ~= 1 then raise("roll: %d shifts without dims (give one shift, or dims)", #shifts) end
      local flat = roll1(t:reshape(-1), shifts[1], 1)
      return (flat == t or nd.same_storage(flat, t)) and t:clone() or flat:view(sizes_of(t))
    end
    if type(dims) ~= "table" then dims = { dims } end
    if #dims ~= #shifts then
      raise("roll: %d shifts but %d dims", #shifts, #dims)
    end
    local x = t
    for i = 1, #dims do x = roll1(x, shifts[i], dimpos("roll", t, dims[i])) end
    if nd.same_storage(x, t) then x = t:clone() end
    return x
  end)

  -- ---- triangles and diagonals ----
  local function triangle(fn, above)
    return function(t, k)
      check(fn, t)
      k = integer(fn, k or 0, "diagonal offset k")
      if t:dim() < 2 then raise("%s: expects at least 2 dims, got %d", fn, t:dim()) end
      local rows, cols = t:size(-2), t:size(-1)
      local i = nd.arange(rows):view(rows, 1)
      local j = nd.arange(cols):view(1, cols)
      local off = j - i -- the diagonal each element lies on
      local drop = above and off:lt(k) or off:gt(k)
      return t:clone():masked_fill_(drop, t:dtype() == "bool" and false or 0)
    end
  end
  define("tril", triangle("tril", false))
  define("triu", triangle("triu", true))

  define("diag", function(t, k)
    check("diag", t)
    k = integer("diag", k or 0, "diagonal offset k")
    if t:dim() == 1 then
      local m = t:size(1) + math.abs(k)
      local r = nd.zeros(m, m, t:dtype())
      r:diagonal(k):copy_(t)
      return r
    elseif t:dim() == 2 then
      return t:diagonal(k):clone()
    end
    raise("diag: expects a 1-D or 2-D tensor, got %d dims", t:dim())
  end)

  define("trace", function(t)
    check("trace", t)
    if t:dim() ~= 2 then raise("trace: expects a 2-D tensor, got %d dims", t:dim()) end
    return t:diagonal():sum()
  end)

  -- ---- meshgrid ("ij"), hstack, vstack ----
  define("meshgrid", function(...)
    local ts = { ... }
    if #ts == 1 and type(ts[1]) == "table" and not is_tensor(ts[1]) then ts = ts[1] end
    if #ts == 0 then raise("meshgrid: expects at least one tensor") end
    local shape = {}
    for i, x in ipairs(ts) do
      check("meshgrid", x, "argument " .. i)
      if x:dim() > 1 then
        raise("meshgrid: argument %d must be 0-d or 1-D, got %d dims", i, x:dim())
      end
      shape[i] = x:numel()
    end
    local out = {}
    for i, x in ipairs(ts) do
      local v = {}
      for k = 1, #ts do v[k] = k == i and shape[i] or 1 end
      out[i] = x:reshape(v):expand(shape):clone()
    end
    return unpack(out, 1, #ts)
  end)

  local function list(fn, ts)
    if type(ts) ~= "table" or is_tensor(ts) then
      raise("%s: expected a list of tensors, got %s", fn, is_tensor(ts) and "a tensor" or typename(ts))
    end
    if #ts == 0 then raise("%s: expected a non-empty list", fn) end
    for i = 1, #ts do check(fn, ts[i], "list entry " .. i) end
    return ts
  end

  define("hstack", function(ts)
    list("hstack", ts)
    local xs = {}
    for i, x in ipairs(ts) do xs[i] = x:dim() == 0 and x:reshape(1) or x end
    return nd.cat(xs, xs[1]:dim() == 1 and 1 or 2)
  end, true)

  define("vstack", function(ts)
    list("vstack", ts)
    local xs = {}
    for i, x in ipairs(ts) do
      xs[i] = x:dim() == 0 and x:reshape(1, 1) or x:dim() == 1 and x:reshape(1, x:size(1)) or x
    end
    return nd.cat(xs, 1)
  end, true)

  -- ---- *_like: t's shape and (by default) dtype, row-major ----
  local function like(fn, make)
    return function(t, ...)
      check(fn, t)
      return make(t, ...)
    end
  end
  define("zeros_like", like("zeros_like", function(t, dtype)
    return nd.zeros(sizes_of(t), dtype or t:dtype())
  end))
  define("ones_like", like("ones_like", function(t, dtype)
    return nd.ones(sizes_of(t), dtype or t:dtype())
  end))
  define("empty_like", like("empty_like", function(t, dtype)
    return nd.empty(sizes_of(t), dtype or t:dtype())
  end))
  define("full_like", like("full_like", function(t, v, dtype)
    return nd.full(sizes_of(t), v, dtype or t:dtype())
  end))
end
