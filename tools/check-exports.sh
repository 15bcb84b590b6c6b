#!/bin/sh
# make check-exports (part of make test): each shared library nd builds
# exports its public API, all of it and nothing else.
#   tools/check-exports.sh LIB=HEADER[,HEADER...] ...
# LIB must export every function the HEADERs declare (comments stripped),
# and nothing beyond the functions any public header declares plus those
# marked ND_EXPORT in src/ (src/core/base/nd_internal.h says which and why).
# Prints one line per library; exits nonzero on any mismatch.
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here" || exit 1
CC=${CC:-cc}

# Function names a header declares: identifiers before "(" once comments
# are gone (-fpreprocessed: no includes, no macro expansion).
declared() {
  for h in "$@"; do
    "$CC" -w -fpreprocessed -dD -E -P "$h" || exit 1
  done | grep -oE '\b(nd_[a-z0-9_]+|luaopen_[a-z0-9_]+)[[:space:]]*\(' | tr -d ' (' | sort -u
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
{
  declared include/*.h
  grep -rhoE 'ND_EXPORT[^;{(]*\b[a-z_][a-z0-9_]*[[:space:]]*\(' src | grep -v define |
    grep -oE '[a-z_][a-z0-9_]*[[:space:]]*\($' | tr -d ' ('
} | sort -u > "$tmp/allowed"

status=0
for arg in "$@"; do
  lib=${arg%%=*}
  headers=$(echo "${arg#*=}" | tr ',' ' ')
  if [ ! -f "$lib" ]; then
    echo "check-exports: $lib: no such file"; status=1; continue
  fi
  # Dynamic symbols defined here; the linker's own (_init, __bss_start, ...)
  # start with an underscore.
  nm -D --defined-only "$lib" | awk '{print $NF}' | grep -v '^_' | sort -u > "$tmp/exported"
  declared $headers > "$tmp/required"
  extra=$(comm -23 "$tmp/exported" "$tmp/allowed")
  missing=$(comm -13 "$tmp/exported" "$tmp/required")
  n=$(wc -l < "$tmp/exported")
  if [ -n "$extra" ] || [ -n "$missing" ]; then
    status=1
    echo "check-exports: $lib exports $n symbols:"
    [ -n "$extra" ] && echo "  not declared in a public header nor marked ND_EXPORT:" $extra
    [ -n "$missing" ] && echo "  declared in $headers but not exported:" $missing
  else
    echo "check-exports: $lib exports its $n public symbols, nothing else"
  fi
done
exit $status
