#!/bin/sh
# The host examples (examples/embed/) against an installed nd, as a host
# project would build them: LuaJIT and Lua 5.4 installed into one temporary
# prefix, host.c built through `pkg-config --cflags --libs nd-luajit`,
# host.cpp through nd-lua5.4, both run on edit.lua. With --valgrind the C
# host also runs under valgrind (0 errors, no definite leak). Used by
# spec/embed_spec.lua (make test) and make check-embed (CI, with valgrind).
# Prints "N passed, N failed".
set -u
. "$(dirname "$0")/check-lib.sh"
host_ok() { # the host's own summary says it passed everything
  out=$("$@" 2>&1) || { echo "$out"; return 1; }
  echo "$out" | grep -Eq '^[1-9][0-9]* passed, 0 failed$' || { echo "$out"; return 1; }
}

for abi in luajit lua5.4; do
  # Lua 5.4's module over build/'s core (the core never sees lua.h), two
  # jobs: from make test this runs without the jobserver.
  check "make install LUA_PC=$abi" make -s --no-print-directory -j2 CORE_BUILD=build \
    LUA_PC=$abi PREFIX="$prefix" install
done
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
check "host.c builds with pkg-config nd-luajit" sh -c \
  "cc -std=c11 -Wall -Wextra -Werror -g examples/embed/host.c \$(pkg-config --cflags --libs nd-luajit) -lm -o '$tmp/host'"
check "host.c runs edit.lua" host_ok env LD_LIBRARY_PATH="$prefix/lib" "$tmp/host" examples/embed/edit.lua
check "host.cpp builds with pkg-config nd-lua5.4" sh -c \
  "c++ -std=c++11 -Wall -Wextra -Werror examples/embed/host.cpp \$(pkg-config --cflags --libs nd-lua5.4) -o '$tmp/host-cpp'"
check "host.cpp runs edit.lua" host_ok env LD_LIBRARY_PATH="$prefix/lib" "$tmp/host-cpp" examples/embed/edit.lua
# The usual engine build: everything static, no -rdynamic (nd's symbols
# stay private); the FFI fast paths must still be on.
check "a static LuaJIT host (no -rdynamic) builds" sh -c \
  "cc -std=c11 -Wall -Wextra -Werror -I'$prefix/include' \$(pkg-config --cflags luajit) \
     examples/embed/host.c '$prefix/lib/libnd_luajit.a' '$prefix/lib/libnd.a' \
     -Wl,-Bstatic -lluajit-5.1 -Wl,-Bdynamic \$(pkg-config --libs openblas sleef spng libturbojpeg libcjson) -lm -ldl -pthread \
     -o '$tmp/host-static'"
check "the static host keeps the FFI fast paths" host_ok "$tmp/host-static" examples/embed/edit.lua examples/embed/static_check.lua
if [ "${1:-}" = --valgrind ]; then
  # ND_NO_CACHE: valgrind sees every buffer freed (nd's block cache off).
  check "host.c under valgrind: no errors, no definite leaks" host_ok env \
    LD_LIBRARY_PATH="$prefix/lib" ND_NO_CACHE=1 valgrind -q --error-exitcode=9 --suppressions=spec/support/valgrind.supp \
    --leak-check=full --errors-for-leak-kinds=definite "$tmp/host" examples/embed/edit.lua
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
