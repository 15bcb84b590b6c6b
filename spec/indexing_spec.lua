-- Table indexing t[{...}]: numbers select, {} keeps a dim, inclusive
-- {first, last [, step]} ranges (negative positions and steps), reading
-- and assignment. Expected sizes, strides, offsets and values were
-- generated with torch 1.13 / numpy 1.24 (negative steps) and pasted.
local nd = require "nd"

-- The bases every oracle case views (spec/support/helper.lua).
local bases = view_bases()
local a, b, m, v, s, e, c = bases.a, bases.b, bases.m, bases.v, bases.s, bases.e, bases.c
local check_case = check_view_case

-- { name, view, size, stride, offset, values, base whose storage it shares }
local cases = {
  { "t[{{},{},{},3}] (the seeds' t[:, :, :, 2])", function() return b[{{},{},{},3}] end, {1, 2, 3}, {24, 12, 4}, 2, {{{2, 6, 10}, {14, 18, 22}}}, 'b' },
  { 't[{2}] selects', function() return a[{2}] end, {3, 4}, {4, 1}, 12, {{12, 13, 14, 15}, {16, 17, 18, 19}, {20, 21, 22, 23}}, 'a' },
  { 't[{{2}}] keeps the dim', function() return a[{{2}}] end, {1, 3, 4}, {12, 4, 1}, 12, {{{12, 13, 14, 15}, {16, 17, 18, 19}, {20, 21, 22, 23}}}, 'a' },
  { 't[{{},2}]', function() return a[{{},2}] end, {2, 4}, {12, 1}, 4, {{4, 5, 6, 7}, {16, 17, 18, 19}}, 'a' },
  { 't[{{},{2,3}}]', function() return a[{{},{2,3}}] end, {2, 2, 4}, {12, 4, 1}, 4, {{{4, 5, 6, 7}, {8, 9, 10, 11}}, {{16, 17, 18, 19}, {20, 21, 22, 23}}}, 'a' },
  { 't[{{},{},{1,4,2}}]', function() return a[{{},{},{1,4,2}}] end, {2, 3, 2}, {12, 4, 2}, 0, {{{0, 2}, {4, 6}, {8, 10}}, {{12, 14}, {16, 18}, {20, 22}}}, 'a' },
  { 't[{{},{},{1,3,2}}] (1,3)', function() return a[{{},{},{1,3,2}}] end, {2, 3, 2}, {12, 4, 2}, 0, {{{0, 2}, {4, 6}, {8, 10}}, {{12, 14}, {16, 18}, {20, 22}}}, 'a' },
  { 't[{{},{},{2,4,3}}] (2 only)', function() return a[{{},{},{2,4,3}}] end, {2, 3, 1}, {12, 4, 3}, 1, {{{1}, {5}, {9}}, {{13}, {17}, {21}}}, 'a' },
  { 't[{-1}]', function() return a[{-1}] end, {3, 4}, {4, 1}, 12, {{12, 13, 14, 15}, {16, 17, 18, 19}, {20, 21, 22, 23}}, 'a' },
  { 't[{{-2,-1}}]', function() return m[{{-2,-1}}] end, {2, 4}, {4, 1}, 4, {{4, 5, 6, 7}, {8, 9, 10, 11}}, 'm' },
  { 't[{{},{-3,-2}}]', function() return m[{{},{-3,-2}}] end, {3, 2}, {4, 1}, 1, {{1, 2}, {5, 6}, {9, 10}}, 'm' },
  { 't[{{}, -1}]', function() return m[{{},-1}] end, {3}, {4}, 3, {3, 7, 11}, 'm' },
  { 't[{2,{2,4}}]', function() return m[{2,{2,4}}] end, {3}, {1}, 5, {5, 6, 7}, 'm' },
  { 'empty range {k,k-1}', function() return m[{{},{3,2}}] end, {3, 0}, nil, nil, {{}, {}, {}}, 'm' },
  { 'empty range {n+1,n}', function() return m[{{4,3}}] end, {0, 4}, nil, nil, {}, 'm' },
  { 'empty range {1,0}', function() return m[{{1,0}}] end, {0, 4}, nil, nil, {}, 'm' },
  { '{} of a size-0 dim', function() return e[{{},{2,3}}] end, {0, 2}, nil, nil, {}, 'e' },
  { 'negative step reverses', function() return v[{{-1,1,-1}}] end, {7}, {-1}, 6, {6, 5, 4, 3, 2, 1, 0}, 'v' },
  { 'negative step 2', function() return v[{{7,1,-2}}] end, {4}, {-2}, 6, {6, 4, 2, 0}, 'v' },
  { 'negative step from the middle', function() return v[{{5,2,-1}}] end, {4}, {-1}, 4, {4, 3, 2, 1}, 'v' },
  { 'negative step on rows and cols', function() return m[{{3,1,-2},{-1,1,-3}}] end, {2, 2}, {-8, -3}, 11, {{11, 8}, {3, 0}}, 'm' },
  { 'negative step empty', function() return v[{{2,3,-1}}] end, {0}, nil, nil, {}, 'v' },
  { 'negative step then select', function() return m[{{-1,1,-1}}][{{},2}] end, {3}, {-4}, 9, {9, 5, 1}, 'm' },
  { 'negative steps chained', function() return v[{{-1,1,-1}}][{{-1,1,-2}}] end, {4}, {2}, 0, {0, 2, 4, 6}, 'v' },
  { 'reversed then transposed then stepped', function() return m[{{},{-1,1,-1}}]:t()[{{1,4,2}}] end, {2, 3}, {-2, 4}, 3, {{3, 7, 11}, {1, 5, 9}}, 'm' },
  { 'index of a transposed view', function() return a:transpose(1,3)[{{2,3},2}] end, {2, 2}, {1, 12}, 5, {{5, 17}, {6, 18}}, 'a' },
  { 'fewer entries than dims', function() return a[{{1,2},{2,3}}] end, {2, 2, 4}, {12, 4, 1}, 4, {{{4, 5, 6, 7}, {8, 9, 10, 11}}, {{16, 17, 18, 19}, {20, 21, 22, 23}}}, 'a' },
  { 'empty table is the whole tensor', function() return m[{}] end, {3, 4}, {4, 1}, 0, {{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}}, 'm' },
  { 'index of an expanded view', function() return c:expand(3,4)[{{2,3},{1,4,3}}] end, {2, 2}, {1, 0}, 1, {{1, 1}, {2, 2}}, 'c' },
}

describe("t[{...}] matches PyTorch/NumPy slicing", function()
  for _, case in ipairs(cases) do
    it(case[1], function() check_case(case, bases) end)
  end
end)

describe("t[{...}] results", function()
  it("gives a Lua number when every dim is selected by a number", function()
    assert.equals(6, m[{ 2, 3 }])
    assert.equals(23, a[{ -1, -1, -1 }])
    assert.equals("number", type(v[3]))
    assert.equals(2, v[3])
    assert.equals(6, m[2][3])
  end)
  it("gives a tensor otherwise", function()
    assert.equals(1, m[2]:dim())
    assert.same({ 6 }, m[{ 2, { 3 } }]:totable())
    assert.equals(0, m[{ {}, 2 }][{ {} }]:storage_offset() - 1)
  end)
  it("t[{}] of a 0-d tensor is a 0-d tensor", function()
    local r = s[{}]
    assert.equals(0, r:dim())
    assert.equals(5, r:item())
  end)
  it("select returns a 0-d tensor and t[i] a number for 1-D tensors", function()
    local r = v:select(1, 2)
    assert.equals(0, r:dim())
    assert.equals(1, r:item())
    assert.equals(1, v[2])
    assert.equals(6, v[-1])
  end)
  it("get and set address one element without a table", function()
    local t = nd.arange(12):reshape(3, 4):clone()
    assert.equals(6, t:get(2, 3))
    assert.equals(11, t:get(-1, -1))
    t:set(2, 3, 100)
    assert.equals(100, t[{ 2, 3 }])
    t:t():set(4, 1, -7)
    assert.equals(-7, t:get(1, 4))
  end)
end)

describe("assignment t[{...}] = value", function()
  it("fills a selection with a number", function()
    local t = nd.zeros(3, 4)
    t[{ {}, 2 }] = 5
    t[{ 3, { 3, 4 } }] = 7
    assert.same({ { 0, 5, 0, 0 }, { 0, 5, 0, 0 }, { 0, 5, 7, 7 } }, t:totable())
  end)
  it("t[i] = value fills a row, and a 1-D element", function()
    local t = nd.zeros(2, 3)
    t[2] = 1
    t[1][3] = 9
    local r = nd.zeros(3)
    r[-1] = 4
    assert.same({ { 0, 0, 9 }, { 1, 1, 1 } }, t:totable())
    assert.same({ 0, 0, 4 }, r:totable())
  end)
  it("copies a tensor with broadcasting, also into reversed and stepped views", function()
    local t = nd.zeros(3, 4)
    t[{ {}, { 4, 1, -1 } }] = nd.tensor({ 1, 2, 3, 4 })
    assert.same({ { 4, 3, 2, 1 }, { 4, 3, 2, 1 }, { 4, 3, 2, 1 } }, t:totable())
    t[{ { 1, 3, 2 }, { 1, 4, 3 } }] = nd.tensor({ { -1 }, { -2 } })
    assert.same({ { -1, 3, 2, -1 }, { 4, 3, 2, 1 }, { -2, 3, 2, -2 } }, t:totable())
  end)
  it("converts booleans and dtypes", function()
    local t = nd.zeros(3, "bool")
    t[{ { 2, 3 } }] = true
    assert.same({ false, true, true }, t:totable())
    local i = nd.zeros(2, "int32")
    i[{ {} }] = nd.tensor({ 1.9, -2.9 })
    assert.same({ 1, -2 }, i:totable())
  end)
  it("is correct when the source overlaps the destination", function()
    local t = nd.arange(6):clone()
    t[{ { 2, 6 } }] = t[{ { 1, 5 } }]    -- numpy: t[1:] = t[:-1].copy()
    assert.same({ 0, 0, 1, 2, 3, 4 }, t:totable())
    local r = nd.arange(5):clone()
    r[{ {} }] = r[{ { -1, 1, -1 } }]    -- reverse in place
    assert.same({ 4, 3, 2, 1, 0 }, r:totable())
  end)
  it("is refused into an expanded view", function()
    local t = nd.zeros(3, 1):expand(3, 4)
    assert_error_matches(function() t[{ 1, {} }] = 1 end, "newindex", "single memory location")
    assert_error_matches(function() t[1] = nd.ones(4) end, "newindex", "single memory location")
    t[{ {}, 1 }] = 2 -- one column: distinct elements, allowed (as in PyTorch)
    assert.same({ 2, 2, 2, 2 }, t[3]:totable())
  end)
end)

describe("t[{...}] bad input", function()
  it("refuses position 0", function()
    assert_error_matches(function() return m[{ 0 }] end, "index 0 out of range for dim 1 of size 3")
    assert_error_matches(function() return m[{ { 0, 2 } }] end, "range {0,2,1} out of bounds for dim 1 of size 3")
    assert_error_matches(function() return m[0] end, "index 0 is invalid")
  end)
  it("refuses positions out of range", function()
    assert_error_matches(function() return m[{ 4 }] end, "index 4 out of range for dim 1 of size 3")
    assert_error_matches(function() return m[{ {}, -5 }] end, "index -5 out of range for dim 2 of size 4")
    assert_error_matches(function() return m[{ { 1, 5 } }] end, "range {1,5,1} out of bounds for dim 1 of size 3")
    assert_error_matches(function() return m[{ {}, { -6, 2 } }] end, "range {-6,2,1}", "dim 2 of size 4")
    assert_error_matches(function() return m[{ { 5, 4 } }] end, "range {5,4,1} out of bounds")
    assert_error_matches(function() return m[4] end, "index 4 out of range")
  end)
  it("refuses step 0 and malformed ranges", function()
    assert_error_matches(function() return m[{ { 1, 2, 0 } }] end, "range step must not be 0")
    assert_error_matches(function() return m[{ { 1, 2, 1, 1 } }] end, "at most 3 entries")
    assert_error_matches(function() return m[{ { 1.5, 2 } }] end, "range bound must be an integer")
    assert_error_matches(function() return m[{ "x" }] end, "index entry 1 must be a number or a range table, got string")
    assert_error_matches(function() return m[1.5] end, "must be an integer")
  end)
  it("refuses too many indices", function()
    assert_error_matches(function() return m[{ 1, 1, 1 }] end, "3 index entries for a tensor of 2 dims")
    assert_error_matches(function() return s[1] end, "0-d tensor cannot be indexed by a number")
    assert_error_matches(function() m[{ 1, 1, 1 }] = 0 end, "newindex: 3 index entries")
  end)
  it("refuses bad values in assignment", function()
    assert_error_matches(function() m:clone()[1] = "x" end, "value must be a number, boolean or tensor, got string")
    assert_error_matches(function() m:clone()[1] = nd.zeros(3) end, "does not broadcast")
  end)
  it("leaves the tensor untouched after an error", function()
    local t = nd.arange(4):clone()
    pcall(function() t[{ { 1, 9 } }] = 0 end)
    assert.same({ 0, 1, 2, 3 }, t:totable())
  end)
end)
