-- matmul on views: transposed, narrowed, stepped and flipped operands go
-- to OpenBLAS as they are whenever their strides fit BLAS (the plan shows
-- the call: routine, order, transpose flags, leading dims, copies), and
-- a transposed operand costs the same as a contiguous one.
-- Run: bin/nd examples/matmul_views.lua
local nd = require "nd"
nd.manual_seed(42)

local function show(label, a, b, out)
  local p = nd.matmul_plan(a, b, out)
  local copies = #p.copies == 0 and "none (zero-copy)" or table.concat(p.copies, ", ")
  local fields = {}
  for _, k in ipairs({ "order", "transa", "transb", "m", "n", "k", "lda", "ldb", "ldc", "incx", "incy", "batch" }) do
    if p[k] ~= nil then fields[#fields + 1] = k .. "=" .. tostring(p[k]) end
  end
  print(("%-34s %-6s %s  copies: %s"):format(label, p.routine, table.concat(fields, " "), copies))
  local r = nd.matmul(a, b, out)
  print(r)
end

local a = nd.arange(1, 7):view(2, 3):float()      -- [[1,2,3],[4,5,6]]
local b = nd.arange(1, 13):view(3, 4):float()
show("contiguous a @ b", a, b)
show("a:t():t() is a again", a:t():t(), b)
show("(b:t()) @ a:t() = (a @ b):t()", b:t(), a:t())
local big = nd.arange(1, 31):view(5, 6):float()
show("narrowed view (lda = 6)", big:narrow(1, 2, 2):narrow(2, 2, 3), b)
show("stepped rows and cols (copied)", big[{ { 1, 3, 2 }, { 1, 5, 2 } }], b)
show("flipped rows (copied for gemm)", a:flip({ 1 }), b)
show("selected from 3-D", nd.arange(1, 25):view(2, 3, 4):float():select(1, 2):t(), a:t())
show("matrix @ flipped vector (inc -1)", a, nd.tensor({ 1, 0, -1 }, "float32"):flip({ 1 }))
show("batched, folded into one gemm", nd.arange(1, 13):view(2, 2, 3):float(), b)
show("column-major out", a, b, nd.empty(4, 2, "float32"):t())
show("int64: the plain loop", nd.arange(1, 7):view(2, 3), nd.arange(1, 13):view(3, 4))

-- Timing: transposed operands vs contiguous ones, 512 x 512 float32.
local ffi_ok, ffi = pcall(require, "ffi")
local now = os.clock
if ffi_ok then
  ffi.cdef [[ typedef struct { long s; long ns; } ex_ts; int clock_gettime(int, ex_ts *); ]]
  local ts = ffi.new("ex_ts")
  now = function() ffi.C.clock_gettime(1, ts) return tonumber(ts.s) + tonumber(ts.ns) * 1e-9 end
end
local n = 512
local x, y, out = nd.rand(n, n, "float32"), nd.rand(n, n, "float32"), nd.empty(n, n, "float32")
local function best(f)
  local t = math.huge
  for _ = 1, 5 do
    local t0 = now()
    for _ = 1, 10 do f() end
    t = math.min(t, (now() - t0) / 10)
  end
  return t
end
local xt, yt = x:t(), y:t()
print(("\n%d x %d float32, best of 5 x 10 calls:"):format(n, n))
print(("  x @ y              %.3f ms"):format(best(function() nd.matmul(x, y, out) end) * 1e3))
print(("  x:t() @ y          %.3f ms  (transa=%s, copies: %d)"):format(
  best(function() nd.matmul(xt, y, out) end) * 1e3, nd.matmul_plan(xt, y).transa, #nd.matmul_plan(xt, y).copies))
print(("  x @ y:t()          %.3f ms  (transb=%s, copies: %d)"):format(
  best(function() nd.matmul(x, yt, out) end) * 1e3, nd.matmul_plan(x, yt).transb, #nd.matmul_plan(x, yt).copies))
print(("  x:contiguous-copy  %.3f ms  (what copying x:t() would add)"):format(
  best(function() return xt:contiguous() end) * 1e3))
