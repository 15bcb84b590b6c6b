-- require "nd.testing": tensor assertions for Busted/luassert specs.
--   assert.tensor_equal(expected, got)              shape, dtype, values (NaN == NaN)
--   assert.allclose(expected, got [, rtol, atol])   |got - expected| <= atol + rtol*|expected|
-- A failure shows both shapes (and dtypes) and the first mismatching
-- positions (1-based) with both values. Tables and numbers are accepted
-- where a tensor is expected (nd.tensor of them, in the other's dtype).
-- Without luassert the module still returns the two checks as functions
-- returning ok, message.
return function(ext)
  local nd, mt = ext.nd, ext.metatable
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
      local s = ("%.15g"):format(v)
      return tonumber(s) == v and s or ("%.17g"):format(v)
    end
    return tostring(v)
  end

  -- ok, or false and a report. same(x, y) says whether two elements match.
  local function compare(a, b, what, check_dtype, same)
    a, b = as_tensor(a, b), as_tensor(b, a)
    local lines = {}
    if shape(a) ~= shape(b) or (check_dtype and a:dtype() ~= b:dtype()) then
      lines[1] = ("expected: %s tensor of size %s"):format(a:dtype(), shape(a))
      lines[2] = ("got:      %s tensor of size %s"):format(b:dtype(), shape(b))
      return false, table.concat(lines, "\n")
    end
    local sizes = a:size()
    local fa, fb = a:reshape(-1):totable(), b:reshape(-1):totable()
    local bad = 0
    for i = 1, #fa do
      if not same(fa[i], fb[i]) then
        bad = bad + 1
        if bad <= SHOW then
          lines[#lines + 1] = ("  at %s: expected %s, got %s"):format(
            position(i, sizes), str(fa[i]), str(fb[i]))
        end
      end
    end
    if bad == 0 then return true end
    table.insert(lines, 1, ("tensors of size %s (%s): %d of %d elements differ%s%s"):format(
      shape(a), a:dtype() == b:dtype() and a:dtype() or a:dtype() .. " vs " .. b:dtype(),
      bad, #fa, what, bad > SHOW and (", the first " .. SHOW .. ":") or ":"))
    return false, table.concat(lines, "\n")
  end

  local M = {}
  function M.tensor_equal(a, b)
    return compare(a, b, "", true, function(x, y)
      return x == y or (isnan(x) and isnan(y))
    end)
  end
  function M.allclose(a, b, rtol, atol)
    rtol, atol = rtol or 1e-5, atol or 1e-8
    return compare(a, b, (" beyond rtol %g, atol %g"):format(rtol, atol), false,
      function(x, y)
        if type(x) == "boolean" then x = x and 1 or 0 end
        if type(y) == "boolean" then y = y and 1 or 0 end
        x, y = tonumber(x), tonumber(y)
        if x == y then return true end -- equal infinities too
        return math.abs(y - x) <= atol + rtol * math.abs(x)
      end)
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
      local good, report = check(args[1], args[2], args[3], args[4])
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
