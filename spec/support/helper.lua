-- Loaded before the specs: shared assertions.
local nd = require "nd"

-- Asserts that f raises an error whose message contains every fragment.
function assert_error_matches(f, ...)
  local ok, err = pcall(f)
  assert(not ok, "expected an error, got success")
  err = tostring(err)
  for _, frag in ipairs({ ... }) do
    assert(err:find(frag, 1, true),
      ("error %q does not mention %q"):format(err, frag))
  end
  return err
end

-- Deep comparison of nested tables of numbers/booleans with a tolerance.
function assert_close(expected, got, tol)
  tol = tol or 0
  local function cmp(e, g, path)
    if type(e) == "table" then
      assert(type(g) == "table", path .. ": expected a table, got " .. type(g))
      assert(#e == #g, ("%s: expected %d entries, got %d"):format(path, #e, #g))
      for i = 1, #e do cmp(e[i], g[i], path .. "[" .. i .. "]") end
    elseif type(e) == "number" and e ~= e then
      assert(g ~= g, path .. ": expected nan, got " .. tostring(g))
    elseif type(e) == "number" and tol > 0 then
      assert(type(g) == "number" and math.abs(e - g) <= tol * math.max(1, math.abs(e)),
        ("%s: expected %s, got %s"):format(path, tostring(e), tostring(g)))
    else
      assert(e == g, ("%s: expected %s, got %s"):format(path, tostring(e), tostring(g)))
    end
  end
  cmp(expected, got, "value")
end

-- LL(2) ^ 60 is LuaJIT's 2LL ^ 60 without the literal, so spec files still
-- parse under PUC Lua (where tests that need it are skipped).
if jit then
  local ffi = require "ffi"
  function LL(x) return ffi.cast("int64_t", x) end
end

return nd
