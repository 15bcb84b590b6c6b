#!/bin/sh
# make check-install: LuaJIT and Lua 5.4 installed side by side into one
# temporary prefix; for each, tests/pkgconfig_host.c built as C and as C++
# (headers in both orders) through `pkg-config --cflags --libs nd-<lua>` and
# run; the Lua module loaded from lib/lua/<5.x> with no libnd on the loader
# path. Prints "N passed, N failed".
set -u
CHECK_TAIL=15
. "$(dirname "$0")/check-lib.sh"

check "an unknown LUA_PC is refused, nothing installed" sh -c \
  "! make -s --no-print-directory LUA_PC=lua9 PREFIX='$tmp/bad' install 2>'$tmp/bad.txt' &&
   grep -q 'LUA_PC=lua9 is not a Lua nd builds for; use one of: luajit lua5.1' '$tmp/bad.txt' &&
   test ! -e '$tmp/bad'"
for abi in luajit lua5.4; do
  # Lua 5.4's module over build/'s core (the core never sees lua.h), two
  # jobs: from make test this runs without the jobserver.
  check "make install LUA_PC=$abi" make -s --no-print-directory -j2 CORE_BUILD=build \
    LUA_PC=$abi PREFIX="$prefix" install
done
for f in lib/libnd.so.0 lib/libnd.a include/nd.h include/nd_lua.h include/nd_dlpack.h lib/pkgconfig/nd.pc \
         lib/libnd_luajit.so.0 lib/libnd_luajit.a lib/pkgconfig/nd-luajit.pc lib/lua/5.1/nd.so \
         lib/libnd_lua5.4.so.0 lib/libnd_lua5.4.a lib/pkgconfig/nd-lua5.4.pc lib/lua/5.4/nd.so; do
  check "installed $f" test -e "$prefix/$f"
done
check "SONAME of libnd_lua5.4.so" sh -c \
  "readelf -d '$prefix/lib/libnd_lua5.4.so.0' | grep -q 'SONAME.*\[libnd_lua5.4.so.0\]'"
check "nd.so does not need libnd" sh -c "! readelf -d '$prefix/lib/lua/5.4/nd.so' | grep -q 'NEEDED.*libnd'"

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
for abi in luajit lua5.4; do
  flags=$(pkg-config --cflags --libs "nd-$abi") || { failed=$((failed + 1)); echo "FAILED: pkg-config nd-$abi"; continue; }
  check "C host for $abi" sh -c "cc -std=c11 -Wall -Wextra -Werror tests/pkgconfig_host.c $flags -o '$tmp/host-$abi'"
  check "C host for $abi runs" env LD_LIBRARY_PATH="$prefix/lib" "$tmp/host-$abi"
  for order in "" -DND_HOST_LUA_FIRST; do
    check "C++ host for $abi $order" sh -c \
      "c++ -x c++ -Wall -Wextra -Werror $order tests/pkgconfig_host.c $flags -o '$tmp/hostxx-$abi'"
    check "C++ host for $abi $order runs" env LD_LIBRARY_PATH="$prefix/lib" "$tmp/hostxx-$abi"
  done
done

# The modules, each from its own folder, with nothing else on the paths.
check "luajit loads lib/lua/5.1/nd.so" env -u LD_LIBRARY_PATH LUA_PATH=';' \
  LUA_CPATH="$prefix/lib/lua/5.1/?.so" sh -c "cd / && luajit -e 'assert(require(\"nd\").arange(4):sum() == 6)'"
check "lua5.4 loads lib/lua/5.4/nd.so" env -u LD_LIBRARY_PATH LUA_PATH=';' \
  LUA_CPATH="$prefix/lib/lua/5.4/?.so" sh -c "cd / && lua5.4 -e 'assert(require(\"nd\").arange(4):sum() == 6)'"

check "uninstall LuaJIT keeps the core for 5.4" sh -c \
  "make -s --no-print-directory LUA_PC=luajit PREFIX='$prefix' uninstall >/dev/null &&
   test ! -e '$prefix/lib/libnd_luajit.so.0' && test -e '$prefix/lib/libnd.so.0'"
check "uninstall Lua 5.4 removes everything" sh -c \
  "make -s --no-print-directory LUA_PC=lua5.4 PREFIX='$prefix' uninstall >/dev/null &&
   test -z \"\$(find '$prefix' -type f -o -type l)\""
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
