-- A short tour of nd: run it with `make demo` or `bin/nd examples/tour.lua`.
local nd = require "nd"

local function section(title) print(("\n== %s"):format(title)) end

section "Making tensors"
local a = nd.tensor({ { 1, 2, 3 }, { 4, 5, 6 } }) -- numbers give float64
print(a)
print(nd.zeros(2, 3, "int32"))          -- sizes as numbers, dtype last
print(nd.full({ 2, 2 }, true))          -- booleans give bool
print(nd.arange(5))                     -- integral arguments give int64
print(nd.linspace(0, 1, 5))
print(nd.eye(3))

section "Looking inside"
local t = nd.arange(24):view(2, 3, 4)
print("size", t:size(), "stride", t:stride(), "dim", t:dim(), "numel", t:numel())
print("dtype", t:dtype(), "element_size", t:element_size(), "nbytes", t:nbytes())
print("size of the last dim", t:size(-1))

section "Elements (positions are 1-based; -1 is the last)"
print("t:get(2, 3, 4) =", t:get(2, 3, 4))
local v = nd.zeros(4)
v[2] = 7                                 -- 1-D: t[i] reads and writes
v:set(-1, 9)
print(v, "v[2] =", v[2])
print("a row of a matrix is a view:", a[2])

section "Views share storage (no copy)"
local at = a:t()
print(at)
print("transposed strides", at:stride(), "contiguous?", at:is_contiguous())
at:set(1, 2, 100)                        -- writes through to a
print("a after writing through its transpose:")
print(a)
print("same storage?", nd.same_storage(a, at), "offset of a[2]:", a[2]:storage_offset())

section "Printing big tensors summarises"
print(nd.arange(2000):view(40, 50))

section "Random numbers: one documented generator, same seed, same numbers"
nd.manual_seed(42)
local r1 = nd.rand(2, 3)
nd.manual_seed(42)
local r2 = nd.rand(2, 3)
print(r1)
print("same again?", r1:get(2, 3) == r2:get(2, 3))
print(nd.randn(2, 2, "float32"))
print(nd.randint(0, 10, { 8 }))

section "Errors name the function and the values"
print(select(2, pcall(nd.zeros, 2, -3)))
print(select(2, pcall(a.get, a, 3, 1)))
