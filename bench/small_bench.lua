-- Issue 9's table: per-call cost of views, constructors and tiny ops, with
-- NumPy's beside it (same run, medians; NumPy in CPython, one thread), then
-- the -joff figures (a child `luajit -joff`: nd's default path vs
-- nd.use_ffi(false), i.e. the classic C API path).
local lib = require "lib"
local nd = require "nd"

local m = nd.rand(100, 100)
local a3, b3, o3 = nd.rand(3), nd.rand(3), nd.empty(3)
local s, so = nd.rand(18000), nd.empty(18000)
local A4, B4 = nd.rand(4, 4, "float32"), nd.rand(4, 4, "float32")
local A8, B8 = nd.rand(4, 4), nd.rand(4, 4)
local NP = "m = np.random.rand(100, 100); a = np.random.rand(3); b = np.random.rand(3); "
  .. "o = np.empty(3); s = np.random.rand(18000); so = np.empty(18000); "
  .. "A4 = np.random.rand(4, 4).astype(np.float32); B4 = np.random.rand(4, 4).astype(np.float32); "
  .. "A8 = np.random.rand(4, 4); B8 = np.random.rand(4, 4)"

local rows = {
  { "m:t() on 100x100", function() return m:t() end, "m.T", 1.0 },
  { "m:transpose(1, 2)", function() return m:transpose(1, 2) end, "m.swapaxes(0, 1)", 1.0 },
  { "m:narrow(1, 2, 50)", function() return m:narrow(1, 2, 50) end, "m[1:51]", 1.0 },
  { "m:select(1, 5)", function() return m:select(1, 5) end, "m[4]", 1.0 },
  { "m[5] (row view)", function() return m[5] end, "m[4]", 1.0 },
  { "m[{{},{1,-1,2}}]", function() return m[{ {}, { 1, -1, 2 } }] end, "m[:, ::2]", 1.0 },
  { "m:view(10000)", function() return m:view(10000) end, "m.view().reshape(10000)", 1.0 },
  { "a:expand(4, 3)", function() return a3:expand(4, 3) end, "np.broadcast_to(a, (4, 3))", 1.0 },
  { "nd.empty(3)", function() return nd.empty(3) end, "np.empty(3)", 1.0 },
  { "nd.zeros(3)", function() return nd.zeros(3) end, "np.zeros(3)", 1.0 },
  { "nd.full({3}, 1)", function() return nd.full({ 3 }, 1) end, "np.full(3, 1.)", 1.0 },
  { "a + b, 3 elements", function() return a3 + b3 end, "a + b", 0.5 },
  { "a * 0.016, 3 elements", function() return a3 * 0.016 end, "a * 0.016", 0.5 },
  { "-a, 3 elements", function() return -a3 end, "-a", 0.5 },
  { "a:exp(), 3 elements", function() return a3:exp() end, "np.exp(a)", 0.5 },
  { "a:add(b, out), 3 elements", function() return a3:add(b3, o3) end, "np.add(a, b, out=o)", 0.1 },
  { "a:mul(0.016, out), 3 elements", function() return a3:mul(0.016, o3) end, "np.multiply(a, 0.016, out=o)", 0.1 },
  { "a:neg(out), 3 elements", function() return a3:neg(o3) end, "np.negative(a, out=o)", 0.1 },
  { "a:exp(out), 3 elements", function() return a3:exp(o3) end, "np.exp(a, out=o)", 0.1 },
  { "s + s, 18000 float64", function() return s + s end, "s + s", 1.0 },
  { "4x4 float32 matmul, new", function() return A4:matmul(B4) end, "A4 @ B4", 0.5 },
  { "4x4 float64 matmul, new", function() return A8:matmul(B8) end, "A8 @ B8", 0.5 },
}
for _, r in ipairs(rows) do
  local t = lib.time(r[2])
  lib.row(r[1], t, "NumPy " .. r[3], lib.numpy(NP, r[3]), r[4])
end
-- s + s against nd's own out= version (target <= 1.5x)
local t = lib.interleave({ new = function() return s + s end, out = function() return s:add(s, so) end })
lib.row("s + s, new result", t.new, "nd s:add(s, out)", t.out, 1.5)

-- LuaJIT's own floor under the rows that miss (see the README's "Small
-- tensors"): a cdata of the FFI view's size alone, then stored in a
-- weak-keyed table as each view's anchor is (a table store keeps the
-- allocation from being sunk), and a 16-byte cdata. Then s + s with its
-- result released at once, as NumPy's reference count does: what is left
-- of the gap is the collector's (cycles, and blocks cold by reuse).
local ffi = require "ffi"
if pcall(ffi.typeof, "ndffi8_obj") then
  local OT, B16 = ffi.typeof("ndffi8_obj"), ffi.typeof("struct { double d[2]; }")
  local function VT() return OT(0) end
  local sink, keep, anchor = {}, setmetatable({}, { __mode = "k" }), {}
  local tiny = lib.time(function() sink[1] = B16() end)
  local bare = lib.time(function() sink[1] = VT() end)
  local kept = lib.time(function() local v = VT(); keep[v] = anchor; sink[1] = v end)
  local np_t = lib.numpy(NP, "m.T")
  lib.row("floor: a 16-byte cdata", tiny, "NumPy m.T", np_t)
  lib.row(("floor: a %d-byte cdata (a view)"):format(ffi.sizeof(OT, 0)), bare, "NumPy m.T", np_t)
  lib.row("floor: that cdata + its anchor stored", kept, "NumPy m.T", np_t)
  lib.row("m:t() against that floor", lib.time(function() return m:t() end), "the floor above", kept)
end
local t2 = lib.interleave({ rel = function() local r = s + s; r:release() end,
  out = function() return s:add(s, so) end })
lib.row("s + s, new result released at once", t2.rel, "nd s:add(s, out)", t2.out)

-- Under -joff: the path nd takes by itself vs the classic C API path.
local child = os.tmpname()
local f = assert(io.open(child, "w"))
f:write([[
package.path = ]] .. ("%q"):format(package.path) .. [[ .. ";" .. package.path
local lib = require "lib"
local nd = require "nd"
local A, B, O = nd.rand(4, 4, "float32"), nd.rand(4, 4, "float32"), nd.empty(4, 4, "float32")
local a, b, o = nd.rand(3, "float32"), nd.rand(3, "float32"), nd.empty(3, "float32")
local cases = {
  { "matmul(out) 4x4", function() return A:matmul(B, O) end },
  { "add(out) vec3", function() return a:add(b, o) end },
  { "get(2, 3)", function() return A:get(2, 3) end },
}
for _, c in ipairs(cases) do -- alternating rounds; the switch stays outside the timing
  local d, k = {}, {}
  for r = 1, 3 do
    nd.use_ffi(true); d[r] = lib.time(c[2], 3)
    nd.use_ffi(false); k[r] = lib.time(c[2], 3)
  end
  print(("%s\t%.9f\t%.9f"):format(c[1], lib.median(d), lib.median(k)))
end
]])
f:close()
local p = io.popen("luajit -joff " .. child)
for line in p:lines() do
  local name, d, c = line:match("^(.-)\t(%S+)\t(%S+)$")
  if name then lib.row("-joff " .. name, tonumber(d), "nd.use_ffi(false)", tonumber(c), 1.0) end
end
p:close()
os.remove(child)
