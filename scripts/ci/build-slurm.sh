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
#   HPCFORGE_SLURM_GIT=DIR scripts/ci/build-slurm.sh   # no tarball: a clone of SchedMD/slurm at the pinned commit
#
# Where no shared/ tarball exists (the GitHub workflow, whose shared folder is fetched file by file), the source is a
# clone of https://github.com/SchedMD/slurm at tag slurm-26-05-3-1: its HEAD must be COMMIT, the commit the shared
# tarball was made from (`git archive` writes it into the tarball's pax header; tests/scripts/ci/test_build_slurm.py checks the
# two agree), and the build goes to the same cache prefix as the tarball's.
set -euo pipefail

VERSION=26.05.3
TAG=slurm-26-05-3-1
COMMIT=56fe867884038ba2074bd414075b60c2fb1d68bb
SHA256=d51a0896d270dda7480b41626a102a5490c66d2fb8a7426f1358a3543e947bf0
here="$(cd "$(dirname "$0")/../.." && pwd)"
shared="${HPCFORGE_SHARED:-$here/../shared}"
tarball="$shared/slurm/slurm-$VERSION.tar.bz2"
readme="$shared/slurm/README.md"
cache="${HPCFORGE_CACHE:-/var/cache/hpcforge}"

say() { echo "build-slurm: $*" >&2; }
die() { say "error: $*"; exit 1; }

git_source="${HPCFORGE_SLURM_GIT:-}"
if [ -f "$tarball" ]; then
  [ -f "$readme" ] || die "no $readme to check the tarball's sha256 against"
  # The README's table row for the tarball carries its sha256 (64 hex digits) in the last column.
  expected="$(grep -F "\`slurm-$VERSION.tar.bz2\`" "$readme" | grep -oE '\b[0-9a-f]{64}\b' | head -n1 || true)"
  [ -n "$expected" ] || die "$readme lists no sha256 for slurm-$VERSION.tar.bz2"
  actual="$(sha256sum "$tarball" | cut -d' ' -f1)"
  [ "$actual" = "$expected" ] || die "sha256 of $tarball is $actual, $readme says $expected"
  key="$actual"
  git_source=""
elif [ -n "$git_source" ]; then
  head="$(git -C "$git_source" rev-parse HEAD 2>/dev/null || true)"
  [ "$head" = "$COMMIT" ] || die "$git_source is at '${head:-no git checkout}', not $COMMIT ($TAG)"
  key="$SHA256"  # the tarball archived from COMMIT (tests/scripts/ci/test_build_slurm.py: the pins agree with ../shared)
else
  die "no tarball at $tarball (set HPCFORGE_SHARED to the shared/ folder, or HPCFORGE_SLURM_GIT to a clone at $TAG)"
fi

prefix="$cache/slurm-$key"
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
if [ -n "$git_source" ]; then
  git -C "$git_source" archive --prefix="slurm-$VERSION/" HEAD | tar x -C "$build"
else
  tar xjf "$tarball" -C "$build"
fi
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
