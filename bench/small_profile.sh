#!/bin/sh
# Where the per-call cost of issue 9's small cases goes: runs each case N
# times under callgrind (instruction counts do not depend on the machine's
# load) and prints instructions per call, split by object: nd.so (nd's own
# code), luajit (the VM: C API, allocation, collector, finalizers), libc.
# Usage: bench/small_profile.sh   (needs valgrind; ~1 minute)
set -e
cd "$(dirname "$0")/.."
N=${N:-100000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() { # name, setup, expression
  cat > "$tmp/case.lua" <<LUA
local nd = require "nd"
$2
local f = function() return $3 end
for _ = 1, 1000 do f() end
collectgarbage()
for _ = 1, $N do f() end
LUA
  cat > "$tmp/base.lua" <<LUA
local nd = require "nd"
$2
local f = function() return $3 end
for _ = 1, 1000 do f() end
collectgarbage()
LUA
  rm -f "$tmp"/cg.*
  for s in case base; do
    valgrind -q --tool=callgrind --trace-children=yes --callgrind-out-file="$tmp/cg.$s.%p" \
      bin/nd "$tmp/$s.lua" >/dev/null 2>&1
  done
  # The luajit process's file is the biggest; subtract the setup-only run.
  c=$(ls -S "$tmp"/cg.case.* | head -1); b=$(ls -S "$tmp"/cg.base.* | head -1)
  for f in "$c" "$b"; do
    callgrind_annotate --inclusive=no "$f" 2>/dev/null | awk '
      /PROGRAM TOTALS/ { gsub(",", "", $1); total = $1 }
      /\[/ { gsub(",", "", $1); n = $1 + 0
             if ($0 ~ /nd\.so|\/src\//) nd += n
             else if ($0 ~ /libc|libm|ld-linux/) libc += n
             else if ($0 ~ /luajit|\?\?\?/) vm += n }
      END { printf "%d %d %d %d\n", total, nd, vm, libc }' > "$f.sum"
  done
  set -- "$1" $(cat "$c.sum") $(cat "$b.sum")
  awk -v name="$1" -v n="$N" -v t="$2" -v d="$3" -v v="$4" -v l="$5" \
      -v bt="$6" -v bd="$7" -v bv="$8" -v bl="$9" 'BEGIN {
    printf "%-28s %7.0f %7.0f %7.0f %7.0f\n", name, (t - bt) / n, (d - bd) / n,
      (v - bv) / n, (l - bl) / n }'
}
printf "%-28s %7s %7s %7s %7s\n" "instructions per call" total nd.so luajit libc
run "m:t()" "local m = nd.rand(100, 100)" "m:t()"
run "m[5] (row view)" "local m = nd.rand(100, 100)" "m[5]"
run "m:narrow(1, 2, 50)" "local m = nd.rand(100, 100)" "m:narrow(1, 2, 50)"
run "m[{{},{1,-1,2}}]" "local m = nd.rand(100, 100)" "m[{ {}, { 1, -1, 2 } }]"
# LuaJIT's floor under every FFI view: the cdata and its anchor's store.
run "floor: view cdata + anchor" "local ffi = require 'ffi'
local VT, keep, anchor = ffi.typeof('ndffi3_view'), setmetatable({}, { __mode = 'k' }), {}
local function view() local v = VT(); keep[v] = anchor; return v end" "view()"
run "nd.empty(3)" "" "nd.empty(3)"
run "a + b (3 elements)" "local a, b = nd.rand(3), nd.rand(3)" "a + b"
run "a:add(b, out)" "local a, b, o = nd.rand(3), nd.rand(3), nd.empty(3)" "a:add(b, o)"
run "a:mul(0.016, out)" "local a, o = nd.rand(3), nd.empty(3)" "a:mul(0.016, o)"
run "a:neg(out)" "local a, o = nd.rand(3), nd.empty(3)" "a:neg(o)"
run "a:exp(out)" "local a, o = nd.rand(3), nd.empty(3)" "a:exp(o)"
run "4x4 matmul, new" "local A, B = nd.rand(4, 4, 'float32'), nd.rand(4, 4, 'float32')" "A:matmul(B)"
