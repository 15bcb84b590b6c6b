-- matmul's LuaJIT fast path. With `out` given and 2-D float32/float64
-- operands, `matmul(a, b, out)` calls the C core through the FFI: no
-- classic C API call, no argument marshalling, no userdata allocation
-- (OpenBLAS itself takes ~20-50 ns on a 4x4 product).
--
-- Planning (nd_matmul_plan: shapes, layouts, overlap checks) costs about
-- as much as a 4x4 product, and a tensor's header never changes once
-- made, so the plan for one (a, b, out) is the plan forever: it is kept
-- per out, with a and b held weakly (a collected operand clears its slot,
-- so a new tensor can never be mistaken for it), and re-used through
-- nd_matmul_run. Anything unusual -- a failed plan, out of memory, other
-- shapes or dtypes -- goes to the C binding, which raises the error or
-- collects garbage and retries. The C core never calls back into Lua.
return function(ext)
  local ffi, lib = ext.ffi, ext.lib
  if not ffi then return end
  local ok = pcall(ffi.cdef, [[
    int nd_matmul_plan(nd_err *e, nd_blas_plan *plan, const nd_tensor *a,
                       const nd_tensor *b, const nd_tensor *out);
    int nd_matmul_run(nd_err *e, const nd_blas_plan *plan, const nd_tensor *a,
                      const nd_tensor *b, const nd_tensor *out);
  ]])
  if not ok or not pcall(function() return lib.nd_matmul_run end) then return end

  local nd, methods = ext.nd, ext.methods
  local binding = nd.matmul
  local header, mt, err = ext.header, ext.metatable, ext.err
  local getmetatable, setmetatable, error = getmetatable, setmetatable, error
  local ffi_string, new_plan = ffi.string, ffi.typeof("nd_blas_plan")
  -- out -> { plan = <nd_blas_plan>, ops = { a = a, b = b } (weak values) }
  local plans = setmetatable({}, { __mode = "k" })
  local weak_values = { __mode = "v" }

  local function matmul(a, b, out)
    if out ~= nil and getmetatable(out) == mt and getmetatable(a) == mt
        and getmetatable(b) == mt then
      local ha, hb, ho = header(a), header(b), header(out)
      if ha.ndim == 2 and hb.ndim == 2 and ha.dtype <= 1 and hb.dtype <= 1 then
        local entry = plans[out] -- dtypes 0, 1 above: float32, float64
        if entry == nil or entry.ops.a ~= a or entry.ops.b ~= b then
          local plan = new_plan()
          if lib.nd_matmul_plan(err, plan, ha, hb, ho) ~= 0 then
            return binding(a, b, out) -- raises the error as matmul's
          end
          entry = { plan = plan, ops = setmetatable({ a = a, b = b }, weak_values) }
          plans[out] = entry
        end
        if lib.nd_matmul_run(err, entry.plan, ha, hb, ho) == 0 then return out end
        if err.code ~= 2 then error(ffi_string(err.msg), 2) end -- 2: ND_ENOMEM
      end
    end
    return binding(a, b, out)
  end
  nd.matmul = matmul
  methods.matmul = matmul
end
