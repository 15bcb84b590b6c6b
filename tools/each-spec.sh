#!/bin/sh
# Runs the suite one spec file a process, JOBS processes at once, and sums
# their "N passed, N failed" lines into one. make check-valgrind uses it: the
# suite under valgrind is CI's longest step, and one busted process leaves
# the second core idle. Largest files start first, so the processes end near
# together. Each file's time is printed (where valgrind's time goes).
#   tools/each-spec.sh JOBS COMMAND...   (COMMAND gets a spec file appended)
set -u
if [ "${1:-}" = --one ]; then   # one file: --one DIR FILE COMMAND...
  dir=$2 f=$3; shift 3
  log="$dir/$(basename "$f").log"
  t0=$(date +%s)
  "$@" "$f" >"$log" 2>&1
  rc=$?
  sum=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
  echo "$f: $(($(date +%s) - t0)) s, exit $rc, ${sum:-no summary line}" >"$log.line"
  [ "$rc" -eq 0 ] && [ -n "$sum" ] || cat "$log"
  exit 0
fi
jobs=$1; shift
cd "$(dirname "$0")/.." || exit 1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
ls -S spec/*_spec*.lua | xargs -P "$jobs" -I{} sh tools/each-spec.sh --one "$dir" {} "$@"
cat "$dir"/*.line
# "spec/F: T s, exit RC, N passed, N failed[, N skipped]"
awk '
  { if ($7 == "passed,") { p += $6; f += $8 } else f += 1 }
  $11 == "skipped" { k += $10 }
  $5 != "0," { bad = 1 }
  END {
    printf "%d passed, %d failed%s\n", p, f, k ? sprintf(", %d skipped", k) : ""
    exit (bad || f) ? 1 : 0
  }
' "$dir"/*.line
