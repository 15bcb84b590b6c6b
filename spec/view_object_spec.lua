-- The view object model (issue 9): views are finalizer-free userdata that
-- keep their elements alive through their owner's anchor, whatever happens
-- to the owner; scalar operands with out take a direct kernel path that
-- must agree with the general one.
local nd = require "nd"
require "nd.testing" -- assert.tensor_equal

describe("views without finalizers", function()
  it("a view is of the owner's type, with its metatable and methods", function()
    local m = nd.tensor({ { 1, 2, 3 }, { 4, 5, 6 } })
    local v = m:as_strided({ 3, 2 }, { 1, 3 }) -- made by C (t() may be made by lua/views.lua)
    assert.equals(type(m), type(v))
    assert.equals(getmetatable(m), getmetatable(v)) -- "ffi" for cdata
    assert.equals(m.sum, v.sum)
    assert.same({ { 1, 4 }, { 2, 5 }, { 3, 6 } }, v:totable())
    assert.is_true(nd.equal(v, m:transpose(1, 2)))
  end)

  it("views outlive their owner's release, __gc by hand and collection", function()
    local kills = { "release", "drop" }
    if type(nd.zeros(1)) == "userdata" then kills[3] = "gc" end -- a cdata's finalizer is out of reach
    for _, kill in ipairs(kills) do
      local m = nd.tensor({ { 1, 2, 3, 4 }, { 5, 6, 7, 8 }, { 9, 10, 11, 12 } })
      local row, col, sub = m[2], m[{ {}, 3 }], m:narrow(1, 2, 2):t()
      if kill == "release" then m:release()
      elseif kill == "gc" then getmetatable(m).__gc(m)
      else m = nil end
      collectgarbage(); collectgarbage()
      assert.same({ 5, 6, 7, 8 }, row:totable())
      assert.same({ 3, 7, 11 }, col:totable())
      assert.same({ { 5, 9 }, { 6, 10 }, { 7, 11 }, { 8, 12 } }, sub:totable())
      row:fill_(0) -- still the same elements
      assert.same({ { 0, 9 }, { 0, 10 }, { 0, 11 }, { 0, 12 } }, sub:totable())
    end
  end)

  it("views of views share the root's elements after everything else is gone", function()
    local v
    do
      local m = nd.zeros(4, 4)
      v = m:t():narrow(1, 2, 2):select(2, 3)
      m[{ 3, 2 }] = 7
    end
    collectgarbage(); collectgarbage()
    assert.same({ 7, 0 }, v:totable()) -- m[3][2], m[3][3]
  end)

  it("releasing a view leaves the owner and the other views usable", function()
    local m = nd.ones(3, 3)
    local a, b = m:t(), m[1]
    a:release()
    assert_error_matches(function() return a:sum() end, "sum", "released")
    assert.equals(9, m:sum())
    assert.equals(3, b:sum())
    a:release() -- idempotent
  end)

  it("a view is a tensor for every type check (Lua and C)", function()
    local v = nd.rand(3, 3):t()
    assert.is_true(nd.allclose(v, v:clone()))
    assert.equals(3, #nd.vstack({ v[1], v[2], v[3] }):totable())
    assert.equals(v:sum(), nd.add(v, 0):sum())
    local r = v:reshape(9) -- may copy: an owning tensor
    assert.equals(type(v), type(r))
    assert.equals(getmetatable(v), getmetatable(r))
  end)

  it("many views of a big tensor keep it exactly until the last goes", function()
    local before = nd.memory and nd.memory() or nil
    local views = {}
    do
      local big = nd.zeros(512, 512)
      for i = 1, 100 do views[i] = big[i] end
    end
    collectgarbage(); collectgarbage()
    for i = 1, 100 do assert.equals(0, views[i]:sum()) end
    views = nil
    collectgarbage(); collectgarbage()
    if before then assert.is_true(nd.memory() <= before + 4096) end
  end)

  it("a failed view leaves nothing behind", function()
    local m = nd.zeros(2, 3)
    for _ = 1, 200 do
      assert_error_matches(function() return m:narrow(2, 3, 5) end, "narrow")
      assert_error_matches(function() return m[{ 1, 9 }] end, "index")
      assert_error_matches(function() return m:transpose(1, 3) end, "transpose")
    end
    collectgarbage()
    assert.same({ 0, 0, 0 }, m[1]:totable())
  end)
end)

describe("small contiguous operands (the direct kernel path)", function()
  -- The direct path takes contiguous operands below the threshold; the same
  -- values through a stepped view take the general path: they must agree,
  -- for every dtype, op and scalar, new result and out, FFI on and off.
  local dts = { "float32", "float64", "int32", "int64", "uint8", "bool" }
  local scalars = { 0.016, 2, -3, 300, 2 ^ 40, -0.0, 1 / 0, 0 / 0, 7.5, 2 ^ 31 + 5 }
  local ops = { "add", "sub", "mul", "div", "maximum", "minimum", "eq", "lt", "ge" }
  -- nd.testing's comparison (shape, dtype, values, NaN equal to NaN), with
  -- the case named in front of its message.
  local function check(what, want, got)
    local ok, err = pcall(assert.tensor_equal, want, got)
    if not ok then error(what .. ": " .. tostring(err), 0) end
  end
  local function operands(dt, seed)
    local wide = (nd.linspace(-300, 300, 14) + seed):to(dt)
    return wide[{ { 1, -1, 2 } }], wide[{ { 1, -1, 2 } }]:clone()
  end

  it("tensor op scalar and scalar op tensor", function()
    local was = nd.use_ffi()
    for _, dt in ipairs(dts) do
      local strided, x = operands(dt, 0)
      for _, op in ipairs(ops) do
        for _, s in ipairs(scalars) do
          for _, left in ipairs({ true, false }) do
            local function call(t, o)
              if left then return nd[op](t, s, o) end
              return nd[op](s, t, o)
            end
            local ok, want = pcall(call, strided)
            local okc, got = pcall(call, x)
            assert.equals(ok, okc, dt .. " " .. op .. " " .. s)
            if ok then
              local what = ("%s %s %s (left %s)"):format(dt, op, s, tostring(left))
              check(what .. " new", want, got)
              for _, ffi in ipairs({ true, false }) do
                nd.use_ffi(ffi)
                local o = nd.empty(7, want:dtype())
                call(x, o)
                nd.use_ffi(was)
                check(what .. " out, ffi " .. tostring(ffi), want, o)
              end
            end
          end
        end
      end
    end
  end)

  it("tensor op tensor of one dtype", function()
    local was = nd.use_ffi()
    for _, dt in ipairs(dts) do
      local sa, a = operands(dt, 0)
      local sb, b = operands(dt, 7)
      for _, op in ipairs(ops) do
        local ok, want = pcall(nd[op], sa, sb)
        local okc, got = pcall(nd[op], a, b)
        assert.equals(ok, okc, dt .. " " .. op)
        if ok then
          check(dt .. " " .. op .. " new", want, got)
          for _, ffi in ipairs({ true, false }) do
            nd.use_ffi(ffi)
            local o = nd.empty(7, want:dtype())
            nd[op](a, b, o)
            nd.use_ffi(was)
            check(dt .. " " .. op .. " out", want, o)
          end
        end
      end
    end
  end)

  it("unary ops, new result and out", function()
    local unary = { "neg", "abs", "exp", "log", "sqrt", "sin", "cos", "tanh",
      "sigmoid", "isnan", "isfinite", "floor", "ceil", "round", "sign", "square",
      "reciprocal", "logical_not", "bitwise_not" }
    local was = nd.use_ffi()
    local tried = 0
    for _, dt in ipairs(dts) do
      local strided, x = operands(dt, 0)
      for _, name in ipairs(unary) do
        if nd[name] then
          local ok, want = pcall(nd[name], strided)
          local okc, got = pcall(nd[name], x)
          assert.equals(ok, okc, dt .. " " .. name)
          if ok then
            tried = tried + 1
            check(dt .. " " .. name .. " new", want, got)
            local okout = pcall(nd[name], x, nd.empty(7, want:dtype()))
            if okout then
              for _, ffi in ipairs({ true, false }) do
                nd.use_ffi(ffi)
                local o = nd.empty(7, want:dtype())
                nd[name](x, o)
                nd.use_ffi(was)
                check(dt .. " " .. name .. " out", want, o)
              end
            end
          end
        end
      end
    end
    assert.is_true(tried > 40)
  end)

  it("an out overlapping an operand partially takes the general path", function()
    for _, ffi in ipairs({ true, false }) do
      local was = nd.use_ffi()
      nd.use_ffi(ffi)
      local base = nd.arange(1, 9, "float64")
      local x, o = base:narrow(1, 1, 6), base:narrow(1, 3, 6)
      nd.mul(x, 2, o) -- as if x were read before o is written
      assert.same({ 1, 2, 2, 4, 6, 8, 10, 12 }, base:totable())
      base = nd.arange(1, 9, "float64")
      nd.add(base:narrow(1, 1, 6), base:narrow(1, 2, 6), base:narrow(1, 3, 6))
      assert.same({ 1, 2, 3, 5, 7, 9, 11, 13 }, base:totable())
      nd.use_ffi(was)
    end
    local y = nd.arange(1, 5, "float64")
    nd.mul(y, 2, y) -- exactly in place is fine
    assert.same({ 2, 4, 6, 8 }, y:totable())
  end)
end)
