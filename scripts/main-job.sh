#!/usr/bin/env bash
# scripts/main-job.sh — what `make run` runs after building: ember's main job.
# Trains the default MLP (784-256-128-10, plain SGD, 20 epochs) on Fashion-MNIST with the
# `ember` CLI and ends with a saved model and its metrics (docs/cli.md):
#   BUILD/fashion-mnist.safetensors   the checkpoint (`ember eval --checkpoint ...` reads it)
#   BUILD/fashion-mnist.jsonl         the metrics log, one JSON object per line
set -euo pipefail
BUILD=${1:-build}
exec "$BUILD/bin/ember" train --save "$BUILD/fashion-mnist.safetensors" --log "$BUILD/fashion-mnist.jsonl"
