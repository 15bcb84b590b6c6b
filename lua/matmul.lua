-- matmul's LuaJIT fast path. With `out` given and 2-D float32/float64
-- operands, `matmul(a, b, out)` calls the C core's nd_matmul through the
-- FFI: no classic C API call, no argument marshalling, no userdata
-- allocation (OpenBLAS itself takes ~20 ns on a 4x4 product, the classic
-- binding costs more than that). nd_matmul never calls back into Lua, as
-- an FFI callee must not. Everything else goes to the C binding, which
-- also retries once after a collection when memory runs out.
return function(ext)
  local ffi, lib = ext.ffi, ext.lib
  if not ffi then return end
  local ok = pcall(ffi.cdef, [[
    int nd_matmul(nd_err *e, nd_tensor *out, const nd_tensor *a,
                  const nd_tensor *b);
  ]])
  if not ok or not pcall(function() return lib.nd_matmul end) then return end

  local nd, methods = ext.nd, ext.methods
  local binding = nd.matmul
  local header, mt, err = ext.header, ext.metatable, ext.err
  local getmetatable, error, ffi_string = getmetatable, error, ffi.string
  local ENOMEM = 2

  local function matmul(a, b, out)
    if out ~= nil and getmetatable(out) == mt and getmetatable(a) == mt
        and getmetatable(b) == mt then
      local ha, hb, ho = header(a), header(b), header(out)
      if ha.ndim == 2 and hb.ndim == 2 and ha.dtype <= 1 and hb.dtype <= 1
          and ho.storage ~= nil then -- dtypes 0, 1: float32, float64
        local status = lib.nd_matmul(err, ho, ha, hb)
        if status == 0 then return out end
        if status ~= ENOMEM then error(ffi_string(err.msg), 2) end
      end
    end
    return binding(a, b, out)
  end
  nd.matmul = matmul
  methods.matmul = matmul
end
