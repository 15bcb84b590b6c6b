-- Read-only tensors (NumPy's writeable = False): every write path refuses
-- them, naming the function, and writes nothing. The in-place functions
-- and the out= forms are enumerated from the module itself (every name
-- ending in "_", every function whose parameter list has an out), so a
-- new one fails here until it is listed with its arguments below.
local nd = require "nd"
local internal = require "nd.internal"
local ffi_ok, ffi = pcall(require, "ffi")
if not (jit and ffi_ok) then ffi = nil end

-- A read-only tensor holding t's values (its own memory): wrapped FFI
-- memory under LuaJIT, a mapped .npy file elsewhere.
local keep = {}
local function readonly(t)
  t = t:clone()
  if ffi == nil then
    local path = os.tmpname()
    nd.save(path, t)
    local r = nd.load(path, { mmap = "r" })
    os.remove(path) -- the mapping keeps the file's pages
    return r
  end
  keep[#keep + 1] = t
  return nd.wrap(t:cdata(), t:nbytes(), t:dtype(), t:size(), nil, t, { readonly = true })
end

local function same_bytes(a, b)
  return a:to_string() == b:to_string()
end

-- The arguments of each in-place function that is not an elementwise op:
-- the written tensor's sizes and dtype, and the rest of the call.
local F, I = "float64", "int64"
local special = {
  addbmm_ = { { 2, 3 }, F, function() return nd.ones(1, 2, 4), nd.ones(1, 4, 3) end },
  baddbmm_ = { { 1, 2, 3 }, F, function() return nd.ones(1, 2, 4), nd.ones(1, 4, 3) end },
  addmm_ = { { 2, 3 }, F, function() return nd.ones(2, 4), nd.ones(4, 3) end },
  addmv_ = { { 2 }, F, function() return nd.ones(2, 4), nd.ones(4) end },
  addr_ = { { 2, 3 }, F, function() return nd.ones(2), nd.ones(3) end },
  addcdiv_ = { { 2, 3 }, F, function() return nd.ones(2, 3), nd.ones(2, 3) end },
  addcmul_ = { { 2, 3 }, F, function() return nd.ones(2, 3), nd.ones(2, 3) end },
  clamp_ = { { 2, 3 }, F, function() return 0, 1 end },
  lerp_ = { { 2, 3 }, F, function() return nd.ones(2, 3), 0.5 end },
  nan_to_num_ = { { 2, 3 }, F, function() return end },
  copy_ = { { 2, 3 }, F, function() return nd.ones(2, 3) end },
  fill_ = { { 2, 3 }, F, function() return 7 end },
  zero_ = { { 2, 3 }, F, function() return end },
  index_add_ = { { 2, 3 }, F, function() return 1, nd.tensor({ 2 }, I), nd.ones(1, 3) end },
  index_copy_ = { { 2, 3 }, F, function() return 1, nd.tensor({ 2 }, I), nd.ones(1, 3) end },
  index_fill_ = { { 2, 3 }, F, function() return 1, nd.tensor({ 2 }, I), 9 end },
  masked_fill_ = { { 2, 3 }, F, function() return nd.ones(2, 3):bool(), 9 end },
  masked_scatter_ = { { 2, 3 }, F, function() return nd.ones(2, 3):bool(), nd.ones(6) end },
  scatter_ = { { 2, 3 }, F, function() return 2, nd.tensor({ { 1 }, { 2 } }, I), nd.ones(2, 1) end },
  scatter_add_ = { { 2, 3 }, F, function() return 2, nd.tensor({ { 1 }, { 2 } }, I), nd.ones(2, 1) end },
  uniform_ = { { 2, 3 }, F, function() return 0, 1 end },
  normal_ = { { 2, 3 }, F, function() return 0, 1 end },
}
-- The elementwise ops of the core's table: one operand (a number) more
-- than their arity's first.
local rows = {}
for _, row in ipairs(internal.optable) do rows[row.name] = row end
local function args_of(name)
  local s = special[name]
  if s then return s[1], s[2], s[3] end
  local row = rows[name:sub(1, -2)]
  if not row then return nil end
  local dt = row.integers and I or F
  if row.arity == 1 then return { 2, 3 }, dt, function() return end end
  if row.arity == 2 then return { 2, 3 }, dt, function() return 2 end end
  return nil
end

local function sorted_names(pred)
  local r = {}
  for k, v in pairs(nd) do
    if type(v) == "function" and pred(k) then r[#r + 1] = k end
  end
  table.sort(r)
  return r
end

local function check_refused(fn, t, before, f)
  local ok, err = pcall(f)
  assert.is_false(ok, fn .. " wrote into a read-only tensor")
  assert.truthy(tostring(err):find(fn .. ": the tensor is read-only", 1, true),
    fn .. ": " .. tostring(err))
  assert.is_true(same_bytes(t, before), fn .. " changed the bytes")
end

local function filled(size, dt)
  local n = 1
  for _, s in ipairs(size) do n = n * s end
  return nd.arange(1, n + 1):to(dt):reshape(size)
end

describe("read-only tensors", function()
  it("is_readonly: false for ordinary tensors, true for read-only ones; views inherit", function()
    local a = nd.ones(2, 3)
    assert.is_false(a:is_readonly())
    local r = readonly(filled({ 2, 3 }, F))
    assert.is_true(r:is_readonly())
    for _, v in ipairs({ r:t(), r:narrow(1, 1, 1), r:select(2, 2), r:view(6), r[1],
                         r[{ {}, 2 }], r:expand(4, 2, 3), r:flip(1), r:unsqueeze(1) }) do
      assert.is_true(v:is_readonly())
    end
    for _, c in ipairs({ r:clone(), r:t():contiguous(), r:to("float32"), r:float(), r:add(1) }) do
      assert.is_false(c:is_readonly())
      c:fill_(0)
    end
  end)

  it("every in-place function (a name ending in _) refuses, naming itself, and writes nothing", function()
    local names = sorted_names(function(k) return k:sub(-1) == "_" end)
    assert.truthy(#names > 50)
    for _, fn in ipairs(names) do
      local size, dt, args = args_of(fn)
      assert.truthy(size, fn .. ": no arguments known for this in-place function: list it here")
      -- it works on a writable tensor with these arguments ...
      local w = filled(size, dt)
      assert.is_true(pcall(nd[fn], w, args()), fn)
      -- ... and refuses a read-only one, as a method and as a function
      local t = readonly(filled(size, dt))
      local before = t:clone()
      check_refused(fn, t, before, function() return t[fn](t, args()) end)
      check_refused(fn, t, before, function() return nd[fn](t, args()) end)
      local v = t:view(-1) -- a view of it too
      check_refused(fn, v, before:view(-1), function() return nd[fn](t, args()) end)
    end
  end)

  local unpack = unpack or table.unpack
  it("every out= form refuses a read-only out", function()
    local params = internal.params
    local names = sorted_names(function(k)
      local p = params(k)
      return type(p) == "string" and p:find("out%]") ~= nil and k ~= "matmul_plan"
    end)
    assert.truthy(#names > 50)
    local mats = { matmul = true, mm = true, bmm = true, mv = true, outer = true,
      addmm = true, addmv = true, addr = true, baddbmm = true, addbmm = true }
    for _, fn in ipairs(names) do
      local call
      if special[fn .. "_"] and (mats[fn] or fn == "addcmul" or fn == "addcdiv"
          or fn == "clamp" or fn == "lerp" or fn == "nan_to_num") then
        -- the optional numbers before out (beta, alpha; value; nan, posinf, neginf)
        local extra = ({ addmm = { 1, 1 }, addmv = { 1, 1 }, addr = { 1, 1 }, baddbmm = { 1, 1 },
          addbmm = { 1, 1 }, addcmul = { 1 }, addcdiv = { 1 }, nan_to_num = { 0, 1, -1 } })[fn] or {}
        local size, dt, args = args_of(fn .. "_")
        local out = readonly(filled(size, dt))
        call = { out, function()
          local r = { filled(size, dt), args() }
          for _, x in ipairs(extra) do r[#r + 1] = x end
          return unpack(r)
        end }
      elseif fn == "matmul" or fn == "mm" then
        call = { readonly(filled({ 2, 3 }, F)), function() return nd.ones(2, 4), nd.ones(4, 3) end }
      elseif fn == "mv" then
        call = { readonly(filled({ 2 }, F)), function() return nd.ones(2, 4), nd.ones(4) end }
      elseif fn == "bmm" then
        call = { readonly(filled({ 1, 2, 3 }, F)), function() return nd.ones(1, 2, 4), nd.ones(1, 4, 3) end }
      elseif fn == "outer" then
        call = { readonly(filled({ 2, 3 }, F)), function() return nd.ones(2), nd.ones(3) end }
      elseif fn == "where" then
        call = { readonly(filled({ 2, 3 }, F)), function() return nd.ones(2, 3):bool(), nd.ones(2, 3), 0 end }
      elseif rows[fn] then
        local row = rows[fn]
        local dt = row.integers and I or F
        local a = filled({ 2, 3 }, dt)
        local probe = row.arity == 1 and nd[fn](a) or nd[fn](a, a)
        local out = readonly(nd.zeros(2, 3):to(probe:dtype()))
        call = { out, function() if row.arity == 1 then return a end return a, a end }
      end
      assert.truthy(call, fn .. ": no arguments known for this out= form: list it here")
      local out, args = call[1], call[2]
      local before = out:clone()
      local packed = { args() }
      local n = select("#", args())
      packed[n + 1] = out
      -- the probe: the same call into a writable out works
      local w = out:clone()
      local wp = { args() }
      wp[n + 1] = w
      assert.is_true(pcall(nd[fn], unpack(wp, 1, n + 1)), fn)
      check_refused(fn, out, before, function() return nd[fn](unpack(packed, 1, n + 1)) end)
    end
  end)

  it("set, t[i] = v, t[{...}] = v, masks and index tensors refuse", function()
    local t = readonly(filled({ 2, 3 }, F))
    local before = t:clone()
    local function refused(fn, f)
      local ok, err = pcall(f)
      assert.is_false(ok, fn)
      assert.truthy(tostring(err):find(": the tensor is read-only", 1, true), tostring(err))
      assert.is_true(same_bytes(t, before), fn)
    end
    refused("set", function() t:set(1, 1, 5) end)
    refused("set", function() nd.set(t, 2, 3, 5) end)
    refused("newindex", function() t[1] = 5 end)
    refused("newindex", function() t[{ 1, 2 }] = 5 end)
    refused("newindex", function() t[{ {}, 2 }] = 5 end)
    refused("newindex", function() t[{ {}, 2 }] = nd.tensor({ 8, 9 }) end)
    refused("newindex", function() t[t:gt(2)] = 0 end)
    refused("newindex", function() t[t:gt(2)] = nd.zeros(4) end)
    refused("newindex", function() t[nd.tensor({ 2 }, I)] = 0 end)
    refused("newindex", function() t[nd.tensor({ 2 }, I)] = nd.zeros(3) end)
    local r1 = readonly(filled({ 3 }, F))
    local b1 = r1:clone()
    assert.is_false(pcall(function() r1[2] = 0 end))
    assert.is_false(pcall(function() r1:set(2, 0) end))
    assert.is_true(same_bytes(r1, b1))
    -- uniform_/normal_ with a generator of their own (4th argument)
    local g = nd.generator(1)
    check_refused("uniform_", t, before, function() t:uniform_(0, 1, g) end)
    check_refused("normal_", t, before, function() nd.normal_(t, 0, 1, g) end)
  end)

  it("the FFI's element writes refuse too (JIT on and off give the same)", function()
    local t = readonly(filled({ 4 }, F))
    local before = t:clone()
    for _ = 1, 100 do -- compiled
      pcall(function() t[2] = 0 end)
      pcall(t.set, t, 3, 0)
      pcall(t.fill_, t, 0)
      pcall(t.add_, t, 1)
      pcall(t.copy_, t, before)
    end
    assert.is_true(same_bytes(t, before))
  end)

  it("t:cdata() is a const pointer under LuaJIT", function()
    if not ffi then return end
    local t = readonly(filled({ 3 }, F))
    assert.truthy(tostring(ffi.typeof(t:cdata())):find("const double", 1, true))
    assert.falsy(tostring(ffi.typeof(nd.ones(3):cdata())):find("const", 1, true))
  end)

  it("nd.wrap takes {readonly = true} as its 7th argument and checks it", function()
    if not ffi then return end
    local buf = ffi.new("int32_t[3]", { 1, 2, 3 })
    local t = nd.wrap(buf, 12, "int32", { 3 }, nil, nil, { readonly = true })
    assert.is_true(t:is_readonly())
    assert.is_false(nd.wrap(buf, 12, "int32", { 3 }, nil, nil, { readonly = false }):is_readonly())
    assert.is_false(nd.wrap(buf, 12, "int32", { 3 }):is_readonly())
    assert.is_false(pcall(t.fill_, t, 0))
    assert.same({ 1, 2, 3 }, { buf[0], buf[1], buf[2] })
    assert_error_matches(function() nd.wrap(buf, 12, "int32", { 3 }, nil, nil, { read_only = true }) end,
      "wrap", "unknown option 'read_only'")
    assert_error_matches(function() nd.wrap(buf, 12, "int32", { 3 }, nil, nil, { readonly = 1 }) end,
      "wrap", "readonly must be a boolean")
    assert_error_matches(function() nd.wrap(buf, 12, "int32", { 3 }, nil, nil, true) end,
      "wrap", "argument 7")
  end)
end)
