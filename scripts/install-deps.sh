#!/usr/bin/env bash
# scripts/install-deps.sh — installs ember's Debian packages when any is missing.
# Used by `make run`, `make test` and CI. Needs root (or sudo) only when something is missing.
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
)

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
