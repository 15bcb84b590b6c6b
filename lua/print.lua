-- tostring(t): aligned nested rows, one number format chosen over all the
-- shown values, "..." past 1000 elements, and a trailer with dtype and size.
local C = ...
local EDGE, THRESHOLD = 3, 1000
local unpack = unpack or table.unpack
local ELIDED = {} -- marks the "..." between edges
local FLOAT = {} -- the float dtypes' names (kind "f" in C.consts)
for _, d in ipairs(C.consts.dtypes) do if d.kind == "f" then FLOAT[d.name] = true end end

-- The indices shown along a dim of size n: all, or the edges around false.
local function shown(n, summarise)
  local r = {}
  if summarise and n > 2 * EDGE then
    for i = 1, EDGE do r[#r + 1] = i end
    r[#r + 1] = ELIDED
    -- Counted from the end: n - k is inexact past 2^53 (a loop to n
    -- would never end), a negative position never is.
    for i = -EDGE, -1 do r[#r + 1] = i end
  else
    for i = 1, n do r[i] = i end
  end
  return r
end

-- Nested tables of shown values, ELIDED where rows or columns are left out.
local function gather(t, summarise)
  local nd_, sizes = t:dim(), t:size()
  local idx = {}
  local function rec(d)
    if d > nd_ then return t:get(unpack(idx, 1, nd_)) end
    local out = {}
    for k, i in ipairs(shown(sizes[d], summarise)) do
      if i ~= ELIDED then idx[d] = i; out[k] = rec(d + 1) else out[k] = ELIDED end
    end
    return out
  end
  return rec(1)
end

local function each_value(v, fn)
  if type(v) == "table" and v ~= ELIDED then
    for _, x in ipairs(v) do if x ~= ELIDED then each_value(x, fn) end end
  else
    fn(v)
  end
end

-- One formatter for every value, chosen over the whole tensor: integers
-- as integers; floats that are all integral as "3." (below 1e8);
-- otherwise "%.4f", or "%.4e" when the magnitudes span more than 1000x,
-- reach 1e8 or go below 1e-4 (PyTorch's rule). nan and inf print as such and do not take part in the choice.
local function formatter(values, dtype)
  if dtype == "bool" then return tostring end
  if not FLOAT[dtype] then
    return function(v) -- int64 beyond 2^53 comes as cdata: drop the "LL"
      if type(v) == "number" then return string.format("%.0f", v) end
      return (tostring(v):gsub("U?LL$", ""))
    end
  end
  local integral, maxabs, minabs = true, 0, math.huge
  each_value(values, function(v)
    if v ~= v or v == math.huge or v == -math.huge then return end
    if v ~= math.floor(v) then integral = false end
    local a = math.abs(v)
    if a > maxabs then maxabs = a end
    if a > 0 and a < minabs then minabs = a end
  end)
  if minabs == math.huge then minabs = maxabs end
  local fmt
  if integral and maxabs < 1e8 then
    fmt = "%.0f."
  elseif integral or maxabs >= 1e8 or minabs < 1e-4 or maxabs / minabs > 1000 then
    fmt = "%.4e"
  else
    fmt = "%.4f"
  end
  return function(v)
    if v ~= v then return "nan" end
    if v == math.huge then return "inf" end
    if v == -math.huge then return "-inf" end
    return string.format(fmt, v)
  end
end

return function(nd)
  local state = C.state
  return function(t)
    if state(t) == "released" then return "[released tensor]" end
    local dims, n, dtype = t:dim(), t:numel(), t:dtype()
    local size = tostring(t:size())
    local trailer = string.format("[%s tensor of size %s]", dtype, size)
    if n == 0 then return "[]\n" .. trailer end
    local summarise = n > THRESHOLD
    local values = dims == 0 and t:item() or gather(t, summarise)
    local fmt = formatter(values, dtype)
    if dims == 0 then return fmt(values) .. "\n" .. trailer end
    local width = 0
    each_value(values, function(v)
      local w = #fmt(v)
      if w > width then width = w end
    end)
    local function cell(v)
      local s = fmt(v)
      return string.rep(" ", width - #s) .. s
    end
    local function render(v, d, indent)
      if d == dims then
        local parts = {}
        for k, x in ipairs(v) do parts[k] = x == ELIDED and "..." or cell(x) end
        return "[" .. table.concat(parts, ", ") .. "]"
      end
      local parts = {}
      local sep = ",\n" .. string.rep("\n", dims - d - 1) .. indent .. " "
      for k, x in ipairs(v) do
        parts[k] = x == ELIDED and "..." or render(x, d + 1, indent .. " ")
      end
      return "[" .. table.concat(parts, sep) .. "]"
    end
    return render(values, 1, "") .. "\n" .. trailer
  end
end
