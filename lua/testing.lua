-- require "nd.testing": tensor assertions for Busted/luassert specs.
--   assert.tensor_equal(expected, got)   shape, dtype, values (NaN == NaN)
--   assert.allclose(expected, got [, rtol [, atol]] [, options])
--     |got - expected| <= atol + rtol*|expected| (nd.isclose(got, expected)),
--     rtol 1e-5 and atol 1e-8 by default. options is a table of rtol, atol
--     and equal_nan: NaN in the same place counts as equal unless
--     equal_nan = false, as in numpy.testing.assert_allclose. (nd.allclose
--     and nd.isclose are NumPy's np.allclose / np.isclose: NaN is never
--     close there unless isclose's equal_nan argument is true.)
-- A failure shows both shapes (and dtypes) and the first mismatching
-- positions (1-based) with both values, and says why when the two values
-- print alike. Tables and numbers are accepted where a tensor is expected
-- (nd.tensor of them, in the other's dtype). Without luassert the module
-- still returns the two checks as functions returning ok, message.
return function(ext)
  local nd = ext.nd
  local unpack = unpack or table.unpack
  local SHOW = 5 -- mismatching positions shown

  local is_tensor = ext.is_tensor
  local function as_tensor(v, like)
    if is_tensor(v) then return v end
    local dt = is_tensor(like) and like:dtype() or nil
    if type(v) == "table" or type(v) == "number" or type(v) == "boolean" then
      return nd.tensor(v, dt)
    end
    error(("nd.testing: expected a tensor, a table or a number, got %s"):format(type(v)), 3)
  end
  local function shape(t) return tostring(t:size()) end
  local function position(flat, sizes)
    local ix, rest = {}, flat - 1
    for d = #sizes, 1, -1 do
      ix[d] = ("%d"):format(rest % sizes[d] + 1)
      rest = math.floor(rest / sizes[d])
    end
    return "[" .. table.concat(ix, ", ") .. "]"
  end
  local function isnan(v) return v ~= v end
  local function str(v)
    if type(v) == "number" then
      if isnan(v) then return "nan" end -- not glibc's "-nan": NaN has no sign to compare
      local s = ("%.15g"):format(v)
      return tonumber(s) == v and s or ("%.17g"):format(v)
    end
    return (tostring(v):gsub("U?LL$", "")) -- LuaJIT's boxed int64
  end
  -- Why two mismatching elements that print alike differ.
  local function why(x, y, a, b, i)
    -- only allclose with equal_nan = false reports two NaN
    if isnan(x) and isnan(y) then return "NaN is not equal to NaN (equal_nan = false)" end
    local fa, fb = a:reshape(-1), b:reshape(-1)
    local d = fb:narrow(1, i, 1):sub(fa:narrow(1, i, 1)):get(1)
    local dt = a:dtype() == b:dtype() and a:dtype() or a:dtype() .. " vs " .. b:dtype()
    return ("%s values alike as Lua numbers; got - expected = %s"):format(dt, str(d))
  end

  -- ok, or false and a report. mask is a bool tensor of a's size, true
  -- where the elements match.
  local function report(a, b, what, mask)
    local sizes = a:size()
    local fa, fb = a:reshape(-1):totable(), b:reshape(-1):totable()
    local fm = mask:reshape(-1):totable()
    local lines, bad = {}, 0
    for i = 1, #fm do
      if not fm[i] then
        bad = bad + 1
        if bad <= SHOW then
          local x, y = str(fa[i]), str(fb[i])
          lines[#lines + 1] = ("  at %s: expected %s, got %s%s"):format(
            position(i, sizes), x, y,
            x == y and ": " .. why(fa[i], fb[i], a, b, i) or "")
        end
      end
    end
    if bad == 0 then return true end
    table.insert(lines, 1, ("tensors of size %s (%s): %d of %d elements differ%s%s"):format(
      shape(a), a:dtype() == b:dtype() and a:dtype() or a:dtype() .. " vs " .. b:dtype(),
      bad, #fm, what, bad > SHOW and (", the first " .. SHOW .. ":") or ":"))
    return false, table.concat(lines, "\n")
  end
  local function sizes_differ(a, b, check_dtype)
    if shape(a) == shape(b) and not (check_dtype and a:dtype() ~= b:dtype()) then return end
    return ("expected: %s tensor of size %s\ngot:      %s tensor of size %s"):format(
      a:dtype(), shape(a), b:dtype(), shape(b))
  end

  local FLOAT = {} -- the float dtypes' names (kind "f" in C.consts)
  for _, d in ipairs(ext.C.consts.dtypes) do if d.kind == "f" then FLOAT[d.name] = true end end
  local M = {}
  -- testing.allocations(f, ...) -> count, bytes: the tensors f(...)
  -- allocated from nd's allocator and their bytes (what a plan such as
  -- einsum_plan's promises; LuaJIT's small results, made in its own heap,
  -- are not counted). Count from one thread at a time.
  M.allocations = ext.C.allocations
  function M.tensor_equal(a, b)
    a, b = as_tensor(a, b), as_tensor(b, a)
    local bad = sizes_differ(a, b, true)
    if bad then return false, bad end
    -- eq in the tensors' own dtype: int64 beyond 2^53 compared exactly
    local mask = a:eq(b)
    if FLOAT[a:dtype()] then mask = mask:logical_or(a:isnan():logical_and(b:isnan())) end
    return report(a, b, "", mask)
  end

  local OPTIONS = { rtol = "number", atol = "number", equal_nan = "boolean" }
  function M.allclose(a, b, ...)
    local rtol, atol, equal_nan = 1e-5, 1e-8, true
    local n = select("#", ...)
    while n > 0 and select(n, ...) == nil do n = n - 1 end
    for k = 1, n do
      local v = select(k, ...)
      if type(v) == "table" and k == n then
        for name, x in pairs(v) do
          if not OPTIONS[name] then
            error(("assert.allclose: unknown option %s (the options are rtol, atol, equal_nan)")
              :format(tostring(name)), 3)
          elseif type(x) ~= OPTIONS[name] then
            error(("assert.allclose: option %s must be a %s, got %s")
              :format(name, OPTIONS[name], type(x)), 3)
          end
        end
        rtol, atol = v.rtol or rtol, v.atol or atol
        if v.equal_nan ~= nil then equal_nan = v.equal_nan end
      elseif k <= 2 and (type(v) == "number" or v == nil) then
        if k == 1 then rtol = v or rtol else atol = v or atol end
      else
        error(("assert.allclose: argument %d must be %s, got %s"):format(k + 2,
          k <= 2 and "a number or the options table" or "the options table", type(v)), 3)
      end
    end
    a, b = as_tensor(a, b), as_tensor(b, a)
    local bad = sizes_differ(a, b, false)
    if bad then return false, bad end
    -- in float64, as the values print; the rule is nd.isclose's
    local ok, mask = pcall(nd.isclose, b:to("float64"), a:to("float64"), rtol, atol, equal_nan)
    if not ok then error("assert.allclose: " .. tostring(mask):gsub("^.-isclose: ", ""), 3) end
    return report(a, b, (" beyond rtol %g, atol %g%s"):format(rtol, atol,
      equal_nan and "" or ", equal_nan = false"), mask)
  end

  local ok, luassert = pcall(require, "luassert")
  local okSay, say = pcall(require, "say")
  if not (ok and okSay) then return M end
  -- The report becomes the message itself (say's registry is global, unlike
  -- luassert's formatters, which Busted resets between files).
  local function register(name, check, pos, neg)
    local key = "assertion.nd_" .. name
    say:set(key .. ".positive", pos)
    say:set(key .. ".negative", neg)
    luassert:register("assertion", name, function(state, args)
      local good, report = check(unpack(args, 1, args.n))
      local msg = good and neg or pos .. "\n" .. report
      say:set(key .. (good and ".negative" or ".positive"), (msg:gsub("%%", "%%%%")))
      return good
    end, key .. ".positive", key .. ".negative")
  end
  register("tensor_equal", M.tensor_equal, "Expected tensors to be equal:",
    "Expected tensors to differ, but they are equal")
  register("allclose", M.allclose, "Expected tensors to be close:",
    "Expected tensors not to be close, but they are")
  return M
end
