-- Issue 23's bench (`make bench BENCH=dtypes`): the new integer dtypes
-- against NumPy 1.24, one thread each side, nd's rounds interleaved,
-- medians: add and sum of 1 M int8 / int16 / uint16 elements, and sort
-- (values and stable int64 indices) against np.argsort(kind="stable") +
-- np.take_along_axis, the NumPy idiom giving both.
local lib = require "lib"
local nd = require "nd"

local threads = nd.get_num_threads()
nd.set_num_threads(1)
local M = 1000000
local RANGE = { int8 = { -128, 128 }, int16 = { -32768, 32768 }, uint16 = { 0, 65536 } }

local stmts, labels, nd_t = {}, {}, {}
local setup = { "rng = np.random.default_rng(1)" }
for _, d in ipairs({ "int8", "int16", "uint16" }) do
  local lo, hi = RANGE[d][1], RANGE[d][2]
  local a, b = nd.randint(lo, hi, { M }, d), nd.randint(lo, hi, { M }, d)
  setup[#setup + 1] = ("a_%s = rng.integers(%d, %d, %d, dtype=np.%s); b_%s = rng.integers(%d, %d, %d, dtype=np.%s)")
    :format(d, lo, hi, M, d, d, lo, hi, M, d)
  local tt = lib.interleave({
    add = function() return a + b end,
    sum = function() return a:sum() end,
    sort = function() return a:sort() end,
  }, 7)
  local function case(label, t, ref, stmt)
    labels[#labels + 1] = { label, t, ref }
    stmts[#stmts + 1] = stmt
  end
  case(("add 1M %s"):format(d), tt.add, "a + b", ("a_%s + b_%s"):format(d, d))
  case(("sum 1M %s (int64 result)"):format(d), tt.sum, "a.sum()", ("a_%s.sum()"):format(d))
  case(("sort 1M %s (values, stable indices)"):format(d), tt.sort,
    "argsort(stable)+take_along", ("i = np.argsort(a_%s, kind='stable'); np.take_along_axis(a_%s, i, 0)"):format(d, d))
end
local np = lib.numpy_batch(table.concat(setup, "\n"), stmts, 7, 1)
for i, l in ipairs(labels) do lib.row(l[1], l[2], l[3], np[i], 1.0) end
nd.set_num_threads(threads)

-- further parts of issue 23's bench, when present (bench/dtypes_*.lua)
local here = (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "bench"
local p = io.popen("ls " .. here .. "/dtypes_*.lua 2>/dev/null")
for f in p:lines() do
  if not f:match("_bench%.lua$") then
    print(("-- %s"):format(f))
    dofile(f)
    nd.set_num_threads(threads)
  end
end
p:close()
