-- Scans and statistics (cumsum cumprod var std logsumexp softmax
-- log_softmax count_nonzero histc, and norm's p-norms) against PyTorch
-- results committed in spec/fixtures/sort_cases.lua, on contiguous,
-- transposed, stepped and flipped inputs of every dtype.
local nd = require "nd"
local F = dofile("spec/fixtures/sort_cases.lua")

local function tol(dt) return dt == "float32" and 2e-6 or 1e-12 end
local FLOAT = { float32 = true, float64 = true }

describe("scans and statistics against PyTorch", function()
  for _, c in ipairs(F.cases) do
    for _, layout in ipairs(DATA_LAYOUTS) do
      it(c.name .. " " .. layout, function()
        local t = tensor_in_layout(c.data, c.dtype, layout)
        local fdt = FLOAT[c.dtype] and c.dtype or "float64"
        local ft = FLOAT[c.dtype] and tol(c.dtype) or 1e-12
        for d = 1, 2 do
          local cs = t:cumsum(d)
          assert.equals(FLOAT[c.dtype] and c.dtype or "int64", cs:dtype())
          assert.is_true(cs:is_contiguous())
          assert_close(c["cumsum_" .. d], cs:totable(), FLOAT[c.dtype] and 1e-5 or 0)
          if c["cumprod_" .. d] then
            assert_close(c["cumprod_" .. d], nd.cumprod(t, d - 3):totable(), FLOAT[c.dtype] and 1e-5 or 0)
          end
          assert.same(c["count_nonzero_" .. d], t:count_nonzero(d):totable())
          local sm = t:softmax(d)
          assert.equals(fdt, sm:dtype())
          assert.is_true(sm:is_contiguous())
          assert_close(c["softmax_" .. d], sm:totable(), ft)
          assert_close(c["log_softmax_" .. d], t:log_softmax(d):totable(), ft)
        end
        assert.equals(c.count_nonzero, t:count_nonzero())
        for corr = 0, 2 do
          local v = corr == 1 and t:var() or t:var(nil, false, corr)
          assert_close(c["var_" .. corr], v, ft)
          local s = corr == 1 and t:std(1) or t:std(1, false, corr)
          assert.equals(fdt, s:dtype())
          assert_close(c["std_1_" .. corr], s:totable(), ft)
          assert_close(c["var_2_" .. corr], nd.var(t, 2, false, corr):totable(), ft)
        end
        assert_close(c.var_12, t:var({ 1, 2 }, true):totable(), ft)
        assert_close(c.logsumexp_1, t:logsumexp(1):totable(), ft)
        assert_close(c.logsumexp_2, t:logsumexp(-1):totable(), ft)
        assert_close({ { c.logsumexp_12 } }, t:logsumexp({ 1, 2 }, true):totable(), ft)
        if c.histc then assert_close(c.histc, nd.histc(t, 5):totable(), 0) end
        if c.histc_range then
          local h = t:histc(4, -1, 3)
          assert.equals("float64", h:dtype())
          assert_close(c.histc_range, h:totable(), 0)
        end
        for k, v in pairs(c) do
          if k:match("^norm_") then
            local p, all, rows = v[1], v[2], v[3]
            assert_close(all, t:norm(p), FLOAT[c.dtype] and 1e-5 or 1e-12)
            local r = t:norm(p, 2)
            assert.equals(fdt, r:dtype())
            assert_close(rows, r:totable(), FLOAT[c.dtype] and 1e-5 or 1e-12)
          end
        end
      end)
    end
  end
  it("a long float32 lane", function()
    local t = nd.tensor(F.big.data, "float32")
    assert_close(F.big.cumsum_last, t:cumsum(1):get(3000), 1e-5)
    assert_close(F.big.histc, t:histc(7):totable(), 0)
  end)
end)

describe("statistics rules", function()
  it("var/std: N - correction <= 0 gives NaN; integers give float64", function()
    local x = nd.tensor({ 1, 2, 4 }, "int32")
    assert.equals("number", type(x:var()))
    assert_close(7 / 3, x:var(), 1e-15)
    assert.equals("float64", x:var(1):dtype())
    assert.is_true(x:var(nil, false, 3) ~= x:var(nil, false, 3))
    assert.is_true(nd.tensor({ 5 }):std() ~= nd.tensor({ 5 }):std())
    assert.equals(0, nd.tensor({ 5 }):std(nil, false, 0))
    local e = nd.empty(0, 3):var(1)
    assert.equals(3, e:numel()); assert.is_true(e:get(1) ~= e:get(1))
    assert.same({ 1, 3 }, { nd.ones(2, 3):std(1, true):size(1), nd.ones(2, 3):std(1, true):size(2) })
  end)
  it("logsumexp, softmax: stable, size-0 dims, infinities", function()
    local big = nd.tensor({ 1000, 1000 })
    assert_close(1000 + math.log(2), big:logsumexp(1):item(), 1e-15)
    assert_close({ 0.5, 0.5 }, big:softmax(1):totable(), 1e-15)
    assert_close({ -math.log(2), -math.log(2) }, big:log_softmax(1):totable(), 1e-15)
    local e = nd.empty(3, 0):logsumexp(2)
    assert.same({ -math.huge, -math.huge, -math.huge }, e:totable())
    assert.equals(-math.huge, nd.tensor({ -math.huge, -math.huge }):logsumexp(1):item())
    assert.equals(math.huge, nd.tensor({ math.huge, 1 }):logsumexp(1):item())
    assert.equals(0, nd.empty(0, 4):softmax(2):numel())
    assert.equals("float64", nd.tensor({ 1, 2 }, "int64"):softmax(1):dtype())
    assert.equals("float32", nd.tensor({ 1, 2 }, "float32"):log_softmax(1):dtype())
    local s = nd.tensor(3.0):softmax(1)
    assert.equals(0, s:dim()); assert.equals(1, s:item())
    local z = nd.tensor({ { 1, 2 }, { 3, 4 } }):t():softmax(1) -- result row-major
    assert.same({ 2, 1 }, { z:stride(1), z:stride(2) })
  end)
  it("cumsum/cumprod: dtypes, wrapping, 0-d and size-0", function()
    assert.equals("int64", nd.tensor({ true, true }):cumsum(1):dtype())
    assert.same({ 1, 2 }, nd.tensor({ true, true }):cumsum(1):totable())
    assert.equals("int64", nd.tensor({ 200, 100 }, "uint8"):cumsum(1):dtype())
    assert.same({ 200, 300 }, nd.tensor({ 200, 100 }, "uint8"):cumsum(1):totable())
    assert.same({ 3, 6, 6 }, nd.tensor({ 3, 2, 1 }, "int32"):cumprod(1):totable())
    assert.equals(7, nd.tensor(7):cumsum(1):item())
    assert.equals(0, nd.empty(0, 2):cumsum(1):numel())
    local x = nd.arange(6):view(2, 3):expand(2, 2, 3)
    assert.same({ { 0, 1, 3 }, { 3, 7, 12 } }, x:cumsum(3)[1]:totable())
  end)
  it("count_nonzero and histc details", function()
    assert.equals(2, nd.tensor({ 0, 0 / 0, 1 }):count_nonzero())
    assert.equals("int64", nd.ones(2, 2):count_nonzero({ 1, 2 }):dtype())
    assert.same({ 0, 0, 0 }, nd.empty(0):histc(3):totable())
    assert.same({ 0, 3, 0 }, nd.tensor({ 2, 2, 2 }):histc(3):totable()) -- range [1, 3]
    assert.same({ 1, 0, 1 }, nd.tensor({ 0, 5, 9, -1 }):histc(3, 0, 6):totable())
    assert.equals(100, nd.rand(50):histc():numel())
    assert.same({ 1, 1 }, nd.tensor({ 1, 2 }, "uint8"):histc(2):totable())
  end)
  it("norm takes p first: p-norms, fro, dims, keepdim", function()
    local x = nd.tensor({ { 3, -4 }, { 0, 12 } })
    assert.equals(13, x:norm())
    assert.equals(13, x:norm("fro"))
    assert.equals(19, x:norm(1))
    assert.equals(12, x:norm(math.huge))
    assert.equals(0, x:norm(-math.huge))
    assert.equals(3, x:norm(0))
    assert.same({ 5, 12 }, x:norm(2, 2):totable())
    assert.same({ { 7 }, { 12 } }, x:norm(1, 2, true):totable())
    assert.same({ 3, 16 }, nd.norm(x, 1, 1):totable())
    assert.equals(0, nd.empty(0):norm(1))
    assert.equals(0, nd.empty(0):norm(math.huge))
  end)
end)

describe("statistics errors", function()
  local x = nd.ones(3, 4)
  it("name the function and the value", function()
    assert_error_matches(function() x:cumsum() end, "cumsum", "dim")
    assert_error_matches(function() x:cumprod(3) end, "cumprod", "dim 3")
    assert_error_matches(function() x:var(5) end, "var", "dim 5")
    assert_error_matches(function() x:std(1, false, "a") end, "std", "correction")
    assert_error_matches(function() x:var({ 1, 1 }) end, "var", "more than once")
    assert_error_matches(function() x:logsumexp() end, "logsumexp", "dim")
    assert_error_matches(function() x:softmax(0) end, "softmax", "dim 0")
    assert_error_matches(function() x:log_softmax(-3) end, "log_softmax", "dim -3")
    assert_error_matches(function() x:count_nonzero(4) end, "count_nonzero", "dim 4")
    assert_error_matches(function() x:histc(0) end, "histc", "bins", "0")
    assert_error_matches(function() x:histc(-2) end, "histc", "bins", "-2")
    assert_error_matches(function() x:histc(2.5) end, "histc", "bins", "2.5")
    assert_error_matches(function() x:histc(3, 2, 1) end, "histc", "min 2", "max 1")
    assert_error_matches(function() nd.tensor({ 1, 0 / 0 }):histc(3) end, "histc", "finite")
    assert_error_matches(function() x:norm("nuc") end, "norm", "nuc")
    assert_error_matches(function() x:norm(2, true) end, "norm", "dim", "boolean")
    assert_error_matches(function() x:norm(2, 3) end, "norm", "dim 3")
    assert_error_matches(function() nd.empty(0):norm(-math.huge) end, "norm", "empty")
  end)
end)
