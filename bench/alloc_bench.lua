-- Allocation and contiguous clone against memcpy of the same bytes.
local lib = require "lib"
local nd = require "nd"
local ref = require "ref_copy"

for _, n in ipairs({ 1, 1000, 1000000 }) do
  local t = lib.interleave({
    empty = function() return nd.empty(n) end,
    zeros = function() return nd.zeros(n) end,
  })
  lib.row(("nd.empty(%d) float64"):format(n), t.empty)
  lib.row(("nd.zeros(%d) float64"):format(n), t.zeros)
end

local a = nd.rand(4096, 4096, "float32")
local bytes = a:nbytes()
local samples_nd, samples_ref = {}, {}
for _ = 1, 7 do -- interleaved: one clone, then one memcpy, per round
  local t0 = lib.now(); local c = a:clone(); samples_nd[#samples_nd + 1] = lib.now() - t0
  c = nil; collectgarbage()
  samples_ref[#samples_ref + 1] = ref.memcpy(bytes, 1)
end
lib.row("clone 4096x4096 float32 (contiguous)", lib.median(samples_nd),
  "memcpy 64 MiB", lib.median(samples_ref))
