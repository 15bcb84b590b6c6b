-- Argument counts (a non-nil argument past a function's last parameter
-- raises, naming the function and what it takes) and error attribution
-- (an error names the function the user called, even when a function it
-- calls inside failed).
local nd = require "nd"
local unpack = table.unpack or unpack

-- Functions that take a variable tail (sizes, then a dtype; indices) and
-- check it themselves.
local variadic = {
  empty = true, zeros = true, ones = true, arange = true, get = true, set = true,
  permute = true, expand = true, broadcast_to = true, view = true, reshape = true,
  flip = true, rand = true, randn = true, randint = true, uniform = true,
  normal = true, bernoulli = true, randperm = true, tile = true, meshgrid = true,
  einsum = true, einsum_plan = true, -- a spec, then any number of operands
}

local function each_function(f)
  local seen = {}
  for name, fn in pairs(nd) do
    if type(fn) == "function" and not seen[fn] then seen[fn] = true; f(name, fn, "nd") end
  end
  for name, fn in pairs(nd.methods) do
    if type(fn) == "function" and not seen[fn] then seen[fn] = true; f(name, fn, "method") end
  end
  for name, fn in pairs(nd.linalg) do f(name, fn, "linalg") end
  for name, fn in pairs(nd.image) do f(name, fn, "image") end
end

local both = on_both_paths

describe("argument counts", function()
  it("every function refuses a non-nil argument past its last parameter", function()
    both(function(on)
      local missed = {}
      each_function(function(name, fn)
        if variadic[name] then return end
        local args = {}
        for i = 1, 12 do args[i] = {} end
        local ok, err = pcall(fn, unpack(args, 1, 12))
        if ok or not tostring(err):find(name .. ": takes (", 1, true) then
          missed[#missed + 1] = name .. " (" .. tostring(err) .. ")"
        end
      end)
      table.sort(missed)
      assert.same({}, missed, "FFI " .. tostring(on))
    end)
  end)

  it("says what the function takes, with a hint for PyTorch's alpha", function()
    both(function()
      local W, dW = nd.zeros(3), nd.ones(3)
      assert_error_matches(function() W:add_(dW, -0.1) end,
        "add_: takes (t, other), got 3 arguments", "a:add_(b * alpha)")
      assert_error_matches(function() W:mul_(2, 3) end, "mul_: takes (t, other), got 3 arguments")
      assert_error_matches(function() nd.add(W, dW, nd.zeros(3), 1) end,
        "add: takes (a, b [, out]), got 4 arguments")
      assert_error_matches(function() W:t(1) end, "t: takes (t), got 2 arguments")
      assert_error_matches(function() W:exp(nil, 5) end, "exp: takes (t [, out]), got 3 arguments")
      assert_error_matches(function() W:clamp(-1, 1, nd.zeros(3), 5) end, "clamp: takes")
      assert_error_matches(function() nd.linalg.norm(nd.eye(2), 2, 3) end,
        "norm: takes (A [, ord]), got 3 arguments")
      assert_error_matches(function() nd.tril(nd.eye(2), 1, 2) end, "tril: takes (t [, k])")
      assert_error_matches(function() nd.generator(1):manual_seed(1, 2) end,
        "manual_seed: takes (g, seed)")
      assert.same(0, W:sum()) -- nothing was written
    end)
  end)

  it("allows trailing nils, and metamethods take what Lua passes", function()
    both(function()
      local a = nd.ones(3)
      assert.same(6, nd.add(a, a, nil, nil):sum())
      assert.same(3, a:sum(nil, nil, nil))
      assert.same(-3, (-a):sum())
      assert.same(3, #a)
      assert.same(6, (a + a):sum())
    end)
  end)

  it("variadic functions still check their own tail", function()
    assert_error_matches(function() nd.zeros(2, "float32", 5) end, "zeros:")
    assert_error_matches(function() nd.randperm(3, 4) end, "randperm:")
  end)
end)

describe("errors name the function the user called", function()
  local huge = nd.zeros(1):expand(2 ^ 62)
  it("when the copy inside it fails", function()
    local path = os.tmpname()
    for name, f in pairs({
      save = function() nd.save(path, huge) end,
      clone = function() return huge:clone() end,
      contiguous = function() return huge:contiguous() end,
      to_string = function() return huge:to_string() end,
      cat = function() return nd.cat({ huge, huge }) end,
      hstack = function() return nd.hstack({ huge, huge }) end,
      float = function() return huge:float() end,
    }) do
      assert_error_matches(f, name .. ": ")
    end
    os.remove(path)
  end)

  it("when a shared entry point fails", function()
    assert_error_matches(function() nd.zeros(2, 3):view_as(nd.zeros(5)) end, "view_as: shape {5}")
    assert_error_matches(function() nd.load("/nonexistent/x.npy") end, "load: ")
    assert_error_matches(function() nd.full({ 2 ^ 62, 4 }, 1) end, "full: ")
  end)

  it("when its arguments are missing or of the wrong type, every function", function()
    -- the in-place unary ops once said sqrt: for sqrt_, t:diag(1e300)
    -- diagonal:, linalg.plan(t) bad argument #1 to '?', a released
    -- tensor's t:tril() dim:
    local wrong = {}
    local function try(name, f, args)
      local ok, e = pcall(f, unpack(args))
      local said = not ok and tostring(e):gsub("^[^ ]-:%d+: ", ""):match("^([%w_]+):")
      if said ~= false and said ~= name then wrong[#wrong + 1] = name .. " said " .. tostring(said) end
    end
    local x = nd.tensor({ 1, 2, 3 })
    for name, f in pairs(nd) do
      if type(f) == "function" then
        for _, args in ipairs({ {}, { "x" }, { x, "x" }, { x, x, "x", "x", "x", "x" } }) do
          try(name, f, args)
        end
      end
    end
    local tails = { {}, { "x" }, { "x", "x" }, { 1, "x" }, { 1, 2, "x" }, { {}, {} }, { 0 / 0 },
      { -5 }, { 1e300 }, { 1, 1, 1, 1, 1, 1, 1 } }
    local released = nd.zeros(2, 3)
    released:release()
    for _, tbl in ipairs({ nd.methods, nd.linalg }) do
      for name, f in pairs(tbl) do
        if type(f) == "function" then
          for _, tail in ipairs(tails) do
            try(name, f, { nd.tensor({ { 1, 2, 3 }, { 4, 5, 6 } }), unpack(tail) })
          end
          if name ~= "release" then try(name, f, { released }) end -- tril said dim:
        end
      end
    end
    table.sort(wrong)
    assert.same({}, wrong)
  end)
end)

describe("nd.wrap over an FFI buffer", function()
  if not jit then
    pending("LuaJIT only")
    return
  end
  local ffi = require "ffi"
  local function churn()
    collectgarbage()
    collectgarbage()
    local junk = {}
    for i = 1, 2000 do junk[i] = ffi.new("float[8]", 9) end
    collectgarbage()
  end

  it("keeps the buffer alive while the tensor or a view of it lives", function()
    local t = nd.wrap(ffi.new("float[8]", 1, 2, 3, 4, 5, 6, 7, 8), 32, "float32", { 8 })
    local v = t:narrow(1, 5, 4)
    churn()
    assert.same(36, t:sum())
    t = nil
    churn()
    assert.same({ 5, 6, 7, 8 }, v:totable())
  end)

  it("keeps both the buffer and an owner given with it", function()
    local weak = setmetatable({}, { __mode = "v" })
    local owner = {}
    weak[1] = owner
    local t = nd.wrap(ffi.new("double[2]", 1, 2), 16, "float64", { 2 }, nil, owner)
    owner = nil
    churn()
    assert.is_table(weak[1])
    assert.same(3, t:sum())
  end)
end)
