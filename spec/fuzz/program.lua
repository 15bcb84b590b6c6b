-- Random nd programs and a plain-Lua reference model that runs them.
--
-- A program is a list of steps; step i may create variable v<i> from
-- earlier variables (views, elementwise ops, reductions, matmul) or write
-- through one (fill_, copy_, add_). Each step is plain data, so the same
-- program is run by nd (run.lua, as the Lua code that code() prints), by
-- the reference model below, and by NumPy (numpy_eval.py, for the corpus).
-- The generator runs the reference model as it goes, so that ~90% of the
-- steps are valid; the rest are invalid on purpose (a dim, index, length
-- or shape out of range, a write into an expanded view, bool - bool...)
-- and must raise an error, never crash.
--
-- To extend (sorting, indexing, linear algebra): add a kind to OPS with
-- gen (arguments from the current state), ref (the model's result, or
-- error()), code (nd's Lua) and the same kind to numpy_eval.py.
local M = {}

local DTYPES = { "bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64",
                 "float32", "float64" }
local RANK = { bool = 1, uint8 = 2, int8 = 2, int16 = 3, uint16 = 3, int32 = 4, uint32 = 4,
               int64 = 5, uint64 = 5, float32 = 6, float64 = 7 }
local KIND = { bool = "b", uint8 = "i", int8 = "i", int16 = "i", int32 = "i", int64 = "i",
               uint16 = "i", uint32 = "i", uint64 = "i", float32 = "f", float64 = "f" }
-- The unsigned dtypes and, for each, the narrowest signed one holding it
-- (uint64: none, float64), as src/core/base/dtype.c's promotion table.
local SIGNED_ABOVE = { uint8 = "int16", uint16 = "int32", uint32 = "int64", uint64 = "float64" }
M.DTYPES = DTYPES

-- ---- values -------------------------------------------------------------
local fround
if string.pack then
  fround = function(v) return (string.unpack("f", string.pack("f", v))) end
else
  local ok, ffi = pcall(require, "ffi")
  local box = ok and ffi.new("float[1]")
  fround = function(v) box[0] = v; return tonumber(box[0]) end
end

local function wrap(v, bits, signed)
  local m = 2 ^ bits
  v = v % m
  if signed and v >= m / 2 then v = v - m end
  return v
end

-- A Lua number converted into dtype dt as nd converts (values here are
-- small integers or floats; floats into integers truncate).
local function cast(dt, v)
  if dt == "bool" then return (v ~= 0) and 1 or 0 end
  if dt == "float64" then return v end
  if dt == "float32" then return fround(v) end
  if v ~= v then return 0 end
  v = v >= 0 and math.floor(v) or math.ceil(v)
  if dt == "uint8" then return wrap(v, 8, false) end
  if dt == "int8" then return wrap(v, 8, true) end
  if dt == "int16" then return wrap(v, 16, true) end
  if dt == "int32" then return wrap(v, 32, true) end
  if dt == "uint16" then return wrap(v, 16, false) end
  if dt == "uint32" then return wrap(v, 32, false) end
  -- uint64 is held as its int64 bits (2^64 - 2 as -2): exact in a double
  -- where the value is not; ubits turns it back. 2^64 and above only come
  -- saturated from a float: UINT64_MAX.
  if dt == "uint64" then
    if v >= 2 ^ 64 then return -1 end
    return v >= 2 ^ 63 and v - 2 ^ 64 or v -- as int64: no wrap (v is small)
  end
  return v
end
M.cast = cast
local function ubits(v) return v < 0 and v + 2 ^ 64 or v end
-- v of dtype from into dt: a uint64's value, not its bits, into a float
local function cast_from(from, dt, v)
  if from == "uint64" and KIND[dt] == "f" then v = ubits(v) end
  return cast(dt, v)
end
-- x < y for two uint64 held as their int64 bits (no rounding through 2^64)
local function ult(x, y)
  if (x < 0) ~= (y < 0) then return y < 0 end
  return x < y
end

-- From a float dtype into an integer one nd truncates and saturates.
local LIMITS = { uint8 = { 0, 255 }, int8 = { -128, 127 }, int16 = { -32768, 32767 },
                 int32 = { -2 ^ 31, 2 ^ 31 - 1 }, int64 = { -2 ^ 63, 2 ^ 63 },
                 uint16 = { 0, 65535 }, uint32 = { 0, 2 ^ 32 - 1 }, uint64 = { 0, 2 ^ 64 } }
local function convert(from, to, v)
  local lim = LIMITS[to]
  if KIND[from] == "f" and lim then
    if v ~= v then return 0 end
    return cast(to, math.max(lim[1], math.min(lim[2], v)))
  end
  return cast_from(from, to, v)
end

-- ---- the reference tensor: a storage (0-based Lua array) and a header ----
local function numel(size)
  local n = 1
  for _, s in ipairs(size) do n = n * s end
  return n
end

local function fresh(dt, size)
  local st, stride, n = {}, {}, 1
  for d = #size, 1, -1 do stride[d] = n; n = n * math.max(size[d], 1) end
  for i = 0, numel(size) - 1 do st[i] = 0 end
  return { st = st, dtype = dt, size = size, stride = stride, off = 0 }
end

-- Offsets of every element in row-major order.
local function offsets(t)
  local r, n, idx = {}, numel(t.size), {}
  for d = 1, #t.size do idx[d] = 0 end
  for k = 1, n do
    local off = t.off
    for d = 1, #t.size do off = off + idx[d] * t.stride[d] end
    r[k] = off
    for d = #t.size, 1, -1 do
      idx[d] = idx[d] + 1
      if idx[d] < t.size[d] then break end
      idx[d] = 0
    end
  end
  return r
end

function M.values(t)
  local r = {}
  for k, off in ipairs(offsets(t)) do r[k] = t.st[off] end
  return r
end
-- The values as nd reads them into Lua (a uint64's value, not its bits).
local function numbers(t)
  local r = M.values(t)
  if t.dtype == "uint64" then for k, v in ipairs(r) do r[k] = ubits(v) end end
  return r
end

local function copy_list(l)
  local r = {}
  for i, v in ipairs(l) do r[i] = v end
  return r
end

local function view(t, size, stride, off)
  return { st = t.st, dtype = t.dtype, size = size, stride = stride, off = off }
end

local function from_values(dt, size, vals)
  local t = fresh(dt, size)
  for k, off in ipairs(offsets(t)) do t.st[off] = cast(dt, vals[k]) end
  return t
end

-- ---- geometry rules (as nd's, 1-based, negative from the end) -----------
local function pos(p, n) -- a dim or index position, or nil when invalid
  if type(p) ~= "number" or p == 0 or p > n or p < -n then return nil end
  return p < 0 and n + p + 1 or p
end
-- A dim of a tensor of n dims; a 0-d tensor takes 1 and -1 (PyTorch's
-- 0 and -1) where nd says so: the result is then 0 ("no dim").
local function dim0(p, n)
  if n == 0 and (p == 1 or p == -1) then return 0 end
  return pos(p, n)
end

local function broadcast(a, b)
  local n, r = math.max(#a, #b), {}
  for i = 1, n do
    local x, y = a[#a - n + i] or 1, b[#b - n + i] or 1
    if x ~= y and x ~= 1 and y ~= 1 then error("broadcast") end
    r[i] = x == 1 and y or x
  end
  return r
end

local function expand(t, size)
  local lead, st = #size - #t.size, {}
  if lead < 0 then error("expand") end
  for i = 1, #size do
    local j = i - lead
    if j < 1 then st[i] = 0
    elseif t.size[j] == size[i] then st[i] = t.stride[j]
    elseif t.size[j] == 1 then st[i] = 0
    else error("expand") end
  end
  return view(t, copy_list(size), st, t.off)
end

local function overlapping(t) -- as nd's and PyTorch's: empty never is
  if numel(t.size) == 0 then return false end
  for d = 1, #t.size do
    if t.size[d] > 1 and t.stride[d] == 0 then return true end
  end
  return false
end

-- Two dtypes' promotion: PyTorch's table, NumPy's for uint16/32/64.
local function promote_types(da, db)
  local ua, ub = SIGNED_ABOVE[da], SIGNED_ABOVE[db]
  -- unsigned with signed: neither may hold the other; the narrowest
  -- signed dtype holding the unsigned one, or the signed one if wider
  if ua and not ub and KIND[db] == "i" then da = ua end
  if ub and not ua and KIND[da] == "i" then db = ub end
  -- NumPy: float32 holds neither uint32 nor uint64
  if (da == "float32" and (db == "uint32" or db == "uint64")) or
    (db == "float32" and (da == "uint32" or da == "uint64")) then return "float64" end
  return RANK[da] >= RANK[db] and da or db
end

-- PyTorch's promotion among tensors of one dimensionality class; a 0-d
-- tensor counts only when its kind is higher (bool < int < float), then
-- promoting with the other (uint32 with a 0-d float32: float64).
local function promote(a, b)
  local da, db = a.dtype, b.dtype
  local za, zb = #a.size == 0, #b.size == 0
  if za ~= zb then
    local z, o = za and da or db, za and db or da
    local kz, ko = KIND[z], KIND[o]
    local order = { b = 1, i = 2, f = 3 }
    if order[kz] > order[ko] then return promote_types(z, o) end
    return o
  end
  return promote_types(da, db)
end

-- A weak Lua integer against a tensor: bool becomes int64, else the
-- tensor's dtype.
local function promote_scalar(t)
  return t.dtype == "bool" and "int64" or t.dtype
end

local function isnan(v) return v ~= v end

local BIN = {
  add = function(x, y) return x + y end,
  sub = function(x, y) return x - y end,
  mul = function(x, y) return x * y end,
  maximum = function(x, y) if isnan(x) or isnan(y) then return 0 / 0 end return math.max(x, y) end,
  minimum = function(x, y) if isnan(x) or isnan(y) then return 0 / 0 end return math.min(x, y) end,
  eq = function(x, y) return x == y and 1 or 0 end,
  lt = function(x, y) return x < y and 1 or 0 end,
}
-- x * y wrapped to uint32 (a product of two near 2^32 is past a
-- double's 53 bits): by 16-bit halves of x, each part exact
local function mul_u32(x, y)
  local hi, lo = math.floor(x / 65536), x % 65536
  return ((hi * y) % 65536 * 65536 + lo * y) % 2 ^ 32
end
local U32_BIN = { mul = mul_u32 }
local U64_BIN = { -- the unsigned order of uint64's bits
  maximum = function(x, y) return ult(x, y) and y or x end,
  minimum = function(x, y) return ult(x, y) and x or y end,
  lt = function(x, y) return ult(x, y) and 1 or 0 end,
}
local BOOL_BIN = { -- on bools, PyTorch's: add is or, mul is and
  add = function(x, y) return (x ~= 0 or y ~= 0) and 1 or 0 end,
  mul = function(x, y) return (x ~= 0 and y ~= 0) and 1 or 0 end,
  maximum = function(x, y) return math.max(x, y) end,
  minimum = function(x, y) return math.min(x, y) end,
}

-- a op b with broadcasting; b may be a Lua integer.
local function binary(op, a, b)
  local scalar = type(b) == "number"
  local bt = scalar and from_values(promote_scalar(a), {}, { b }) or b
  local ct = scalar and promote_scalar(a) or promote(a, bt)
  if op == "sub" and (a.dtype == "bool" or (not scalar and bt.dtype == "bool")) then
    error("sub of bool")
  end
  local rdt = (op == "eq" or op == "lt") and "bool" or ct
  local size = broadcast(a.size, bt.size)
  local ea, eb = expand(a, size), expand(bt, size)
  local va, vb = M.values(ea), M.values(eb)
  local f = ({ bool = BOOL_BIN, uint32 = U32_BIN, uint64 = U64_BIN })[ct]
  f = f and f[op] or BIN[op]
  local r = {}
  for k = 1, #va do r[k] = cast(rdt, f(cast_from(a.dtype, ct, va[k]), cast_from(bt.dtype, ct, vb[k]))) end
  return from_values(rdt, size, r)
end

local UN = {
  neg = function(x) return -x end,
  abs = function(x) return math.abs(x) end,
  exp = function(x) return math.exp(x) end,
}
local function unary(op, a)
  if a.dtype == "bool" and op == "neg" then error("bool") end
  if a.dtype == "bool" and op == "abs" then return a end -- nd: identity
  local rdt = op == "exp" and (KIND[a.dtype] == "f" and a.dtype or "float64") or a.dtype
  local r = {}
  local f = UN[op]
  if op == "abs" and a.dtype == "uint64" then f = function(x) return x end end -- x is its bits
  for k, v in ipairs(M.values(a)) do r[k] = cast(rdt, f(cast_from(a.dtype, rdt, v))) end
  return from_values(rdt, copy_list(a.size), r)
end

-- Reduce over one dim d (1-based) with fn(list of values) -> value.
local function reduce_dim(a, d, keep, rdt, fn)
  local size = {}
  for i, s in ipairs(a.size) do
    if i ~= d then size[#size + 1] = s elseif keep then size[#size + 1] = 1 end
  end
  local moved = {} -- a with dim d last
  local msize, mstride = {}, {}
  for i = 1, #a.size do
    if i ~= d then msize[#msize + 1] = a.size[i]; mstride[#mstride + 1] = a.stride[i] end
  end
  msize[#msize + 1] = a.size[d]; mstride[#mstride + 1] = a.stride[d]
  moved = view(a, msize, mstride, a.off)
  local vals, n, r = M.values(moved), a.size[d], {}
  for k = 0, numel(msize) / math.max(n, 1) - 1 do
    if n == 0 then r[k + 1] = fn({}) else
      local chunk = {}
      for j = 1, n do chunk[j] = vals[k * n + j] end
      r[k + 1] = fn(chunk)
    end
  end
  if n == 0 then
    for k = 1, numel(size) do r[k] = fn({}) end
  end
  return from_values(rdt, size, r)
end

local REDUCE = {
  sum = function(a, d, keep)
    local rdt = (KIND[a.dtype] == "f" or a.dtype == "uint64") and a.dtype or "int64"
    return reduce_dim(a, d, keep, rdt, function(l)
      local s = 0
      for _, v in ipairs(l) do s = s + v end
      return s
    end)
  end,
  maxv = function(a, d, keep)
    if a.size[d] == 0 then error("empty") end
    local lt = a.dtype == "uint64" and ult or function(x, y) return x < y end
    return reduce_dim(a, d, keep, a.dtype, function(l)
      local m = l[1]
      for _, v in ipairs(l) do if lt(m, v) then m = v end end
      return m
    end)
  end,
  maxi = function(a, d, keep)
    if a.size[d] == 0 then error("empty") end
    local lt = a.dtype == "uint64" and ult or function(x, y) return x < y end
    return reduce_dim(a, d, keep, "int64", function(l)
      local m, mi = l[1], 1
      for j, v in ipairs(l) do if lt(m, v) then m, mi = v, j end end
      return mi
    end)
  end,
  all = function(a, d, keep)
    return reduce_dim(a, d, keep, "bool", function(l)
      for _, v in ipairs(l) do if v == 0 then return 0 end end
      return 1
    end)
  end,
  any = function(a, d, keep)
    return reduce_dim(a, d, keep, "bool", function(l)
      for _, v in ipairs(l) do if v ~= 0 then return 1 end end
      return 0
    end)
  end,
}

local function matmul(a, b)
  if #a.size == 0 or #b.size == 0 then error("matmul operands") end
  local rdt = promote(a, b)
  local as, bs = copy_list(a.size), copy_list(b.size)
  local a1, b1 = #as == 1, #bs == 1
  if a1 then table.insert(as, 1, 1) end
  if b1 then bs[2] = 1 end
  local m, k, k2, n = as[#as - 1], as[#as], bs[#bs - 1], bs[#bs]
  if k ~= k2 then error("matmul shapes") end
  local ab, bb = {}, {}
  for i = 1, #as - 2 do ab[i] = as[i] end
  for i = 1, #bs - 2 do bb[i] = bs[i] end
  local batch = broadcast(ab, bb)
  local av = view(a, as, a1 and { 0, a.stride[1] } or a.stride, a.off)
  local bv = view(b, bs, b1 and { b.stride[1], 0 } or b.stride, b.off)
  local ea = expand(av, (function() local s = copy_list(batch); s[#s + 1] = m; s[#s + 1] = k; return s end)())
  local eb = expand(bv, (function() local s = copy_list(batch); s[#s + 1] = k; s[#s + 1] = n; return s end)())
  local va, vb = M.values(ea), M.values(eb)
  local r, nb = {}, numel(batch)
  for bi = 0, nb - 1 do
    for i = 0, m - 1 do
      for j = 0, n - 1 do
        local s = 0
        for p = 0, k - 1 do
          local x = cast_from(a.dtype, rdt, va[bi * m * k + i * k + p + 1])
          local y = cast_from(b.dtype, rdt, vb[bi * k * n + p * n + j + 1])
          s = s + (rdt == "uint32" and mul_u32(x, y) or x * y)
          if rdt ~= "float64" and rdt ~= "float32" and rdt ~= "bool" then s = cast(rdt, s) end
        end
        r[#r + 1] = s
      end
    end
  end
  local size = copy_list(batch)
  if not a1 then size[#size + 1] = m end
  if not b1 then size[#size + 1] = n end
  return from_values(rdt, size, r)
end

-- ---- steps: how each kind runs in the model and reads as nd code --------
local function lua_list(l)
  local p = {}
  for i, v in ipairs(l) do p[i] = string.format("%.17g", v) end
  return "{" .. table.concat(p, ", ") .. "}"
end

-- A Lua number written into a tensor (nd.tensor, fill_) must be a value of
-- the dtype (nd_scalar_fits): an integer one raises outside its range.
local function written(dt, v)
  local lim = LIMITS[dt]
  local t = v >= 0 and math.floor(v) or math.ceil(v)
  if lim and (v ~= v or t < lim[1] or t > lim[2]) then error("value out of range") end
  return v
end

local function arg(x) -- a variable number or a {num = value} scalar
  if type(x) == "table" then return string.format("%.17g", x.num) end
  return "v" .. x
end

M.OPS = {
  tensor = {
    ref = function(s)
      for _, v in ipairs(s.values) do written(s.dtype, v) end
      return from_values(s.dtype, copy_list(s.shape), s.values)
    end,
    code = function(s)
      -- written as floats: on Lua 5.3+ an integer into uint64 is taken as
      -- its bits (-1 is 2^64 - 1), a float is range-checked everywhere
      local vals = lua_list(s.values)
      if s.dtype == "uint64" then vals = vals:gsub("(%-?%d+)", "%1.0") end
      return string.format("nd.tensor(%s, %q):reshape(%s)", vals, s.dtype, lua_list(s.shape))
    end,
  },
  transpose = {
    ref = function(s, a)
      local n = #a.size
      local d1, d2 = dim0(s.d1, n), dim0(s.d2, n)
      if not d1 or not d2 then error("dim") end
      if n == 0 then return view(a, {}, {}, a.off) end
      local size, st = copy_list(a.size), copy_list(a.stride)
      size[d1], size[d2], st[d1], st[d2] = size[d2], size[d1], st[d2], st[d1]
      return view(a, size, st, a.off)
    end,
    code = function(s) return string.format("v%d:transpose(%d, %d)", s.a, s.d1, s.d2) end,
  },
  narrow = {
    ref = function(s, a)
      local d = pos(s.d, #a.size)
      if not d then error("dim") end
      local n = a.size[d]
      local st = s.start < 0 and n + s.start + 1 or s.start
      if s.start == 0 or st < 1 or st > n + 1 or s.len < 0 or st - 1 + s.len > n then error("narrow") end
      local size = copy_list(a.size)
      size[d] = s.len
      return view(a, size, copy_list(a.stride), a.off + (s.len > 0 and (st - 1) * a.stride[d] or 0))
    end,
    code = function(s) return string.format("v%d:narrow(%d, %d, %d)", s.a, s.d, s.start, s.len) end,
  },
  select = {
    ref = function(s, a)
      local d = pos(s.d, #a.size)
      if not d then error("dim") end
      local i = pos(s.i, a.size[d])
      if not i then error("index") end
      local size, st = copy_list(a.size), copy_list(a.stride)
      table.remove(size, d); table.remove(st, d)
      return view(a, size, st, a.off + (i - 1) * a.stride[d])
    end,
    code = function(s) return string.format("v%d:select(%d, %d)", s.a, s.d, s.i) end,
  },
  slice = { -- t[{ {}, ..., {first, last, step} }] on dim d
    ref = function(s, a)
      if s.d > #a.size or s.step == 0 then error("slice") end
      local n = a.size[s.d]
      local function b(v) return v < 0 and n + v or v - 1 end
      if s.first == 0 or s.first > n + 1 or s.first < -n - 1 then error("bound") end
      if s.last > n + 1 or s.last < -n - 1 or (s.last == 0 and not (s.first == 1 and s.step > 0)) then error("bound") end
      local f, l = b(s.first), s.last == 0 and -1 or b(s.last)
      local span = s.step > 0 and l - f or f - l
      local count = span < 0 and 0 or math.floor(span / math.abs(s.step)) + 1
      if count > 0 and (f < 0 or f >= n or l < 0 or l >= n) then error("bound") end
      if count == 0 and (f < 0 or f > n or l < -1 or l >= n) then error("bound") end
      local size, st = copy_list(a.size), copy_list(a.stride)
      size[s.d], st[s.d] = count, a.stride[s.d] * s.step
      return view(a, size, st, a.off + (count > 0 and f * a.stride[s.d] or 0))
    end,
    code = function(s)
      local p = {}
      for i = 1, s.d - 1 do p[i] = "{}" end
      p[s.d] = string.format("{%d, %d, %d}", s.first, s.last, s.step)
      return string.format("v%d[{%s}]", s.a, table.concat(p, ", "))
    end,
  },
  flip = {
    ref = function(s, a)
      local d = dim0(s.d, #a.size)
      if not d then error("dim") end
      if d == 0 then return view(a, {}, {}, a.off) end
      local st = copy_list(a.stride)
      local off = a.off
      if a.size[d] > 1 then off = off + (a.size[d] - 1) * st[d]; st[d] = -st[d] end
      return view(a, copy_list(a.size), st, off)
    end,
    code = function(s) return string.format("v%d:flip(%d)", s.a, s.d) end,
  },
  expand = {
    ref = function(s, a) return expand(a, s.size) end,
    code = function(s) return string.format("v%d:expand(%s)", s.a, lua_list(s.size)) end,
  },
  unsqueeze = {
    ref = function(s, a)
      local d = pos(s.d, #a.size + 1)
      if not d then error("dim") end
      local size, st = copy_list(a.size), copy_list(a.stride)
      table.insert(size, d, 1)
      table.insert(st, d, 1)
      return view(a, size, st, a.off)
    end,
    code = function(s) return string.format("v%d:unsqueeze(%d)", s.a, s.d) end,
  },
  squeeze = {
    ref = function(s, a)
      local d = dim0(s.d, #a.size)
      if not d then error("dim") end
      if d == 0 then return view(a, {}, {}, a.off) end
      local size, st = copy_list(a.size), copy_list(a.stride)
      if size[d] == 1 then table.remove(size, d); table.remove(st, d) end
      return view(a, size, st, a.off)
    end,
    code = function(s) return string.format("v%d:squeeze(%d)", s.a, s.d) end,
  },
  permute = {
    ref = function(s, a)
      if #s.perm ~= #a.size then error("perm") end
      local size, st, seen = {}, {}, {}
      for i, p in ipairs(s.perm) do
        local d = pos(p, #a.size)
        if not d or seen[d] then error("perm") end
        seen[d] = true
        size[i], st[i] = a.size[d], a.stride[d]
      end
      return view(a, size, st, a.off)
    end,
    code = function(s) return string.format("v%d:permute(%s)", s.a, lua_list(s.perm)) end,
  },
  clone = {
    ref = function(s, a) return from_values(a.dtype, copy_list(a.size), M.values(a)) end,
    code = function(s) return string.format("v%d:clone()", s.a) end,
  },
  binary = {
    ref = function(s, a, b) return binary(s.op, a, b) end,
    code = function(s) return string.format("nd.%s(v%d, %s)", s.op, s.a, arg(s.b)) end,
  },
  unary = {
    ref = function(s, a) return unary(s.op, a) end,
    code = function(s) return string.format("v%d:%s()", s.a, s.op) end,
  },
  reduce = {
    ref = function(s, a)
      local d = dim0(s.d, #a.size)
      if not d then error("dim") end
      if d == 0 then -- a 0-d tensor reduced over "its" dim: itself
        local v = M.values(a)[1]
        local r = { sum = v, maxv = v, maxi = 1, all = v ~= 0 and 1 or 0, any = v ~= 0 and 1 or 0 }
        local dt = ({ sum = (KIND[a.dtype] == "f" or a.dtype == "uint64") and a.dtype or "int64", maxv = a.dtype,
          maxi = "int64", all = "bool", any = "bool" })[s.op]
        return from_values(dt, {}, { r[s.op] })
      end
      return REDUCE[s.op](a, d, s.keep)
    end,
    code = function(s)
      local name = (s.op == "maxv" or s.op == "maxi") and "max" or s.op
      local c = string.format("v%d:%s(%d, %s)", s.a, name, s.d, tostring(s.keep))
      if s.op == "maxi" then c = "select(2, " .. c .. ")" end
      return c
    end,
  },
  matmul = {
    ref = function(s, a, b) return matmul(a, b) end,
    code = function(s) return string.format("nd.matmul(v%d, v%d)", s.a, s.b) end,
  },
  fill = {
    write = true,
    ref = function(s, a)
      if overlapping(a) then error("overlap") end
      written(a.dtype, s.value)
      for _, off in ipairs(offsets(a)) do a.st[off] = cast(a.dtype, s.value) end
    end,
    code = function(s) return string.format("v%d:fill_(%.1f)", s.a, s.value) end, -- a float: as tensor's
  },
  copy = {
    write = true,
    ref = function(s, a, b)
      if overlapping(a) then error("overlap") end
      local src = M.values(expand(b, a.size)) -- read before writing
      for k, off in ipairs(offsets(a)) do a.st[off] = convert(b.dtype, a.dtype, src[k]) end
    end,
    code = function(s) return string.format("v%d:copy_(v%d)", s.a, s.b) end,
  },
  add_ = {
    write = true,
    ref = function(s, a, b)
      if overlapping(a) then error("overlap") end
      local r = binary("add", a, b)
      if #r.size ~= #a.size then error("grow") end
      for d = 1, #r.size do if r.size[d] ~= a.size[d] then error("grow") end end
      if RANK[r.dtype] > RANK[a.dtype] and KIND[r.dtype] ~= KIND[a.dtype] and
        not (KIND[r.dtype] == "i" and KIND[a.dtype] == "i") then error("cast") end
      if KIND[a.dtype] == "b" and KIND[r.dtype] ~= "b" then error("cast") end
      local v = M.values(r)
      for k, off in ipairs(offsets(a)) do a.st[off] = cast(a.dtype, v[k]) end
    end,
    code = function(s) return string.format("v%d:add_(%s)", s.a, arg(s.b)) end,
  },
}

function M.code(s) return M.OPS[s.kind].code(s) end

-- Runs step s on the model's variables vars; returns the new variable,
-- or nil and the error.
function M.ref_step(s, vars)
  local op = M.OPS[s.kind]
  local a = s.a and vars[s.a]
  local b = s.b
  if type(b) == "number" then b = vars[b] elseif type(b) == "table" then b = b.num end
  local ok, r = pcall(op.ref, s, a, b)
  if not ok then return nil, r end
  return op.write and true or r
end

-- ---- the generator ------------------------------------------------------
-- A small deterministic generator (the fuzzer must not depend on nd's).
function M.rng(seed)
  local x = seed % 2147483647
  if x <= 0 then x = x + 2147483646 end
  local r = {}
  function r.int(lo, hi) -- inclusive
    x = (x * 48271) % 2147483647
    return lo + x % (hi - lo + 1)
  end
  function r.pick(l) return l[r.int(1, #l)] end
  function r.chance(p) return r.int(1, 1000) <= p * 1000 end
  return r
end

local function rand_shape(r)
  local nd_, size = r.int(0, 3), {}
  for i = 1, nd_ do size[i] = r.pick({ 0, 1, 1, 2, 3, 3, 4 }) end
  return size
end

local function maxabs(t)
  local m = 0
  for _, v in ipairs(M.values(t)) do
    if v ~= v or math.abs(v) == math.huge then return math.huge end
    m = math.max(m, math.abs(v))
  end
  return m
end

-- One step's arguments drawn for the variables in pool (their models in
-- vars); bad = true asks for an invalid one.
local function gen_step(r, vars, pool, bad)
  local function any() return pool[r.int(1, #pool)] end
  local function dim_of(t, extra)
    local n = #t.size + (extra or 0)
    if bad or n == 0 then return r.pick({ n + 1, -n - 1, 0, n + 2 }) end
    local d = r.int(1, n)
    return r.chance(0.3) and d - n - 1 or d
  end
  local kinds = { "tensor", "transpose", "narrow", "select", "slice", "flip",
    "expand", "unsqueeze", "squeeze", "permute", "clone", "binary", "binary",
    "binary", "unary", "reduce", "reduce", "matmul", "matmul", "fill", "copy",
    "add_", "add_" }
  local kind = #pool == 0 and "tensor" or r.pick(kinds)
  local s = { kind = kind }
  if kind == "tensor" then
    s.dtype, s.shape, s.values = r.pick(DTYPES), rand_shape(r), {}
    for i = 1, numel(s.shape) do s.values[i] = r.int(-4, 5) end
    return s
  end
  s.a = any()
  local a = vars[s.a]
  local n = #a.size
  if kind == "transpose" then
    s.d1, s.d2 = dim_of(a), dim_of(a)
  elseif kind == "narrow" then
    s.d = dim_of(a)
    local sz = a.size[pos(s.d, n) or 1] or 0
    s.start = r.int(1, sz + 1)
    s.len = r.int(0, sz - s.start + 1)
    if bad then s.len = s.len + r.int(1, 2) end
  elseif kind == "select" then
    s.d = dim_of(a)
    local sz = a.size[pos(s.d, n) or 1] or 0
    s.i = bad and r.pick({ 0, sz + 1, -sz - 1 }) or r.int(1, math.max(sz, 1)) * (r.chance(0.3) and -1 or 1)
  elseif kind == "slice" then
    s.d = math.max(1, math.min(n, r.int(1, 3)))
    if n == 0 then s.d = 1 end
    local sz = a.size[s.d] or 0
    s.step = r.pick({ 1, 1, 2, 3, -1, -2 })
    if s.step > 0 then s.first, s.last = r.int(1, sz + 1), r.int(0, sz) else
      s.first, s.last = r.int(1, math.max(sz, 1)), r.int(1, math.max(sz, 1))
    end
    if s.first > sz + 1 then s.first = sz + 1 end
    if bad then s.last = sz + 2 end
  elseif kind == "flip" or kind == "squeeze" then
    s.d = dim_of(a)
  elseif kind == "unsqueeze" then
    s.d = dim_of(a, 1)
  elseif kind == "expand" then
    s.size = {}
    local lead = r.int(0, 1)
    for i = 1, lead do s.size[i] = r.int(0, 3) end
    for i = 1, n do s.size[lead + i] = a.size[i] == 1 and r.int(0, 3) or a.size[i] end
    if bad then s.size[#s.size + 1] = 7 end
  elseif kind == "permute" then
    s.perm = {}
    for i = 1, n do s.perm[i] = i end
    for i = n, 2, -1 do local j = r.int(1, i); s.perm[i], s.perm[j] = s.perm[j], s.perm[i] end
    if bad then s.perm[#s.perm + 1] = 1 end
  elseif kind == "binary" or kind == "add_" or kind == "copy" then
    if kind == "binary" then s.op = r.pick({ "add", "sub", "mul", "maximum", "minimum", "eq", "lt" }) end
    -- an operand that broadcasts: a view of a compatible variable, or a number
    local cands = {}
    for _, v in ipairs(pool) do
      local ok = pcall(broadcast, vars[v].size, a.size)
      if ok ~= bad then cands[#cands + 1] = v end
    end
    if kind ~= "copy" and (#cands == 0 or r.chance(0.25)) then
      s.b = { num = r.int(-3, 3) }
    else
      s.b = #cands > 0 and r.pick(cands) or any()
    end
    if kind == "binary" and type(s.b) == "number" and r.chance(0.5) then
      s.a, s.b = s.b, s.a -- the broadcasting one first
    end
  elseif kind == "unary" then
    s.op = r.pick({ "neg", "abs", "exp" })
    if a.dtype == "bool" then s.op = bad and "neg" or "exp" end
  elseif kind == "reduce" then
    s.op = r.pick({ "sum", "sum", "maxv", "maxi", "all", "any" })
    s.d, s.keep = dim_of(a), r.chance(0.5)
  elseif kind == "matmul" then
    -- a partner with a matching inner size (in any layout), if any
    local k = a.size[n]
    local cands = {}
    for _, v in ipairs(pool) do
      local b = vars[v]
      local bk = #b.size == 1 and b.size[1] or b.size[#b.size - 1]
      if (#b.size >= 1 and bk == k) ~= bad then cands[#cands + 1] = v end
    end
    s.b = #cands > 0 and r.pick(cands) or any()
  elseif kind == "fill" then
    s.value = r.int(-3, 3)
  end
  return s
end

-- A program of nsteps steps; about rate of them invalid on purpose.
function M.generate(seed, nsteps, rate)
  local r = M.rng(seed)
  local prog, vars, pool = {}, {}, {}
  for i = 1, nsteps do
    local s = gen_step(r, vars, pool, #pool > 0 and r.chance(rate or 0.1))
    prog[i] = s
    local v = M.ref_step(s, vars)
    if type(v) == "table" and maxabs(v) <= 1e6 then
      vars[i] = v
      pool[#pool + 1] = i
    end
  end
  return prog
end

-- The model's outcome of a program: per step, an error flag or the
-- variable's dtype, size and values, and the final values of all.
function M.reference(prog)
  local vars, out = {}, { steps = {}, final = {} }
  for i, s in ipairs(prog) do
    local deps_ok = (not s.a or vars[s.a]) and (type(s.b) ~= "number" or vars[s.b])
    if not deps_ok then
      out.steps[i] = { skipped = true }
    else
      local v = M.ref_step(s, vars)
      if v == nil then out.steps[i] = { err = true }
      elseif v == true then out.steps[i] = { ok = true }
      else
        vars[i] = v
        out.steps[i] = { dtype = v.dtype, size = copy_list(v.size), values = numbers(v) }
      end
    end
  end
  for i, v in pairs(vars) do out.final[i] = numbers(v) end
  return out
end

return M
