-- Random calls of every function of nd and nd.linalg, with random
-- tensors (fresh for each call: in-place functions write them) and bad
-- values, give the same result or the same error with LuaJIT's fast
-- paths on and off (nd.use_ffi). The fast paths' own state must be left
-- as it was after each call: the rows' scratches hold their one reference
-- and no busy flag stays set (white box: lua/ops.lua's, small.lua's and
-- views.lua's upvalues). This is how a missing argument came to read
-- "got nil" on one path and "got no value" on the other, and how a failed
-- rand_like came to leave a reference on a scratch.
local nd = require "nd"
local unpack = unpack or table.unpack

describe("random calls", function()
  if not (jit and nd.use_ffi()) then
    it("compare LuaJIT's fast paths with the classic ones (nothing here)", function()
      assert.is_false(jit ~= nil and nd.use_ffi())
    end)
    return
  end
  after_each(function() nd.use_ffi(true) end)

  local CALLS = os.getenv("ND_VALGRIND") == "1" and 1500 or 15000
  -- Not comparable: addresses, uninitialised elements, clocks, state.
  local skip = { clock = 1, empty = 1, empty_like = 1, data_ptr = 1, cdata = 1, storage = 1,
    generator = 1, default_generator = 1, release = 1, save = 1, load = 1, wrap = 1,
    from_string = 1, use_ffi = 1, manual_seed = 1, set_num_threads = 1 }
  local makers = {
    function() return nd.tensor({ 1, 2, 3 }) end,
    function() return nd.tensor({ { 0.5, 0.25, 2 }, { -1, 3, 0.125 }, { 4, 5, 6 } }) end,
    function() return nd.tensor({ { 0.5, 0.25, 2 }, { -1, 3, 0.125 }, { 4, 5, 6 } }):t() end,
    function() return nd.zeros(0) end,
    function() return nd.tensor({ 1, 0, 1 }, "bool") end,
    function() return nd.tensor({ 0, 1, 2 }, "int64") end,
    function() return nd.tensor({ { 1, 2, 3 }, { 4, 5, 6 } }, "float32") end,
    function() return nd.arange(40):view(5, 8) end,
    function() return nd.tensor(3) end,
    function() return nd.arange(200):view(10, 20):float() end, -- past a small tensor
  }
  local values = { 1, -1, 0, 5, 2.5, -0.0, 0 / 0, 1 / 0, "int64", "float32", "bool", "bogus",
    true, false, { 2, 2 }, { 9 }, { -1 }, {}, { 1, { 1, 2 } } }

  local function show(r, depth)
    if nd.is_tensor(r) then
      return r:dtype() .. " {" .. table.concat(r:size(), ",") .. "} " .. tostring(r)
    end
    if type(r) == "table" and depth < 3 then
      local t = {}
      for k, v in pairs(r) do t[#t + 1] = tostring(k) .. "=" .. show(v, depth + 1) end
      table.sort(t)
      return "{" .. table.concat(t, ", ") .. "}"
    end
    return (type(r) .. " " .. tostring(r):gsub("0x%x+", "")) -- a table's address
  end
  local function outcome(f, args, n)
    local ok, r = pcall(f, unpack(args, 1, n))
    if not ok then return "error " .. tostring(r) end
    local s = show(r, 0)
    for i = 1, n do -- what it wrote
      if nd.is_tensor(args[i]) then s = s .. " | " .. tostring(args[i]) end
    end
    return s
  end

  it("give what the classic binding gives, and leave the fast paths as they were", function()
    local fns = {}
    for k, v in pairs(nd) do
      if type(v) == "function" and not skip[k] then fns[#fns + 1] = { nd, k } end
    end
    for k, v in pairs(nd.linalg) do
      if type(v) == "function" then fns[#fns + 1] = { nd.linalg, k } end
    end
    table.sort(fns, function(a, b) return (a[1] == nd and "" or "linalg.") .. a[2]
      < (b[1] == nd and "" or "linalg.") .. b[2] end)
    local state = {} -- { function, upvalue index, what it must be }
    for _, name in ipairs({ "scratch", "scratch2", "scratch3" }) do
      local f, i = assert(find_upvalue(nd.rand_like, name, {}))
      state[#state + 1] = { f, i, function(s) return s.refs == 1 end, name }
    end
    -- ops.lua's, small.lua's, and views.lua's (its index tables': t[{...}]
    -- reaches it through the tensor metatable's __index and ext)
    local _, ext = debug.getupvalue(find_upvalue(debug.getregistry()["nd.Tensor"].__index, "ext", {}))
    for _, from in ipairs({ nd.add, nd.zeros, ext.view_table }) do
      local f, i = assert(find_upvalue(from, "busy", {}))
      state[#state + 1] = { f, i, function(b) return b == false end, "busy" }
    end
    math.randomseed(22)
    local bad = {}
    for call = 1, CALLS do
      local tbl, name = unpack(fns[math.random(#fns)])
      local n, plan = math.random(0, 4), {}
      for i = 1, n do
        plan[i] = math.random() < 0.4 and makers[math.random(#makers)] or values[math.random(#values)]
      end
      local function args()
        local a = {}
        for i = 1, n do a[i] = type(plan[i]) == "function" and plan[i]() or plan[i] end
        return a
      end
      local got = {}
      for k, on in ipairs({ true, false }) do
        nd.use_ffi(on)
        nd.manual_seed(call)
        got[k] = outcome(tbl[name], args(), n) -- looked up now: use_ffi swaps it
      end
      nd.use_ffi(true)
      if got[1] ~= got[2] and #bad < 5 then
        bad[#bad + 1] = name .. "(" .. n .. " args): " .. got[1] .. "\n  classic: " .. got[2]
      end
      for _, s in ipairs(state) do
        local _, v = debug.getupvalue(s[1], s[2])
        if not s[3](v) and #bad < 5 then bad[#bad + 1] = name .. " left " .. s[4] end
      end
    end
    assert.same({}, bad)
  end)
end)
