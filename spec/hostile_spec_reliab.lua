-- Hostile input: each case here once crashed, hung, hit undefined
-- behaviour (UBSan halts under make check-asan) or gave a wrong answer.
-- Issue 14 ("Reliability") lists them; the fuzzer (make fuzz) finds more.
local nd = require "nd"

describe("hostile input: undefined behaviour and unbounded work", function()
  it("a range step of -2^63 does not negate INT64_MIN", function()
    local t = nd.arange(10)[{ { 1, 1, -2 ^ 63 } }]
    assert.same({ 0 }, t:totable())
    assert.same({ 9 }, nd.arange(10)[{ { 10, 1, -2 ^ 63 } }]:totable())
    assert.same({ 0 }, nd.arange(10)[{ { 1, 10, 2 ^ 63 - 1024 } }]:totable())
    assert.same({}, nd.arange(10)[{ { 1, 2, -2 ^ 63 } }]:totable())
  end)

  it("printing is bounded by what it prints, not by numel", function()
    local s = tostring(nd.zeros(1):expand(2 ^ 53 + 2))
    assert.truthy(s:find("[0., 0., 0., ..., 0., 0., 0.]", 1, true))
    assert.truthy(s:find("size {9007199254740994}", 1, true))
    -- the tail is the last elements, also when positions are not exact
    local t = nd.arange(3):reshape(3, 1):expand(3, 2 ^ 60)
    local rows = tostring(t)
    assert.truthy(rows:find("[2, 2, 2, ..., 2, 2, 2]", 1, true))
    local e = nd.arange(10):expand(2 ^ 40, 10)
    assert.truthy(tostring(e):find("[0, 1, 2, ..., 7, 8, 9]", 1, true))
  end)
end)

-- Does any offset repeat? Brute force over every index tuple.
local function overlaps(size, stride)
  local seen, n = {}, 1
  for _, s in ipairs(size) do n = n * s end
  for k = 0, n - 1 do
    local off, r = 0, k
    for d = #size, 1, -1 do
      off = off + (r % size[d]) * stride[d]
      r = math.floor(r / size[d])
    end
    if seen[off] then return true end
    seen[off] = true
  end
  return false
end

describe("writes into as_strided views: refuse exactly the overlapping ones", function()
  it("offsets 0,4,3,7,6,10 are distinct: the write happens", function()
    local b = nd.arange(11)
    b:as_strided({ 3, 2 }, { 3, 4 }, 0):fill_(-1)
    assert.same({ -1, 1, 2, -1, -1, 5, -1, -1, 8, 9, -1 }, b:totable())
  end)

  it("provable overlaps are refused, for every kind of write", function()
    local b = nd.arange(100)
    local v = b:as_strided({ 2, 3, 2 }, { 6, 5, 4 }, 0) -- 10 twice
    assert_error_matches(function() v:fill_(0) end, "fill_:", "single memory location")
    assert_error_matches(function() v:add_(1) end, "add_:", "single memory location")
    assert_error_matches(function() v:copy_(nd.zeros(2, 3, 2)) end, "copy_:")
    assert_error_matches(function() v[{}] = 1 end, "single memory location")
    assert_error_matches(function() nd.add(nd.ones(2, 3, 2), 1, v) end, "add:")
    assert_error_matches(function() nd.arange(7):unfold(1, 2, 1):zero_() end,
      "single memory location")
    assert_error_matches(function() nd.zeros(3):expand(2, 3):fill_(1) end,
      "single memory location")
    assert.same(nd.arange(100):totable(), b:totable())
  end)

  it("agrees with a brute-force search on random layouts", function()
    local seed = 14
    local function rand(n) -- deterministic without nd's generator
      seed = (seed * 1103515245 + 12345) % 2147483648
      return seed % n
    end
    local storage = nd.zeros(4096)
    for _ = 1, 400 do
      local ndim = 1 + rand(4)
      local size, stride = {}, {}
      for d = 1, ndim do
        size[d] = 1 + rand(4)
        stride[d] = rand(12) - 2
      end
      local lo, hi = 0, 0
      for d = 1, ndim do
        local x = (size[d] - 1) * stride[d]
        if x < 0 then lo = lo + x else hi = hi + x end
      end
      local v = storage:as_strided(size, stride, -lo)
      local ok = pcall(function() v:fill_(1) end)
      assert.equals(not overlaps(size, stride), ok,
        "size {" .. table.concat(size, ",") .. "} stride {" .. table.concat(stride, ",") .. "}")
    end
  end)

  it("an empty tensor has nothing to write, whatever its strides (found by make fuzz)", function()
    local e = nd.zeros(0):expand(2, 0)
    assert.has_no.errors(function() e:add_(1) end)
    assert.has_no.errors(function() nd.zeros(0, 1):expand(3, 0, 1):fill_(2) end)
  end)

  it("past the search bound with nothing proven, the write is allowed", function()
    -- 2^21 elements; offsets 0,3,5,7,8,10,12,15 + 16k are distinct, but
    -- neither the sufficient test nor a pair of dims proves it.
    local s = nd.zeros(2 ^ 22, "uint8")
    local v = s:as_strided({ 2, 2, 2, 2 ^ 18 }, { 7, 5, 3, 16 }, 0)
    assert.has_no.errors(function() v:fill_(1) end)
  end)
end)

describe("nd.load refuses malformed headers as NumPy does", function()
  local z16 = string.rep("\0", 16)
  local function refused(header, data, ...)
    local path = npy_file(header, data)
    assert_error_matches(function() nd.load(path) end, "load: " .. path, ...)
    os.remove(path)
  end
  it("accepts what NumPy writes, quotes of either kind, trailing commas", function()
    for _, h in ipairs({
      "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }",
      '{"descr": "<f8", "fortran_order": False, "shape": (2,)}',
      "{'shape': (2,), 'fortran_order': False, 'descr': '<f8'}",
      "{'descr': '<f8', 'fortran_order': True, 'shape': (1, 2)}",
    }) do
      local path = npy_file(h, z16)
      assert.equals(2, nd.load(path):numel())
      os.remove(path)
    end
  end)
  it("refuses a dict never closed, (n) for (n,), extra or missing keys, junk", function()
    refused("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), ", z16, "malformed header")
    refused("{'descr': '<f8', 'fortran_order': False, 'shape': (2)}", z16, "shape is not a tuple")
    refused("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'x': 1}", z16, "unexpected key 'x'")
    refused("{'descr': '<f8', 'fortran_order': False}", z16, "header has no shape")
    refused("{'descr': '<f8', 'fortran_order': 0, 'shape': (2,)}", z16, "fortran_order")
    refused("{'descr': '<f8', 'fortran_order': False, 'shape': (2,)} x", z16, "unexpected bytes")
    refused("{'descr': '<f8', 'fortran_order': False, 'shape': (-2,)}", z16, "shape is not a tuple")
    refused("{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,)}", z16, "shape")
    refused("['descr', '<f8']", z16, "not a dictionary")
  end)
  it("shape errors name the file", function()
    refused("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4)}", z16,
      "header shape {4611686018427387904,4}")
    refused("{'descr': '<f8', 'fortran_order': False, 'shape': (3,)}", z16,
      "header shape {3} needs 24 bytes")
  end)
end)

describe("error messages name the function the user called", function()
  local big = nd.zeros(1):expand(2 ^ 40) -- 8 TB when made compact
  it("views", function()
    assert_error_matches(function() nd.zeros(3):broadcast_to({ 4 }) end, "broadcast_to: cannot expand")
    assert_error_matches(function() nd.zeros(3):expand_as(nd.zeros(4)) end, "expand_as: cannot expand")
  end)
  it("in-place forms", function()
    assert_error_matches(function() nd.zeros(3, "bool"):sub_(nd.zeros(3, "bool")) end, "sub_: subtraction with a bool")
  end)
  it("out of memory and byte-count overflow", function()
    for name, f in pairs({
      contiguous = function() return big:contiguous() end,
      clone = function() return big:clone() end,
      exp = function() return big:exp() end,
      add = function() return big + 1 end,
      to_string = function() return big:to_string() end,
      sum = function() return nd.zeros(1):expand(2 ^ 40, 2):sum(2) end,
      save = function() return nd.save(os.tmpname(), big) end,
      matmul = function() return nd.matmul(nd.zeros(1, 1):expand(2 ^ 20, 1), nd.zeros(1, 1):expand(1, 2 ^ 20)) end,
    }) do
      assert_error_matches(f, name .. ": not enough memory")
    end
    assert_error_matches(function() nd.zeros(2 ^ 62, 4) end, "zeros: size {4611686018427387904,4}")
  end)
end)

describe("PyTorch's niceties", function()
  local s = nd.tensor(3.5)
  it("0-d tensors take dim 1 and -1", function()
    assert.equals(3.5, s:sum(1):item())
    assert.equals(0, s:sum(-1, true):dim())
    assert.equals(3.5, s:transpose(1, -1):item())
    assert.equals(3.5, s:flip(1):item())
    assert.equals(3.5, s:flip({ -1 }):item())
    assert.equals(3.5, s:movedim(1, 1):item())
    assert.is_true(s:all(1):item())
    assert.is_true(s:any(-1):item())
    local v, i = s:max(1)
    assert.same({ 3.5, 1, 0 }, { v:item(), i:item(), i:dim() })
    v, i = s:min(-1, true)
    assert.same({ 3.5, 1 }, { v:item(), i:item() })
    assert_error_matches(function() s:sum(2) end, "sum: dim 2")
    assert_error_matches(function() s:flip({ 1, 1 }) end, "flip: dim 1 repeated")
  end)
  it("empty tensors with a huge other dim", function()
    local z = nd.zeros({ 2 ^ 62, 0 })
    assert.same({ 2 ^ 62, 0 }, plain(z:size()))
    assert.equals(0, z:numel())
    local w = nd.zeros({ 2 ^ 40, 2 ^ 40, 0 })
    assert.equals(0, w:flatten():numel())
    assert.equals(4, w:unsqueeze(2):dim())
    assert_error_matches(function() w:flatten(1, 2) end, "flatten: dims 1..2")
  end)
  it("as_strided of an empty view at any offset", function()
    assert.equals(100, nd.zeros(3):as_strided({ 0 }, { 1 }, 100):storage_offset())
  end)
  it("elementwise results of broadcast inputs are laid out as PyTorch's", function()
    -- strides from PyTorch 1.13
    local a = nd.zeros(4, 3):t()
    assert.same({ 12, 1, 3 }, plain((a + nd.zeros(2, 1, 1)):stride()))
    assert.same({ 1, 3 }, plain((a + 1):stride()))
    assert.same({ 4, 1 }, plain((nd.zeros(3, 4) + a):stride()))
    assert.same({ 1, 3 }, plain((nd.zeros(1, 4) + a):stride()))
    local b = nd.zeros(5, 3, 4):permute(3, 1, 2)
    assert.same({ 1, 12, 4 }, plain((b + nd.zeros(5, 1)):stride()))
    assert.same({ 1, 12, 4 }, plain((nd.zeros(5, 1) + b):stride()))
    local x = nd.zeros(3, 1, 4):transpose(1, 3)
    assert.same({ 1, 4, 8 }, plain((x + nd.zeros(2, 1)):stride()))
  end)
end)

describe("empty tensors with huge dims (UBSan found products overflowing)", function()
  it("numel, reshape, flatten and reductions", function()
    local z = nd.zeros(0, 1):expand(2 ^ 40, 2 ^ 40, 0, 1)
    assert.equals(0, z:numel())
    assert.equals(0, z:flatten(3, 4):numel())
    assert.equals(0, z:sum({ 1, 2 }):numel())
    assert.equals(0, z:sum(4):numel())
    assert.equals(0, nd.zeros(3):as_strided({ 2 ^ 62, 2 ^ 62, 0 }, { 1, 1, 1 }, 0):numel())
  end)
end)

describe("hostile numbers: NaN, inf, huge and fractional sizes, steps, indices", function()
  local t = nd.arange(12):reshape(3, 4)
  local bad = { 0 / 0, math.huge, -math.huge, 2 ^ 63, -2 ^ 64, 1.5, -0.5 }
  it("never crash: each raises an error naming the function", function()
    for _, v in ipairs(bad) do
      assert_error_matches(function() nd.zeros(v) end, "zeros")
      assert_error_matches(function() t:select(1, v) end, "select")
      assert_error_matches(function() t:narrow(2, 1, v) end, "narrow")
      assert_error_matches(function() t:transpose(v, 1) end, "transpose")
      assert_error_matches(function() t:expand(v, 3, 4) end, "expand")
      assert_error_matches(function() t:view(v, -1) end, "view")
      assert_error_matches(function() t:unfold(1, 2, v) end, "unfold")
      assert_error_matches(function() return t[{ { 1, 3, v } }] end, "index")
      assert_error_matches(function() return t[{ v }] end, "index")
      assert_error_matches(function() t:as_strided({ 2 }, { v }, 0) end, "as_strided")
      assert_error_matches(function() t:get(v, 1) end, "get")
    end
  end)
  it("huge but valid steps, strides and sizes", function()
    assert.same({ 0 }, nd.arange(10)[{ { 1, 10, 2 ^ 62 } }]:totable())
    assert.same({ 1, 10 }, plain(nd.arange(10):unfold(1, 10, 2 ^ 62):size()))
    local e = nd.zeros(1):expand(2 ^ 62)
    assert.equals(2 ^ 62, e:numel())
    assert.equals(0, e:narrow(1, -2, 2):sum())
    assert.equals(0, e[-1])
  end)
end)

describe("errors in the middle of things", function()
  it("a failed write leaves the tensor as it was", function()
    local t = nd.arange(6):double()
    assert_error_matches(function() t:add_(nd.zeros(7)) end, "add_")
    assert_error_matches(function() t:copy_(nd.zeros(4)) end, "copy_")
    assert_error_matches(function() t[{ { 1, 3 } }] = nd.zeros(2) end, "copy_")
    assert.same({ 0, 1, 2, 3, 4, 5 }, t:totable())
  end)
  it("an error inside a coroutine leaves nd usable from the main one", function()
    local t = nd.arange(4)
    local co = coroutine.create(function()
      local v = t:narrow(1, 2, 2)
      coroutine.yield(v:sum())
      v:select(1, 3) -- out of range: raises inside the coroutine
    end)
    assert.same({ true, 3 }, { coroutine.resume(co) })
    local ok, err = coroutine.resume(co)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("select", 1, true))
    assert.equals(6, t:sum())
    collectgarbage()
    assert.equals(6, t:sum())
  end)
  it("errors thrown from a metamethod or a pcall do not leak a half-made tensor", function()
    for _ = 1, 200 do
      pcall(function() return nd.zeros(3) + nd.zeros(4) end)
      pcall(function() return nd.matmul(nd.zeros(2, 3), nd.zeros(4, 2)) end)
    end
    collectgarbage()
    assert.equals(3, (nd.ones(3) + nd.zeros(3)):sum())
  end)
end)
