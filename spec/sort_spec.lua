-- Sorting and selection (sort argsort topk kthvalue median unique
-- searchsorted) against PyTorch/NumPy results committed in
-- spec/fixtures/sort_cases.lua (tools/gen_sort_fixtures.py), on
-- contiguous, transposed, stepped and flipped inputs of every dtype.
local nd = require "nd"
local F = dofile("spec/fixtures/sort_cases.lua")

local function tol(dt) return dt == "float32" and 1e-6 or 0 end

-- Each position ix[...] along dim d of t holds the value v[...] (NaN-aware).
local function check_positions(t, d, v, ix)
  local vs, is = v:totable(), ix:totable()
  for a = 1, #is do
    for b = 1, #is[a] do
      local i, j = a, b
      if d == 1 then i = is[a][b] else j = is[a][b] end
      local x, y = t:get(i, j), vs[a][b]
      assert(x == y or (x ~= x and y ~= y),
        ("position %d,%d: element %s is not the value %s"):format(a, b, tostring(x), tostring(y)))
    end
  end
end

describe("sorting against PyTorch", function()
  for _, c in ipairs(F.cases) do
    for _, layout in ipairs(DATA_LAYOUTS) do
      it(c.name .. " " .. layout, function()
        local t = tensor_in_layout(c.data, c.dtype, layout)
        for d = 1, 2 do
          for _, dir in ipairs({ "asc", "desc" }) do
            local want = c["sort_" .. d .. "_" .. dir]
            local v, ix = t:sort(d, dir == "desc")
            assert.equals(c.dtype, v:dtype())
            assert.equals("int64", ix:dtype())
            assert.is_true(v:is_contiguous() and ix:is_contiguous())
            assert_close(want[1], v:totable(), tol(c.dtype))
            assert.same(want[2], ix:totable()) -- stable: exactly PyTorch's
            assert.same(want[2], t:argsort(d, dir == "desc"):totable())
            assert.same(want[2], nd.argsort(t, d - 3, dir == "desc"):totable())
          end
          if c["topk_" .. d] then
            local k = c["kth_" .. d][1]
            local v, ix = t:topk(k, d)
            assert_close(c["topk_" .. d], v:totable(), tol(c.dtype))
            check_positions(t, d, v, ix)
            v, ix = t:topk(k, d, false)
            assert_close(c["topk_small_" .. d], v:totable(), tol(c.dtype))
            check_positions(t, d, v, ix)
            v, ix = t:kthvalue(k, d, true)
            assert_close(c["kth_" .. d][2], v:view(-1):totable(), tol(c.dtype))
            check_positions(t, d, v, ix)
            v, ix = t:median(d, true)
            assert_close(c["median_" .. d], v:view(-1):totable(), tol(c.dtype))
            check_positions(t, d, v, ix)
            local v2 = t:median(d)
            assert.equals(1, v2:dim())
          end
        end
        if c.median then assert_close(c.median, t:median(), tol(c.dtype)) end
        if c.unique then
          local u, n = nd.unique(t, true)
          assert_close(c.unique[1], u:totable(), tol(c.dtype))
          assert.same(c.unique[2], n:totable())
          assert_close(c.unique[1], t:unique():totable(), tol(c.dtype))
        end
      end)
    end
  end

  it("long lanes (the radix sort) with ties, any direction", function()
    local b = F.big
    local t = nd.tensor(b.data, "float32")
    assert.same(b.argsort, t:argsort():totable())
    assert.same(b.argsort_desc, t:argsort(1, true):totable())
    -- the same lane walked backwards through a negative stride
    local r = nd.tensor(b.data, "float32"):flip(1):flip(1)
    assert.same(b.argsort, r:argsort():totable())
    local v = t:sort()
    for i = 2, v:size(1) do assert.is_true(v:get(i - 1) <= v:get(i)) end
    assert.equals(b.median, t:median())
    assert.equals(b.kth_100, (t:kthvalue(100)):item())
    assert_close(b.topk_5, (t:topk(5)):totable(), 0)
    -- the same lane as a column of a 2-D tensor (strided lanes)
    local col = t:view(-1, 1):expand(3000, 2)
    assert.same(b.argsort, col:argsort(1):select(2, 2):totable())
  end)
end)

describe("sorting rules", function()
  it("NaN is the largest, descending puts it first; -0 equals +0", function()
    local x = nd.tensor({ 0 / 0, 1, -1, 0 / 0, 0 })
    assert.same({ 3, 5, 2, 1, 4 }, x:argsort():totable())
    assert.same({ 1, 4, 2, 5, 3 }, x:argsort(1, true):totable())
    local z = nd.tensor({ 0.0, -0.0, 0.0 })
    assert.same({ 1, 2, 3 }, z:argsort():totable())
    local v = nd.tensor({ -1, 0 }):neg():sort() -- {-0, 1}
    assert.equals(-math.huge, 1 / v:get(1)) -- the element itself, sign kept
    local t, i = nd.tensor({ 1, 0 / 0, 3 }):topk(1)
    assert.is_true(t:get(1) ~= t:get(1))
    assert.equals(2, i:get(1))
  end)
  it("every dtype keeps its dtype; bool and integer extremes", function()
    local b = nd.tensor({ true, false, true, false })
    assert.same({ false, false, true, true }, (b:sort()):totable())
    assert.same({ 2, 4, 1, 3 }, b:argsort():totable())
    local i = nd.tensor({ 2147483647, -2147483648, 0 }, "int32")
    assert.same({ -2147483648, 0, 2147483647 }, (i:sort()):totable())
    local u = nd.tensor({ 255, 0, 128 }, "uint8")
    assert.same({ 255, 128, 0 }, (u:sort(1, true)):totable())
    if jit then
      local big = nd.tensor({ 1, 2 }, "int64")
      big:set(1, LL(2) ^ 62)
      big:set(2, -LL(2) ^ 62)
      assert.same({ 2, 1 }, big:argsort():totable())
    end
  end)
  it("0-d, size-0 and size-1 dims, 3-D and negative dims", function()
    local s = nd.tensor(4.5)
    local v, i = s:sort()
    assert.equals(0, v:dim()); assert.equals(4.5, v:item()); assert.equals(1, i:item())
    assert.equals(4.5, s:median())
    local tv = s:topk(1)
    assert.equals(4.5, tv:item())
    local e = nd.empty(0, 3)
    v, i = e:sort(1)
    assert.same({ 0, 3 }, { v:size(1), v:size(2) })
    assert.equals(0, e:argsort(2):numel())
    assert.same({ 0, 0 }, { (e:topk(0, 2)):size(1), (e:topk(0, 2)):size(2) })
    assert.is_true(nd.empty(0):median() ~= nd.empty(0):median())
    assert.equals(0, nd.unique(e):numel())
    local a = nd.arange(24):view(2, 3, 4):flip(2)
    local w = a:sort(2)
    assert.same({ { 0, 1, 2, 3 }, { 4, 5, 6, 7 }, { 8, 9, 10, 11 } }, w[1]:totable())
    assert.same(a:argsort(-2):totable(), a:argsort(2):totable())
    local m = nd.tensor({ { 5 } })
    assert.same({ { 1 } }, m:argsort(1):totable())
  end)
  it("topk: unsorted results hold the same set; k = size; large k", function()
    local x = nd.tensor({ 5, 1, 4, 2, 3, 9, 0, 8 })
    local v = x:topk(3, 1, true, false)
    local got = v:totable()
    table.sort(got)
    assert.same({ 5, 8, 9 }, got)
    assert.same({ 9, 8, 5, 4, 3, 2, 1, 0 }, (x:topk(8)):totable())
    local r = nd.rand(10000)
    local tv, ti = r:topk(5000)
    local sv = r:sort(1, true)
    assert.is_true(nd.equal(tv, sv:narrow(1, 1, 5000)))
    for j = 1, 5000, 37 do assert.equals(tv:get(j), r:get(ti:get(j))) end
    local small = r:topk(7, 1, false)
    assert.is_true(nd.equal(small, (r:sort()):narrow(1, 1, 7)))
  end)
  it("median: lower median, NaN wins; kthvalue indices point at the value", function()
    assert.equals(2, nd.tensor({ 4, 1, 3, 2 }):median())
    assert.equals(2, nd.tensor({ 4, 1, 3, 2 }, "int32"):median())
    assert.is_true(nd.tensor({ 1, 0 / 0, 3 }):median() ~= nd.tensor({ 1, 0 / 0, 3 }):median())
    local f = nd.tensor({ 1, 0 / 0, 3 }, "float32")
    assert.is_true(f:median() ~= f:median())
    assert.equals(7, nd.full({ 1001 }, 7, "int32"):median())
    assert.equals(2, nd.tensor({ 3, 2, 2, 1, 9, 2 }, "uint8"):median())
    local r = nd.rand(100001, "float32")
    assert.equals((r:sort()):get(50001), r:median())
    assert.equals((r:sort()):get(50001), r:t():median()) -- through the lane path too
    assert.equals((r:sort()):get(50001), (r:median(1)):item())
    local v, i = nd.tensor({ { 1, 0 / 0, 3 }, { 3, 1, 2 } }):median(2)
    assert.is_true(v:get(1) ~= v:get(1)); assert.equals(2, i:get(1))
    assert.equals(2, v:get(2)); assert.equals(3, i:get(2))
    local kv, ki = nd.tensor({ 7, 3, 3, 9 }):kthvalue(2)
    assert.equals(3, kv:item())
    assert.is_true(ki:item() == 2 or ki:item() == 3)
  end)
  it("unique and searchsorted", function()
    local u, n = nd.unique(nd.tensor({ { 3, 1 }, { 3, 2 } }, "int32"), true)
    assert.equals("int32", u:dtype()); assert.equals("int64", n:dtype())
    assert.same({ 1, 2, 3 }, u:totable()); assert.same({ 1, 1, 2 }, n:totable())
    local s = nd.unique(nd.tensor(5))
    assert.equals(1, s:dim()); assert.same({ 5 }, s:totable())
    local S = F.search
    local sorted, vals = nd.tensor(S.sorted), nd.tensor(S.values)
    assert.same(S.left, nd.searchsorted(sorted, vals):totable())
    assert.same(S.right, nd.searchsorted(sorted, vals, true):totable())
    assert.same(S.right, sorted:searchsorted(vals:t():contiguous():t(), "right"):totable())
    assert.same(S.left, nd.searchsorted(sorted:flip(1):flip(1), vals, "left"):totable())
    local I = F.search_int
    local si = nd.tensor(I.sorted, "int64")
    assert.same(I.left, nd.searchsorted(si, nd.tensor(I.values, "int32")):totable())
    assert.same(I.right, nd.searchsorted(si, nd.tensor(I.values, "float32"), true):totable())
    assert.equals(2, nd.searchsorted(si, 3))
    assert.equals(4, nd.searchsorted(si, 3, true))
    assert.equals(4, nd.searchsorted(si, 3.5))
    assert.equals("int64", nd.searchsorted(si, nd.tensor({ 1 })):dtype())
    assert.equals(1, nd.searchsorted(nd.empty(0), 2))
  end)
  it("results do not depend on the thread count", function()
    local n = nd.get_num_threads()
    local a = nd.rand(300, 400, "float32")
    local r = {}
    for _, th in ipairs({ 1, 2 }) do
      nd.set_num_threads(th)
      r[th] = { a:argsort(2), a:argsort(1, true), (a:topk(3, 1)), (a:median(2)) }
    end
    nd.set_num_threads(n)
    for k = 1, #r[1] do assert.is_true(nd.equal(r[1][k], r[2][k])) end
  end)
end)

describe("sorting errors", function()
  local x = nd.ones(3, 4)
  it("name the function and the value", function()
    assert_error_matches(function() x:sort(3) end, "sort", "dim 3")
    assert_error_matches(function() x:argsort(0) end, "argsort", "dim 0")
    assert_error_matches(function() x:sort(1, "yes") end, "sort", "descending")
    assert_error_matches(function() x:topk(5) end, "topk", "k 5", "size 4")
    assert_error_matches(function() x:topk(-1) end, "topk", "k -1")
    assert_error_matches(function() x:topk(1.5) end, "topk", "k", "1.5")
    assert_error_matches(function() x:topk(2, 1, 1) end, "topk", "largest")
    assert_error_matches(function() x:kthvalue(0) end, "kthvalue", "k 0")
    assert_error_matches(function() x:kthvalue(4, 1) end, "kthvalue", "k 4", "size 3")
    assert_error_matches(function() x:kthvalue(2.5) end, "kthvalue", "2.5")
    assert_error_matches(function() x:median(-3) end, "median", "dim -3")
    assert_error_matches(function() nd.empty(2, 0):median(2) end, "median", "size-0")
    assert_error_matches(function() nd.searchsorted(x, x) end, "searchsorted", "1-D", "{3,4}")
    assert_error_matches(function() nd.searchsorted(nd.ones(3), x, "middle") end, "searchsorted", "middle")
    assert_error_matches(function() nd.searchsorted(nd.ones(3), "a") end, "searchsorted", "argument 2")
    assert_error_matches(function() nd.unique({}) end, "unique", "tensor")
    assert_error_matches(function() nd.tensor(1):sort(2) end, "sort", "dim 2", "0-d")
  end)
end)

describe("long lanes where some radix digits are all equal", function()
  it("int32 keys of few bits, float32 of one exponent: sorted and stable", function()
    local n = 100000
    local x = nd.rand(n):mul(1000):floor():int()
    local v, i = x:sort()
    local pv, pi = v:get(1), i:get(1)
    for k = 2, n, 7 do
      local cv, ci = v:get(k), i:get(k)
      local bv, bi = v:get(k - 1), i:get(k - 1)
      assert.is_true(bv < cv or (bv == cv and bi < ci))
      assert.equals(cv, x:get(ci))
    end
    local f = nd.rand(n, "float32"):add(1)   -- [1, 2): one exponent
    local fi = f:argsort(1, true)
    for k = 2, n, 11 do
      local a, b = f:get(fi:get(k - 1)), f:get(fi:get(k))
      assert.is_true(a > b or (a == b and fi:get(k - 1) < fi:get(k)))
    end
  end)
end)

-- Compact float32 lanes go through AVX-512 build and emit loops when the
-- CPU has them (ND_SORT_SIMD=0 in the environment forces the portable
-- loops); strided lanes and float64 always take the portable ones. The
-- same values as float32 and as float64 must give the same order, the same
-- values bit for bit (zero signs, NaN), contiguous or strided.
describe("float32 lanes: AVX-512 and portable paths agree", function()
  local seed = 12345
  local function rnd(m) -- a deterministic generator, the same everywhere
    seed = (seed * 1103515245 + 12345) % 2147483648
    return seed % m
  end
  -- "-0" is made by a product: a table's -0 does not survive everywhere
  local special = { 0 / 0, 0.0, "-0", math.huge, -math.huge, 1.5, -1.5 }
  local function data(n, kind)
    local d, sg = {}, {}
    for i = 1, n do
      if kind == "equal" then d[i] = 2.25
      elseif kind == "descending" then d[i] = (n - i) / 8
      elseif kind == "nan" then d[i] = rnd(3) == 0 and 0 / 0 or (rnd(64) - 32) / 4
      else d[i] = rnd(4) == 0 and special[rnd(#special) + 1] or (rnd(2048) - 1024) / 8 end
      sg[i] = d[i] == "-0" and -1 or 1
      if sg[i] < 0 then d[i] = 0 end
    end
    return function(dt) return nd.tensor(d, dt):mul(nd.tensor(sg, dt)) end
  end
  local function same(x, y)
    if x ~= x then return y ~= y end
    return x == y and (x ~= 0 or 1 / x == 1 / y)
  end
  local function agree(t32, t64, d, desc)
    local v, i = t32:sort(d, desc)
    local w, j = t64:sort(d, desc)
    assert.same(j:totable(), i:totable())
    assert.same(j:totable(), t32:argsort(d, desc):totable())
    local vf, wf = v:contiguous():view(-1), w:contiguous():view(-1)
    local zeros = 0
    for k = 1, vf:size(1) do
      if vf:get(k) == 0 and 1 / vf:get(k) < 0 then zeros = zeros + 1 end
      local a, b = vf:get(k), wf:get(k)
      assert(same(a, b), ("element %d: %s, want %s"):format(k, tostring(a), tostring(b)))
    end
    return zeros -- negative zeros seen, so that the data is known to hold some
  end
  local sizes = { 1, 2, 7, 15, 16, 17, 31, 32, 33, 47, 48, 49, 100, 1000, 4097 }
  for _, kind in ipairs({ "mixed", "equal", "descending", "nan" }) do
    it(kind .. " lanes of sizes around 16-element blocks", function()
      for _, n in ipairs(sizes) do
        local d = data(n, kind)
        local t32, t64 = d("float32"), d("float64")
        for _, desc in ipairs({ false, true }) do
          agree(t32, t64, 1, desc)
          agree(t32:flip(1), t64:flip(1), 1, desc) -- a negative stride
        end
      end
    end)
  end
  it("short and long rows, along either dim", function()
    for _, shape in ipairs({ { 40, 33 }, { 3, 1000 }, { 1000, 3 } }) do
      local d = data(shape[1] * shape[2], "mixed")
      local t32 = d("float32"):view(shape[1], shape[2])
      local t64 = d("float64"):view(shape[1], shape[2])
      for dim = 1, 2 do
        assert.is_true(agree(t32, t64, dim, false) > 0)
        agree(t32, t64, dim, true)
        agree(t32:t(), t64:t(), dim, false)
      end
    end
  end)
end)

-- Lanes of 33 to 65535 items of the dtypes of up to 32 bits (float32,
-- int32, uint8, bool) sort by an AVX-512 merge of 64-item blocks when the
-- CPU has AVX-512F (ND_SORT_SIMD=0 forces the radix sort); float64 and
-- int64 lanes always take the radix sort. The same values in both kinds
-- must come out in the same stable order, at sizes around the block size
-- and around the merge's upper bound, on contiguous and strided lanes.
describe("short lanes: the merge sort agrees with the radix sort", function()
  local seed = 777
  local function rnd(m)
    seed = (seed * 1103515245 + 12345) % 2147483648
    return seed % m
  end
  local wide = { float32 = "float64", int32 = "int64", uint8 = "int64", bool = "int64" }
  local function values(n, dt, few)
    local d = {}
    for i = 1, n do
      if dt == "bool" then d[i] = rnd(2) == 1
      elseif dt == "uint8" then d[i] = rnd(256)
      elseif dt == "int32" then d[i] = few and rnd(5) - 2 or rnd(2000000) - 1000000
      else
        local r = rnd(16)
        d[i] = r == 0 and 0 / 0 or r == 1 and 0 or r == 2 and math.huge
               or (rnd(few and 4 or 100000) - 50000) / 16
      end
    end
    local t = nd.tensor(d, dt)
    if dt == "float32" then -- some zeros negative
      local s = {}
      for i = 1, n do s[i] = rnd(2) == 0 and -1 or 1 end
      t = t:mul(nd.tensor(s, dt))
    end
    return t
  end
  local function agree(t, d, desc)
    local w = t:to(wide[t:dtype()])
    local v, i = t:sort(d, desc)
    local wv, wi = w:sort(d, desc)
    -- whole-tensor compares first: a failure then names one position
    -- instead of printing tables of 2^18 entries
    for _, got in ipairs({ i, t:argsort(d, desc) }) do
      if not nd.equal(wi, got) then
        local a, b = wi:contiguous():view(-1), got:contiguous():view(-1)
        for k = 1, a:size(1) do
          assert(a:get(k) == b:get(k), ("index %d: %d, want %d"):format(k, b:get(k), a:get(k)))
        end
      end
    end
    assert.equals(t:dtype(), v:dtype())
    local vf, wf = v:contiguous():view(-1), wv:contiguous():view(-1)
    for k = 1, vf:size(1) do
      local a, b = vf:get(k), wf:get(k)
      if t:dtype() == "bool" then b = b ~= 0 end
      assert(a == b or (a ~= a and b ~= b), ("element %d: %s, want %s"):format(k, tostring(a), tostring(b)))
      if a == 0 and b == 0 and t:dtype() == "float32" then assert.equals(1 / b, 1 / a) end
    end
  end
  local sizes = { 32, 33, 63, 64, 65, 127, 128, 129, 191, 1000, 1024, 2049, 4096, 4097 }
  for _, dt in ipairs({ "float32", "int32", "uint8", "bool" }) do
    it(dt .. " lanes around 64-item blocks, ties, any direction and stride", function()
      for _, n in ipairs(sizes) do
        for _, few in ipairs({ false, true }) do
          local t = values(n, dt, few)
          for _, desc in ipairs({ false, true }) do
            agree(t, 1, desc)
            agree(t:flip(1), 1, desc)
          end
        end
      end
      local m = values(3 * 200, dt, true):view(3, 200)
      agree(m, 2, false)
      agree(m:t(), 1, true) -- strided lanes
    end)
  end
  it("lanes whose truncated keys tie: short runs reordered, long ones refused", function()
    -- Lanes of up to 4096 items sort 32-bit items of position bits under
    -- the top key bits where the lane differs: nearby values tie there.
    local function lane(n, outlier, near)
      local d = {}
      for i = 1, n do d[i] = (rnd(2000) - 1000) / 8 end
      for k = 1, near do d[(k * 37) % n + 1] = 1 + rnd(1000) * 2 ^ -20 end
      if outlier then d[math.floor(n / 2)] = 1e30; d[math.floor(n / 3)] = -1e30 end
      return nd.tensor(d, "float32")
    end
    for _, n in ipairs({ 100, 1000, 4096 }) do
      for _, near in ipairs({ 2, 20, 40, n - 2 }) do
        for _, outlier in ipairs({ false, true }) do
          local t = lane(n, outlier, near)
          agree(t, 1, false)
          agree(t, 1, true)
        end
      end
    end
  end)
  it("long lanes whose MSD buckets are short (32-bit items in each bucket)", function()
    local g = nd.generator(5)
    local n = 300000
    -- int32 over most of its range, float32 spread over many binades
    agree(g:randint(-1000000000, 1000000000, { n }):to("int32"), 1, false)
    agree(g:rand({ n }):mul(60):sub(30):exp():to("float32"), 1, true)
    local t = g:rand({ n }):mul(60):sub(30):exp():to("float32")
    t[{ { 1, n, 7 } }] = 5 -- ties across buckets
    agree(t, 1, false)
  end)
  it("long lanes around 2^18 items, where the radix digits narrow to 9 bits", function()
    for _, n in ipairs({ 262143, 262144 }) do
      for _, few in ipairs({ false, true }) do
        local t = values(n, "float32", few)
        agree(t, 1, few)
        agree(values(n, "int32", few):flip(1), 1, not few)
      end
    end
  end)
  it("long lanes (one MSD pass, then buckets) are sorted, stable and consistent", function()
    local n = 300000
    local g = nd.generator(11)
    local function check(t, desc)
      local v, i = t:sort(1, desc)
      local back = t:index_select(1, i)
      assert.is_true(v:eq(back):logical_or(v:ne(v):logical_and(back:ne(back))):all(),
        "values are the input at the indices")
      -- neighbours: ordered, and equal keys keep their input order
      local a, b = v:narrow(1, 1, n - 1), v:narrow(1, 2, n - 1)
      local ia, ib = i:narrow(1, 1, n - 1), i:narrow(1, 2, n - 1)
      local af, bf = a:to("float64"), b:to("float64")
      local nan_a, nan_b = af:isnan(), bf:isnan()
      local ordered = desc and af:ge(bf) or af:le(bf)
      ordered = ordered:logical_or(desc and nan_a or nan_b) -- NaN is the largest
      assert.is_true(ordered:all(), "ordered")
      local tie = af:eq(bf):logical_or(nan_a:logical_and(nan_b))
      assert.is_true(tie:logical_not():logical_or(ia:lt(ib)):all(), "stable")
    end
    for _, dt in ipairs({ "float32", "float64", "int32", "int64" }) do
      local spread = g:randn({ n }):mul(1000):to(dt)
      local ties = g:randint(0, 5, { n }):to(dt)
      local skewed = nd.zeros(n, dt); skewed[7] = 1; skewed[n - 3] = -1
      local same = nd.full({ n }, 3, dt)
      if dt:sub(1, 5) == "float" then
        spread[5] = 0 / 0; spread[9] = tonumber("-0.0"); spread[11] = 0.0; spread[13] = -math.huge
      end
      for _, t in ipairs({ spread, ties, skewed, same, spread:flip(1) }) do
        check(t, false)
        check(t, true)
      end
    end
  end)
  it("lanes at the merge's upper bound (65535) and past it (65536)", function()
    for _, n in ipairs({ 65535, 65536 }) do
      local t = values(n, "float32", false)
      agree(t, 1, false)
      agree(t:flip(1), 1, true)
    end
  end)
  if jit then
    local ffi = require "ffi"
    pcall(ffi.cdef, "int setenv(const char *, const char *, int); int unsetenv(const char *);")
    it("ND_SORT_SIMD=0 (radix) and the default give the same results", function()
      for _, n in ipairs({ 33, 64, 100, 1000, 5000 }) do
        local t = values(n, "float32", true):view(1, n):expand(2, n)
        local v, i = t:sort(2)
        ffi.C.setenv("ND_SORT_SIMD", "0", 1)
        local ok, pv, pi = pcall(t.sort, t, 2)
        ffi.C.unsetenv("ND_SORT_SIMD")
        assert(ok, pv)
        assert.same(pi:totable(), i:totable())
        assert.same(pv:view(-1):isnan():totable(), v:view(-1):isnan():totable())
        assert.is_true(nd.equal(pv:nan_to_num(), v:nan_to_num()))
      end
    end)
  end
end)
