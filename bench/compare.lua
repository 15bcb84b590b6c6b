-- Compares runs of `bin/nd bench/run.lua small|calls` of two builds, each
-- build's runs saved to files (run them alternated: a shared machine drifts).
-- Per row the best of each build's runs, then new/prev; a summary per kind
-- of row (small: every row; calls: new results, out=, in-place, reductions,
-- the list of views and other calls) with the rows over a limit.
--   luajit bench/compare.lua [--limit 1.25] prev1.txt prev2.txt -- new1.txt new2.txt
local limit, prev, new, side = 1.25, {}, {}, nil
local i = 1
while i <= #arg do
  local a = arg[i]
  if a == "--limit" then
    limit = assert(tonumber(arg[i + 1]), "compare: --limit takes a number")
    i = i + 1
  elseif a == "--" then
    side = new
  else
    table.insert(side or prev, a)
  end
  i = i + 1
end
assert(#prev > 0 and #new > 0, "usage: compare.lua [--limit x] prev files -- new files")

local UNIT = { ns = 1, us = 1e3, ms = 1e6 }
-- rows of one output: key -> ns, and key -> kind
local function parse(path, rows, kinds)
  local section
  for line in io.lines(path) do
    if line:match("^== small") then section = "small"
    elseif line:match("^== calls: every op") then section = "ops"
    elseif line:match("^== calls: views") then section = "list"
    elseif line:match("^== ") then section = nil
    elseif section == "small" then
      local case, v, u = line:match("^(.-)%s%s+([%d.]+) (%a+)%s")
      if case and UNIT[u] and not case:match("^case") then
        rows[case], kinds[case] = math.min(rows[case] or math.huge, v * UNIT[u]), "small"
      end
    elseif section == "ops" then
      local op, form, rest = line:match("^(%S+)%s+(%S+ ?%S*)%s%s+(.*)$")
      local cells = {}
      for c in (rest or ""):gmatch("%S+") do cells[#cells + 1] = c end
      if op and op ~= "op" and #cells >= 6 then
        form = form:gsub("%s+$", "")
        for k, shape in ipairs({ "3", "4x4" }) do
          local v = tonumber(cells[k == 1 and 1 or 4])
          if v then
            local key = op .. " " .. form .. " " .. shape
            rows[key], kinds[key] = math.min(rows[key] or math.huge, v), form
          end
        end
      end
    elseif section == "list" then
      local case, v = line:match("^(.-)%s+([%d.]+)%s%s")
      if case and v and case ~= "nd" then
        rows[case], kinds[case] = math.min(rows[case] or math.huge, tonumber(v)), "list"
      end
    end
  end
end
local p, n, kinds = {}, {}, {}
for _, f in ipairs(prev) do parse(f, p, kinds) end
for _, f in ipairs(new) do parse(f, n, kinds) end

local groups, order = {}, {}
for key, pv in pairs(p) do
  local nv = n[key]
  if nv and pv > 0 then
    local kind = kinds[key]
    if not groups[kind] then groups[kind] = {}; order[#order + 1] = kind end
    table.insert(groups[kind], { key = key, prev = pv, new = nv, r = nv / pv })
  end
end
table.sort(order)
for _, kind in ipairs(order) do
  local g = groups[kind]
  table.sort(g, function(x, y) return x.r < y.r end)
  local over = {}
  for _, row in ipairs(g) do if row.r > limit then over[#over + 1] = row end end
  print(("%-9s %3d rows: median %.2fx, best %.2fx (%s), worst %.2fx (%s); %d over %.2fx")
    :format(kind, #g, g[math.floor((#g + 1) / 2)].r, g[1].r, g[1].key, g[#g].r, g[#g].key, #over, limit))
  if kind == "small" then
    for _, row in ipairs(g) do
      print(("   %-40s %10.1f %10.1f %6.2fx"):format(row.key, row.prev, row.new, row.r))
    end
  else
    for _, row in ipairs(over) do
      print(("   %-40s %10.1f %10.1f %6.2fx"):format(row.key, row.prev, row.new, row.r))
    end
  end
end
