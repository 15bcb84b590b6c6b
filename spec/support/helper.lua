-- Loaded before the specs: shared assertions.
local nd = require "nd"

-- Asserts that f raises an error whose message contains every fragment.
function assert_error_matches(f, ...)
  local ok, err = pcall(f)
  assert(not ok, "expected an error, got success")
  err = tostring(err)
  for _, frag in ipairs({ ... }) do
    assert(err:find(frag, 1, true),
      ("error %q does not mention %q"):format(err, frag))
  end
  return err
end

-- Deep comparison of nested tables of numbers/booleans with a tolerance.
function assert_close(expected, got, tol)
  tol = tol or 0
  local function cmp(e, g, path)
    if type(e) == "table" then
      assert(type(g) == "table", path .. ": expected a table, got " .. type(g))
      assert(#e == #g, ("%s: expected %d entries, got %d"):format(path, #e, #g))
      for i = 1, #e do cmp(e[i], g[i], path .. "[" .. i .. "]") end
    elseif type(e) == "number" and e ~= e then
      assert(g ~= g, path .. ": expected nan, got " .. tostring(g))
    elseif type(e) == "number" and tol > 0 then
      assert(type(g) == "number" and (e == g or math.abs(e - g) <= tol * math.max(1, math.abs(e))),
        ("%s: expected %s, got %s"):format(path, tostring(e), tostring(g)))
    else
      assert(e == g, ("%s: expected %s, got %s"):format(path, tostring(e), tostring(g)))
    end
  end
  cmp(expected, got, "value")
end

-- Fresh tensors that the view oracle cases (views_spec, indexing_spec)
-- view, made as in PyTorch: torch.arange(24).reshape(2,3,4) and so on.
function view_bases()
  return {
    a = nd.arange(24):reshape(2, 3, 4), b = nd.arange(24):reshape(1, 2, 3, 4),
    m = nd.arange(12):reshape(3, 4), v = nd.arange(7), s = nd.tensor(5),
    e = nd.zeros(0, 3, "int64"), c = nd.arange(3):reshape(3, 1),
  }
end

-- A size/stride table as a plain list (without its printing metatable).
function plain(t)
  local r = {}
  for i = 1, #t do r[i] = t[i] end
  return r
end

-- One oracle case { name, view fn, size, stride, offset, values, base }:
-- sizes, strides, offset (nil: free, as for empty results), values, and
-- which of the bases it shares storage with.
local luassert = require "luassert"
function check_view_case(c, bases)
  local assert = luassert
  local name, f, size, stride, offset, vals, base = c[1], c[2], c[3], c[4], c[5], c[6], c[7]
  local t = f()
  assert.same(size, plain(t:size()), name .. ": size")
  if stride then assert.same(stride, plain(t:stride()), name .. ": stride") end
  if offset then assert.equals(offset, t:storage_offset(), name .. ": offset") end
  assert.same(vals, t:dim() == 0 and t:item() or t:totable(), name .. ": values")
  for k, b in pairs(bases) do
    assert.equals(k == base, nd.same_storage(t, b), name .. ": shares storage with " .. k)
  end
end

-- The five layouts elementwise and reduction specs walk, and a maker of a
-- 4x5 tensor of dtype dt in one of them, filled by set() with fill(dt).
LAYOUTS = { "contiguous", "transposed", "stepped", "flipped", "expanded" }
function make_layout(layout, dt, fill)
  local t
  if layout == "contiguous" then t = nd.empty(4, 5, dt)
  elseif layout == "transposed" then t = nd.empty(5, 4, dt):t()
  elseif layout == "stepped" then t = nd.zeros(8, 11, dt)[{ { 1, 8, 2 }, { 2, 11, 2 } }]
  elseif layout == "flipped" then t = nd.empty(4, 5, dt):flip({ 1, 2 })
  else
    local row = nd.empty(5, dt)
    for j = 1, 5 do row:set(j, fill(dt)) end
    return row:expand(4, 5)
  end
  for i = 1, 4 do for j = 1, 5 do t:set(i, j, fill(dt)) end end
  return t
end

-- LL(2) ^ 60 is LuaJIT's 2LL ^ 60 without the literal, so spec files still
-- parse under PUC Lua (where tests that need it are skipped).
if jit then
  local ffi = require "ffi"
  function LL(x) return ffi.cast("int64_t", x) end
end


-- A 2-D tensor of dtype dt holding the nested table data, laid out as
-- one of "contiguous", "transposed", "stepped" (every other element of a
-- larger tensor) or "flipped" (negative strides): the same values in every
-- memory order, for specs checking oracle results on any view.
DATA_LAYOUTS = { "contiguous", "transposed", "stepped", "flipped" }
function tensor_in_layout(data, dt, layout)
  local r, c = #data, #data[1]
  local function make(f, rr, cc)
    local rows = {}
    for i = 1, rr do
      rows[i] = {}
      for j = 1, cc do rows[i][j] = f(i, j) end
    end
    return nd.tensor(rows, dt)
  end
  if layout == "transposed" then
    return make(function(i, j) return data[j][i] end, c, r):t()
  elseif layout == "flipped" then
    return make(function(i, j) return data[r + 1 - i][c + 1 - j] end, r, c):flip({ 1, 2 })
  elseif layout == "stepped" then
    local z = nd.zeros(2 * r, 2 * c, dt)
    local v = z[{ { 1, 2 * r, 2 }, { 2, 2 * c, 2 } }]
    v:copy_(nd.tensor(data, dt))
    return v
  end
  return nd.tensor(data, dt)
end

-- What a C test program needs besides libnd.a (the suite builds several):
-- nd's own dependencies, as nd.pc lists them.
C_LIBS = "$(pkg-config --libs openblas sleef spng libturbojpeg libcjson 2>/dev/null || echo -lopenblas -lsleef -lspng -lturbojpeg -lcjson) -lm -pthread"

-- A temporary .npy file with this header dict (padded as NumPy pads) and
-- data; returns its path.
function npy_file(header, data)
  local path = os.tmpname()
  local f = assert(io.open(path, "wb"))
  local h = header .. string.rep(" ", (64 - (10 + #header + 1) % 64) % 64) .. "\n"
  f:write("\147NUMPY\1\0", string.char(#h % 256, math.floor(#h / 256)), h, data or "")
  f:close()
  return path
end

-- make() with the FFI paths on, then off (nd.use_ffi): both results.
-- Runs f(on) once with the FFI paths on (where there are any) and once
-- off, restoring the setting even when f fails.
function on_both_paths(f)
  local was = nd.use_ffi()
  for _, on in ipairs({ true, false }) do
    nd.use_ffi(on)
    local ok, err = pcall(f, on)
    nd.use_ffi(was)
    if not ok then error(err, 0) end
  end
end

function both_paths(make)
  nd.use_ffi(true)
  local f = make()
  nd.use_ffi(false)
  local c = make()
  nd.use_ffi(true)
  return f, c
end

-- make() with the FFI paths on and then off (nd.use_ffi) must both raise
-- the same message (its position aside): the fast paths leave every error
-- to the C binding.
function assert_same_error_both_paths(make)
  nd.use_ffi(true)
  local ok1, e1 = pcall(make)
  nd.use_ffi(false)
  local ok2, e2 = pcall(make)
  nd.use_ffi(true)
  assert(not ok1 and not ok2, "expected an error both ways")
  e1, e2 = tostring(e1):gsub("^.-:%d+: ", ""), tostring(e2):gsub("^.-:%d+: ", "")
  assert(e1 == e2, ("FFI path raised %q, C binding %q"):format(e1, e2))
end

-- White box: the upvalue `name` reachable from f through the upvalues that
-- are functions (depth first): the function holding it, its index and its
-- value; nil when there is none.
function find_upvalue(f, name, seen)
  seen = seen or {}
  if seen[f] then return nil end
  seen[f] = true
  for i = 1, 255 do
    local n, v = debug.getupvalue(f, i)
    if n == nil then return nil end
    if n == name then return f, i, v end
    if type(v) == "function" then
      local g, j, w = find_upvalue(v, name, seen)
      if g then return g, j, w end
    end
  end
end


-- Issue 23's rule for float16 / bfloat16: f over the 16-bit operands (any
-- layout; other arguments as they are) equals f over the same values
-- widened to float32, rounded once to the 16-bit dtype (float16 with
-- bfloat16 promotes to float32: not rounded). Every result f returns is
-- compared (float32 ones rounded, others as they are); f's results are
-- returned.
local unpack = table.unpack or unpack -- Lua 5.2+ has no global unpack
function assert_half_rounded(what, f, ...)
  local n, args, wide, dt, mixed = select("#", ...), { ... }, {}, nil, false
  for i = 1, n do
    local a = args[i]
    if nd.is_tensor(a) and (a:dtype() == "float16" or a:dtype() == "bfloat16") then
      mixed = mixed or (dt ~= nil and dt ~= a:dtype())
      dt = dt or a:dtype()
      wide[i] = a:to("float32")
    else
      wide[i] = a
    end
  end
  assert(dt, what .. ": no 16-bit operand")
  local got, want = { f(unpack(args, 1, n)) }, { f(unpack(wide, 1, n)) }
  assert(#got == #want and #got > 0, what .. ": result count")
  for k = 1, #got do
    local w = want[k]
    if w:dtype() == "float32" and not mixed then w = w:to(dt) end
    assert(w:dtype() == got[k]:dtype(), ("%s: result %d is %s, want %s"):format(what, k, got[k]:dtype(), w:dtype()))
    assert(nd.equal(w, got[k]), ("%s: result %d differs from float32's rounded once"):format(what, k))
  end
  return unpack(got)
end

return nd
