-- Views are O(1): creating one over 1e8 elements costs what it costs over
-- 10. contiguous() of a transposed matrix is a blocked SIMD transpose,
-- compared with memcpy of the same bytes (warm and fresh destinations),
-- with the naive strided loop and with NumPy's ascontiguousarray(a.T).
local lib = require "lib"
local nd = require "nd"
local ref = require "ref_copy"
local refv = require "ref_views"

-- ---- O(1) view creation ----
local big = nd.empty(1e8, "uint8"):view(10000, 10000)
local small = nd.empty(10, "uint8"):view(2, 5)
local ops = {
  transpose = function(t) return t:transpose(1, 2) end,
  narrow = function(t) return t:narrow(2, 2, 1) end,
  expand = function(t) return t:unsqueeze(1):expand(4, -1, -1) end,
  ["t[{{},{1,-1,2}}]"] = function(t) return t[{ {}, { 1, -1, 2 } }] end,
  ["view(-1)"] = function(t) return t:view(-1) end,
}
local names = {}
for k in pairs(ops) do names[#names + 1] = k end
table.sort(names)
for _, name in ipairs(names) do
  local f = ops[name]
  local t = lib.interleave({ big = function() return f(big) end, small = function() return f(small) end })
  lib.row(name .. " of 1e8 uint8 (vs of 10 elements)", t.big, name .. " of 10 uint8", t.small, 1.5)
end

-- ---- contiguous() of a transposed matrix ----
-- Targets apply where the issue names them (4096x4096 float32 only).
local function transpose_rows(n, dtype, np_dtype, np_target, mem_target)
  local a = nd.rand(n, n, "float64"):to(dtype)
  local at = a:t()
  local bytes = a:nbytes()
  local s_nd, s_fresh, s_warm = {}, {}, {}
  for _ = 1, 9 do -- interleaved: nd, then the references, per round
    collectgarbage()
    local t0 = lib.now(); local c = at:contiguous(); s_nd[#s_nd + 1] = lib.now() - t0
    assert(c:is_contiguous() and c:get(1, 2) == at:get(1, 2))
    c = nil; collectgarbage()
    s_fresh[#s_fresh + 1] = refv.memcpy_fresh(bytes, 1)
    s_warm[#s_warm + 1] = ref.memcpy(bytes, 1)
  end
  local t_nd = lib.median(s_nd)
  local tag = ("%dx%d %s"):format(n, n, dtype)
  lib.row("t():contiguous() " .. tag, t_nd, "memcpy, fresh dst", lib.median(s_fresh), mem_target)
  lib.row("t():contiguous() " .. tag, t_nd, "memcpy, warm dst", lib.median(s_warm))
  -- Into an existing tensor: no allocation, no page faults on either side.
  local dst = nd.empty(n, n, dtype)
  local t_copy = lib.time(function() dst:copy_(at) end)
  lib.row("dst:copy_(a:t()) " .. tag, t_copy, "memcpy, warm dst", lib.median(s_warm))
  local t_np = lib.numpy(("a = np.random.rand(%d, %d).astype(np.%s)"):format(n, n, np_dtype),
    "np.ascontiguousarray(a.T)")
  if t_np then lib.row("t():contiguous() " .. tag, t_nd, "numpy ascontiguousarray(a.T)", t_np, np_target) end
  return t_nd
end

transpose_rows(4096, "float32", "float32", 0.1, 1.5) -- the issue's targets: 10x NumPy, 1.5x memcpy
lib.row("naive strided transpose 4096x4096 float32", refv.naive_transpose(4096, 3), "memcpy, fresh dst",
  refv.memcpy_fresh(4096 * 4096 * 4, 7))
transpose_rows(4096, "float64", "float64")
transpose_rows(8192, "uint8", "uint8")
transpose_rows(1000, "float32", "float32") -- 4 MB: not a multiple of the tile

-- ---- other strided copies: coalesced dims and batched transposes ----
local x = nd.rand(64, 256, 256, "float64"):to("float32")
local bytes = x:nbytes()
local cases = {
  { "narrow(3,2,254):contiguous() 64x256x256 f32", function() return x:narrow(3, 2, 254):contiguous() end },
  { "permute(2,1,3):contiguous() 64x256x256 f32", function() return x:permute(2, 1, 3):contiguous() end },
  { "transpose(2,3):contiguous() 64x256x256 f32", function() return x:transpose(2, 3):contiguous() end },
  { "permute(3,2,1):contiguous() 64x256x256 f32", function() return x:permute(3, 2, 1):contiguous() end },
  { "flip(3):contiguous() 64x256x256 f32", function() return x:flip(3):contiguous() end },
}
for _, c in ipairs(cases) do
  local s_nd, s_ref = {}, {}
  for _ = 1, 7 do
    collectgarbage()
    local t0 = lib.now(); local r = c[2](); s_nd[#s_nd + 1] = lib.now() - t0
    r = nil; collectgarbage()
    s_ref[#s_ref + 1] = refv.memcpy_fresh(bytes, 1)
  end
  lib.row(c[1], lib.median(s_nd), "memcpy 16 MiB, fresh dst", lib.median(s_ref))
end
local t_np = lib.numpy("a = np.random.rand(64, 256, 256).astype(np.float32)",
  "np.ascontiguousarray(a.transpose(2, 1, 0))")
if t_np then
  local s = {}
  for _ = 1, 7 do
    collectgarbage()
    local t0 = lib.now(); local r = x:permute(3, 2, 1):contiguous(); s[#s + 1] = lib.now() - t0
    r = nil
  end
  lib.row("permute(3,2,1):contiguous() 64x256x256 f32", lib.median(s), "numpy same", t_np)
end
