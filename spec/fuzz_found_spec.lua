-- Regressions found by the libFuzzer target (tests/fuzz_core.c): each
-- input that broke an invariant or tripped a sanitizer is in
-- tests/fuzz_corpus and has a case here. The undefined-behaviour ones fail
-- under `make check-asan` (UBSan halts).
local nd = require "nd"

describe("sort, indexing and masks on extreme views (found by libFuzzer)", function()
  it("sorts a lane of one whose stride is -2^63 (no overflowing byte stride)", function()
    local t = nd.arange(3):as_strided({ 1, 3 }, { -2 ^ 63, 1 }, 0)
    local v, i = t:sort(1)
    assert.same({ { 0, 1, 2 } }, v:totable())
    assert.same({ { 1, 1, 1 } }, i:totable())
    assert.same({ { 1, 1, 1 } }, t:argsort(1):totable())
    local tv, ti = t:topk(1, 1)
    assert.same({ { 0, 1, 2 } }, tv:totable())
    assert.same({ { 1, 1, 1 } }, ti:totable())
    assert.same({ 0, 1, 2 }, (t:kthvalue(1, 1)):totable())
  end)

  it("sorts an empty tensor whose other dims' product overflows", function()
    local t = nd.zeros(1):as_strided({ 0, 2 ^ 62, 4 }, { 1, 0, 0 }, 0)
    local v, i = t:sort(1)
    assert.same({ 0, 2 ^ 62, 4 }, v:size())
    assert.same({ 0, 2 ^ 62, 4 }, i:size())
    assert.same({ 0, 2 ^ 62, 4 }, t:argsort(1):size())
  end)

  it("finds nonzeros through dims of one with stride -2^63", function()
    local a = nd.arange(3):as_strided({ 1, 3 }, { -2 ^ 63, 1 }, 0)
    assert.same({ { 1, 2 }, { 1, 3 } }, a:nonzero():totable())
    local b = nd.arange(3):as_strided({ 3, 1 }, { 1, -2 ^ 63 }, 0)
    assert.same({ { 2, 1 }, { 3, 1 } }, b:nonzero():totable())
  end)

  it("index_select and gather along and across dims of one or none with extreme strides", function()
    local t = nd.arange(32):as_strided({ 1, 2, 16 }, { -2 ^ 63, 16, 1 }, 0)
    local r = t:index_select(2, nd.tensor({ 2, 1 }, "int64"))
    assert.same({ 1, 2, 16 }, r:size())
    local rows = r:totable()[1]
    assert.equals(16, rows[1][1])
    assert.equals(31, rows[1][16])
    assert.equals(0, rows[2][1])
    local g = nd.arange(3):as_strided({ 3, 1 }, { 1, -2 ^ 63 }, 0)
    assert.same({ { 0 }, { 1 }, { 2 } }, g:gather(2, nd.ones(3, 1, "int64")):totable())
    local e = nd.zeros(1):as_strided({ 2, 0 }, { 0, 2 ^ 62 }, 0)
    assert.same({ 2, 0 }, e:index_select(2, nd.zeros(0, "int64")):size())
    assert.same({ 2, 0 }, e:gather(2, nd.zeros(2, 0, "int64")):size())
  end)

  it("index_select and gather into a dim of size 0 of an empty tensor with a huge stride say out of range", function()
    local t = nd.zeros(1):as_strided({ 0, 2 }, { 1, 2 ^ 62 }, 0)
    assert_error_matches(function() return t:gather(1, nd.ones(2, 2, "int64")) end,
      "gather:", "out of range")
    assert_error_matches(function() return t:index_select(1, nd.ones(2, "int64")) end,
      "index_select:", "out of range")
  end)

  it("gathers, scatters and selects nothing from an empty tensor with a huge stride", function()
    local t = nd.zeros(1):as_strided({ 0, 2 }, { 1, 2 ^ 60 }, 0)
    assert.same({ 0, 2 }, t:gather(2, nd.zeros(0, 2, "int64")):size())
    assert.same({ 0, 2 }, t:scatter_add_(2, nd.zeros(0, 2, "int64"), nd.zeros(0, 2)):size())
    assert.same({ 0, 0 }, t:index_select(2, nd.zeros(0, "int64")):size())
  end)
end)

describe(".npy headers (found by libFuzzer)", function()
  it("names an unsupported dtype with a huge item size without overflowing", function()
    local path = npy_file("{'descr': '=f87777777777777', 'fortran_order': False, 'shape': (), }",
      string.rep("\0", 8))
    local ok, msg = pcall(nd.load, path)
    os.remove(path)
    assert.is_false(ok)
    assert.truthy(msg:find("unsupported dtype '=f87777777777777' (float702222222222216)", 1, true), msg)
  end)
end)
