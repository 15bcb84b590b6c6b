-- Allocation, and contiguous clone against memcpy of the same bytes.
-- A clone writes into fresh memory: the kernel zeroes each new page on
-- first touch (clear_page), which costs about as much as the copy itself;
-- copy_ into an existing tensor shows the copy alone.
local lib = require "lib"
local nd = require "nd"
local ref = require "ref_copy"

for _, n in ipairs({ 1, 1000, 100000, 1000000 }) do
  local t = lib.interleave({
    empty = function() return nd.empty(n) end,
    zeros = function() return nd.zeros(n) end,
  })
  lib.row(("nd.empty(%d) float64"):format(n), t.empty)
  lib.row(("nd.zeros(%d) float64"):format(n), t.zeros)
end

local a = nd.rand(4096, 4096, "float32")
local bytes = a:nbytes()
local dst = nd.empty(4096, 4096, "float32"):fill_(0)
local clone, copy, memcpy = {}, {}, {}
for _ = 1, 7 do -- interleaved: one clone, one copy_, one memcpy per round
  local t0 = lib.now(); local c = a:clone(); clone[#clone + 1] = lib.now() - t0
  c = nil; collectgarbage()
  t0 = lib.now(); dst:copy_(a); copy[#copy + 1] = lib.now() - t0
  memcpy[#memcpy + 1] = ref.memcpy(bytes, 1)
end
local m = lib.median(memcpy)
lib.row("clone 4096x4096 float32 (fresh memory)", lib.median(clone), "memcpy 64 MiB", m)
lib.row("copy_ 4096x4096 float32 (existing memory)", lib.median(copy), "memcpy 64 MiB", m)
