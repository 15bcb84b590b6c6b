-- The embedding C API without Lua: compiles tests/c_api_test.c against the
-- build's libnd.a (the same ND_BUILD as the module) and runs it.
local root = debug.getinfo(1, "S").source:match("^@(.*)/spec/[^/]*$") or "."
local build = os.getenv("ND_BUILD") or "build"
if not build:match("^/") then build = root .. "/" .. build end

-- Under `make check-asan` the module is built with sanitizers and they are
-- preloaded: the compiler must not run under them, the test programs are
-- built with them (to link the sanitized library).
local asan = (os.getenv("LD_PRELOAD") or ""):find("libasan", 1, true)
local SAN = asan and " -fsanitize=address,undefined" or ""

local function run(cmd)
  local p = assert(io.popen("env -u LD_PRELOAD " .. cmd .. " 2>&1; echo \"rc=$?\""))
  local out = p:read("*a")
  p:close()
  local rc = tonumber(out:match("rc=(%d+)%s*$"))
  return rc, out
end

describe("the C API (tests/c_api_test.c)", function()
  local exe = os.tmpname()
  teardown(function() os.remove(exe) end)

  it("compiles against libnd.a with nothing but nd.h", function()
    local rc, out = run(("cc -std=c11 -Wall -Wextra -Werror -O1" .. SAN .. " -I%s/include "
      .. "%s/tests/c_api_test.c %s/libnd.a "
      .. C_LIBS .. " -o %s"):format(root, root, build, exe))
    assert.equals(0, rc, out)
  end)

  it("passes every check: lifecycle, nd_wrap release, views, allocator, errors", function()
    local rc, out = run(exe)
    local p, f = out:match("(%d+) passed, (%d+) failed")
    assert.is_not_nil(p, out)
    assert.equals("0", f, out)
    assert.is_true(tonumber(p) >= 100, out)
    assert.equals(0, rc, out)
  end)

  it("exchanges tensors through DLPack both ways (tests/dlpack_test.c)", function()
    local dl = os.tmpname()
    local rc, out = run(("cc -std=c11 -Wall -Wextra -Werror -O1" .. SAN .. " -I%s/include "
      .. "%s/tests/dlpack_test.c %s/libnd.a "
      .. C_LIBS .. " -o %s"):format(root, root, build, dl))
    assert.equals(0, rc, out)
    rc, out = run(dl)
    os.remove(dl)
    local p, f = out:match("(%d+) passed, (%d+) failed")
    assert.is_not_nil(p, out)
    assert.equals("0", f, out)
    assert.is_true(tonumber(p) >= 50, out)
    assert.equals(0, rc, out)
  end)

  -- The host links the Lua this suite runs under (the module was built
  -- for it: make LUA_PC=...).
  local LUA_PC = jit and "luajit" or ("lua" .. _VERSION:match("%d+%.%d+"))

  it("hosts Lua: luaopen_nd, nd_lua_push and nd_lua_check (tests/lua_host_test.c)", function()
    local host = os.tmpname()
    local rc, out = run(("cc -std=c11 -Wall -Wextra -Werror" .. SAN .. " -I%s/include "
      .. "$(pkg-config --cflags %s) %s/tests/lua_host_test.c %s/nd.so "
      .. "$(pkg-config --libs %s) -Wl,-rpath,%s -o %s"):format(
      root, LUA_PC, root, build, LUA_PC, build, host))
    assert.equals(0, rc, out)
    rc, out = run(host)
    os.remove(host)
    assert.equals(0, rc, out)
    local p, f = out:match("(%d+) passed, (%d+) failed")
    assert.equals("0", f, out)
    assert.is_true(tonumber(p) >= 10, out)
  end)
end)

describe("the allocator hook (tests/alloc_test.c)", function()
  -- The C allocator's entry points wrapped for nd's objects (libnd.a), not
  -- for libc's or OpenBLAS's own calls: the test counts any call that
  -- bypassed the hook.
  local WRAP = " -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=posix_memalign"
    .. ",--wrap=aligned_alloc,--wrap=strdup,--wrap=free"
  it("sees every block, headers and scratch included; every failing allocation is ND_ENOMEM without a leak", function()
    local exe = os.tmpname()
    local rc, out = run(("cc -std=c11 -Wall -Wextra -Werror -O1" .. SAN .. " -I%s/include "
      .. "%s/tests/alloc_test.c %s/libnd.a" .. WRAP .. " "
      .. C_LIBS .. " -o %s"):format(root, root, build, exe))
    assert.equals(0, rc, out)
    rc, out = run(exe)
    os.remove(exe)
    local p, f = out:match("(%d+) passed, (%d+) failed")
    assert.equals("0", f, out)
    assert.is_true(tonumber(p) >= 300, out)
    assert.equals(0, rc, out)
  end)
end)
