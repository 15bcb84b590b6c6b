-- The host examples (examples/embed/: a C host on LuaJIT, a C++ host on
-- Lua 5.4) built through pkg-config against an installed nd and run:
-- tools/check-embed.sh, which make check-embed also runs under valgrind.
-- Only in the plain LuaJIT run of the suite: it installs the in-tree build.
local root = debug.getinfo(1, "S").source:match("^@(.*)/spec/[^/]*$") or "."
local build = os.getenv("ND_BUILD") or "build"
local plain = jit and not os.getenv("ND_PUC") and (build == "build" or build == root .. "/build")
  and not (os.getenv("LD_PRELOAD") or ""):find("san", 1, true)
local has_54 = os.execute("pkg-config --exists lua5.4 >/dev/null 2>&1")
has_54 = has_54 == true or has_54 == 0

describe("the embedding examples", function()
  local run = plain and has_54 and it or pending
  run("build through pkg-config against an installed nd and pass their checks", function()
    local p = assert(io.popen("env -u LD_PRELOAD -u MAKEFLAGS -u MAKELEVEL sh "
      .. root .. "/tools/check-embed.sh 2>&1; echo rc=$?"))
    local out = p:read("*a")
    p:close()
    assert.equals("0", out:match("rc=(%d+)%s*$"), out)
    local n, f = out:match("(%d+) passed, (%d+) failed")
    assert.equals("0", f, out)
    assert.equals(8, tonumber(n), out) -- two installs; C, C++ and static hosts built and run
  end)
end)
