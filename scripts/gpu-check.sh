#!/usr/bin/env bash
# scripts/gpu-check.sh — the one prepared check for a real GPU (an H200, sm_90).
#
# 1. configures a CUDA build for sm_90 only (one architecture: fastest nvcc build),
# 2. builds everything (tests, benchmarks),
# 3. runs the whole test suite with CTest — the CUDA tests that report "skipped" on a
#    machine without a GPU really run here,
# 4. runs benchmarks/cuda_kernels_bench (ember's GEMM vs cuBLAS, elementwise, softmax,
#    sum, device-to-device copy bandwidth) and prints its summary table,
# 5. runs ember-bench --quick on the CPU and every GPU (JSON/CSV into $OUT or the build dir).
# Budget: well under 8 minutes on 16 cores; every step has its own timeout so a hang
# cannot eat the machine. Usage: scripts/gpu-check.sh [BUILD_DIR]   (default build-gpu)
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-gpu}
JOBS=$(nproc 2>/dev/null || echo 8)
status=0

echo "== gpu-check: $(date -u +%H:%M:%S) nvidia-smi"
timeout 20 nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv || echo "(nvidia-smi unavailable)"

echo "== gpu-check: configure (CUDA, sm_90)"
timeout 120 cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEMBER_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 > "$BUILD.configure.log" 2>&1 || { tail -30 "$BUILD.configure.log"; exit 1; }

echo "== gpu-check: build (-j$JOBS)"
timeout 300 cmake --build "$BUILD" -j"$JOBS" > "$BUILD.build.log" 2>&1 || { grep -E "error|FAILED" "$BUILD.build.log" | head -40; exit 1; }

echo "== gpu-check: CUDA tests first (verbose on failure)"
timeout 120 "$BUILD/bin/ember_cuda_tests" --durations no || status=1

echo "== gpu-check: whole suite"
timeout 240 ctest --test-dir "$BUILD" -j"$JOBS" --output-on-failure --timeout 120 > "$BUILD.ctest.log" 2>&1 || status=1
grep -E "tests passed|tests failed|Skipped|\*\*\*Failed|Not Run" "$BUILD.ctest.log" | tail -25

echo "== gpu-check: benchmark"
timeout 120 "$BUILD/bin/cuda_kernels_bench" || status=1

# ember-bench (issue 9): CPU and every GPU side by side with OpenBLAS, cuBLAS, cudaMemcpy and
# PyTorch (when this Python has it); the JSON/CSV land in $OUT (the device run's result folder)
# or next to the build. --quick keeps it to about a minute; charts only if matplotlib exists.
BENCH_OUT=${OUT:-$BUILD}
echo "== gpu-check: ember-bench --quick --device all (json: $BENCH_OUT/bench.json)"
timeout 180 "$BUILD/bin/ember-bench" --quick --device all --json "$BENCH_OUT/bench.json" \
  --csv "$BENCH_OUT/bench.csv" || status=1
if [ -f "$BENCH_OUT/bench.json" ]; then  # Markdown tables for docs/benchmarks.md's H200 section
  charts=--no-charts
  python3 -c 'import matplotlib' > /dev/null 2>&1 && charts=""
  timeout 60 python3 benchmarks/plot.py "$BENCH_OUT/bench.json" --markdown "$BENCH_OUT/bench.md" $charts \
    --out "$BENCH_OUT/bench-charts" --format png || true
fi

echo "== gpu-check: done at $(date -u +%H:%M:%S), status $status"
exit $status
