-- luarocks make rockspecs/nd-scm-1.rockspec          (the Lua LuaRocks runs for)
-- luarocks --lua-version 5.4 make rockspecs/nd-scm-1.rockspec
-- For LuaJIT: add LUA=/usr/bin/luajit LUA_INCDIR=/usr/include/luajit-2.1
-- The Makefile asks $(LUA) which Lua it is, builds in build-<lua> and installs
-- the self-contained module nd.so into the rock.
rockspec_format = "3.0"
package = "nd"
version = "scm-1"
source = {
  url = "git+file://.",  -- built from a checkout: luarocks make
}
description = {
  summary = "Strided N-dimensional tensors for Lua, with OpenBLAS matmul",
  detailed = [[
A C core, a Lua binding (LuaJIT first, PUC Lua 5.1-5.4) and matmul through
OpenBLAS. Every view (transpose, narrow, select, expand, flip, table
indexing) is O(1) and shares storage.]],
  license = "MIT",
}
dependencies = { "lua >= 5.1, < 5.5" }
-- OpenBLAS (libopenblas-dev), SLEEF, libspng and TurboJPEG (libspng-dev,
-- libturbojpeg0-dev: image files) and cJSON (libcjson-dev: safetensors
-- headers) are found through pkg-config by the Makefile.
build = {
  type = "make",
  build_target = "all",
  build_variables = {
    CFLAGS = "$(CFLAGS)",
    LUA = "$(LUA)",
    LUA_INCDIR = "$(LUA_INCDIR)",
    LUA_LIBDIR = "$(LUA_LIBDIR)",
  },
  install_target = "install-module",
  install_variables = {
    INST_LIBDIR = "$(LIBDIR)",
    LUA = "$(LUA)",
    LUA_INCDIR = "$(LUA_INCDIR)",
  },
}
test = { type = "command", command = "make test" }
