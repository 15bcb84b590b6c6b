-- LuaJIT's FFI view of the C core, for the fast paths of the other Lua
-- modules: a classic C API call costs 15-38 ns from LuaJIT, an FFI call in
-- compiled code 2-3 ns, but in the interpreter (JIT off) an FFI call is
-- slower than the C API. So:
--  * ext.lib is the table of nd's C functions that the module hands over
--    (C.ffi_api): no symbol lookup, so a host that links nd statically
--    without -rdynamic keeps the fast paths;
--  * every FFI type is declared once per process under an "ndffiN_" name
--    (N grows when its layout changes)
--    and only when missing: a second luaopen_nd, a hot reload
--    (package.loaded.nd = nil; require "nd") or a host's own nd_err never
--    clash; sizes are checked against C's (a drift turns the FFI off);
--  * ext.live(t) is the only way in: the header of a live nd tensor, or
--    nil for anything else (foreign, forged with debug.setmetatable,
--    released), and the fast path then falls back to the C binding, which
--    raises the error naming the function;
--  * ext.fast(tbl, key, f) installs a fast path over tbl[key] (the classic
--    C API path); nd.use_ffi(false / true) swaps them all, and they are
--    swapped out by themselves while the JIT is off (-joff, or jit.off()
--    after nd was loaded): results are identical either way.
--  * ext.consts (C.consts, src/lua/lconsts.c), ext.dtype (id -> its row:
--    name, size, ctype, kind), ext.dtype_id (name -> id) and
--    ext.is_float(id) carry nd.h's numbers: no Lua file retypes one.
-- Outside LuaJIT this file sets nothing but those and nd.use_ffi (a no-op
-- there).
local C = ...

return function(ext)
  -- the fast paths, entry i: tbls[i][keys[i]] is fasts[i] or slows[i]
  -- (flat arrays: a table per entry cost the heap, and so every
  -- collection, a hundred bytes each)
  local tbls, keys, fasts, slows = {}, {}, {}, {}
  local user_on = true
  local on = false
  local function apply()
    local want = user_on and ext.ffi ~= nil and jit ~= nil and (jit.status())
    want = want and true or false
    if want == on then return end
    on = want
    for i = 1, #tbls do tbls[i][keys[i]] = on and fasts[i] or slows[i] end
  end
  -- A fast path takes the arguments its C function takes (src/lua/largs.c):
  -- with more, the C function runs and raises as it does for every call.
  -- Metamethods take what Lua passes them. nd.add and t:add, installed
  -- one after the other, share their wrapper.
  local nargs, select = C.nargs, select
  -- the last wrapper made, of which function, count and slow function
  local last_w, last_f, last_n, last_slow
  -- counted: f sends calls with too many arguments to the C function
  -- itself (and needs no wrapper)
  ext.nargs = nargs
  function ext.fast(tbl, key, f, slow, ns, counted) -- ns: "linalg" for nd.linalg
    slow = slow or tbl[key]
    local n = key:sub(1, 2) ~= "__" and not counted and nargs(key, ns) or -1
    if n >= 0 then
      if f ~= last_f or n ~= last_n or slow ~= last_slow then
        local fast_f, slow_f = f, slow
        last_w, last_f, last_n, last_slow = function(...)
          if select("#", ...) > n then return slow_f(...) end
          return fast_f(...)
        end, f, n, slow
      end
      f = last_w
    end
    local i = #tbls + 1
    tbls[i], keys[i], fasts[i], slows[i] = tbl, key, f, slow
    tbl[key] = on and f or slow
  end
  local function use_ffi(v)
    if v ~= nil then user_on = v and true or false end
    apply()
    return on
  end
  ext.nd.use_ffi = ext.checked("use_ffi", use_ffi)
  local consts, dtype, dtype_id, float = C.consts, {}, {}, {}
  for _, d in ipairs(consts.dtypes) do
    dtype[d.id], dtype_id[d.name] = d, d.id
    if d.kind == "f" then float[#float + 1] = "d == " .. d.id end
  end
  ext.consts, ext.dtype, ext.dtype_id = consts, dtype, dtype_id
  -- is_float(d): compares with the float dtypes' ids, made from them (a
  -- table lookup costs the fast paths' compiled code more)
  ext.is_float = assert((loadstring or load)("return function(d) return "
    .. table.concat(float, " or ") .. " end"))()

  if not jit then return end
  local ok, ffi = pcall(require, "ffi")
  if not ok then return end
  -- @D is ND_MAX_DIMS, @M the message's bytes (C.consts).
  local decls = {
    ndffi3_err = "typedef struct ndffi3_err { int code; int base; const char *fn; char msg[@M]; } ndffi3_err;",
    ndffi7_storage = [[typedef struct ndffi7_storage {
      void *data; int64_t nbytes; long refs;
      void (*release)(void *data, void *ctx); void *ctx; int readonly;
    } ndffi7_storage;]],
    ndffi7_tensor = [[typedef struct ndffi7_tensor {
      ndffi7_storage *storage; int64_t offset; int32_t dtype; int32_t ndim;
      int64_t size[@D]; int64_t stride[@D];
    } ndffi7_tensor;]],
    ndffi2_plan = [[typedef struct ndffi2_plan {
      int routine, dtype, col_major; char transa, transb;
      int64_t m, n, k, lda, ldb, ldc, incx, incy, batch;
      int copies, ndim; int64_t size[@D];
      int64_t M, N, K; int nbd; int64_t bsize[@D], bstride[3][@D];
      int64_t mstride[3][2], origin[3];
    } ndffi2_plan;]],
    ndffi23_api = C.ffi_api_decl:gsub("%f[%w_]([SETP])%f[^%w_]", { S = "int", E = "ndffi3_err",
      T = "ndffi7_tensor", P = "ndffi2_plan" }),
  }
  local order = { "ndffi3_err", "ndffi7_storage", "ndffi7_tensor", "ndffi2_plan", "ndffi23_api" }
  for _, name in ipairs(order) do
    if not pcall(ffi.typeof, name) then
      local decl = decls[name]:gsub("@D", consts.MAX_DIMS):gsub("@M", consts.ERR_MSG)
      if not pcall(ffi.cdef, decl) then return end
    end
  end
  local sizes = C.struct_sizes()
  local mine = { nd_tensor = "ndffi7_tensor", nd_err = "ndffi3_err",
    nd_blas_plan = "ndffi2_plan", nd_storage = "ndffi7_storage" }
  local checked_below = { nd_lobj = true, nd_small = true, nd_small_s = true } -- the object's layout
  for cname, size in pairs(sizes) do
    local n = mine[cname]
    if not checked_below[cname] and (not n or ffi.sizeof(n) ~= size) then return end -- nd.h drifted: no FFI
  end

  local lib = ffi.cast("const ndffi23_api *", C.ffi_api())
  local LIVE, DEAD, OWNER, VIEW, SMALL_KIND, small_mark = C.tags()

  -- The tensor object: every tensor is one cdata of this type -- the C
  -- binding's object (tag, header pointer, kind), its header, and for a
  -- small tensor its storage, then up to 128 bytes of elements, in the
  -- tail (a VLA: an owner's or a view's has none, so it stays 320 bytes;
  -- with the storage as a field it was 368, and allocating 368 bytes
  -- took ~6 ns more than 320 in a compiled loop).
  -- C makes owners and views through make() below, the fast paths
  -- through new_view and new_small. A struct copy
  -- (ffi.new(ffi.typeof(t), n, t)) is refused by the FFI, and a forged
  -- one's header pointer is not its own header: not a tensor. Its
  -- metamethods forward to the tensor metatable's (ext.loaded).
  local shared = C.shared
  if not pcall(ffi.typeof, "ndffi8_obj") then
    if not pcall(ffi.cdef, "typedef struct ndffi8_obj { uint64_t nd_tag_; "
        .. "ndffi7_tensor *nd_t_; void *nd_free_; void *nd_ud_; uint64_t nd_kind_; "
        .. "ndffi7_tensor nd_h_; double nd_d_[?]; } ndffi8_obj;") then
      return
    end
  end
  local OT = ffi.typeof("ndffi8_obj")
  -- the small tensor's storage: C's ndL_small (lobject.c) puts it right
  -- after the header, its elements after it
  local SW = (sizes.nd_small - sizes.nd_small_s) / 8
  if ffi.offsetof(OT, "nd_h_") ~= sizes.nd_lobj or ffi.offsetof(OT, "nd_d_") ~= sizes.nd_small_s
      or SW ~= math.floor(SW) or SW * 8 < ffi.sizeof("ndffi7_storage") then
    return
  end
  local istype = ffi.istype

  -- The header of a live tensor, or nil for anything else (foreign,
  -- forged, released): the caller then falls back to the C binding.
  local function live(t)
    if not istype(OT, t) or t.nd_tag_ ~= LIVE then return nil end
    local h = t.nd_t_
    if h ~= t.nd_h_ then return nil end
    return h
  end

  -- Owners hold a storage reference, dropped by their finalizer (or by
  -- release()); so does a small tensor once armed (src/lua/lobject.c's
  -- ndL_arm moves its elements to a storage of the allocator's before C
  -- keeps a reference past a call).
  local gc, obj_gc = ffi.gc, lib.obj_gc
  local function finalize(o) obj_gc(o) end
  local function new_obj(kind, n)
    local o = OT(n)
    o.nd_tag_, o.nd_kind_, o.nd_t_ = LIVE, kind, o.nd_h_
    return o
  end

  -- new_view(t): a view of the live tensor t, its header unset for the
  -- caller to fill (lua/views.lua: C fills it), kept alive with t's anchor in C's keep table
  -- (C makes an owner's on its first view; a small tensor anchors
  -- itself, cached weakly on both sides: keep[t] = {t} would never go).
  local keep, c_anchor = C.view_keep, C.anchor
  local anchors = setmetatable({}, { __mode = "kv" })
  function ext.new_view(t)
    local a = keep[t]
    if a == nil then
      if t.nd_kind_ == SMALL_KIND then
        a = anchors[t]
        if a == nil then a = { t }; anchors[t] = a end
      else
        a = c_anchor(t)
      end
    end
    local v = new_obj(VIEW, 0)
    keep[v] = a
    return v, v.nd_h_
  end
  -- make(0, pool) and make(1, pool): a batch of owners for C to fill and
  -- of views for C to anchor, into pool; make(2, o): arming the small
  -- tensor o.
  C.set_maker(function(kind, a)
    if kind == 0 then
      for i = 1, 32 do a[i] = gc(new_obj(OWNER, 0), finalize) end
    elseif kind == 1 then
      for i = 1, 32 do a[i] = new_obj(VIEW, 0) end
    else
      gc(a, finalize)
    end
  end)
  -- adopt(p, s, k): a new owner of the result the core made at the header
  -- p with a storage of its own (src/lua/lfcall.c's ndL_into_end), whose
  -- one reference the owner takes; p gets its scratch s back. The owner
  -- is spare k (of 3: a call's results), made before the call, so that
  -- nothing raises while the reference is only p's; refill() makes the
  -- used ones again once every result has its owner. Charged to the
  -- collector as the classic binding's results are.
  local spare, charge_add, step = {}, lib.charge_add, C.charge_step
  local debt = ffi.cast("int64_t *", C.debt())
  local function owner() return gc(new_obj(OWNER, 0), finalize) end
  local function refill() -- unrolled: a loop here would end the caller's trace
    if spare[1] == nil then spare[1] = owner() end
    if spare[2] == nil then spare[2] = owner() end
    if spare[3] == nil then spare[3] = owner() end
  end
  refill()
  ext.refill = refill
  function ext.adopt(p, s, k)
    local o = spare[k] or owner()
    spare[k] = nil
    o.nd_h_ = p
    p.storage = s
    if charge_add(debt, o.nd_h_) ~= 0 then step() end
    return o
  end
  ext.is_tensor = function(v)
    if not istype(OT, v) or v.nd_t_ ~= v.nd_h_ then return false end
    local tag = v.nd_tag_
    return tag == LIVE or tag == DEAD
  end

  -- A new small tensor: its elements (zero-filled by ffi.new) inside the
  -- object, its dims and strides set by C (src/lua/lffi.c):
  -- small_sized(dtype, n, size) row-major of n sizes (an int64_t array),
  -- small_of(plan) the layout of the header plan (an elementwise result's,
  -- from the core's ND_SHAPE mode); nil when it would be empty or not fit.
  local mark, ceil = ffi.cast("void *", small_mark), math.ceil
  local storage_ptr = ffi.typeof("ndffi7_storage *")
  local function new_small(dtype, nbytes)
    local o = new_obj(SMALL_KIND, SW + ceil(nbytes / 8))
    local h, s = o.nd_h_, ffi.cast(storage_ptr, o.nd_d_)
    s.data, s.nbytes, s.refs, s.ctx = o.nd_d_ + SW, nbytes, 1, mark
    h.storage, h.dtype = s, dtype
    return o, h
  end
  local sized, of = lib.small_sized, lib.small_of
  function ext.small_sized(dtype, n, size)
    local nb = sized(nil, dtype, n, size)
    if nb == 0 then return nil end
    local o, r = new_small(dtype, nb)
    sized(r, dtype, n, size)
    return o, r
  end
  -- (with nb known, C has checked plan's layout: its dims and strides
  -- are copied as they are, a C call less)
  local copy, DIMS = ffi.copy, 16 * consts.MAX_DIMS -- sizes, then strides
  function ext.small_of(plan, nb) -- nb: of(nil, plan), when known
    if nb == nil then
      nb = of(nil, plan)
      if nb == 0 then return nil end
      local o, r = new_small(plan.dtype, nb)
      of(r, plan)
      return o, r
    end
    local o, r = new_small(plan.dtype, nb)
    r.ndim = plan.ndim
    copy(r.size, plan.size, DIMS)
    return o, r
  end

  -- Once every module has set its metamethods: the objects' metatable
  -- forwards each to the tensor metatable's current one (nd.use_ffi and
  -- the JIT switches swap some of them, and the FFI allows no change to a
  -- metatype's table). The tensor metatable is the registry's, the same
  -- table after a reload. Fixed arities: a vararg call costs the
  -- interpreter (JIT off) more.
  local forward = {
    [1] = function(mt, k) return function(a) return mt[k](a) end end,
    [2] = function(mt, k) return function(a, b) return mt[k](a, b) end end,
    [3] = function(mt, k) return function(a, b, c) return mt[k](a, b, c) end end,
  }
  local arity = { __index = 2, __newindex = 3, __unm = 1, __len = 1, __tostring = 1,
    __call = -1, __concat = 2, __eq = 2, __lt = 2, __le = 2 }
  function ext.loaded()
    shared.methods = ext.methods
    if shared.typed then return end
    shared.typed = true
    local mt, fwd = ext.metatable, {}
    for k in pairs(mt) do
      if k ~= "__gc" and k ~= "__close" and k ~= "__metatable" and k ~= "__name" then
        local f = forward[arity[k] or 2] -- the arithmetic ones take two
        fwd[k] = f and f(mt, k) or function(...) return mt[k](...) end
      end
    end
    -- A string key is a method (nd.lua's rule): looked up here at once in
    -- the latest loaded nd's methods, a call less for the interpreter.
    local index = mt.__index ~= nil and fwd.__index
    if index then
      fwd.__index = function(t, k)
        if type(k) == "string" then return shared.methods[k] end
        return index(t, k)
      end
    end
    ffi.metatype(OT, fwd)
  end
  -- writable(t, h): the live t (header h) has no element reached twice
  -- (an expand view's), so one element may be written. A header never
  -- changes, so the answer is kept in the object: its nd_free_, which
  -- only a userdata owner uses (src/lua/lnd.h).
  local has_overlap, WRITABLE = lib.has_internal_overlap, ffi.cast("void *", 1)
  function ext.writable(t, h)
    if h.storage.readonly ~= 0 then return false end -- C may set it later: not cached
    if t.nd_free_ == WRITABLE then return true end
    if has_overlap(h) ~= 0 then return false end
    t.nd_free_ = WRITABLE
    return true
  end
  ext.ffi = ffi
  ext.lib = lib
  ext.live = live
  -- A reusable error slot, base 1, named (so the core's failures in it,
  -- which the classic call then raises, are not renamed: no formatting).
  ext.err_name = "ffi"
  ext.err = ffi.new("ndffi3_err", { consts.status.OK, 1, ext.err_name })

  -- JIT on/off: LuaJIT's jit.on()/jit.off() (whole-engine forms) are
  -- wrapped once per state so that the latest loaded nd hears of them.
  shared.jit_hook = apply
  if not shared.jit_wrapped then
    shared.jit_wrapped = true
    local jon, joff = jit.on, jit.off
    jit.on = function(...)
      if select("#", ...) ~= 0 then return jon(...) end -- per function: as is
      jon(); local h = shared.jit_hook; if h then h() end
    end
    jit.off = function(...)
      if select("#", ...) ~= 0 then return joff(...) end
      joff(); local h = shared.jit_hook; if h then h() end
    end
  end

  -- t:cdata(): a typed pointer to the first element (index it from 0 with
  -- the strides), const for a read-only tensor. It does not keep t alive: hold on to t while using it.
  local elem_ptr, const_ptr = {}, {} -- a bool tensor's is bool * (its C type is a byte)
  for id, d in pairs(dtype) do
    local ct = d.kind == "b" and "bool" or d.ctype
    elem_ptr[id], const_ptr[id] = ffi.typeof(ct .. " *"), ffi.typeof("const " .. ct .. " *")
  end
  local check, arm, cast = C.check, C.arm, ffi.cast
  local function cdata(t)
    local h = live(t)
    if not h then return check(t, "cdata") end -- raises
    if h.storage.ctx == mark then arm(t) end -- a small tensor's elements move first
    return cast((h.storage.readonly ~= 0 and const_ptr or elem_ptr)[h.dtype], lib.data(h))
  end
  cdata = ext.checked("cdata", cdata)
  ext.nd.cdata = cdata
  ext.methods.cdata = cdata
  apply()
end
