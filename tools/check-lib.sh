# Sourced by tools/check-*.sh: the project root as the working folder, a
# temporary folder removed on exit ($tmp, with $prefix inside it), and
# check "what" command... counting into $passed/$failed and showing the
# last $CHECK_TAIL lines of a failing command's output.
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
passed=0; failed=0
check() {
  what=$1; shift
  if out=$("$@" 2>&1); then passed=$((passed + 1))
  else failed=$((failed + 1)); echo "FAILED: $what"; echo "$out" | tail -n "${CHECK_TAIL:-20}"; fi
}
