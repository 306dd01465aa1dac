#!/usr/bin/env bash
# Build Slurm 26.05.3 (the release the Slinky images ship) from ../shared/slurm for the real-daemon tier,
# exactly as ../shared/slurm/README.md says, into a cache folder keyed by the tarball's sha256:
#
#   ${HPCFORGE_CACHE:-/var/cache/hpcforge}/slurm-<sha256 of slurm-26.05.3.tar.bz2>/{bin,sbin,lib}
#
# The build is skipped when that prefix already has an sbin/slurmctld that answers `slurm 26.05.3`.
# The tarball's sha256 is checked against the one README.md lists before anything is unpacked.
# The last line on stdout is the prefix (CI exports it as HPCFORGE_SLURM_PREFIX); progress goes to stderr.
#
#   scripts/ci/build-slurm.sh                 # ../shared, or $HPCFORGE_SHARED
#   HPCFORGE_CACHE=/tmp/cache scripts/ci/build-slurm.sh
set -euo pipefail

VERSION=26.05.3
here="$(cd "$(dirname "$0")/../.." && pwd)"
shared="${HPCFORGE_SHARED:-$here/../shared}"
tarball="$shared/slurm/slurm-$VERSION.tar.bz2"
readme="$shared/slurm/README.md"
cache="${HPCFORGE_CACHE:-/var/cache/hpcforge}"

say() { echo "build-slurm: $*" >&2; }
die() { say "error: $*"; exit 1; }

[ -f "$tarball" ] || die "no tarball at $tarball (set HPCFORGE_SHARED to the shared/ folder)"
[ -f "$readme" ] || die "no $readme to check the tarball's sha256 against"

# The README's table row for the tarball carries its sha256 (64 hex digits) in the last column.
expected="$(grep -F "\`slurm-$VERSION.tar.bz2\`" "$readme" | grep -oE '\b[0-9a-f]{64}\b' | head -n1 || true)"
[ -n "$expected" ] || die "$readme lists no sha256 for slurm-$VERSION.tar.bz2"
actual="$(sha256sum "$tarball" | cut -d' ' -f1)"
[ "$actual" = "$expected" ] || die "sha256 of $tarball is $actual, $readme says $expected"

prefix="$cache/slurm-$actual"
answers() { [ -x "$prefix/sbin/slurmctld" ] && [ "$("$prefix/sbin/slurmctld" -V 2>/dev/null)" = "slurm $VERSION" ]; }

if answers; then
  say "reusing $prefix ($("$prefix/sbin/slurmctld" -V))"
  echo "$prefix"
  exit 0
fi

mkdir -p "$cache"
build="$(mktemp -d "$cache/build-slurm.XXXXXX")"
trap 'rm -rf "$build"' EXIT
start=$(date +%s)
say "building slurm $VERSION into $prefix (a few minutes)"
tar xjf "$tarball" -C "$build"
(
  cd "$build/slurm-$VERSION"
  ./configure --prefix="$prefix" --sysconfdir="$prefix/etc" --with-mysql_config=/usr/bin --disable-debug >"$build/configure.log" 2>&1 \
    || { tail -n 40 "$build/configure.log" >&2; exit 1; }
  make -j"$(nproc)" >"$build/make.log" 2>&1 || { tail -n 60 "$build/make.log" >&2; exit 1; }
  make install >"$build/install.log" 2>&1 || { tail -n 40 "$build/install.log" >&2; exit 1; }
)
answers || die "$prefix/sbin/slurmctld -V does not print 'slurm $VERSION' after the build"
say "built $prefix in $(($(date +%s) - start)) s"
echo "$prefix"
