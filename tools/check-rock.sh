#!/bin/sh
# make check-rock: `luarocks make` of rockspecs/nd-scm-1.rockspec for LuaJIT
# and for Lua 5.4, each into a temporary tree; then `require "nd"` from plain
# luajit / lua5.4 in another folder, with only that tree on the paths.
# Prints "N passed, N failed".
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here" || exit 1
command -v luarocks >/dev/null || { echo "check-rock: luarocks is missing: apt-get install luarocks"; echo "0 passed, 1 failed"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0
check() { # check "what" command...
  what=$1; shift
  if out=$("$@" 2>&1); then passed=$((passed + 1))
  else failed=$((failed + 1)); echo "FAILED: $what"; echo "$out" | tail -n 20; fi
}
# lua: interpreter, then luarocks' arguments for it
try() {
  lua=$1; shift
  tree=$tmp/tree-$lua
  check "luarocks make for $lua" luarocks --tree "$tree" "$@" make rockspecs/nd-scm-1.rockspec
  path=$(luarocks --tree "$tree" "$@" path --lr-path) cpath=$(luarocks --tree "$tree" "$@" path --lr-cpath)
  check "require \"nd\" from $lua outside the source tree" env -u LD_LIBRARY_PATH \
    LUA_PATH="$path" LUA_CPATH="$cpath" sh -c "cd '$tmp' && $lua -e '
      local nd = require \"nd\"
      assert(package.searchpath(\"nd\", package.cpath):find(\"$tree\", 1, true))
      assert(nd.arange(6):view(2, 3):t():contiguous():sum() == 15)
      print(\"nd \" .. nd._VERSION .. \" from \" .. package.searchpath(\"nd\", package.cpath))'"
}
try luajit --lua-version 5.1 LUA=/usr/bin/luajit LUA_INCDIR=/usr/include/luajit-2.1
try lua5.4 --lua-version 5.4
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
