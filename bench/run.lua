-- `make bench`: runs every bench/*_bench.lua (or those named on the command
-- line) and prints each one's table. Times are medians of interleaved runs.
local here = arg[0]:match("^(.*)/[^/]*$") or "."
package.path = here .. "/?.lua;" .. package.path
local build = os.getenv("ND_BUILD") or "build"
if not build:match("^/") then build = here .. "/../" .. build end
package.cpath = build .. "/bench/?.so;" .. package.cpath
local lib = require "lib"
-- nd's own Lua heap (what every collection traverses): a row of its own
collectgarbage(); collectgarbage()
local heap0 = collectgarbage("count")
local nd = require "nd"
collectgarbage(); collectgarbage()
local nd_heap = collectgarbage("count") - heap0

local files = {}
if #arg > 0 then
  for i = 1, #arg do files[#files + 1] = here .. "/" .. arg[i] .. "_bench.lua" end
else
  local p = io.popen("ls " .. here .. "/*_bench.lua")
  for line in p:lines() do files[#files + 1] = line end
  p:close()
end
print(("nd bench: %s threads; NumPy %s; nd's Lua heap after require: %.0f KB"):format(
  nd.get_num_threads and nd.get_num_threads() or 1,
  lib.has_numpy() and "present" or "absent", nd_heap))
for _, f in ipairs(files) do
  local title = f:match("([^/]*)_bench%.lua$")
  dofile(f)
  lib.print_rows(title)
end
