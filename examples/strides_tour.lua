-- The strides story, step by step: how a strided tensor finds its
-- elements, and how views change only (size, stride, offset).
-- Run: bin/nd examples/strides_tour.lua   (or `make demo`)
local nd = require "nd"

local function show(name, t)
  print(("%-40s size %-14s stride %-16s offset %d%s"):format(name, tostring(t:size()),
    tostring(t:stride()), t:storage_offset(), t:is_contiguous() and "  contiguous" or ""))
end
local function section(title) print("\n== " .. title) end

section("1. Row-major layout: the element (i,j,k,l) lives at offset + sum(index * stride)")
local t = nd.arange(24):reshape(1, 2, 3, 4)
show("t = arange(24):reshape(1,2,3,4)", t)
print("storage:", table.concat(t:storage():totable(), " "))
-- Row-major strides: stride[d] = product of the sizes after d.
local s = t:stride()
print(("t[{1,2,3,4}] = storage[%d + 0*%d + 1*%d + 2*%d + 3*%d + 1] = %d"):format(
  t:storage_offset(), s[1], s[2], s[3], s[4], t[{ 1, 2, 3, 4 }]))

section("2. Column-major is another set of strides over the same formula")
local cm = nd.arange(6):as_strided({ 2, 3 }, { 1, 2 })
show("as_strided({2,3}, {1,2})", cm)
print("storage:", table.concat(cm:storage():totable(), " "), " as a matrix:")
print(cm)
print("(column-major: stride[d] = product of the sizes before d; element (i,j) at i + 2*j)")

section("3. permute / transpose: swap strides, move nothing")
local p = t:permute(2, 3, 4, 1)
show("t:permute(2,3,4,1)", p)
print("same storage:", nd.same_storage(p, t), "- a size-1 dim's stride does not matter, so still contiguous")
local tt = t:transpose(3, 4)
show("t:transpose(3,4)", tt)

section("4. Broadcasting: a stride of 0 repeats elements without copying")
local row = nd.arange(3)
local b = row:unsqueeze(1):expand(4, 3)
show("arange(3):unsqueeze(1):expand(4,3)", b)
print(b)
print("storage still has", b:storage():numel(), "elements; writing into b is refused:")
print("  ", select(2, pcall(function() b:fill_(1) end)))

section("5. Slicing moves the offset and scales strides")
local sl = t[{ {}, {}, {}, 3 }]
show("t[{{},{},{},3}] (seeds' t[:, :, :, 2])", sl)
print(sl)
local st = t:view(24)[{ { 2, 24, 5 } }]
show("t:view(24)[{{2,24,5}}]", st)
local rev = t:view(24)[{ { -1, 1, -3 } }]
show("t:view(24)[{{-1,1,-3}}] (negative step)", rev)
print("values:", table.concat(rev:totable(), " "))

section("6. Reshape after slicing: a view when strides can express it")
local r = sl:reshape(3, 2)
show("t[{{},{},{},3}]:reshape(3,2)", r)
print("a view?", nd.same_storage(r, t), "- strides {8, 4}: every 4th element of the storage, from offset 2")
print(r)

section("7. contiguous: a compact copy when (and only when) needed")
local c = tt:contiguous()
show("t:transpose(3,4):contiguous()", c)
print("new storage?", not nd.same_storage(c, t), "   contiguous() of a contiguous tensor is itself:", t:contiguous() == t)

section("8. The view-after-transpose error")
local m = nd.arange(6):reshape(2, 3)
show("m = arange(6):reshape(2,3)", m)
show("m:t()", m:t())
local ok, err = pcall(function() return m:t():view(6) end)
print("m:t():view(6) ->", err)
show("m:t():reshape(6) copies instead", m:t():reshape(6))
print(m:t():reshape(6))
