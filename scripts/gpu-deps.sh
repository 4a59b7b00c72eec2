#!/usr/bin/env bash
# scripts/gpu-deps.sh — fetch the Debian packages that scripts/gpu-check.sh needs on the GPU
# machine into .gpu-deps/ (git-ignored), here, where the package mirror is reachable.
#
# The device machine (an H200 lent by the `device` tool) has CUDA 13, CMake, ninja, g++ and
# Python, but not ember's library dependencies, and it cannot reach any registry. So this
# script downloads the .deb files (apt-get download: no installation, no root needed for
# the files themselves) and the device run carries the folder along (the tool's `carry`
# argument: ".gpu-deps"). gpu-check.sh unpacks them with `dpkg-deb -x` into a private
# prefix — never into / — and points CMake, the compiler and the loader there.
#
# Usage: scripts/gpu-deps.sh [--no-openblas] [DEST]     (default DEST: .gpu-deps)
# The set is about 15 MB with OpenBLAS (the CPU GEMM peer of ember-bench), 2.5 MB without.
# Architecture: amd64 (the device machine is x86-64). Debian 12 packages: glibc ≥ 2.34 and
# libstdc++ from GCC ≥ 12 on the target (Ubuntu 22.04 and later have both).
set -euo pipefail
cd "$(dirname "$0")/.."

with_openblas=1
DEST=.gpu-deps
for arg in "$@"; do
  case "$arg" in
    --no-openblas) with_openblas=0 ;;
    -h|--help) sed -n 2,17p "$0"; exit 0 ;;
    *) DEST=$arg ;;
  esac
done

if [ "$(dpkg --print-architecture)" != amd64 ]; then
  echo "gpu-deps: this machine is $(dpkg --print-architecture); the device machine needs amd64 packages" >&2
  exit 1
fi

PACKAGES=(
  catch2                       # Catch2 v2: headers, Catch2WithMain, Catch.cmake
  nlohmann-json3-dev           # JSON (headers only)
  libcli11-dev                 # CLI11 (headers only)
  libgloo-dev libgloo0         # Gloo headers + libgloo.so.0
  libhiredis0.14 libibverbs1   # libgloo.so.0's runtime dependencies ...
  libnl-3-200 libnl-route-3-200  # ... and libibverbs.so.1's
  zlib1g-dev zlib1g            # zlib.h + libz.so (the runtime too: the dev link points at it)
)
if [ "$with_openblas" = 1 ]; then
  # The CPU GEMM peer in cpu_bench and ember-bench (libopenblas.so + cblas.h) and its runtime.
  PACKAGES+=(libopenblas-pthread-dev libopenblas0-pthread libgfortran5 libquadmath0)
fi

mkdir -p "$DEST"
rm -f "$DEST"/*.deb "$DEST"/SHA256SUMS "$DEST"/MANIFEST
download() { (cd "$DEST" && apt-get download "${PACKAGES[@]}") ; }
if ! download > "$DEST/download.log" 2>&1; then
  echo "gpu-deps: apt-get download failed; refreshing the package lists and retrying"
  apt-get update -qq && download > "$DEST/download.log" 2>&1 || { cat "$DEST/download.log"; exit 1; }
fi

# Plain file names (no %, ~ or +): they travel through tools that may refuse odd characters.
for deb in "$DEST"/*.deb; do
  plain=$(basename "$deb" | sed -e 's/%3a/_/g' -e 's/[~+]/-/g')
  [ "$plain" = "$(basename "$deb")" ] || mv "$deb" "$DEST/$plain"
done
(cd "$DEST" && sha256sum ./*.deb > SHA256SUMS)
{
  echo "# .gpu-deps — Debian packages for scripts/gpu-check.sh on the device machine"
  echo "# fetched $(date -u +%Y-%m-%dT%H:%MZ) from $(. /etc/os-release && echo "$PRETTY_NAME") by scripts/gpu-deps.sh"
  for deb in "$DEST"/*.deb; do
    printf '%-60s %8d KiB\n' "$(basename "$deb")" $(( $(stat -c %s "$deb") / 1024 ))
  done
  printf '%-60s %8d KiB\n' "total" $(( $(cat "$DEST"/*.deb | wc -c) / 1024 ))
} > "$DEST/MANIFEST"
cat "$DEST/MANIFEST"
echo "gpu-deps: carry '$DEST' to the device machine (run tool: carry [\"$DEST\"])"
