-- einsum against NumPy 1.24 over generated specs (spec/fixtures/
-- einsum_cases.lua: 1-4 operands, ellipses, repeated labels, implicit
-- outputs, size-1 broadcasting; contiguous, transposed, stepped, flipped
-- and expanded operands; float64, float32, int64, int32), each plan
-- checked against what the call allocates; then the plans' choices, the
-- notation's corners and the errors.
local nd = require "nd"
local testing = require "nd.testing"
local cases = require "spec.fixtures.einsum_cases"
local unpack = table.unpack or unpack

local function prod(s)
  local n = 1
  for _, v in ipairs(s) do n = n * v end
  return n
end
-- operand k's logical values (the fixture's formula), contiguous
local function values(shape, k, dtype)
  local f = nd.arange(prod(shape), "int64")
  local v = nd.remainder(f * 37 + (k - 1) * 11, 19) - 9
  return v:view(#shape > 0 and shape or {}):to(dtype)
end
local function layout(shape, k, dtype, how, expand_dim)
  local v = values(shape, k, dtype)
  local n = #shape
  if how == "transposed" and n >= 2 then
    local rev = {}
    for i = 1, n do rev[i] = n + 1 - i end
    return v:permute(rev):contiguous():permute(rev)
  elseif how == "stepped" and n >= 1 then
    local big, ix = {}, {}
    for i = 1, n do big[i] = 2 * shape[i]; ix[i] = { 1, 2 * shape[i], 2 } end
    local s = nd.zeros(big, dtype)[ix]
    s:copy_(v)
    return s
  elseif how == "flipped" and n >= 1 then
    local dims = {}
    for i = 1, n do dims[i] = i end
    local f = nd.zeros(shape, dtype):flip(dims)
    f:copy_(v)
    return f
  elseif how == "expanded" then
    local base = {}
    for i = 1, n do base[i] = shape[i] end
    base[expand_dim] = 1
    return values(base, k, dtype):expand(shape)
  end
  return v
end

describe("einsum against NumPy", function()
  it("computes every generated spec in every layout and allocates what its plan says", function()
    for c, case in ipairs(cases) do
      local ops = {}
      for k, shape in ipairs(case.shapes) do
        ops[k] = layout(shape, k, case.dtype, case.layouts[k], case.expand[k])
      end
      local before = {}
      for k, t in ipairs(ops) do before[k] = t:clone() end
      local r
      local count, bytes = testing.allocations(function()
        r = nd.einsum(case.spec, unpack(ops))
      end)
      local want = nd.tensor(case.values, case.dtype):view(#case.size > 0 and case.size or {})
      local ok, why = testing.tensor_equal(want, r)
      assert(ok, ("case %d %q: %s"):format(c, case.spec, tostring(why)))
      assert.is_true(r:is_contiguous())
      for k, t in ipairs(ops) do -- no operand written
        assert(testing.tensor_equal(before[k], t), ("case %d: operand %d changed"):format(c, k))
        assert.is_false(r:numel() > 0 and nd.same_storage(r, t))
      end
      local p = nd.einsum_plan(case.spec, ops)
      assert(p.bytes == bytes and p.allocations == count,
        ("case %d %q: the plan says %d allocations of %d bytes, the call made %d of %d")
          :format(c, case.spec, p.allocations, p.bytes, count, bytes))
    end
  end)
end)

describe("einsum_plan", function()
  it("puts batched products on the operands' own strides: no copies", function()
    local a, b = nd.rand(4, 8, 16):float(), nd.rand(4, 16, 8):float()
    local p = nd.einsum_plan("bij,bjk->bik", a, b)
    assert.equals(1, #p.steps)
    local s = p.steps[1]
    assert.equals("matmul", s.kind)
    assert.equals("sgemm", s.call.routine)
    assert.equals(4, s.call.batch)
    assert.same({}, s.copies)
    -- transposed operands: BLAS's flags, not copies
    local x, y = nd.rand(16, 8):t(), nd.rand(8, 16):t()
    p = nd.einsum_plan("ij,jk->ik", x, y)
    assert.same({}, p.steps[1].copies)
    assert.equals("T", p.steps[1].call.transa)
    assert.equals("T", p.steps[1].call.transb)
    -- attention scores: q and k share b, h; d contracted
    local q, k = nd.rand(2, 3, 5, 4), nd.rand(2, 3, 6, 4)
    p = nd.einsum_plan("bhqd,bhkd->bhqk", q, k)
    assert.same({}, p.steps[1].copies)
    assert.equals("T", p.steps[1].call.transb)
    assert.equals(6, p.steps[1].call.batch)
    assert.equals(p.bytes, 2 * 3 * 5 * 6 * 8)
  end)

  it("contracts a chain in the cheapest order", function()
    local a, b, c = nd.ones(100, 3), nd.ones(3, 100), nd.ones(100, 3)
    local p = nd.einsum_plan("ij,jk,kl->il", a, b, c)
    assert.same({ { 2, 3 }, { 1, 4 } }, p.order)
    assert.equals("jk,kl->jl", p.steps[1].spec)
    assert.equals("ij,jl->il", p.steps[2].spec)
    local want = nd.matmul(a, nd.matmul(b, c))
    assert.tensor_equal(want, nd.einsum("ij,jk,kl->il", a, b, c))
  end)

  it("says what it copies and why", function()
    -- j, k contracted: one stride in b even with l between them in memory
    local a = nd.rand(3, 4, 5)
    local p = nd.einsum_plan("ijk,jlk->il", a, nd.rand(2, 4, 5):permute({ 2, 1, 3 }))
    assert.same({}, p.steps[1].copies)
    -- not one stride in b: b is copied
    p = nd.einsum_plan("ijk,jlk->il", a, nd.rand(5, 2, 4):permute({ 3, 2, 1 }))
    assert.equals(1, #p.steps[1].copies)
    assert.equals("b", p.steps[1].copies[1].operand)
    assert.matches("contracted labels", p.steps[1].copies[1].why)
    assert.equals(4 * 2 * 5 * 8, p.steps[1].copies[1].bytes)
    -- mixed dtypes promote: the float32 operand is converted
    p = nd.einsum_plan("ij,jk", nd.rand(3, 4):float(), nd.rand(4, 2))
    assert.equals("float64", p.dtype)
    assert.equals("a", p.steps[1].copies[1].operand)
    assert.equals("converted to float64", p.steps[1].copies[1].why)
    -- a stepped operand BLAS cannot read
    local s = nd.rand(6, 8)[{ { 1, 6, 2 }, { 1, 8, 2 } }]
    p = nd.einsum_plan("ij,jk", s, nd.rand(4, 2))
    assert.equals("BLAS cannot read its strides", p.steps[1].copies[1].why)
  end)

  it("reports the views, the preparation and the result", function()
    local t = nd.rand(3, 3, 4)
    local p = nd.einsum_plan("iij,jk->ik", t, nd.rand(4, 2))
    assert.is_true(p.prepare[1].diagonal)
    assert.same({ 3, 4 }, p.prepare[1].view.size)
    assert.same({ 16, 1 }, p.prepare[1].view.stride)
    assert.equals("i,j", p.prepare[1].view.labels)
    assert.equals("iij,jk->ik", p.spec)
    assert.same({ 3, 2 }, p.size)
    p = nd.einsum_plan("ij,jk->i", nd.rand(3, 4), nd.rand(4, 5))
    assert.equals("k", p.prepare[2].summed)
    p = nd.einsum_plan("...ij,...jk", nd.rand(2, 3, 4), nd.rand(4, 5))
    assert.equals("zij,jk->zik", p.spec)
  end)
end)

describe("einsum's notation", function()
  it("orders an implicit output alphabetically, capitals first", function()
    local a = nd.rand(2, 3)
    assert.tensor_equal(a:t():contiguous(), nd.einsum("ba", a))
    local r = nd.einsum("Ab,ab", nd.arange(4):view(2, 2), nd.ones(2, 2, "int64"))
    assert.tensor_equal(nd.tensor({ { 1, 1 }, { 5, 5 } }, "int64"), r) -- "Aa"
  end)

  it("takes diagonals, traces, sums and 0-d results", function()
    local m = nd.arange(9):view(3, 3)
    assert.equals(12, nd.einsum("ii", m):item())
    assert.equals(0, nd.einsum("ii", m):dim())
    assert.tensor_equal(nd.tensor({ 0, 4, 8 }, "int64"), nd.einsum("ii->i", m))
    assert.tensor_equal(m:sum(1), nd.einsum("ij->j", m))
    local s = nd.tensor(3.5):view({})
    assert.equals(3.5, nd.einsum("", s):item())
    assert.equals(3.5, nd.einsum("->", s):item())
  end)

  it("returns a new tensor, never a view of an operand", function()
    local a = nd.rand(3, 4)
    local r = nd.einsum("ij", a)
    assert.is_false(nd.same_storage(a, r))
    r:fill_(7)
    assert.is_true(a:max() < 7)
    assert.is_false(nd.same_storage(a, nd.einsum("ij->ji", a)))
  end)

  it("takes the operands in a table too", function()
    local a, b = nd.rand(2, 3), nd.rand(3, 2)
    assert.tensor_equal(nd.einsum("ij,jk", a, b), nd.einsum("ij,jk", { a, b }))
  end)

  it("goes through the integer loop for integers and promotes as matmul", function()
    local a, b = nd.arange(6, "int32"):view(2, 3), nd.arange(6, "int32"):view(3, 2)
    local r = nd.einsum("ij,jk", a, b)
    assert.equals("int32", r:dtype())
    assert.tensor_equal(nd.matmul(a, b), r)
    assert.equals("int64", nd.einsum("ij,jk", a, b:long()):dtype())
    assert.equals("float32", nd.einsum("ij,jk", a, b:float()):dtype())
    local t = nd.tensor({ true, false, true })
    assert.equals(true, nd.einsum("i,i", t, t):item())
    assert.equals("bool", nd.einsum("i->", t):dtype())
  end)

  it("handles empty operands", function()
    local r = nd.einsum("ij,jk", nd.zeros(2, 0), nd.zeros(0, 3))
    assert.tensor_equal(nd.zeros(2, 3), r)
    assert.equals("{0, 3}", tostring(nd.einsum("ij,jk", nd.zeros(0, 4), nd.zeros(4, 3)):size()))
  end)
end)

describe("einsum errors", function()
  local a, b = nd.rand(2, 3), nd.rand(3, 4)
  local cases = {
    { { "ij,j#", a, nd.rand(3) }, 'einsum: "ij,j#": unknown character \'#\' (labels are letters a-z, A-Z) (at character 5)' },
    { { "ij,jk->iz", a, b }, 'output label z is in no operand (at character 9)' },
    { { "ij,jk->ii", a, b }, 'output label i repeats (at character 9)' },
    { { "ij,jk", a }, '2 operands in the spec, 1 tensor given' },
    { { "ij", a, b }, '1 operand in the spec, 2 tensors given' },
    { { "i,j,k", a, b }, '3 operands in the spec, 2 tensors given' },
    { { "ijk,jk", a, b }, 'operand 1 has 2 dims, its term names 3' },
    { { "ij,kl->ij", a, b }, "" },
    { { "ij,ik", a, b }, 'label i has size 2 in operand 1 and 3 in operand 2' },
    { { "...i...,j", a, nd.rand(3) }, "a second '...' in operand 1 (at character 5)" },
    { { "i.j", a }, "a '.' that is not part of '...' (at character 2)" },
    { { "ij-jk", a }, "a '-' not followed by '>' (at character 3)" },
    { { "...i->i", nd.rand(3, 4) }, "'...' dims must appear in the output" },
    { { "ii", nd.rand(2, 3) }, 'label i repeats in operand 1 over dims of sizes 2 and 3' },
    { { 5, a }, 'einsum: the spec (argument 1) must be a string like "ij,jk->ik", got number' },
    { { "ij,jk", a, 5 }, "einsum" },
  }
  it("quote the spec and point at the part", function()
    for _, c in ipairs(cases) do
      if c[2] == "" then
        assert.has_no.errors(function() nd.einsum(unpack(c[1])) end)
      else
        assert_error_matches(function() nd.einsum(unpack(c[1])) end, c[2])
      end
    end
  end)
  it("einsum_plan raises the same", function()
    assert_error_matches(function() nd.einsum_plan("ij,jk->iz", a, b) end, 'einsum_plan: "ij,jk->iz": output label z')
  end)
end)
