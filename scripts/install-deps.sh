#!/usr/bin/env bash
# scripts/install-deps.sh — installs ember's Debian packages when any is missing.
# Used by `make run`, `make test` and CI. Needs root (or sudo) only when something is missing.
#   scripts/install-deps.sh        the packages to build, test and run ember
#   scripts/install-deps.sh fuzz   those and clang with libFuzzer (scripts/fuzz.sh)
set -euo pipefail

PACKAGES=(
  cmake ninja-build g++ make pkg-config
  catch2               # test framework (v2)
  libcli11-dev         # command line parsing for the `ember` CLI
  libgloo-dev          # CPU collectives for data parallelism
  nlohmann-json3-dev   # safetensors headers, JSON logs
  zlib1g-dev           # gzipped IDX files
  dataset-fashion-mnist  # the trainer's default data
  libopenblas-dev      # the CPU GEMM peer, linked only into benchmarks/
  libcairo2-dev        # `ember plot`: SVG and PNG curves (optional at build time)
  libprotobuf-dev protobuf-compiler  # `ember train --tensorboard`: Event messages (optional)
  libboost-dev         # --tensorboard: Boost.CRC's CRC32C (headers only; optional)
  wamerican            # /usr/share/dict/words: the GPT's default text corpus (--model gpt)
)

# libFuzzer and the sanitizer runtimes for clang: Debian's clang only recommends them.
FUZZ_PACKAGES=(clang libclang-rt-14-dev)
if [ "${1:-}" = "fuzz" ]; then
  PACKAGES+=("${FUZZ_PACKAGES[@]}")
elif [ $# -ne 0 ]; then
  echo "install-deps.sh: unknown group '$1' (known: fuzz)" >&2
  exit 2
fi

missing=()
for package in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
