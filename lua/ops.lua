-- Elementwise operators and value comparisons over the C ops (lops.c):
-- the arithmetic metamethods, nd.equal / nd.allclose, and under LuaJIT a
-- fast path for the ops of nd.h's ND_OPS (C.optable's family "op"): a new
-- small result or an out tensor, the FFI calling the C core directly (no
-- Lua C API frame, no argument parsing).
return function(ext)
  local nd, methods, mt, C = ext.nd, ext.methods, ext.metatable, ext.C
  local is_tensor, error = ext.is_tensor, error

  -- Elementwise, a number on either side; `*` is not matmul. Lua's `==`
  -- and `<` stay identity / undefined (use eq, lt, nd.equal).
  mt.__add, mt.__sub, mt.__mul, mt.__div, mt.__pow = C.add, C.sub, C.mul, C.div, C.pow
  -- `%` is remainder (the sign of the divisor, as Lua's own %); `//` (Lua
  -- 5.3+; unused elsewhere) is floor_divide.
  mt.__mod, mt.__idiv = C.remainder, C.floor_divide
  local neg = C.neg
  mt.__unm = function(a) return neg(a) end -- Lua passes the operand twice

  local function define(name, f)
    f = ext.checked(name, f)
    nd[name] = f
    methods[name] = f
  end

  local function same_size(a, b)
    if a:dim() ~= b:dim() then return false end
    for i = 1, a:dim() do
      if a:size(i) ~= b:size(i) then return false end
    end
    return true
  end

  -- Same shape and equal values (NaN is not equal to itself).
  define("equal", function(a, b)
    if not is_tensor(a) or not is_tensor(b) then
      error("equal: expected two tensors", 2)
    end
    return same_size(a, b) and C.eq(a, b):all()
  end)

  -- |a - b| <= atol + rtol * |b| everywhere (equal infinities are close),
  -- broadcasting as the other ops do.
  define("allclose", function(a, b, rtol, atol)
    if not is_tensor(a) or not is_tensor(b) then
      error("allclose: expected two tensors", 2)
    end
    rtol, atol = rtol or 1e-5, atol or 1e-8
    local x, y = a:to("float64"), b:to("float64")
    local close = C.le(C.abs(C.sub(x, y)), C.add(C.mul(C.abs(y), rtol), atol))
    return C.all(C.maximum(close, C.eq(x, y)))
  end)

  if not ext.ffi then return end
  local lib, live, err, small_of = ext.lib, ext.live, ext.err, ext.small_of
  local OUT, INPLACE, SHAPE = ext.consts.OUT, ext.consts.INPLACE, ext.consts.SHAPE
  local OK, type = ext.consts.status.OK, type

  -- Every elementwise op reaches the core through lib.ew (src/lua/lffi.c):
  -- the op table's ops by family ("op", "math"), then clamp, where and
  -- lerp (C.ffamily). Each operand is a tensor, a number (C applies the
  -- scalar rule) or nil (clamp's missing bound). call() is false when an
  -- operand is something else or C refuses the call; then the classic
  -- function runs, and raises the error naming the function.
  local ew, ew_plan, FAMILY = lib.ew, lib.ew_plan, C.ffamily
  local function usable(v, h) return h ~= nil or v == nil or type(v) == "number" end
  -- f(err, o, mode, ...) of lffi.c with the operands as it takes them;
  -- false when one is something else. s: the scratch o computes into.
  local function run(f, o, s, mode, fam, op, n, a, b, c)
    local ha, hb, hc = live(a), live(b), live(c)
    if not (usable(a, ha) and usable(b, hb) and usable(c, hc)) then return false end
    local absent = (a == nil and 1 or 0) + (b == nil and 2 or 0) + (c == nil and 4 or 0)
    if s ~= nil then o.storage = s end
    return f(err, o, mode, fam, op, n, ha, ha and 0 or a or 0, hb, hb and 0 or b or 0,
             hc, hc and 0 or c or 0, absent)
  end
  local function call(o, mode, fam, op, n, a, b, c)
    return run(ew, o, nil, mode, fam, op, n, a, b, c) == OK
  end
  -- A new result: the core computes it into a scratch (mode SHAPE: the
  -- classic result's dtype, dims and strides; lffi.c's ew_plan), copied
  -- into a new small tensor of that layout (ext.small_of), or, when it
  -- does not fit, into a storage of its own that a new owner adopts
  -- (ext.adopt); nil leaves it to the classic function.
  local ffi = ext.ffi
  local plan, scratch = ffi.new("ndffi7_tensor"), ffi.new("ndffi7_storage")
  local buf = ffi.new("double[16]") -- 128 bytes: a small tensor's most
  scratch.data, scratch.nbytes, scratch.refs = buf, 128, 1
  -- busy: a call's values wait in this file's arrays while they are
  -- read, its results in the scratches while their objects are
  -- allocated, and LuaJIT may run finalizers at any allocation or exit
  -- from compiled code; a finalizer calling nd then takes the classic
  -- path instead of overwriting them. (Should an allocation raise, the
  -- flag stays set: these new-result paths go classic, still right.)
  local copy, adopt, refill = ffi.copy, ext.adopt, ext.refill
  local busy = false
  local function new(fam, op, n, a, b, c)
    if busy then return nil end
    busy = true
    local nb = run(ew_plan, plan, scratch, SHAPE, fam, op, n, a, b, c)
    if not nb or nb == 0 then
      busy = false
      return nil
    end
    local o
    if nb < 0 then -- past the scratch: its own storage
      o = adopt(plan, scratch, 1)
      busy = false
      refill()
      return o
    end
    local r
    o, r = small_of(plan, nb)
    copy(r.storage.data, buf, nb)
    busy = false
    return o
  end

  -- The forms of one op: f(operands..., out) and, when C has one, the
  -- in-place f_(a, operands...). Three pairs for the three arities (fixed
  -- operands: the interpreter pays for varargs); a call with more
  -- arguments goes to the C function, which raises.
  local select, nargs = select, ext.nargs
  local function install(name, fam, op, n)
    local slow, slow_ = C[name], C[name .. "_"]
    local f, f_
    if n == 1 then
      f = function(a, out, ...)
        if select("#", ...) == 0 then
          if out == nil then
            local o = new(fam, op, 1, a)
            if o ~= nil then return o end
          else
            local ho = live(out)
            if ho and call(ho, OUT, fam, op, 1, a) then return out end
          end
        end
        return slow(a, out, ...)
      end
      f_ = function(a, ...)
        if select("#", ...) == 0 then
          local ha = live(a)
          if ha and call(ha, INPLACE, fam, op, 1, a) then return a end
        end
        return slow_(a, ...)
      end
    elseif n == 2 then
      f = function(a, b, out, ...)
        if select("#", ...) == 0 then
          if out == nil then
            local o = new(fam, op, 2, a, b)
            if o ~= nil then return o end
          else
            local ho = live(out)
            if ho and call(ho, OUT, fam, op, 2, a, b) then return out end
          end
        end
        return slow(a, b, out, ...)
      end
      f_ = function(a, b, ...)
        if select("#", ...) == 0 then
          local ha = live(a)
          if ha and call(ha, INPLACE, fam, op, 2, a, b) then return a end
        end
        return slow_(a, b, ...)
      end
    else
      f = function(a, b, c, out, ...)
        if select("#", ...) == 0 then
          if out == nil then
            local o = new(fam, op, 3, a, b, c)
            if o ~= nil then return o end
          else
            local ho = live(out)
            if ho and call(ho, OUT, fam, op, 3, a, b, c) then return out end
          end
        end
        return slow(a, b, c, out, ...)
      end
      f_ = function(a, b, c, ...)
        if select("#", ...) == 0 then
          local ha = live(a)
          if ha and call(ha, INPLACE, fam, op, 3, a, b, c) then return a end
        end
        return slow_(a, b, c, ...)
      end
    end
    -- C's count is these forms' (else the generic wrapper counts)
    local counted = nargs(name) == n + 1
    ext.fast(nd, name, f, slow, nil, counted)
    ext.fast(methods, name, f, slow, nil, counted)
    if slow_ then
      counted = nargs(name .. "_") == n
      ext.fast(nd, name .. "_", f_, slow_, nil, counted)
      ext.fast(methods, name .. "_", f_, slow_, nil, counted)
    end
    return f
  end

  local meta = { add = "__add", sub = "__sub", mul = "__mul", div = "__div", pow = "__pow" }
  for _, row in ipairs(C.optable()) do
    local fam = FAMILY[row.family]
    if fam and (row.family == "op" or row.family == "math") then
      local f = install(row.name, fam, row.id, row.arity)
      if meta[row.name] then ext.fast(mt, meta[row.name], f, C[row.name]) end -- Lua passes two operands
      if row.name == "neg" then
        ext.fast(mt, "__unm", function(a) return f(a) end, mt.__unm) -- Lua passes a twice
      end
    end
  end
  for _, name in ipairs({ "clamp", "where", "lerp" }) do install(name, FAMILY[name], 0, 3) end

  local value, exact = ext.value, ext.exact
  local function made(p, b) -- a new small tensor of p's layout, b's bytes
    local o, r = small_of(p)
    copy(r.storage.data, b, r.storage.nbytes)
    return o
  end

  -- The rows of C.fcalls (src/lua/lfcall.c): the reductions of the op
  -- table and every other function there, of a tensor and up to four
  -- values, handed to C as they are, with their kinds (3 bits each: nil,
  -- number, boolean, a dtype's name as its id, a tensor, a table of
  -- numbers (dims), a list of at most 64 tensors); C applies the classic
  -- function's rules and the core makes the results into the scratches.
  -- fcall gives 1: new tensors, small ones copied from the scratches,
  -- bigger ones adopted (their storage is not the scratch; a result not
  -- made has ndim -1), 2: t itself, 3: values (0-d results, read as
  -- t:item() reads: int64 beyond 2^53 exact, which the classic path, run
  -- while the FFI is off, reads again); 0: the classic function runs. The
  -- samplers' generator is the state's default one (gen), or g of g:rand:
  -- a generator nd.generator made (gens: a forged one is not handed to C,
  -- which reads its payload), whose methods are the rows too.
  local fcall, dtype_id, select, rawget = lib.fcall, ext.dtype_id, select, rawget
  local gen = C.default_generator() -- the state's (its payload for C: lrandom.c)
  local gens, c_generator = setmetatable({ [gen] = true }, { __mode = "k" }), nd.generator
  nd.generator = function(...) -- the classic function, which raises
    local g = c_generator(...)
    gens[g] = true
    return g
  end
  local gmethods = getmetatable(gen).__index
  local plan2, plan3 = ffi.new("ndffi7_tensor"), ffi.new("ndffi7_tensor")
  local scratch2, scratch3 = ffi.new("ndffi7_storage"), ffi.new("ndffi7_storage")
  local buf2, buf3 = ffi.new("double[16]"), ffi.new("double[16]")
  scratch2.data, scratch2.nbytes, scratch2.refs = buf2, 128, 1
  scratch3.data, scratch3.nbytes, scratch3.refs = buf3, 128, 1
  local MAX_DIMS, MAX_LIST = ext.consts.MAX_DIMS, 64
  local dv, tl = ffi.new("double[?]", 4 * MAX_DIMS), ffi.new("const ndffi7_tensor *[?]", MAX_LIST)
  local plans = ffi.new("ndffi7_tensor *[3]", { plan, plan2, plan3 })
  local P, B = { plan, plan2, plan3 }, { buf, buf2, buf3 }
  local ts, xv = ffi.new("const ndffi7_tensor *[4]"), ffi.new("double[4]")
  local function kind_of(v, i) -- its kind, its number or header into xv/ts
    local ty = type(v)
    if v == nil then return 0 end
    if ty == "number" then xv[i] = v; return 1 end
    if ty == "boolean" then xv[i] = v and 1 or 0; return 2 end
    if ty == "string" then
      local id = dtype_id[v]
      if id == nil then return nil end
      xv[i] = id
      return 3
    end
    if ty == "table" then -- read raw, as the C binding reads tables
      local n, first = #v, rawget(v, 1)
      xv[i] = n
      if type(first) ~= "number" and n > 0 then -- a list of tensors, into tl
        if n > MAX_LIST then return nil end
        for k = 1, n do
          local h = live(rawget(v, k))
          if h == nil then return nil end
          tl[k - 1] = h
        end
        return 6
      end
      if n > MAX_DIMS then return nil end -- dims, into value i's part of dv
      for k = 1, n do
        local d = rawget(v, k)
        if type(d) ~= "number" then return nil end
        dv[i * MAX_DIMS + k - 1] = d
      end
      return 5
    end
    local h = live(v)
    if h == nil then return nil end
    ts[i] = h
    return 4
  end
  local S = { scratch, scratch2, scratch3 }
  -- results k..n of a call that made them: in the scratch, a new small
  -- tensor; on t's storage (h its header), a view of t (C dropped the
  -- core's reference: lfcall.c); else adopted
  local new_view = ext.new_view
  local function results(code, k, n, t, h)
    if k > n or P[k].ndim < 0 then return end
    local p, b = P[k], B[k]
    if code == 3 then return value(p.dtype, b, 0), results(code, k + 1, n, t, h) end
    local r, s = nil, p.storage
    if s == S[k] then
      r = made(p, b)
    elseif h ~= nil and s == h.storage then
      r = new_view(t)
      r.nd_h_ = p
    else
      r = adopt(p, S[k], k)
    end
    return r, results(code, k + 1, n, t, h)
  end
  local function trim(r, r2, r3) -- as many values as were made (none: set_num_threads)
    if r3 ~= nil then return r, r2, r3 end
    if r2 ~= nil then return r, r2 end
    if r ~= nil then return r end
  end
  -- row id's call (n results) of t (header h; nil: a constructor): one
  -- function for every row (a closure per row cost the heap, and so every
  -- collection, a kilobyte each)
  local function call(id, n, g, h, t, a, b, c, d)
    if busy then return false end
    busy = true -- from here xv, ts, tl and dv hold this call's values
    local ka, kb, kc, kd = kind_of(a, 0), kind_of(b, 1), kind_of(c, 2), kind_of(d, 3)
    local code = 0
    if ka and kb and kc and kd then
      plan.storage, plan2.storage, plan3.storage = scratch, scratch2, scratch3
      code = fcall(err, plans, id, h, ts, tl, xv, dv, ka + kb * 8 + kc * 64 + kd * 512, g)
    end
    if code ~= 1 and code ~= 3 then
      busy = false
      return code == 2, t
    end
    local r, r2, r3 = results(code, 1, n, t, h)
    busy = false
    if code == 1 then refill() end
    return true, r, r2, r3
  end
  for _, row in ipairs(C.fcalls()) do
    local id, name, n = row.id, row.name, row.results
    local tbl = row.module == "linalg" and nd.linalg or nd
    local slow = tbl[name]
    -- at most k values after t reach C (C's count, else 4: then the
    -- generic wrapper counts)
    local ns = row.module ~= "" and row.module or nil
    local count = nargs(name, ns)
    local counted = count >= 0
    local k = math.min(4, counted and (row.values_only and count or count - 1) or 4)
    local f
    if row.values_only then -- ...: the classic function sees as many
      f = function(...)
        if select("#", ...) <= k then
          local ok, r, r2, r3 = call(id, n, gen, nil, nil, ...)
          if ok then return trim(r, r2, r3) end
        end
        return slow(...)
      end
      local gslow = gmethods[name]
      if gslow then -- g:rand(...)
        local gk = nargs(name, "generator")
        gk = gk >= 0 and math.min(4, gk - 1) or 4
        ext.fast(gmethods, name, function(g, ...)
          if gens[g] and select("#", ...) <= gk then
            local ok, r, r2, r3 = call(id, n, g, nil, nil, ...)
            if ok then return trim(r, r2, r3) end
          end
          return gslow(g, ...)
        end, gslow, "generator", nargs(name, "generator") >= 0)
      end
    elseif row.generator then -- t:uniform_(lo, hi [, g]): value `at` may be g
      local at = row.generator
      local function given(h, t, a, b, c, d) -- g handed over, nil in its place
        local g
        if at == 1 then g, a = a, nil elseif at == 2 then g, b = b, nil
        elseif at == 3 then g, c = c, nil else g, d = d, nil end
        if g == nil then return call(id, n, gen, h, t, a, b, c, d) end
        if not gens[g] then return false end
        return call(id, n, g, h, t, a, b, c, d)
      end
      f = function(t, ...)
        local h = live(t)
        if h ~= nil and select("#", ...) <= k then
          local ok, r, r2, r3 = given(h, t, ...)
          if ok then return trim(r, r2, r3) end
        end
        return slow(t, ...)
      end
    else
      f = function(t, ...)
        local h = live(t)
        if h ~= nil and select("#", ...) <= k then
          local ok, r, r2, r3 = call(id, n, gen, h, t, ...)
          if ok then return trim(r, r2, r3) end
        end
        return slow(t, ...)
      end
    end
    local slow_exact = slow -- a value read again exactly (int64 past 2^53)
    if row.results > 0 and row.results < 3 then
      slow_exact = function(...)
        local v, w = slow(...)
        if not exact(v) then return f(...) end
        if w == nil then return v end
        return v, w
      end
    end
    ext.fast(tbl, name, f, slow_exact, ns, counted)
    if tbl == nd and methods[name] then ext.fast(methods, name, f, slow_exact, nil, counted) end
  end

  -- clone of a small tensor: a new small row-major tensor (as the
  -- classic clone's) the core copies into through the FFI; bigger
  -- tensors go to the C binding.
  local c_clone, small_sized = methods.clone, ext.small_sized
  local function clone(a)
    local ha = live(a)
    if ha ~= nil then
      local o, r = small_sized(ha.dtype, ha.ndim, ha.size)
      if o ~= nil and lib.copy(err, r, ha) == OK then return o end
    end
    return c_clone(a)
  end
  ext.fast(nd, "clone", clone, c_clone)
  ext.fast(methods, "clone", clone, c_clone)
end
