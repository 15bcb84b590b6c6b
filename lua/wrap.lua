-- nd.wrap(ptr, nbytes, dtype, sizes [, strides [, owner [, options]]]): a
-- tensor over foreign memory, zero-copy (src/lua/lwrap.c). ptr is a light
-- userdata or, under LuaJIT, any FFI pointer (LÖVE's getFFIPointer(),
-- ffi.new buffers); owner, always the 6th argument, is kept alive while any
-- view lives; options (7th) {readonly = true} for memory nd must not write.
local C = ...

return function(ext)
  local raw, ffi = C.wrap_raw, nil
  if jit then
    local ok, m = pcall(require, "ffi")
    if ok then ffi = m end
  end
  local is_tensor = ext.is_tensor -- lua/ffi.lua's, under LuaJIT
  local function wrap(ptr, nbytes, dtype, sizes, strides, owner, options)
    local ty = type(ptr)
    if is_tensor(ptr) then
      error("wrap: argument 1 must be a pointer (FFI cdata or light userdata), got a tensor "
        .. "(its t:cdata() is one; pass the tensor as owner)", 2)
    elseif ty == "cdata" and ffi then
      -- The cdata is kept with the owner: an ffi.new buffer then lives as
      -- long as the tensor (one from ffi.cast owns nothing; its owner must
      -- be passed).
      if owner == nil then owner = ptr else owner = { owner, ptr } end
      ptr = tonumber(ffi.cast("uintptr_t", ffi.cast("const void *", ptr)))
    elseif ty ~= "userdata" then
      error(("wrap: argument 1 must be a pointer (FFI cdata or light userdata), got %s")
        :format(ty), 2)
    end
    return raw(ptr, nbytes, dtype, sizes, strides, owner, options)
  end
  ext.nd.wrap = ext.checked("wrap", wrap)
end
