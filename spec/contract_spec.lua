-- Contractions: tensordot, inner, kron, cross, dist, normalize against
-- plain-Lua references over nested tables, in plain and odd layouts
-- (transposed, stepped, flipped, expanded), and their errors.
local nd = require "nd"
local unpack = table.unpack or unpack

-- t's elements in row-major order
local function flat(t) return t:contiguous():view(-1):totable() end
local function close(got, want, tol)
  assert.equals(#want, #got)
  for i = 1, #want do
    assert(math.abs(got[i] - want[i]) <= (tol or 0) * math.max(1, math.abs(want[i])),
      ("element %d: %s, want %s"):format(i, tostring(got[i]), tostring(want[i])))
  end
end
local function odd(t) -- t, and its values stepped, flipped and transposed
  local d = t:dim()
  local big = nd.stack({ t, nd.zeros(t:size()):to(t:dtype()) }, d + 1) -- every other element is t's
  local stepped = big:select(d + 1, 1)
  local flipped = t:flip(1):contiguous():flip(1)
  local tr = t:dim() >= 2 and t:transpose(1, 2):contiguous():transpose(1, 2) or t
  return { t, stepped, flipped, tr }
end

-- tensordot by definition: sum over the contracted index tuple
local function ref_tensordot(a, b, da, db)
  local as, bs = a:size(), b:size()
  local fa, fb = {}, {}
  local ca, cb = {}, {}
  for _, d in ipairs(da) do ca[d] = true end
  for _, d in ipairs(db) do cb[d] = true end
  for i = 1, #as do if not ca[i] then fa[#fa + 1] = i end end
  for i = 1, #bs do if not cb[i] then fb[#fb + 1] = i end end
  local function each(dims, sizes, f) -- every index tuple over dims
    local idx = {}
    local function rec(k)
      if k > #dims then return f(idx) end
      for v = 1, sizes[dims[k]] do idx[k] = v; rec(k + 1) end
    end
    rec(1)
  end
  local out = {}
  each(fa, as, function(ia)
    local iac = { unpack(ia) }
    each(fb, bs, function(ib)
      local s = 0
      each(da, as, function(ik)
        local xa, xb = {}, {}
        for k, d in ipairs(fa) do xa[d] = iac[k] end
        for k, d in ipairs(da) do xa[d] = ik[k] end
        for k, d in ipairs(fb) do xb[d] = ib[k] end
        for k, d in ipairs(db) do xb[d] = ik[k] end
        s = s + a:get(unpack(xa)) * b:get(unpack(xb))
      end)
      out[#out + 1] = s
    end)
  end)
  return out
end

describe("tensordot", function()
  before_each(function() nd.manual_seed(3) end)
  it("contracts any dims of any layout, by count or by lists", function()
    local A, B = nd.randn(2, 3, 4), nd.randn(4, 3, 5)
    for _, a in ipairs(odd(A)) do
      for _, b in ipairs(odd(B)) do
        close(flat(nd.tensordot(a, b, { { 3, 2 }, { 1, 2 } })), ref_tensordot(a, b, { 3, 2 }, { 1, 2 }), 1e-12)
        close(flat(nd.tensordot(a, b, { { -1 }, { 1 } })), ref_tensordot(a, b, { 3 }, { 1 }), 1e-12)
      end
    end
    local r = nd.tensordot(A, B:permute(1, 2, 3):narrow(3, 1, 5), 1)
    assert.same({ 2, 3, 3, 5 }, { r:size(1), r:size(2), r:size(3), r:size(4) })
    close(flat(r), ref_tensordot(A, B, { 3 }, { 1 }), 1e-12)
    -- 0 dims: the outer product; all dims: a 0-d tensor
    local o = nd.tensordot(nd.tensor({ 1, 2 }), nd.tensor({ 3, 4, 5 }), 0)
    assert.same({ { 3, 4, 5 }, { 6, 8, 10 } }, o:totable())
    local s = nd.tensordot(A, A, { { 1, 2, 3 }, { 1, 2, 3 } })
    assert.equals(0, s:dim())
    close({ s:item() }, { (A * A):sum() }, 1e-12)
  end)
  it("promotes, takes integers, and never returns a view", function()
    local a = nd.arange(6):view(2, 3)
    local r = nd.tensordot(a, nd.ones(3, "int32"), 1)
    assert.same({ 3, 12 }, r:totable())
    assert.equals("int64", r:dtype())
    assert.equals("float64", nd.tensordot(a:float(), nd.ones(3), 1):dtype())
    local e = nd.eye(3)
    assert.is_false(nd.same_storage(nd.tensordot(e, nd.ones(1), { {}, {} }), e))
  end)
  it("copies no operand whose contracted dims some order makes one stride", function()
    local testing = require "nd.testing"
    local a = nd.rand(3, 4, 5)
    local b = nd.rand(4, 5, 2):permute({ 2, 1, 3 }) -- (5, 4, 2), dims 1 and 2 one stride
    local r
    local count, bytes = testing.allocations(function() r = nd.tensordot(a, b, { { 3, 2 }, { 1, 2 } }) end)
    assert.equals(1, count) -- the result only
    assert.equals(3 * 2 * 8, bytes)
    local want = nd.tensordot(a:contiguous(), b:contiguous(), { { 3, 2 }, { 1, 2 } })
    assert.is_true(nd.allclose(want, r))
  end)

  it("checks its arguments", function()
    local a, b = nd.ones(2, 3), nd.ones(4, 3)
    assert_error_matches(function() nd.tensordot(a, b, 1) end, "tensordot: dim 2 of a has size 3, dim 1 of b size 4")
    assert_error_matches(function() nd.tensordot(a, b, 3) end, "tensordot: cannot contract 3 dims")
    assert_error_matches(function() nd.tensordot(a, b, { { 2, 2 }, { 2, 2 } }) end, "tensordot: dim 2 repeated")
    assert_error_matches(function() nd.tensordot(a, b, { { 2 }, { 2, 1 } }) end, "tensordot: 1 dims of a against 2 of b")
    assert_error_matches(function() nd.tensordot(a, b, "x") end, "tensordot: dims must be a count or two tables")
    assert_error_matches(function() nd.tensordot(a, b, { { 3 }, { 2 } }) end, "tensordot")
    assert_error_matches(function() nd.tensordot(a, b) end, "tensordot")
    assert_error_matches(function() nd.tensordot(a, b, 1, 2) end, "tensordot: takes (a, b, dims), got 4 arguments")
  end)
end)

describe("inner", function()
  it("gives a number for two vectors and contracts last dims otherwise", function()
    assert.equals(32, nd.inner(nd.tensor({ 1, 2, 3 }), nd.tensor({ 4, 5, 6 })))
    local a, b = nd.randn(2, 3), nd.randn(4, 3)
    close(flat(nd.inner(a, b)), ref_tensordot(a, b, { 2 }, { 2 }), 1e-12)
    close(flat(nd.inner(a:t():contiguous():t(), b:flip(1))), ref_tensordot(a, b:flip(1), { 2 }, { 2 }), 1e-12)
    assert.same({ { 2, 4, 6 }, { 8, 10, 12 } }, nd.inner(nd.tensor(2), nd.tensor({ { 1, 2, 3 }, { 4, 5, 6 } })):totable())
    assert_error_matches(function() nd.inner(nd.ones(3), nd.ones(2)) end, "inner: last dims of sizes 3 and 2 differ")
  end)
end)

describe("kron", function()
  it("scales blocks of b by a's elements, padding ranks, any layout", function()
    local a, b = nd.tensor({ { 1, 2 }, { 3, 4 } }), nd.tensor({ { 0, 1 }, { 1, 0 } })
    local want = { { 0, 1, 0, 2 }, { 1, 0, 2, 0 }, { 0, 3, 0, 4 }, { 3, 0, 4, 0 } }
    assert.same(want, nd.kron(a, b):totable())
    assert.same(want, nd.kron(a:t():contiguous():t(), b:flip(1):contiguous():flip(1)):totable())
    assert.same({ { 1, 2, 2, 4 } }, nd.kron(nd.tensor({ 1, 2 }), nd.tensor({ { 1, 2 } })):totable())
    assert.same({ 2, 4 }, nd.kron(nd.tensor(2), nd.tensor({ 1, 2 })):totable())
    local r = nd.kron(nd.ones(2, 1, 3, "int32"), nd.full({ 2, 2 }, 2, "uint8"))
    assert.same({ 2, 2, 6 }, { r:size(1), r:size(2), r:size(3) })
    assert.equals("int32", r:dtype())
    assert.equals(2, r:max())
    assert.equals("float64", nd.kron(nd.tensor(2), nd.ones(2, "float32")):dtype()) -- not weaker: PyTorch's
    local big = nd.ones(1, 1, 1, 1, 1, 1, 1, 1, 1)
    assert_error_matches(function() nd.kron(big, big) end, "kron: tensors of 9 dims, at most 8")
  end)
end)

describe("cross", function()
  it("crosses 3-vectors along a dim, broadcasting, in any layout", function()
    local x, y, z = nd.tensor({ 1, 0, 0 }), nd.tensor({ 0, 1, 0 }), nd.tensor({ 0, 0, 1 })
    assert.same({ 0, 0, 1 }, nd.cross(x, y):totable())
    assert.same({ 0, 0, -1 }, nd.cross(y, x):totable())
    local a, b = nd.randn(4, 3), nd.randn(3)
    local r = nd.cross(a, b)
    for i = 1, 4 do
      local u = a[i]:totable()
      local v = b:totable()
      close(r[i]:totable(), { u[2] * v[3] - u[3] * v[2], u[3] * v[1] - u[1] * v[3], u[1] * v[2] - u[2] * v[1] }, 1e-14)
    end
    local rt = nd.cross(a:t(), b:view(3, 1):expand(3, 4), 1) -- vectors down the columns
    close(flat(rt:t()), flat(r), 1e-14)
    assert.same({ { 0, -1, 0 }, { 1, 0, 0 }, { 0, 0, 0 } }, nd.cross(nd.eye(3), z, 2):totable())
    assert.same({ 0, 0, 1 }, nd.cross(x:int(), y:int()):totable())
    assert.equals("int32", nd.cross(x:int(), y:int()):dtype())
  end)
  it("checks its arguments", function()
    assert_error_matches(function() nd.cross(nd.ones(2), nd.ones(2)) end, "cross: dim 1 has size 2, not 3")
    assert_error_matches(function() nd.cross(nd.ones(3), nd.ones(4)) end, "cross: shapes {3} and {4} do not broadcast")
    assert_error_matches(function() nd.cross(nd.ones(3), nd.ones(3), 2) end, "cross: dim 2 out of range")
  end)
end)

describe("dist and normalize", function()
  it("dist is the p-norm of the difference, a number", function()
    assert.equals(5, nd.dist(nd.tensor({ 0, 0 }), nd.tensor({ 3, 4 })))
    assert.equals(7, nd.dist(nd.tensor({ 0, 0 }), nd.tensor({ 3, 4 }), 1))
    assert.equals(4, nd.dist(nd.tensor({ 0, 0 }), nd.tensor({ 3, 4 }), math.huge))
    assert.equals(5, nd.dist(nd.zeros(2, 1), nd.tensor({ 3, 4 }):view(1, 2):t()))
    assert.equals(10, nd.dist(nd.zeros(1), nd.tensor({ 3, 4 }), 1) + nd.dist(nd.zeros(1), nd.tensor({ 3 })))
    assert_error_matches(function() nd.dist(nd.ones(2), nd.ones(3)) end, "dist: shapes")
    assert_error_matches(function() nd.dist(nd.ones(2), nd.ones(2), "x") end, "dist: p must be a number, got string")
  end)
  it("normalize divides by the norm along dim 2, at least eps", function()
    local r = nd.normalize(nd.tensor({ { 3, 4 }, { 0, 0 } }))
    close(flat(r), { 0.6, 0.8, 0, 0 }, 1e-15)
    close(flat(nd.normalize(nd.tensor({ { 3, 4 }, { 0, 0 } }), 1, 1)), { 1, 1, 0, 0 }, 1e-15)
    close(flat(nd.normalize(nd.tensor({ 3, 4 }), 2, 1)), { 0.6, 0.8 }, 1e-15)
    close(flat(nd.normalize(nd.tensor({ { 1e-20, 0 } }), 2, 2, 1e-10)), { 1e-10, 0 }, 1e-12)
    local f = nd.normalize(nd.randn(3, 4):float())
    assert.equals("float32", f:dtype())
    close(flat(f:norm(2, 2)), { 1, 1, 1 }, 1e-6)
    local t = nd.randn(4, 3)
    close(flat(nd.normalize(t:t(), 2, 1)), flat(nd.normalize(t, 2, 2):t()), 1e-15)
    assert_error_matches(function() nd.normalize(nd.tensor({ 1, 2 })) end, "normalize: dim 2 out of range")
    assert_error_matches(function() nd.normalize(nd.tensor({ 1, 2 }, "int32"), 2, 1) end,
      "normalize: takes a float tensor, got int32")
  end)
end)
