-- matmul's LuaJIT fast path. With `out` given and float32/float64
-- operands of any shapes, `matmul(a, b, out)` calls the C core through the FFI: no
-- classic C API call, no argument marshalling, no userdata allocation
-- (OpenBLAS itself takes ~20-50 ns on a 4x4 product).
--
-- Planning (nd_matmul_plan: shapes, layouts, overlap checks) costs about
-- as much as a 4x4 product, and a live tensor's header never changes, so
-- the plan for one (a, b, out) is the plan forever: it is kept per out,
-- with a and b held weakly (a collected operand clears its slot, so a new
-- tensor can never be mistaken for it), and re-used through
-- nd_matmul_run -- but only after ext.live has found all three live (a
-- released tensor's header is unset, and then the C binding raises).
-- Anything unusual -- a failed plan, out of memory, other shapes or
-- dtypes -- goes to the C binding, which raises the error or collects
-- garbage and retries. The C core never calls back into Lua.
return function(ext)
  local ffi, lib = ext.ffi, ext.lib
  if not ffi then return end

  local nd, methods = ext.nd, ext.methods
  local binding = nd.matmul
  local live, err = ext.live, ext.err
  local setmetatable, new_plan = setmetatable, ffi.typeof("ndffi2_plan")
  local OK = ext.consts.status.OK
  local is_float = ext.is_float -- BLAS's dtypes
  -- out -> { plan = <nd_blas_plan>, ops = { a = a, b = b } (weak values) }
  local plans = setmetatable({}, { __mode = "k" })
  local weak_values = { __mode = "v" }

  -- A new small result (ext.small_sized) of operands of one float dtype, no C
  -- API call; nil leaves it to the binding. The core plans it (shape,
  -- dtype, BLAS call) as for a result it allocates itself: row-major at
  -- offset 0, as every small result is, so the plan for (a, b) is the
  -- plan for all of them, kept per a as plans are per out above.
  local small = ext.small_sized
  local fresh = setmetatable({}, { __mode = "k" }) -- a -> { plan =, ops = { b = b } }
  local function new_small(a, b)
    local ha, hb = live(a), live(b)
    if ha == nil or hb == nil or not is_float(ha.dtype) or hb.dtype ~= ha.dtype then
      return nil
    end
    local entry = fresh[a]
    if entry == nil or entry.ops.b ~= b then
      local plan = new_plan()
      if lib.matmul_plan(err, plan, ha, hb, nil) ~= OK then return nil end
      entry = { plan = plan, ops = setmetatable({ b = b }, weak_values) }
      fresh[a] = entry
    end
    local p = entry.plan
    local o, r = small(p.dtype, p.ndim, p.size)
    if o == nil then return nil end
    if lib.matmul_run(err, p, ha, hb, r) ~= OK then return nil end
    return o
  end

  local function matmul(a, b, out)
    if out == nil and small then
      local o = new_small(a, b)
      if o ~= nil then return o end
    elseif out ~= nil then
      local ha, hb, ho = live(a), live(b), live(out)
      if ha and hb and ho and is_float(ha.dtype) and is_float(hb.dtype) then
        local entry = plans[out]
        if entry == nil or entry.ops.a ~= a or entry.ops.b ~= b then
          local plan = new_plan()
          if lib.matmul_plan(err, plan, ha, hb, ho) ~= OK then
            return binding(a, b, out) -- raises the error as matmul's
          end
          entry = { plan = plan, ops = setmetatable({ a = a, b = b }, weak_values) }
          plans[out] = entry
        end
        -- a failure (out of memory for a copy) is the binding's to raise
        -- or retry: a finalizer run at the trace exit here may already
        -- have reused err
        if lib.matmul_run(err, entry.plan, ha, hb, ho) == OK then return out end
      end
    end
    return binding(a, b, out)
  end
  ext.fast(nd, "matmul", matmul)
  ext.fast(methods, "matmul", matmul)
end
