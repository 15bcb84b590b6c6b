-- .npy files: fixtures in spec/fixtures were written by NumPy 1.24.
local nd = require "nd"
local dir = "spec/fixtures/"

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

describe("nd.load", function()
  it("reads a C-order float32 array", function()
    local t = nd.load(dir .. "c_f32.npy")
    assert.equals("float32", t:dtype())
    assert.same({ 2, 3 }, t:size())
    assert.same({ { 0, 0.25, 0.5 }, { 0.75, 1, 1.25 } }, t:totable())
  end)

  it("reads Fortran order as a column-major tensor without a copy", function()
    local t = nd.load(dir .. "fortran_i64.npy")
    assert.equals("int64", t:dtype())
    assert.same({ 2, 3 }, t:size())
    assert.same({ 1, 2 }, t:stride())
    assert.is_false(t:is_contiguous())
    assert.same({ { -2, -1, 0 }, { 1, 2, 3 } }, t:totable())
  end)

  it("swaps big-endian data", function()
    assert.same({ 1.5, -2.0, 1e300, -0.0 }, nd.load(dir .. "big_f8.npy"):totable())
    local t = nd.load(dir .. "big_i4.npy")
    assert.equals("int32", t:dtype())
    assert.same({ { 1, -2 }, { 65536, -70000 } }, t:totable())
  end)

  it("reads bool, 0-d, empty and version 2.0 files", function()
    assert.same({ true, false, true }, nd.load(dir .. "bool.npy"):totable())
    local s = nd.load(dir .. "scalar_f8.npy")
    assert.equals(0, s:dim())
    assert.equals(2.5, s:item())
    local e = nd.load(dir .. "empty_f4.npy")
    assert.same({ 0, 3 }, e:size())
    local v2 = nd.load(dir .. "v2_u8.npy")
    assert.equals("uint8", v2:dtype())
    assert.same({ { 0 }, { 1 }, { 2 }, { 3 }, { 4 } }, v2:totable())
  end)

  it("refuses a header whose shape does not match the data, naming the file", function()
    assert_error_matches(function() nd.load(dir .. "short_data.npy") end,
      "load:", "short_data.npy", "{2,3}", "24 bytes")
    assert_error_matches(function() nd.load(dir .. "long_data.npy") end,
      "load:", "long_data.npy")
  end)

  it("names the file when it is missing or not .npy", function()
    assert_error_matches(function() nd.load("spec/fixtures/missing.npy") end,
      "load:", "missing.npy")
    assert_error_matches(function() nd.load("spec/io_spec.lua") end,
      "load:", "io_spec.lua", "not a .npy file")
  end)
end)

describe("nd.save", function()
  local tmp = os.tmpname()
  after_each(function() os.remove(tmp) end)

  it("writes exactly NumPy's bytes for a C-order array", function()
    nd.save(tmp, nd.load(dir .. "c_f32.npy"))
    assert.equals(read(dir .. "c_f32.npy"), read(tmp))
  end)

  it("round-trips any view: transposed, stepped, flipped, expanded, 0-d", function()
    local x = nd.arange(12):reshape(3, 4)
    local views = {
      x:t(), x[{ {}, { 1, 4, 2 } }], x:flip(1), nd.arange(3):expand(2, 3),
      nd.tensor(7.25), x:narrow(1, 2, 0), nd.tensor({ true, false }),
      nd.rand(2, 3, "float32"), nd.arange(5, "uint8"), nd.arange(4, "int32"):flip(1),
    }
    for _, v in ipairs(views) do
      nd.save(tmp, v)
      local back = nd.load(tmp)
      assert.equals(v:dtype(), back:dtype())
      assert.same(v:size(), back:size())
      assert.same(v:totable(), back:totable())
    end
  end)

  it("writes a transposed compact tensor in Fortran order", function()
    nd.save(tmp, nd.arange(6):reshape(2, 3):t())
    assert.truthy(read(tmp):find("'fortran_order': True", 1, true))
    assert.same({ 1, 3 }, nd.load(tmp):stride())
  end)

  it("errors name the file and the function", function()
    assert_error_matches(function() nd.save("/nonexistent-dir/x.npy", nd.zeros(2)) end,
      "save:", "/nonexistent-dir/x.npy")
    assert_error_matches(function() nd.save(tmp, "not a tensor") end, "save:")
  end)
end)
