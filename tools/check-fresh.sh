#!/bin/sh
# make check-fresh: the README's promise on a brand-new machine. Builds a
# throwaway minimal Debian bookworm (debootstrap --variant=minbase), installs
# only `make` in it, copies a clean `git archive HEAD` of this project (and
# ../shared beside it), then runs `make test` and `make demo` inside with
# chroot. Fails when either fails the first time. Needs root.
#
# The mirror is the machine's own (apt sources), never a hard-coded host.
# The debootstrap tarball is cached outside the clone (ND_FRESH_CACHE).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
cache=${ND_FRESH_CACHE:-/var/cache/nd-check-fresh}
suite=bookworm

die() { echo "check-fresh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (debootstrap and chroot)"
command -v debootstrap >/dev/null || die "debootstrap is missing: apt-get install debootstrap"
command -v git >/dev/null || die "git is missing: apt-get install git"

# A Debian mirror from apt's sources: deb822 .sources files (these
# machines), else the classic sources.list. Each candidate is printed with a
# rank: 1 when its suites name $suite itself, 2 for another main suite (not
# "-security", "-updates"); disabled entries and deb-src only are skipped.
mirror_from_sources() {
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk -v want="$suite" 'BEGIN { RS = ""; FS = "\n" }
      { types = ""; uris = ""; suites = ""; enabled = "yes"
        for (i = 1; i <= NF; i++) {
          line = $i; if (line ~ /^[ \t]*#/) continue
          low = tolower(line)
          if (low ~ /^types:/) types = substr(line, 7)
          else if (low ~ /^uris:/) uris = substr(line, 6)
          else if (low ~ /^suites:/) suites = substr(line, 8)
          else if (low ~ /^enabled:/) enabled = tolower(substr(line, 9))
        }
        if (enabled ~ /no/ || types !~ /(^|[ \t])deb([ \t]|$)/) next
        n = split(suites, s, /[ \t]+/); rank = 0
        for (i = 1; i <= n; i++) {
          if (s[i] == want) rank = 1
          else if (s[i] != "" && s[i] !~ /-/ && rank == 0) rank = 2
        }
        if (!rank) next
        m = split(uris, u, /[ \t]+/)
        for (i = 1; i <= m; i++) if (u[i] != "") { print rank, u[i]; break }
      }' "$f"
  done
  if [ -f /etc/apt/sources.list ]; then
    awk -v want="$suite" '$1 == "deb" {
        i = 2; if ($2 ~ /^\[/) { while (i < NF && $i !~ /\]$/) i++; i++ }
        if ($(i + 1) == want) print 1, $i; else if ($(i + 1) !~ /-/) print 2, $i
      }' /etc/apt/sources.list
  fi
}
mirror=$(mirror_from_sources | sort -s -k1,1n | head -n 1 | cut -d" " -f2)
[ -n "$mirror" ] || die "no Debian mirror found in /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list"
echo "check-fresh: mirror $mirror"

root=$(mktemp -d "${TMPDIR:-/var/tmp}/nd-fresh.XXXXXX")
chmod 755 "$root"   # apt's _apt user must traverse the new /
cleanup() {
  status=$?
  # proc first; never delete while anything is still mounted below root
  if mountpoint -q "$root/proc" 2>/dev/null; then umount "$root/proc" || umount -l "$root/proc"; fi
  if grep -q " $root/" /proc/mounts; then
    echo "check-fresh: still mounted under $root, left in place" >&2
  else
    rm -rf --one-file-system "$root"
  fi
  exit $status
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

tarball="$cache/$suite-minbase-$(dpkg --print-architecture).tgz"
if [ ! -s "$tarball" ]; then
  mkdir -p "$cache"
  echo "check-fresh: caching the debootstrap tarball in $tarball"
  tmpdir=$(mktemp -d "${TMPDIR:-/var/tmp}/nd-fresh-tgz.XXXXXX")
  debootstrap --variant=minbase --make-tarball="$tarball.part" "$suite" "$tmpdir" "$mirror" \
    > "$cache/make-tarball.log" 2>&1 || { rm -rf "$tmpdir"; tail -n 20 "$cache/make-tarball.log"; die "debootstrap --make-tarball failed"; }
  rm -rf "$tmpdir"
  mv "$tarball.part" "$tarball"
fi
echo "check-fresh: debootstrap --variant=minbase $suite into $root"
debootstrap --variant=minbase --unpack-tarball="$tarball" "$suite" "$root" "$mirror" \
  > "$root.log" 2>&1 || { tail -n 20 "$root.log"; rm -f "$root.log"; die "debootstrap failed"; }
rm -f "$root.log"

cp -L /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"

# A clean export of what is committed, and the contract folder beside it.
mkdir -p "$root/work/nd"
git -C "$here" archive HEAD | tar -x -C "$root/work/nd"
if [ -d "$here/../shared" ]; then cp -rL "$here/../shared" "$root/work/shared"
else echo "check-fresh: no ../shared beside the project; continuing without it"; fi

inside() {
  chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    DEBIAN_FRONTEND=noninteractive /bin/sh -c "$1"
}
echo "check-fresh: apt-get install make (the only package installed by hand)"
inside "apt-get update -q >/dev/null && apt-get install -y -q make >/dev/null" || die "apt-get install make failed"
echo "check-fresh: make test (first time)"
inside "cd /work/nd && make test" || die "make test failed the first time on a fresh $suite"
echo "check-fresh: make demo (first time)"
inside "cd /work/nd && make demo" >"$root/demo.log" 2>&1 || { tail -n 30 "$root/demo.log"; die "make demo failed the first time on a fresh $suite"; }
tail -n 3 "$root/demo.log"
echo "check-fresh: make test and make demo passed the first time on a fresh $suite"
