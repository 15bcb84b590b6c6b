-- Random sampling: pinned streams (checked against an independent Python
-- model of xoshiro256**, splitmix64, Lemire's bounded integers and the
-- ziggurat), generators and their independence (also across two
-- lua_States: tests/random_states_test.c), distributions (fixed seeds, so
-- deterministic; tolerances are many standard errors wide), views, errors.
local nd = require "nd"
local unpack = table.unpack or unpack

local function list(t) return t:totable() end
local function same(a, b) assert.same(list(a), list(b)) end

-- mean and variance of a Lua list
local function moments(xs)
  local m, v = 0, 0
  for _, x in ipairs(xs) do m = m + x end
  m = m / #xs
  for _, x in ipairs(xs) do v = v + (x - m) ^ 2 end
  return m, v / #xs
end

describe("random: pinned streams (the same on every platform)", function()
  it("rand, float32 rand, randn, randint, randperm, multinomial, bernoulli", function()
    nd.manual_seed(42)
    assert.same({ 0.08386297105988216, 0.3789802506626686, 0.6800434110281394 }, list(nd.rand(3)))
    nd.manual_seed(42)
    assert.same({ 0.083862960338592529, 0.37898021936416626, 0.68004339933395386 },
      list(nd.rand(3, "float32")))
    nd.manual_seed(7)
    assert.same({ 0.8967367872763625, 0.6165298835007694, -1.4174953609698533 }, list(nd.randn(3)))
    assert.same({ -0.053204233509679955, 1.0591603716271905, 0.015509241914229234, 1.4039458193104963 },
      list(nd.generator(2024):randn(4)))
    assert.same({ 1, 1, -3, 0, -1, -2, -3, 2 }, list(nd.generator(3):randint(-5, 5, { 8 })))
    assert.same({ 759364836069, 704326265438, 239982017330 },
      list(nd.generator(3):randint(0, 2 ^ 40, { 3 })))
    assert.same({ 5, 6, 4, 7, 3, 8, 1, 2 }, list(nd.generator(11):randperm(8)))
    assert.same({ 3, 4, 4, 4, 4, 4, 4, 4, 4, 4 },
      list(nd.generator(5):multinomial(nd.tensor({ 0.1, 0, 0.2, 0.7 }), 10, true)))
    assert.same({ 1, 1, 1, 0, 0, 0, 0, 0, 1, 0 }, list(nd.generator(9):bernoulli(0.3, { 10 })))
  end)

  it("200000 normals, through the wedges and the tail, to the last bit", function()
    nd.manual_seed(123)
    local z = nd.randn(200000)
    assert.equals(4.3988428226034264, z:max())
    assert.equals(-4.544634082841835, z:min())
    assert.equals(-297.06210192250808, z:sum())
  end)

  it("nd.generator() without a seed starts as nd.generator(0)", function()
    -- (a fresh lua_State's default generator too: tests/random_states_test.c)
    assert.same(list(nd.generator(0):rand(4)), list(nd.generator():rand(4)))
  end)
end)

describe("random: generators", function()
  it("nd.generator(s):f(...) equals nd.manual_seed(s); nd.f(...) for every sampler", function()
    local probs = nd.tensor({ { 0.2, 0.3, 0.5 }, { 1, 0, 3 } })
    local p = nd.tensor({ 0.1, 0.9, 0.5 }, "float32")
    local calls = {
      { "rand", 3 }, { "rand", 2, 3 }, { "rand", { 2, 3 }, "float32" }, { "randn", 4 },
      { "randn", 2, 2, "float32" }, { "randint", 0, 10, { 5 } }, { "randint", -3, 3, 4, "int32" },
      { "normal", 1, 2, { 3 } }, { "uniform", -1, 1, { 2, 2 }, "float32" },
      { "bernoulli", 0.5, { 6 } }, { "bernoulli", p }, { "randperm", 7 },
      { "multinomial", probs, 2 }, { "multinomial", probs, 5, true },
    }
    for _, c in ipairs(calls) do
      local name = c[1]
      local args = { unpack(c, 2) }
      nd.manual_seed(17)
      local want = nd[name](unpack(args))
      local g = nd.generator(17)
      local got = g[name](g, unpack(args))
      assert.equals(want:dtype(), got:dtype())
      assert.same(list(want), list(got))
    end
  end)

  it("g:rand(2, 3) takes sizes and dtype as nd.rand does", function()
    local g = nd.generator(1)
    assert.same({ 2, 3 }, plain(g:rand(2, 3):size()))
    assert.same({ 2, 3 }, plain(g:rand({ 2, 3 }):size()))
    assert.equals("float32", g:rand(2, 3, "float32"):dtype())
    assert.equals(0, g:rand():dim())
  end)

  it("generators are independent of each other and of the default", function()
    local g1, g2 = nd.generator(1), nd.generator(1)
    nd.manual_seed(1)
    local a = g1:randn(5)
    nd.rand(100)
    nd.manual_seed(99)
    local b = g1:randn(5)
    same(nd.generator(1):randn(10), nd.cat({ a, b }))
    assert.same(list(g2:randn(5)), list(a)) -- g2 did not move with g1
    nd.manual_seed(1)
    g1:rand(1000)
    assert.same(list(nd.generator(1):rand(3)), list(nd.rand(3))) -- the default did not move
  end)

  it("g:manual_seed restarts a generator; default_generator is the module's", function()
    local g = nd.generator(4)
    local a = g:rand(3)
    assert.equals(g, g:manual_seed(4))
    same(a, g:rand(3))
    nd.manual_seed(8)
    local d = nd.default_generator()
    assert.equals(d, nd.default_generator())
    same(nd.generator(8):rand(2), d:rand(2))
    same(nd.generator(8):rand(4):narrow(1, 3, 2), nd.rand(2))
    assert.matches("^nd.Generator", tostring(g))
  end)

  it("two lua_States, also on two threads, never disturb each other", function()
    local root = debug.getinfo(1, "S").source:match("^@(.*)/spec/[^/]*$") or "."
    local build = os.getenv("ND_BUILD") or "build"
    if not build:match("^/") then build = root .. "/" .. build end
    local asan = (os.getenv("LD_PRELOAD") or ""):find("libasan", 1, true)
    local san = asan and " -fsanitize=address,undefined" or ""
    local pc = jit and "luajit" or ("lua" .. _VERSION:match("%d+%.%d+"))
    local exe = os.tmpname()
    local function run(cmd)
      local p = assert(io.popen("env -u LD_PRELOAD " .. cmd .. " 2>&1; echo \"rc=$?\""))
      local out = p:read("*a")
      p:close()
      return tonumber(out:match("rc=(%d+)%s*$")), out
    end
    local rc, out = run(("cc -std=c11 -Wall -Wextra -Werror%s -I%s/include $(pkg-config --cflags %s) "
      .. "%s/tests/random_states_test.c %s/nd.so $(pkg-config --libs %s) -pthread -Wl,-rpath,%s -o %s"):format(
      san, root, pc, root, build, pc, build, exe))
    assert.equals(0, rc, out)
    rc, out = run(exe)
    os.remove(exe)
    assert.equals(0, rc, out)
    assert.matches("7 passed, 0 failed", out)
  end)
end)

describe("random: distributions", function()
  it("rand and uniform lie in [lo, hi), float32 and float64", function()
    local g = nd.generator(1)
    for _, dt in ipairs({ "float32", "float64" }) do
      local u = g:uniform(-2, 3, { 20000 }, dt)
      assert.equals(dt, u:dtype())
      assert.is_true(u:min() >= -2 and u:max() < 3)
      local m, v = moments(list(u))
      assert.is_true(math.abs(m - 0.5) < 0.06 and math.abs(v - 25 / 12) < 0.1)
      local r = g:rand(20000, dt)
      assert.is_true(r:min() >= 0 and r:max() < 1)
    end
    -- a product rounding up to hi is kept below it
    assert.is_true(g:uniform(1, 1 + 2 ^ -52, { 1000 }):max() < 1 + 2 ^ -52)
    assert.is_true(g:uniform(1, 1 + 2 ^ -23, { 1000 }, "float32"):max() < 1 + 2 ^ -23)
    assert.same({ 5, 5 }, list(g:uniform(5, 5, { 2 })))
  end)

  it("randn and normal have the right moments and tails", function()
    local g = nd.generator(2)
    local z = g:randn(200000)
    local m, v = moments(list(z))
    assert.is_true(math.abs(m) < 0.015 and math.abs(v - 1) < 0.02)
    -- P(|z| > 1) = 0.3173, P(|z| > 2) = 0.0455, P(|z| > 3.7) = 2.16e-4
    local a = z:abs()
    assert.is_true(math.abs((a:gt(1)):sum() / 200000 - 0.3173) < 0.005)
    assert.is_true(math.abs((a:gt(2)):sum() / 200000 - 0.0455) < 0.002)
    local tail = (a:gt(3.7)):sum()
    assert.is_true(tail > 20 and tail < 70, tail)
    local n = g:normal(10, 3, { 50000 }, "float32")
    assert.equals("float32", n:dtype())
    m, v = moments(list(n))
    assert.is_true(math.abs(m - 10) < 0.1 and math.abs(v - 9) < 0.3)
    assert.same({ 4, 4 }, list(g:normal(4, 0, { 2 })))
  end)

  it("randint covers its range evenly", function()
    local t = nd.generator(3):randint(-2, 3, { 10000 })
    assert.equals("int64", t:dtype())
    local count = {}
    for _, v in ipairs(list(t)) do count[v] = (count[v] or 0) + 1 end
    for v = -2, 2 do assert.is_true(math.abs(count[v] - 2000) < 200) end
  end)

  it("bernoulli: a number gives float64 0/1, a tensor gives its dtype", function()
    local g = nd.generator(4)
    local b = g:bernoulli(0.3, { 20000 })
    assert.equals("float64", b:dtype())
    assert.is_true(math.abs(b:mean() - 0.3) < 0.02)
    assert.equals(0, g:bernoulli(0):dim())
    assert.same({ 2, 2 }, plain(g:bernoulli(0.5, 2, 2):size()))
    local p = nd.tensor({ 0, 1, 0.25, 0.75 }, "float32"):reshape(1, 4):expand(5000, 4)
    local r = g:bernoulli(p)
    assert.equals("float32", r:dtype())
    assert.same({ 5000, 4 }, plain(r:size()))
    local mean = r:mean(1):totable()
    assert.same({ 0, 1 }, { mean[1], mean[2] })
    assert.is_true(math.abs(mean[3] - 0.25) < 0.03 and math.abs(mean[4] - 0.75) < 0.03)
    assert.same({ 1, 0 }, list(nd.tensor({ 1, 0 }):bernoulli()))
    -- a probability outside [0, 1] in a tensor the core reads through a
    -- float64 copy: the message names it (it read the freed copy: ASan)
    for _, on in ipairs({ true, false }) do
      nd.use_ffi(on)
      local ok, err = pcall(nd.bernoulli, nd.tensor({ 0.5, 2, 0.25 }, "float32"))
      assert.is_false(ok)
      assert.matches("probability 2 %(element 2 in row%-major order%) is outside %[0, 1%]", err)
    end
    nd.use_ffi(true)
  end)

  it("randperm is a permutation of 1..n", function()
    local p = nd.generator(5):randperm(1000)
    assert.equals("int64", p:dtype())
    local seen = {}
    for _, v in ipairs(list(p)) do seen[v] = true end
    for i = 1, 1000 do assert.is_true(seen[i]) end
    assert.same({ 0 }, plain(nd.randperm(0):size()))
    assert.same({ 1 }, list(nd.randperm(1)))
  end)

  it("multinomial: frequencies, zero weights never drawn, no repeats without replacement", function()
    local g = nd.generator(6)
    local d = g:multinomial(nd.tensor({ 1, 0, 2, 7 }), 20000, true)
    assert.equals("int64", d:dtype())
    local count = { 0, 0, 0, 0 }
    for _, v in ipairs(list(d)) do count[v] = count[v] + 1 end
    assert.equals(0, count[2])
    assert.is_true(math.abs(count[1] / 20000 - 0.1) < 0.01 and math.abs(count[4] / 20000 - 0.7) < 0.015)
    -- 2-D, without replacement: distinct non-zero categories per row
    local probs = nd.tensor({ { 1, 1, 0, 1, 1 }, { 0, 5, 1, 0, 0 } }):t():contiguous():t()
    local firsts = { 0, 0, 0, 0, 0 }
    for _ = 1, 2000 do
      local r = g:multinomial(probs, 2):totable()
      assert.is_true(r[1][1] ~= r[1][2] and r[1][1] ~= 3 and r[1][2] ~= 3)
      assert.is_true((r[2][1] == 2 and r[2][2] == 3) or (r[2][1] == 3 and r[2][2] == 2))
      firsts[r[2][1]] = firsts[r[2][1]] + 1
    end
    assert.is_true(math.abs(firsts[2] / 2000 - 5 / 6) < 0.04)
    assert.same({ 2, 0 }, plain(g:multinomial(probs, 0):size()))
    local all = g:multinomial(nd.tensor({ 3, 1, 2 }), 3):totable()
    table.sort(all)
    assert.same({ 1, 2, 3 }, all)
    assert.same({ 4, 4 }, list(nd.tensor({ 0, 0, 0, 1 }, "float32"):multinomial(2, true)))
  end)
end)

describe("random: in place, on any view, and the _like constructors", function()
  it("uniform_ and normal_ fill a view in its row-major order and return it", function()
    local base = nd.zeros(4, 5)
    local v = base:t():narrow(1, 2, 3):flip(2) -- 3x4, negative strides, not compact
    assert.equals(v, v:uniform_(1, 2, nd.generator(3)))
    same(v, nd.generator(3):uniform(1, 2, { 3, 4 }))
    -- untouched outside the view
    local row1 = base:narrow(2, 1, 1):totable()
    for _, r in ipairs(row1) do assert.equals(0, r[1]) end
    v:normal_(0, 1, nd.generator(4))
    same(v, nd.generator(4):randn(3, 4))
    nd.manual_seed(5)
    local w = nd.zeros(3, "float32"):normal_(2, 0.5)
    nd.manual_seed(5)
    same(w, nd.normal(2, 0.5, { 3 }, "float32"))
  end)

  it("rand_like and randn_like take the shape and, by default, the dtype", function()
    local t = nd.zeros(2, 3, "float32"):t()
    local r = nd.rand_like(t)
    assert.same({ 3, 2 }, plain(r:size()))
    assert.same({ 2, 1 }, plain(r:stride()))
    assert.equals("float32", r:dtype())
    assert.equals("float64", nd.randn_like(t, "float64"):dtype())
    nd.manual_seed(6)
    local a = t:randn_like()
    nd.manual_seed(6)
    same(a, nd.randn(3, 2, "float32"))
  end)
end)

describe("random: bad input names the function and the value", function()
  local g = nd.generator(1)
  it("sizes, dtypes, seeds", function()
    assert_error_matches(function() nd.rand(2.5) end, "rand:", "2.5")
    assert_error_matches(function() g:randn(-1) end, "randn:", "-1")
    assert_error_matches(function() nd.rand(2, "int32") end, "rand:", "int32")
    assert_error_matches(function() nd.normal(0, 1, { 2 }, "int64") end, "normal:", "int64")
    assert_error_matches(function() nd.uniform(0, 1, { 1.5 }) end, "uniform:", "1.5")
    assert_error_matches(function() nd.normal(0, 1) end, "normal:", "sizes")
    assert_error_matches(function() nd.generator(1.5) end, "generator:", "1.5")
    assert_error_matches(function() nd.manual_seed("x") end, "manual_seed:", "string")
    assert_error_matches(function() g.rand(3) end, "rand:", "generator", "number")
    assert_error_matches(function() nd.generator(1).randn({}) end, "randn:", "generator")
  end)

  it("parameters: randperm(-1), std < 0, p outside [0, 1], lo > hi", function()
    assert_error_matches(function() nd.randperm(-1) end, "randperm:", "-1")
    assert_error_matches(function() g:randperm(2.5) end, "randperm:", "2.5")
    assert_error_matches(function() nd.normal(0, -1, { 2 }) end, "normal:", "-1")
    assert_error_matches(function() nd.normal(0 / 0, 1, { 2 }) end, "normal:", "nan")
    assert_error_matches(function() nd.bernoulli(1.5) end, "bernoulli:", "1.5")
    assert_error_matches(function() g:bernoulli(-0.1, { 2 }) end, "bernoulli:", "-0.1")
    assert_error_matches(function() nd.bernoulli(nd.tensor({ 0.5, 1.25 })) end, "bernoulli:", "1.25")
    assert_error_matches(function() nd.bernoulli(nd.tensor({ 1, 0 }, "int64")) end, "bernoulli:", "int64")
    assert_error_matches(function() nd.bernoulli(nd.tensor({ 0.5 }), { 2 }) end, "bernoulli:", "sizes")
    assert_error_matches(function() nd.bernoulli("x") end, "bernoulli:", "string")
    assert_error_matches(function() nd.uniform(2, 1, { 2 }) end, "uniform:", "lo 2", "hi 1")
    assert_error_matches(function() nd.uniform(-math.huge, 0, { 2 }) end, "uniform:", "inf")
    -- bounds the dtype cannot hold raise (PyTorch's uniform_ too), the
    -- tensor untouched
    local h = nd.zeros(3, "float16")
    assert_error_matches(function() h:uniform_(-70000, 0) end, "uniform_:", "-70000", "float16")
    assert_error_matches(function() h:uniform_(0, 65536) end, "uniform_:", "65536", "float16")
    assert.equals(0, h:abs():max())
    assert_error_matches(function() nd.uniform(0, 1e39, { 2 }, "float32") end, "uniform:", "float32")
    assert_error_matches(function() nd.uniform(-1e39, 0, { 2 }, "bfloat16") end, "uniform:", "bfloat16")
    assert.is_true(nd.uniform(-65504, 65504, { 100 }, "float16"):abs():max() <= 65504)
    assert_error_matches(function() nd.randint(5, 5, { 2 }) end, "randint:", "5")
  end)

  it("multinomial: negative or NaN weights, empty rows, too many draws without replacement", function()
    assert_error_matches(function() nd.multinomial(nd.tensor({ 0.5, -0.5 }), 1) end,
      "multinomial:", "-0.5", "row 1, category 2")
    assert_error_matches(function() nd.multinomial(nd.tensor({ { 1, 1 }, { 0 / 0, 1 } }), 1) end,
      "multinomial:", "nan", "row 2")
    assert_error_matches(function() nd.multinomial(nd.tensor({ { 1, 1 }, { 0, 0 } }), 1, true) end,
      "multinomial:", "row 2", "no non-zero")
    assert_error_matches(function() nd.multinomial(nd.tensor({ 1, 0, 2 }), 3) end,
      "multinomial:", "3 samples", "2 non-zero")
    assert_error_matches(function() nd.multinomial(nd.zeros(2, 2, 2), 1) end, "multinomial:", "3-D")
    assert_error_matches(function() nd.multinomial(nd.tensor({ 1 }), -1) end, "multinomial:", "-1")
    assert_error_matches(function() nd.multinomial(nd.tensor({ 1 }), 1, 1) end, "multinomial:", "boolean")
    assert_error_matches(function() nd.multinomial({ 1, 2 }, 1) end, "multinomial:", "tensor")
  end)

  it("a refused in-place call leaves its target untouched", function()
    local t = nd.tensor({ 1, 2, 3 })
    assert_error_matches(function() t:normal_(0, -1) end, "normal_:", "-1")
    assert_error_matches(function() t:uniform_(1, 0) end, "uniform_:", "lo 1")
    assert_error_matches(function() t:uniform_(0, 1, "g") end, "uniform_:", "generator", "string")
    assert.same({ 1, 2, 3 }, list(t))
    assert_error_matches(function() nd.zeros(3, "int32"):uniform_(0, 1) end, "uniform_:", "int32")
    assert_error_matches(function() nd.zeros(1):expand(3):normal_(0, 1) end, "normal_:")
    assert_error_matches(function() nd.rand_like(nd.zeros(2, "int64")) end, "rand_like:", "int64")
    assert_error_matches(function() nd.randn_like(5) end, "randn_like:", "tensor")
  end)
end)
