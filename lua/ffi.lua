-- LuaJIT's FFI view of the C core, for the fast paths of the other Lua
-- modules: a classic C API call costs 15-38 ns from LuaJIT, an FFI call in
-- compiled code 2-3 ns. Sets ext.ffi, ext.lib (the C API's functions) and
-- ext.header(t) (the nd_tensor* inside a tensor userdata). Outside LuaJIT,
-- or when the library's symbols cannot be bound, sets nothing.
local C = ...

return function(ext)
  if not jit then return end
  local ok, ffi = pcall(require, "ffi")
  if not ok then return end
  ffi.cdef [[
    typedef struct nd_err { int code; int base; char msg[512]; } nd_err;
    typedef struct nd_storage {
      void *data; int64_t nbytes; long refs;
      void (*release)(void *data, void *ctx); void *ctx;
    } nd_storage;
    typedef struct nd_tensor {
      nd_storage *storage; int64_t offset; int32_t dtype; int32_t ndim;
      int64_t size[16]; int64_t stride[16];
    } nd_tensor;
    void *nd_data(const nd_tensor *t);
    typedef struct nd_blas_plan {
      int routine, dtype, col_major; char transa, transb;
      int64_t m, n, k, lda, ldb, ldc, incx, incy, batch;
      int copies, ndim; int64_t size[16];
      int64_t M, N, K; int nbd; int64_t bsize[16], bstride[3][16];
      int64_t mstride[3][2], origin[3];
    } nd_blas_plan;
  ]]
  for name, size in pairs(C.struct_sizes()) do
    if ffi.sizeof(name) ~= size then return end -- nd.h changed: no FFI paths
  end
  local path = C.library_path()
  local lib
  if path then
    local okl, l = pcall(ffi.load, path)
    if okl and pcall(function() return l.nd_data end) then lib = l end
  end
  if not lib and pcall(function() return ffi.C.nd_data end) then lib = ffi.C end
  if not lib then return end
  local tensor_ptr = ffi.typeof("nd_tensor *")
  local function header(t) return ffi.cast(tensor_ptr, t) end
  ext.ffi = ffi
  ext.lib = lib
  ext.header = header
  ext.err = ffi.new("nd_err", { 0, 1 }) -- a reusable error slot, base 1

  -- t:cdata(): a typed pointer to the first element (index it from 0 with
  -- the strides). It does not keep t alive: hold on to t while using it.
  local elem_ptr = { -- in nd.h's ND_DTYPES order
    [0] = ffi.typeof("float *"), ffi.typeof("double *"), ffi.typeof("int32_t *"),
    ffi.typeof("int64_t *"), ffi.typeof("uint8_t *"), ffi.typeof("bool *"),
  }
  local mt, cast, getmetatable = ext.metatable, ffi.cast, getmetatable
  local function cdata(t)
    if getmetatable(t) ~= mt then
      error("cdata: argument 1 must be a tensor, got " .. type(t), 2)
    end
    local h = header(t)
    return cast(elem_ptr[h.dtype], lib.nd_data(h))
  end
  ext.nd.cdata = cdata
  ext.methods.cdata = cdata
end
