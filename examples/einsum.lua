-- einsum on views: each contraction below is printed with its plan --
-- the order of the pairwise steps, each step's batched BLAS call (routine,
-- order, transpose flags, leading dims, batch count) and what it copied
-- (nothing, where BLAS can read the operands' own strides), then checked
-- against the same product written with matmul.
-- Run: bin/nd examples/einsum.lua
local nd = require "nd"
nd.manual_seed(7)

local function show(title, spec, ...)
  local p = nd.einsum_plan(spec, ...)
  print(("== %s: nd.einsum(%q)  [%s, result %s %s, %d allocation(s), %d bytes]")
    :format(title, spec, p.spec, p.dtype, #p.size > 0 and table.concat(p.size, "x") or "0-d",
      p.allocations, p.bytes))
  for i, pr in ipairs(p.prepare) do
    if pr.diagonal or pr.summed ~= "" then
      print(("   operand %d: %s%s"):format(i, pr.spec,
        pr.summed ~= "" and (" (sums " .. pr.summed .. ")") or " (a diagonal view)"))
    end
  end
  for s, st in ipairs(p.steps) do
    local call = st.kind -- "mul" or "copy"; a matmul step: its call's fields
    if st.call then
      local fields = { st.call.routine }
      for _, k in ipairs({ "order", "transa", "transb", "m", "n", "k", "lda", "ldb", "ldc", "incx", "incy", "batch" }) do
        if st.call[k] ~= nil then fields[#fields + 1] = k .. "=" .. tostring(st.call[k]) end
      end
      call = table.concat(fields, " ")
    end
    local copies = {}
    for _, cp in ipairs(st.copies) do
      copies[#copies + 1] = ("%s (%s, %d bytes)"):format(cp.operand, cp.why, cp.bytes)
    end
    print(("   step %d: operands %s  %s  a=[%s] b=[%s] out=[%s]"):format(s,
      table.concat(st.operands, ","), st.spec, st.views.a.labels,
      st.views.b and st.views.b.labels or "", st.views.out.labels))
    print(("           %s; copies: %s"):format(call,
      #copies == 0 and "none (zero-copy)" or table.concat(copies, "; ")))
  end
  return nd.einsum(spec, ...)
end

-- Attention scores: queries against keys, batched over batch and heads.
-- k's d is contracted along its last dim: BLAS reads it transposed.
local q, k = nd.rand(2, 8, 128, 64):float(), nd.rand(2, 8, 128, 64):float()
local scores = show("attention scores", "bhqd,bhkd->bhqk", q, k)
assert(nd.allclose(scores, nd.matmul(q, k:transpose(3, 4)), 1e-5, 1e-5))

-- The same with keys stored head-major as (b, k, h, d) -- a permuted view:
-- still no copy, the batch walk takes the strides.
local kv = nd.rand(2, 128, 8, 64):float()
local s2 = show("keys as a (b, k, h, d) view", "bhqd,bkhd->bhqk", q, kv)
assert(nd.allclose(s2, nd.matmul(q, kv:permute({ 1, 3, 4, 2 })), 1e-5, 1e-5))

-- A batched bilinear form x_n^T A y_n: two steps, the cheaper first.
local A = nd.rand(16, 16)
local x, y = nd.rand(1000, 16), nd.rand(1000, 16)
local bil = show("bilinear form", "ni,ij,nj->n", x, A, y)
assert(nd.allclose(bil, (nd.matmul(x, A) * y):sum(2)))

-- 10,000 points moved by 10,000 4x4 matrices (one per point).
local M, p = nd.rand(10000, 4, 4), nd.rand(10000, 4)
local moved = show("10,000 points by their own 4x4 matrices", "nij,nj->ni", M, p)
assert(nd.allclose(moved, nd.matmul(M, p:view(10000, 4, 1)):view(10000, 4)))

-- A chain in the cheapest order: (b c) first, 2e5 multiply-adds, not 2e7.
local a3, b3, c3 = nd.rand(1000, 10), nd.rand(10, 1000), nd.rand(1000, 10)
local chain = show("a chain", "ij,jk,kl->il", a3, b3, c3)
assert(nd.allclose(chain, nd.matmul(a3, nd.matmul(b3, c3))))

-- What copies look like: the contracted j, k of b are not one stride.
local b4 = nd.rand(5, 2, 4):permute({ 3, 2, 1 })
show("an operand BLAS cannot read in place", "ijk,jlk->il", nd.rand(3, 4, 5), b4)

-- Traces, diagonals and sums are views and reductions.
local m = nd.arange(9):view(3, 3)
print("trace", show("a trace", "ii", m):item(), "diagonal", show("a diagonal", "ii->i", m))
