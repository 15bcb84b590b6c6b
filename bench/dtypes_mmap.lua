-- Issue 23's mapped-file rows (run at the end of bench/dtypes_bench.lua, or
-- alone: bin/nd bench/dtypes_mmap.lua): nd.load(path, {mmap = "r"}) of a
-- 1 GiB .npy file and nd.safetensors.load(path, {mmap = true}) of a 1 GiB
-- safetensors file, each the median of several loads (the tensor dropped
-- and collected between them: a mapping and its file each time). The
-- files are made sparse in /tmp (a header, then a seek to the end) and
-- deleted after. Target: at most 1 ms each -- the header, not the data.
local alone = arg and arg[0] and arg[0]:match("dtypes_mmap%.lua$")
if alone then package.path = (arg[0]:match("^(.*)/") or ".") .. "/?.lua;" .. package.path end
local lib = require "lib"
local nd = require "nd"

local GiB = 2 ^ 30
local function sparse(path, head, total)
  local f = assert(io.open(path, "wb"))
  f:write(head)
  f:seek("set", total - 1)
  f:write("\0")
  f:close()
end

-- .npy 1.0: the dict padded with spaces to a 64-byte boundary
local npy = os.tmpname()
local dict = ("{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }"):format(GiB / 4)
local hlen = 64 * math.ceil((10 + #dict + 1) / 64) - 10
sparse(npy, "\147NUMPY\1\0" .. string.char(hlen % 256, math.floor(hlen / 256))
  .. dict .. (" "):rep(hlen - #dict - 1) .. "\n", 10 + hlen + GiB)

-- safetensors: one float32 tensor of 1 GiB
local st = os.tmpname()
local json = ('{"x":{"dtype":"F32","shape":[%d],"data_offsets":[0,%d]}}'):format(GiB / 4, GiB)
json = json .. (" "):rep((8 - #json % 8) % 8)
local len = ""
for k = 0, 7 do len = len .. string.char(math.floor(#json / 256 ^ k) % 256) end
sparse(st, len .. json, 8 + #json + GiB)

local cases = {
  { "nd.load(path, {mmap = \"r\"}) 1 GiB .npy", function()
    local t = nd.load(npy, { mmap = "r" })
    assert(t:numel() == GiB / 4)
  end },
  { "nd.safetensors.load(path, {mmap = true}) 1 GiB", function()
    local t = nd.safetensors.load(st, { mmap = true })
    assert(t.x:numel() == GiB / 4)
  end },
}
for _, c in ipairs(cases) do
  local times = {}
  for i = 1, 15 do
    collectgarbage()
    local t0 = lib.now()
    c[2]()
    times[i] = lib.now() - t0
  end
  collectgarbage()
  lib.row(c[1], lib.median(times), "target 1 ms", 1e-3, 1.0)
end
os.remove(npy)
os.remove(st)
if alone then lib.print_rows("mapped files (issue 23)") end
