-- The core's op table (src/lua/lconsts.c, from nd.h's X-macros), read
-- through require "nd.internal": every op in it is a module function and
-- a method in each of its forms, and under LuaJIT the FFI fast path gives
-- what the C API path gives (nd.use_ffi(true) / (false); outside LuaJIT,
-- or with the JIT off, both runs take the C path). An op added to the C
-- table is covered here with no change to this file.
local nd = require "nd"
local internal = require "nd.internal"
require "nd.testing"

local optable, consts = internal.optable, internal.consts

-- Operands: 3 floats (NaN-free, but with values outside some domains:
-- both paths must give the same NaN), or integers for the integer ops.
local function operands(row)
  if row.integers then
    return nd.tensor({ 3, 5, 6 }, "int32"), nd.tensor({ 1, 2, 4 }, "int32"), 2
  end
  return nd.tensor({ 0.5, 1.5, -2.25 }, "float32"), nd.tensor({ 2, -0.5, 0.75 }, "float32"), 0.25
end

-- Every form of the op, in a fixed order (the in-place one when it has
-- one: not isnan, isfinite, isinf): tensors and Lua values.
local function forms(row)
  local a, b, s = operands(row)
  local f, r = nd[row.name], {}
  if row.family == "reduce" then
    r[1] = f(a)
    r[2] = a[row.name](a, 1)
    return r
  end
  if row.arity == 2 then
    r[#r + 1] = f(a, b)
    r[#r + 1] = a[row.name](a, b)
    r[#r + 1] = f(a, s)
    r[#r + 1] = f(s, a)
    local out = nd.zeros(3, r[1]:dtype())
    r[#r + 1] = f(a, b, out)
    r[#r + 1] = a[row.name](a, s, nd.zeros(3, r[1]:dtype()))
    local inplace = a[row.name .. "_"]
    if inplace then r[#r + 1] = inplace(a:clone(), b) end
  else
    r[#r + 1] = f(a)
    r[#r + 1] = a[row.name](a)
    r[#r + 1] = f(a, nd.zeros(3, r[1]:dtype()))
    local inplace = a[row.name .. "_"]
    if inplace then r[#r + 1] = inplace(a:clone()) end
  end
  return r
end

describe("the op table", function()
  after_each(function() nd.use_ffi(true) end)

  it("numbers each family's ops 0 .. n-1 once, with their forms", function()
    local seen, names = {}, {}
    for _, row in ipairs(optable) do
      assert.is_nil(names[row.name], row.name .. " is listed twice")
      names[row.name] = true
      local ids = seen[row.family] or {}
      seen[row.family] = ids
      assert.is_nil(ids[row.id], ("%s %s reuses id %d"):format(row.family, row.name, row.id))
      ids[row.id] = true
      assert.is_true(row.arity == 1 or row.arity == 2)
      assert.is_truthy(({ same = 1, float = 1, bool = 1 })[row.result])
    end
    for _, family in ipairs({ "op", "math", "reduce" }) do
      local ids, n = seen[family], 0
      for _ in pairs(ids) do n = n + 1 end
      for id = 0, n - 1 do assert.is_true(ids[id], ("%s has no op %d"):format(family, id)) end
    end
  end)

  it("stays out of nd and the methods, as the binding's other internals", function()
    local public = { linalg = true, image = true, safetensors = true, _VERSION = true, methods = true }
    for _, tbl in ipairs({ nd, nd.methods }) do
      for k, v in pairs(tbl) do
        assert.is_true(type(v) == "function" or public[k] == true, "nd." .. k)
      end
    end
    for _, k in ipairs({ "optable", "consts", "fviews", "ffamily", "ffi_api", "ffi_api_decl",
                         "layout_facts", "header", "struct_sizes" }) do
      assert.is_nil(nd[k], k)
      assert.is_nil(nd.methods[k], k)
    end
  end)

  it("gives the dtypes as nd names and sizes them", function()
    for i, d in ipairs(consts.dtypes) do
      assert.equals(i - 1, d.id)
      local t = nd.zeros(2, d.name)
      assert.equals(d.name, t:dtype())
      assert.equals(d.size, t:element_size())
      local f = { float32 = true, float64 = true, float16 = true, bfloat16 = true }
      assert.equals(f[t:dtype()] == true, d.kind == "f")
    end
  end)

  for _, row in ipairs(optable) do
    it(("%s %s: every form, the FFI path as the C path"):format(row.family, row.name), function()
      assert.is_function(nd[row.name])
      assert.is_function(nd.methods[row.name])
      nd.use_ffi(true)
      local fast = forms(row)
      nd.use_ffi(false)
      local slow = forms(row)
      assert.equals(#slow, #fast)
      if row.family ~= "reduce" then
        assert.equals(row.result == "bool", slow[1]:dtype() == "bool")
      end
      for i = 1, #slow do
        if nd.is_tensor(slow[i]) then
          assert.tensor_equal(slow[i], fast[i])
        else
          assert.equals(slow[i], fast[i])
        end
      end
    end)
  end
end)
