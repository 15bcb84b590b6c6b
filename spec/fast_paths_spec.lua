-- LuaJIT's fast paths for views and elements (lua/views.lua,
-- lua/elements.lua) hand Lua's arguments to C through the FFI
-- (src/lua/lffi.c), which applies the classic binding's rules. Every
-- call must give what the classic binding gives (nd.use_ffi(false)):
-- the same view (sizes, strides, offset, storage) or element, or the
-- same error.
local nd = require "nd"
local unpack = unpack or table.unpack

describe("fast views and elements", function()
  if not (jit and nd.use_ffi()) then
    it("are LuaJIT's with the JIT on (nothing to compare here)", function()
      assert.is_true(nd.is_tensor(nd.zeros(3, 4):t()))
    end)
    return
  end
  after_each(function() nd.use_ffi(true) end)

  -- What a call gives: a tensor's layout and storage, a value, or the error.
  local function outcome(base, f)
    local ok, r = pcall(f)
    if not ok then return { "error", tostring(r) } end
    if nd.is_tensor(r) then
      return { "tensor", r:size(), r:stride(), r:storage_offset(), r:dtype(),
               r:same_storage(base), tostring(r) }
    end
    return { "value", type(r), tostring(r) }
  end
  -- Under valgrind (make check-valgrind: ND_VALGRIND=1) the big loops
  -- below run one case in five, a different fifth per row and input:
  -- alone under valgrind this file took 291 s with only the fcalls loop
  -- thinned.
  local THIN = os.getenv("ND_VALGRIND") == "1" and 5 or 1
  local function both(base, f)
    nd.use_ffi(true)
    local fast = outcome(base, f)
    nd.use_ffi(false)
    local slow = outcome(base, f)
    nd.use_ffi(true)
    return fast, slow
  end

  local bases = {
    { "3x4", function() return nd.arange(12):view(3, 4) end },
    { "3x4 transposed", function() return nd.arange(12):view(3, 4):t() end },
    { "2x3x4", function() return nd.arange(24, "float32"):view(2, 3, 4) end },
    { "2x3x4 sliced", function() return nd.arange(48):view(4, 3, 4):narrow(1, 2, 2) end },
    { "vector of 5", function() return nd.arange(5, "int32") end },
    { "0-d", function() return nd.tensor(7) end },
    { "small 2x2", function() return nd.ones(2, 2) end },
    { "expanded", function() return nd.arange(3):expand(2, 3) end },
    { "empty 0x3", function() return nd.zeros(0, 3) end },
    { "4-d", function() return nd.zeros(2, 1, 3, 2) end },
  }
  local N = { 1, 2, 3, -1, -2, -4, 0, 4, 5, 2.5, -0.0, 0 / 0, 1 / 0, 2 ^ 62, "1", true }
  local calls = {}
  local function add(name, args) calls[#calls + 1] = { name, args } end
  for _, a in ipairs(N) do
    add("select", { 1, a }); add("select", { a, 1 }); add("unsqueeze", { a })
    add("squeeze", { a }); add("transpose", { 1, a }); add("movedim", { a, 2 })
    add("view", { a }); add("view", { a, -1 }); add("view", { 2, a, 2 })
    add("expand", { a, 3 }); add("narrow", { 1, a, 1 }); add("narrow", { 2, 1, a })
    add("narrow", { a, 1, 1 }); add("unfold", { 1, a, 1 }); add("unfold", { a, 2, 1 })
    add("diagonal", { a }); add("diagonal", { 0, 1, a }); add("flip", { a })
    add("permute", { a, 1 }); add("permute", { 2, 1, a }); add("index", { a })
  end
  add("t", {}); add("squeeze", {}); add("flip", {}); add("diagonal", {})
  add("view", { 12 }); add("view", { 4, 3 }); add("view", { 2, 2, 3 }); add("view", { 3, -1 })
  add("expand", { 2, 3, 4 }); add("expand", { -1, -1 }); add("permute", { 2, 1 })
  add("permute", { 3, 1, 2 }); add("flip", { 1, 2 }); add("unfold", { 2, 2, 2 })
  add("narrow", { 2, -2, 2 }); add("narrow", { 1, 4, 0 }); add("narrow", { 1, -4, 1 })
  add("select", { 2, -1 }); add("view", { 2, nil, 3 }); add("narrow", { 1, 1, 1, 9 })

  it("every view of C.fviews, and t[i], is the classic binding's", function()
    local n = 0
    for _, b in ipairs(bases) do
      local base = b[2]()
      for _, c in ipairs(calls) do
        local name, args = c[1], c[2]
        local f
        if name == "index" then
          f = function() return base[args[1]] end
        else
          f = function() return base[name](base, unpack(args, 1, table.maxn(args))) end
        end
        local fast, slow = both(base, f)
        assert.same(slow, fast, b[1] .. ":" .. name .. "(" .. table.concat((function()
          local s = {}
          for i = 1, table.maxn(args) do s[i] = tostring(args[i]) end
          return s
        end)(), ", ") .. ")")
        n = n + 1
      end
    end
    assert.is_true(n > 1000)
  end)

  it("every index table is read as the classic binding reads it", function()
    local keys = {
      { 1, 2 }, { -1, -1 }, { 2 }, { {}, 2 }, { 2, {} }, { {}, { 1, -1, 2 } },
      { { 2, 3 }, { 1 } }, { { 3, 1, -1 } }, { { 1, 0 } }, { { 2, 1 } }, { { 1, 5 } },
      { { 1, -1, 0 } }, { 1, nil, 2 }, { nil, 1 }, { { 1, nil, 2 } }, { { 1, 2, 3, 4 } },
      { 1, 2, 3 }, { 1, 2, 3, 4, 5 }, { 0 }, { 4, 1 }, { 2.5 }, { "1" }, { true },
      { -0.0, 1 }, { { -0.0 } }, { {}, {}, {} }, { { 2 }, { 2 }, { 1, 2 } }, {},
      { { 0 / 0 } }, { 1, { 2, 2 } }, { 1, 1, 1, 1 }, { 2, 1, 3, { 1, 2 } },
    }
    for _, b in ipairs(bases) do
      local base = b[2]()
      for i, k in ipairs(keys) do
        local fast, slow = both(base, function() return base[k] end)
        assert.same(slow, fast, b[1] .. " key " .. i)
      end
    end
  end)

  it("get, set, item and element assignment are the classic binding's", function()
    local values = { 1, -2, 2.5, -0.0, 0 / 0, 1 / 0, 300, 2 ^ 40, true, false, "x",
                     nd.tensor(1), 2 ^ 63, -2 ^ 63 }
    local dts = { "float64", "float32", "int32", "int64", "uint8", "bool" }
    local pos = { { 1, 1 }, { -1, 2 }, { 3, 4 }, { 4, 1 }, { 1.5, 1 }, { 0, 1 }, { 1 },
                  { 1, 1, 1 }, { "1", 1 }, { -0.0, 1 } }
    for _, dt in ipairs(dts) do
      for _, p in ipairs(pos) do
        for _, v in ipairs(values) do
          local outs = {}
          for _, on in ipairs({ true, false }) do
            nd.use_ffi(on)
            local t = nd.zeros(3, 4, dt)
            local args = { unpack(p) }
            args[#p + 1] = v
            local r1 = outcome(t, function() return t:set(unpack(args, 1, #p + 1)) end)
            local r3 = outcome(t, function() return t:get(unpack(p)) end)
            local r2 = outcome(t, function() t[p] = v end)
            local r4 = outcome(t, function() return t[p] end)
            outs[on] = { r1, r2, r3, r4, tostring(t) }
          end
          nd.use_ffi(true)
          assert.same(outs[false], outs[true], dt .. " " .. tostring(p[1]) .. "," .. tostring(p[2]) .. " " .. tostring(v))
        end
      end
    end
    for _, b in ipairs(bases) do
      local base = b[2]()
      local fast, slow = both(base, function() return base:item() end)
      assert.same(slow, fast, b[1])
      fast, slow = both(base, function() return base[2] end)
      assert.same(slow, fast, b[1])
    end
  end)

  it("int64 elements beyond 2^53 are read and written exactly", function()
    local ffi = require "ffi"
    local t = nd.zeros(2, 2, "int64")
    t:set(1, 2, ffi.new("int64_t", 2) ^ 60 + 1)
    t[{ 2, 1 }] = -(ffi.new("int64_t", 2) ^ 59) - 3
    assert.equals(ffi.new("int64_t", 2) ^ 60 + 1, t:get(1, 2))
    assert.equals(-(ffi.new("int64_t", 2) ^ 59) - 3, t[{ 2, 1 }])
    assert.equals(ffi.new("int64_t", 2) ^ 60 + 1, t:t():totable()[2][1])
    assert.equals(2 ^ 53, nd.tensor({ 2 ^ 53 }, "int64"):totable()[1])
  end)

  it("clamp, where and lerp into out and in place are the classic binding's", function()
    -- (converted, so that -3 saturates into uint8: nd.tensor(v, "uint8") raises)
    local function mk(dt, v) return nd.tensor(v):to(dt) end
    local operands = {
      function(dt) return mk(dt, { -3, 0.5, 7 }) end,
      function() return 2 end, function() return -1.5 end, function() return nil end,
      function(dt) return mk(dt, { 1, 2, 3 }):view(3, 1):expand(3, 1):view(3) end,
      function() return nd.tensor({ 1, 2 }) end, function() return "x" end,
      function() return true end, function(dt) return mk(dt, { 4 }):expand(3) end,
    }
    local n = 0
    for _, dt in ipairs({ "float32", "float64", "int32", "int64", "uint8" }) do
      for _, fa in ipairs(operands) do
        for _, fb in ipairs(operands) do
          for _, name in ipairs({ "clamp", "where", "lerp" }) do
            local outs = {}
            for _, on in ipairs({ true, false }) do
              nd.use_ffi(on)
              local x = mk(dt, { -5, 1, 9 })
              local cond = nd.tensor({ true, false, true })
              local o = nd.zeros(3, dt)
              local first = name == "where" and cond or x
              local b, c = fa(dt), fb(dt)
              local r1 = outcome(o, function() return nd[name](first, b, c, o) end)
              local r2 = outcome(x, function() return x[name .. "_"] and x[name .. "_"](x, b, c) end)
              outs[on] = { r1, r2, tostring(o), tostring(x) }
            end
            nd.use_ffi(true)
            assert.same(outs[false], outs[true], name .. " " .. dt)
            n = n + 1
          end
        end
      end
    end
    assert.is_true(n > 1000)
  end)

  it("new results are the classic binding's: dtype, layout, values", function()
    local internal, n = require "nd.internal", 0
    local inputs = {
      function(dt) return nd.tensor({ -1.5, 0, 2, 3.25 }):to(dt) end,
      function(dt) return nd.tensor({ { 1, -2, 3 }, { 4, 5, -6 } }):to(dt):t() end,
      function(dt) return nd.tensor({ { 1, 2 }, { 3, 4 } }):to(dt) end,
      function(dt) return nd.tensor({ 7, 8 }):to(dt):view(2, 1) end,
      function(dt) return nd.tensor(3):to(dt) end,
      function() return 2 end, function() return -0.5 end,
      -- past a small tensor's 128 bytes: adopted (ext.adopt)
      function(dt) return nd.arange(-20, 20):to(dt):view(4, 10):t() end,
      function(dt) return nd.arange(-100, 100):to(dt):view(20, 10) end,
    }
    local dts = { "float32", "float64", "int32", "int64", "uint8", "bool" }
    local seen = 0
    local function check(name, f)
      seen = seen + 1
      if seen % THIN ~= 0 then return end
      local fast, slow = both(nd.zeros(1), f)
      assert.same(slow, fast, name)
      n = n + 1
    end
    for _, row in ipairs(internal.optable) do
      if row.family == "op" or row.family == "math" then
        for _, da in ipairs(dts) do
          for ia, fa in ipairs(inputs) do
            local a = fa(da)
            if row.arity == 1 then
              if nd.is_tensor(a) then check(row.name .. " " .. da .. " " .. ia, function() return nd[row.name](a) end) end
            else
              for _, db in ipairs({ da, "float32", "int64" }) do
                for ib, fb in ipairs(inputs) do
                  local b = fb(db)
                  check(("%s %s%d %s%d"):format(row.name, da, ia, db, ib),
                    function() return nd[row.name](a, b) end)
                end
              end
            end
          end
        end
      end
    end
    for _, dt in ipairs({ "float32", "float64", "int32" }) do
      local x, c = nd.tensor({ { -3, 0.5 }, { 7, 2 } }):to(dt), nd.tensor({ true, false })
      check("clamp " .. dt, function() return nd.clamp(x:t(), -1, 1.5) end)
      check("clamp nil " .. dt, function() return nd.clamp(x, nil, 1) end)
      check("where " .. dt, function() return nd.where(c, x, 0.5) end)
      check("lerp " .. dt, function() return nd.lerp(x, x:t(), 0.25) end)
    end
    assert.is_true(n > 5000 / THIN)
  end)

  local function describe_all(...) -- every value returned, tensors whole
    local parts = { select("#", ...) }
    for k = 1, select("#", ...) do
      local x = select(k, ...)
      if nd.is_tensor(x) then
        parts[#parts + 1] = x:dtype() .. "{" .. table.concat(x:size(), ",") .. "}{"
          .. table.concat(x:stride(), ",") .. "}" .. x:storage_offset() .. tostring(x)
      else
        parts[#parts + 1] = type(x) .. " " .. tostring(x)
      end
    end
    return table.concat(parts, " | ")
  end

  local inputs = { -- of the reductions and the calls of C.fcalls
    function() return nd.tensor({ 3, -1.5, 2, 0.25 }, "float32") end,
    function() return nd.tensor({ { 1, 2, 3 }, { 4, 5, 6 } }):t() end,
    function() return nd.tensor({ 0 / 0, 1, 2 }) end,
    function() return nd.tensor({ 7, -2, 9 }, "int32") end,
    function() return nd.tensor({ 2 ^ 53, 2 ^ 52, 3 }, "int64") end,
    function() return nd.tensor({ 200, 100 }, "uint8") end,
    function() return nd.tensor({ true, false }) end,
    function() return nd.tensor(5) end,
    function() return nd.zeros(0) end,
    function() return nd.zeros(0, 3) end,
    function() return nd.arange(3):expand(2, 3) end,
    function() return nd.arange(40):view(8, 5) end,
    function() return nd.arange(24, "float32"):view(2, 3, 4):permute(3, 1, 2) end,
    function() return nd.arange(900):view(30, 30) end, -- results past the scratch
  }

  it("reshape and flatten through C.fcalls give views when they can", function()
    -- an owner past a small tensor's bytes, a small tensor (its elements
    -- in its object), a view; FFI on (view objects) and off
    local bases = {
      function() return nd.arange(40):view(8, 5) end,
      function() return nd.zeros(2, 4) end,
      function() return nd.arange(60):view(12, 5):narrow(1, 3, 8) end,
      function() return nd.arange(48):view(12, 4):narrow(1, 3, 2) end, -- 64 bytes
    }
    local calls = {
      function(t) return t:reshape(-1) end, function(t) return t:reshape({ 4, -1 }) end,
      function(t) return t:reshape(2, 2, -1) end, function(t) return t:flatten() end,
      function(t) return t:flatten(1, 2) end, function(t) return nd.flatten(t, -2, -1) end,
    }
    for _, on in ipairs({ true, false }) do
      nd.use_ffi(on)
      for i, mk in ipairs(bases) do
        for j, f in ipairs(calls) do
          local t = mk()
          local r = f(t)
          assert.is_true(nd.same_storage(r, t), i .. " " .. j)
          r:fill_(7)
          assert.equals(7 * t:numel(), t:sum(), i .. " " .. j)
          t = nil
          collectgarbage()
          assert.equals(7 * r:numel(), r:sum(), i .. " " .. j) -- the elements outlive t
        end
      end
    end
    nd.use_ffi(true)
  end)

  it("the header's queries (C.fqueries) are the classic binding's", function()
    local internal, n = require "nd.internal", 0
    local D = { n = 11, nil, 1, 2, -1, 0, 3, 1.5, 0 / 0, "1", true, 2 ^ 62 }
    for name in pairs(internal.fqueries) do
      for _, b in ipairs(bases) do
        for i = 1, D.n do
          local t = b[2]()
          local fast, slow = both(t, function() return t[name](t, D[i]) end)
          assert.same(slow, fast, name .. " of " .. b[1] .. " with " .. tostring(D[i]))
          n = n + 1
        end
      end
    end
    assert.is_true(n > 800)
    for _, name in ipairs({ "size", "stride" }) do -- tables that print as C's
      local t = nd.zeros(2, 3):t()
      nd.use_ffi(false)
      local slow = t[name](t)
      nd.use_ffi(true)
      local fast = t[name](t)
      assert.equals(getmetatable(slow), getmetatable(fast))
      assert.equals(tostring(slow), tostring(fast))
    end
  end)

  it("reductions, full and along dims, are the classic binding's", function()
    local internal, n = require "nd.internal", 0
    local args = { { n = 0 }, { n = 2, nil, true }, { n = 1, 1 }, { n = 2, -1, true },
                   { n = 1, 2 }, { n = 1, 0.5 }, { n = 1, math.huge }, { n = 1, -math.huge },
                   { n = 1, "fro" }, { n = 1, "x" }, { n = 1, true }, { n = 3, nil, nil, 1 },
                   { n = 4, 1, true, 1, 1 }, { n = 2, 1, nil }, { n = 1, { 1, 2 } },
                   { n = 1, { -1 } }, { n = 1, {} }, { n = 1, { 1, 1 } }, { n = 1, { 1, "x" } },
                   { n = 2, 2, 1 }, { n = 2, 1, false }, { n = 1, 3 }, { n = 1, -3 },
                   { n = 1, 1.5 }, { n = 1, 0 / 0 }, { n = 1, { 1, 2, 3 } }, { n = 2, { 3, 1 }, true },
                   { n = 3, 2, { 1, 2 }, true }, { n = 3, 1, -1, false }, { n = 2, 0 / 0, 1 },
                   { n = 1, { 1, nil, 2 } } }
    local names = { "argmin", "argmax" }
    for _, row in ipairs(internal.optable) do
      if row.family == "reduce" then names[#names + 1] = row.name end
    end
    for _, name in ipairs(names) do
      for i, mk in ipairs(inputs) do
        for j, a in ipairs(args) do
          if (#name + i + j) % THIN == 0 then
            local t = mk()
            local fast, slow = both(t, function()
              return describe_all(t[name](t, unpack(a, 1, a.n)))
            end)
            assert.same(slow, fast, name .. " input " .. i .. " args " .. j)
            n = n + 1
          end
        end
      end
    end
    assert.is_true(n > 3000 / THIN)
  end)
  it("the calls of C.fcalls are the classic binding's", function()
    -- Each call twice on fresh operands (in-place rows write t), FFI on
    -- and off: the same values, tensors, errors, number of results, and
    -- the same t afterwards.
    local internal, n = require "nd.internal", 0
    local gmethods = getmetatable(nd.default_generator()).__index
    local mats = {
      function() return nd.tensor({ { 4, 1, 0 }, { 1, 3, 1 }, { 0, 1, 2 } }) end,
      function() return nd.tensor({ { 2, 7 }, { 1, 8 } }, "float32"):t() end,
      function() return nd.tensor({ { 1, 2 }, { 2, 4 } }) end, -- singular
      function() return nd.tensor({ 1, 2, 3, 4, 5, 6 }):view(3, 2):expand(2, 3, 2) end,
    }
    local ins = { inputs[1], inputs[2], inputs[3], inputs[4], inputs[5], inputs[7], inputs[8],
                  inputs[9], inputs[12], mats[1], mats[2], mats[3], mats[4] }
    -- Values: numbers, booleans, strings, and tensors made per call from
    -- t (a mask, a copy) or fixed (indices, a matrix, a vector).
    local T = {
      idx = function() return nd.tensor({ 1, 2 }, "int64") end,
      bad = function() return nd.tensor({ 0, 9 }, "int64") end,
      mask = function(t) return t:gt(1) end,
      same = function(t) return t:clone() end,
      mat = function() return nd.tensor({ { 2, 1, 0 }, { 1, 2, 0 }, { 0, 0, 1 } }) end,
      vec = function() return nd.arange(3, "float32") end,
      gen = function() return nd.generator(5) end, -- the same draws both ways
      forged = function() return debug.setmetatable(newproxy(), getmetatable(nd.generator(1))) end,
    }
    local P1 = { 1, 2, -1, 0, 1.5, 0 / 0, true, false, "float64", "x", {}, T.idx, T.mask,
                 T.same, T.mat, T.vec }
    local arglists = { { n = 0 }, { n = 1, nil } }
    for _, a in ipairs(P1) do arglists[#arglists + 1] = { n = 1, a } end
    local A2 = { n = 6, nil, 1, true, T.idx, T.same, T.vec }
    for i = 1, A2.n do
      for _, b in ipairs({ 1, -1, true, T.idx, T.same, T.mask }) do
        arglists[#arglists + 1] = { n = 2, A2[i], b }
      end
    end
    for _, a in ipairs({ 1, 2, -1 }) do
      for _, b in ipairs({ T.idx, T.bad, 2 }) do
        for _, c in ipairs({ T.same, 2.5, true, T.vec }) do
          arglists[#arglists + 1] = { n = 3, a, b, c }
        end
      end
    end
    for _, a in ipairs({ { 2, 1, true, false }, { T.mat, T.mat, 0.5, 2 }, { 1, T.idx, T.same, 2 },
                         { 1, T.idx, T.same, "x" }, { 2, nil, false, true }, { T.same, 1e-5, 1e-8, 1 },
                         { T.same, 0, 0, true } }) do
      arglists[#arglists + 1] = { n = 4, a[1], a[2], a[3], a[4] }
    end
    -- the constructors' (arange, linspace, eye)
    for _, a in ipairs({ { 5 }, { 5, "int32" }, { 0, 1, 0.25 }, { 0, 1, 0.25, "float32" }, { 0, 1, 5 },
                         { 0, 1, 5, "int64" }, { 3, 4 }, { 3, 4, "bool" }, { 1, "int32", 5 }, { 1e300 },
                         { 0, 10, 0 }, { 3, 1e20 }, { 2.5, "x" }, { -3 }, { 0, 0, 1 } }) do
      arglists[#arglists + 1] = { n = #a, unpack(a) }
    end
    -- lists of tensors (cat, stack)
    local function two(t) return { t, t } end
    local function mixed(t) return { t, t:to("float32"), t:clone() } end
    local function holed(t) return { t, 1 } end
    for _, a in ipairs({ { two }, { two, 1 }, { two, 2 }, { two, -1 }, { two, 3 }, { mixed },
                         { mixed, 2 }, { holed }, { two, 1.5 }, { two, "float32" } }) do
      arglists[#arglists + 1] = { n = #a, a[1], a[2] }
    end
    -- a generator (uniform_, normal_), where it is taken and where not
    for _, a in ipairs({ { 0, 1, T.gen }, { -1, 2, T.gen, 1 }, { 0, 1, T.forged }, { T.gen },
                         { 1, T.gen }, { 0, 1, nil, T.gen } }) do
      arglists[#arglists + 1] = { n = a[4] and 4 or a[3] and 3 or a[2] and 2 or 1, a[1], a[2], a[3], a[4] }
    end
    -- data (tensor): flat tables of numbers, nested, mixed, past 16
    local seventeen = {}
    for k = 1, 17 do seventeen[k] = k end
    for _, a in ipairs({ { { 1, 2, 3 } }, { { 1.5, -0.0, 0 / 0 }, "int32" }, { { 1, 0, 2 }, "bool" },
                         { {}, "float32" }, { { true, false } }, { { { 1, 2 }, { 3, 4 } } }, { { 1, "x" } },
                         { seventeen }, { { 2 ^ 62, -2 ^ 63 }, "int64" }, { { 1e300, -1e300 }, "float32" },
                         { { 300, -1, 2.7 }, "uint8" }, { 5.5, "int32" }, { true, "float64" }, { { 1 }, 2 } }) do
      arglists[#arglists + 1] = { n = a[2] and 2 or 1, a[1], a[2] }
    end
    -- two tables (as_strided: sizes, strides [, offset])
    for _, a in ipairs({ { { 2, 2 }, { 1, 2 } }, { { 2, 2 }, { 1, 2 }, 1 }, { { 3 }, { -1 }, 2 },
                         { { 2 }, { 1, 2 } }, { {}, {} }, { { -1 }, { 1 } }, { { 2 }, { 1.5 } },
                         { { 2, 2 }, { 1, 2 }, 2.5 }, { { 1e20 }, { 1 } }, { { 2 }, { 1 }, -1 },
                         { { 2 }, { 0 }, 1, 1 }, { { 2 }, 1 } }) do
      arglists[#arglists + 1] = { n = a[4] and 4 or a[3] and 3 or 2, a[1], a[2], a[3], a[4] }
    end
    -- past four values (addmm's out): the classic function's
    arglists[#arglists + 1] = { n = 5, T.mat, T.mat, 2, -1, function() return nd.zeros(3, 3):t() end }
    arglists[#arglists + 1] = { n = 5, 2, 1, true, false, 1 }
    local function run(row, mk, a)
      local t = mk()
      nd.manual_seed(7) -- the samplers: the same draws both ways
      local args = { n = a.n }
      for k = 1, a.n do
        local v = a[k]
        if type(v) == "function" then v = v(t) end
        args[k] = v
      end
      local f = row.module == "linalg" and nd.linalg[row.name] or nd[row.name]
      local ok, got = pcall(function()
        if row.values_only then return describe_all(f(unpack(args, 1, args.n))) end
        return describe_all(f(t, unpack(args, 1, args.n)))
      end)
      got = (ok and got or ("error " .. tostring(got))) .. " t: " .. describe_all(t)
      if row.values_only and gmethods[row.name] then -- g:rand(...): g's draws, g's state after
        local g = nd.generator(11)
        local gok, gr = pcall(function()
          return describe_all(g[row.name](g, unpack(args, 1, args.n)))
        end)
        got = got .. " g: " .. (gok and gr or ("error " .. tostring(gr)))
          .. " then " .. tostring(g:rand(1)[1])
      end
      return got
    end
    local every = THIN -- every row, input and argument list still runs
    for r, row in ipairs(internal.fcalls) do
      for i, mk in ipairs(ins) do
        for j, a in ipairs(arglists) do
          if (r + i + j) % every == 0 then
            nd.use_ffi(true)
            local fast = run(row, mk, a)
            nd.use_ffi(false)
            local slow = run(row, mk, a)
            nd.use_ffi(true)
            assert.equals(slow, fast, row.name .. " input " .. i .. " args " .. j)
            n = n + 1
          end
        end
      end
    end
    assert.is_true(n > 50000 / every, n)
  end)

  -- A fast path's values and results wait in its file's arrays and
  -- scratches; LuaJIT runs finalizers at allocations in the interpreter
  -- and at exits from compiled code, and a finalizer may call nd. Run
  -- interpreted here, with a finalizer at every allocation that calls
  -- the same fast paths.
  it("a finalizer calling nd while a result is made leaves the result alone", function()
    local a, b, x = nd.tensor({ 1, 2, 3 }), nd.tensor({ 10, 20, 30 }), nd.tensor({ 100, 200, 300 })
    local m = nd.tensor({ { 1, 5 }, { 7, 4 } })
    local ix, iy = nd.tensor({ 2 }, "int64"), nd.tensor({ 3, 1 }, "int64")
    local function noise()
      local _ = x + x; _ = x:cumsum(1); _ = x:max(1); _ = nd.ones(2, 2); _ = nd.full({ 2 }, 9)
      _ = m[{ 2, { 1, 2 } }]; _ = x:sort(1, true); _ = nd.zeros(4); _ = x:index_select(-1, iy)
    end
    local bad = {}
    local function count(what, ok) if not ok then bad[what] = (bad[what] or 0) + 1 end end
    local function body()
      getmetatable(newproxy(true)).__gc = noise
      local s = a + b
      count("add", s:dim() == 1 and s[1] == 11 and s[3] == 33)
      local c = a:cumsum(1)
      count("cumsum", c:dim() == 1 and c[3] == 6)
      local v, k = m:max(1)
      count("max", v:dim() == 1 and v[1] == 7 and v[2] == 5 and k[1] == 2 and k[2] == 1)
      local o = nd.ones(3)
      count("ones", o:dim() == 1 and o:numel() == 3 and o[3] == 1)
      local w = m[{ 1, { 1, 2 } }]
      count("view", w:dim() == 1 and w:numel() == 2 and w[2] == 5)
      local r = m:index_select(1, ix) -- reading ix may allocate
      count("index_select", r:dim() == 2 and r:size(1) == 1 and r[1][1] == 7 and r[1][2] == 4)
    end
    -- Nothing compiled, so every allocation may finalize (the JIT stays
    -- on, so the fast paths are the ones called).
    jit.off(body, true)
    jit.flush(); jit.opt.start("hotloop=65000", "hotexit=65000")
    local ok0, e0 = pcall(function()
      for _ = 1, 20000 / THIN do
        local ok, e = pcall(body)
        count(ok or tostring(e), ok)
      end
    end)
    jit.opt.start("hotloop=56", "hotexit=10")
    assert(ok0, e0)
    collectgarbage(); collectgarbage() -- the last finalizers run here, not in later tests
    assert.same({}, bad)
  end)

  -- White box: the rows' scratches (lua/ops.lua's upvalues) hold one
  -- reference each, theirs; a row whose result was made before a later
  -- step failed (rand_like of an integer dtype: empty, then rand) once
  -- left the core's reference on it.
  it("a row that fails after making its result leaves no reference on the scratch", function()
    local x = nd.tensor({ 1, 2, 3 })
    local scratches = {}
    for _, name in ipairs({ "scratch", "scratch2", "scratch3" }) do
      scratches[#scratches + 1] = assert(select(3, find_upvalue(nd.rand_like, name)), name)
    end
    for _ = 1, 3 do
      assert.has_error(function() nd.rand_like(x, "int64") end)
      assert.has_error(function() nd.randn_like(x, "int32") end)
      assert.has_error(function() x:index_select(1, nd.tensor({ 5 }, "int64")) end)
    end
    assert.equals(3, nd.rand_like(x):numel())
    for i, s in ipairs(scratches) do assert.equals(1, tonumber(s.refs), i) end
  end)
end)

describe("the core's short paths", function()
  it("a small op into out computes what the general path computes", function()
    -- out contiguous (the core's direct kernel call) against out a strided
    -- view (the iterator), for every op of the table, float and integer.
    local internal = require "nd.internal"
    for _, row in ipairs(internal.optable) do
      if row.family == "op" or row.family == "math" then
        for _, dt in ipairs({ "float32", "float64", "int32" }) do
          local a = nd.tensor({ 0.5, -2, 3 }):to(dt)
          local b = nd.tensor({ 2, 1, -4 }):to(dt)
          local args = row.arity == 2 and { a, b } or { a }
          local ok, want = pcall(nd[row.name], unpack(args))
          if ok and nd.is_tensor(want) then
            local o1 = nd.zeros(3, want:dtype())
            local o2 = nd.zeros(3, 2, want:dtype()):select(2, 1)
            args[#args + 1] = o1
            nd[row.name](unpack(args))
            args[#args] = o2
            nd[row.name](unpack(args))
            assert.equals(tostring(o2:contiguous()), tostring(o1), row.name .. " " .. dt)
            assert.equals(tostring(want), tostring(o1), row.name .. " " .. dt)
          end
        end
      end
    end
  end)

  it("a reduction of one short run is what the rows of a bigger one give", function()
    -- t:sum() of a short t (the kernel called once) against the rows of
    -- nd.stack({t, t}) reduced along a dim (the iterator), every op.
    local internal = require "nd.internal"
    for _, row in ipairs(internal.optable) do
      if row.family == "reduce" and row.name ~= "norm" then
        for _, dt in ipairs({ "float32", "float64", "int32", "bool" }) do
          for _, n in ipairs({ 2, 3, 7, 16 }) do
            local t = nd.arange(n):mul(0.75):sub(2):to(dt)
            local two = nd.stack({ t, t })
            local ok, want = pcall(function() return two[row.name](two, 2) end)
            if ok then
              assert.equals(want[1], t[row.name](t), row.name .. " " .. dt .. " " .. n)
            end
          end
        end
      end
    end
  end)
end)
