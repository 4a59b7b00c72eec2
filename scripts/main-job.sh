#!/usr/bin/env bash
# scripts/main-job.sh — what `make run` runs after building.
# The CLI trainer on Fashion-MNIST when it is built (issue 6); until then the §2 tutorial.
set -euo pipefail
BUILD=${1:-build}
if [ -x "$BUILD/bin/ember" ]; then
  exec "$BUILD/bin/ember" train
fi
exec "$BUILD/bin/tutorial_02_tensors"
