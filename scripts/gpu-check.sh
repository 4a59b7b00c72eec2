#!/usr/bin/env bash
# scripts/gpu-check.sh — the one prepared check for a real GPU (an H200, sm_90).
#
# Steps, each under its own timeout inside one overall deadline (default 470 s, under the
# 8 minutes a device run may take), later steps keeping a reserve so a slow build cannot
# starve them of all time:
#   0. deps       unpack .gpu-deps/*.deb (scripts/gpu-deps.sh) into a private prefix when the
#                 system lacks ember's libraries (the device image has no Catch2, JSON,
#                 CLI11, Gloo, zlib headers); never into /
#   1. configure  CUDA build for sm_90 only (one architecture: the fastest nvcc build)
#   2. build      everything: library, tests, benchmarks (-j$(nproc))
#   3. ctest      the whole suite; the CUDA tests that skip on a machine without a GPU run
#   4. bench      cuda_kernels_bench: ember's kernels vs cuBLAS and cudaMemcpy
#   5. ember-bench --quick on the CPU and the GPU (JSON/CSV/Markdown into $OUT or the build)
# and prints ONE summary table at the very end: step times, tests passed/failed/skipped, and
# each kernel's GFLOP/s or GB/s against its peer with the ratio. With $OUT set (the device
# tool's result folder) the summary and the logs are copied there.
#
# Usage: scripts/gpu-check.sh [options] [BUILD_DIR]        (default BUILD_DIR: build-gpu)
#   --deps DIR      the .deb folder (default .gpu-deps; used when present and needed)
#   --use-deps      always use the .debs, even when the system has the libraries
#   --only-deps     ... and make CMake ignore the system prefixes (simulates the device
#                   image on a machine that has the packages installed; implies --use-deps)
#   --no-deps       never use the .debs
#   --allow-no-gpu  a machine without a GPU is not a failure (GPU tests then skip, the
#                   benchmarks say "no GPU"); for trying the flow on a CPU-only machine
#   --jobs N        build and ctest parallelism (default: nproc)
#   --budget S      overall deadline in seconds (default 470; a larger one scales every
#                   step's cap and reserve in proportion)
#   --arch LIST     CMAKE_CUDA_ARCHITECTURES (default 90)
#   --ccache        compile through ccache (when installed)
# Device tool: run(command="bash scripts/gpu-check.sh", carry=[".gpu-deps"], timeout_s=540).
# Docs: docs/cuda.md ("The GPU check").
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
START=$(date +%s)

BUILD=build-gpu
DEPS_DIR=.gpu-deps
deps_mode=auto
allow_no_gpu=0
JOBS=$(nproc 2>/dev/null || echo 8)
BUDGET=470
ARCH=90
use_ccache=0
while [ $# -gt 0 ]; do
  case "$1" in
    --deps) DEPS_DIR=$2; shift ;;
    --use-deps) deps_mode=use ;;
    --only-deps) deps_mode=only ;;
    --no-deps) deps_mode=none ;;
    --allow-no-gpu) allow_no_gpu=1 ;;
    --jobs) JOBS=$2; shift ;;
    --budget) BUDGET=$2; shift ;;
    --arch) ARCH=$2; shift ;;
    --ccache) use_ccache=1 ;;
    -h|--help) sed -n 2,32p "$0"; exit 0 ;;
    -*) echo "gpu-check: unknown option $1" >&2; exit 2 ;;
    *) BUILD=$1 ;;
  esac
  shift
done
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
DEADLINE=$((START + BUDGET))
LOGS=$BUILD/gpu-check-logs
mkdir -p "$LOGS"
status=0
declare -a STEP_LINES=()

now() { date +%s; }
# Step caps and reserves are sized for the default 470 s budget on 16 cores; a larger
# --budget (a slower machine: trying the flow here) scales them in proportion.
SCALE=$(( BUDGET > 470 ? BUDGET * 100 / 470 : 100 ))
# Seconds a step may take: at most CAP, leaving RESERVE seconds for the steps after it.
allowance() {
  local cap=$(($1 * SCALE / 100)) reserve=$(($2 * SCALE / 100)) left
  left=$((DEADLINE - $(now) - reserve))
  [ "$left" -lt "$cap" ] && cap=$left
  echo "$cap"
}
# run_step NAME CAP RESERVE LOGFILE command...  — runs under timeout, records the outcome.
run_step() {
  local name=$1 cap=$2 reserve=$3 log=$4
  shift 4
  local limit t0 rc outcome
  limit=$(allowance "$cap" "$reserve")
  if [ "$limit" -lt 5 ]; then
    STEP_LINES+=("$(printf '%-12s %-9s %5s   (no time left in the %ss budget)' "$name" skipped - "$BUDGET")")
    status=1
    return 99
  fi
  echo "== gpu-check: $name (timeout ${limit}s) $(date -u +%H:%M:%S)"
  t0=$(now)
  timeout --kill-after=5 "$limit" "$@" > "$log" 2>&1
  rc=$?
  case $rc in
    0) outcome=ok ;;
    124|137) outcome=TIMEOUT; status=1 ;;
    *) outcome="FAILED($rc)"; status=1 ;;
  esac
  STEP_LINES+=("$(printf '%-12s %-9s %4ss   log: %s' "$name" "$outcome" $(($(now) - t0)) "${log#"$ROOT"/}")")
  return $rc
}

# ---------------------------------------------------------------- 0. dependencies
have_system_deps() {
  # The device image lacks all of these at once; checking two is enough to tell.
  [ -f /usr/lib/cmake/Catch2/Catch2Config.cmake ] || [ -f /usr/local/lib/cmake/Catch2/Catch2Config.cmake ] || return 1
  [ -f /usr/share/cmake/Gloo/GlooConfig.cmake ] || [ -f /usr/local/share/cmake/Gloo/GlooConfig.cmake ] || return 1
}
PREFIX=""
CMAKE_EXTRA=()
unpack_deps() {
  local root=$BUILD/deps-root debs=("$DEPS_DIR"/*.deb)
  [ -e "${debs[0]}" ] || { echo "gpu-check: no .deb files in $DEPS_DIR (run scripts/gpu-deps.sh here first)"; return 1; }
  rm -rf "$root"
  mkdir -p "$root"
  for deb in "${debs[@]}"; do
    if command -v dpkg-deb > /dev/null; then
      dpkg-deb -x "$deb" "$root" || return 1
    else  # a .deb is an ar archive holding data.tar.*
      (tmp=$(mktemp -d) && cd "$tmp" && ar x "$ROOT/$deb" && tar -xf data.tar.* -C "$root" && rm -rf "$tmp") || return 1
    fi
  done
  # Debian's Gloo export names its library by absolute path (/usr/lib/libgloo.so.0.5.0):
  # make it relative to the prefix, as every other package's export already is.
  sed -i 's|"/usr/lib/libgloo|"${_IMPORT_PREFIX}/lib/libgloo|g' "$root"/usr/share/cmake/Gloo/GlooTargets-*.cmake
  # Absolute symlinks (zlib's libz.so -> /lib/x86_64-linux-gnu/libz.so.1.2.13) would leave
  # the prefix: re-aim them inside it.
  find "$root" -type l | while read -r link; do
    target=$(readlink "$link")
    case "$target" in /*) [ -e "$root$target" ] && ln -sfn "$root$target" "$link" ;; esac
  done
  PREFIX=$root/usr
  local arch_dir=x86_64-linux-gnu blas=$PREFIX/lib/x86_64-linux-gnu/openblas-pthread
  export CMAKE_PREFIX_PATH="$PREFIX${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"  # nested configures (install test) too
  export LD_LIBRARY_PATH="$PREFIX/lib:$PREFIX/lib/$arch_dir:$root/lib/$arch_dir:$blas${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export LIBRARY_PATH="$PREFIX/lib/$arch_dir:$PREFIX/lib${LIBRARY_PATH:+:$LIBRARY_PATH}"
  CMAKE_EXTRA+=("-DCMAKE_PREFIX_PATH=$PREFIX")
  if [ -f "$blas/libopenblas.so" ]; then  # Debian selects it with update-alternatives, which dpkg -x skips
    CMAKE_EXTRA+=("-DEMBER_OPENBLAS_LIBRARY=$blas/libopenblas.so" "-DEMBER_OPENBLAS_INCLUDE_DIR=$PREFIX/include/$arch_dir/openblas-pthread"
                  "-DEMBER_BENCH_OPENBLAS=$blas/libopenblas.so" "-DEMBER_BENCH_CBLAS_INCLUDE=$PREFIX/include/$arch_dir/openblas-pthread")
  fi
  echo "gpu-check: $(ls "$DEPS_DIR"/*.deb | wc -l) packages unpacked into ${root#"$ROOT"/}"
}
want_deps=0
case $deps_mode in
  use|only) want_deps=1 ;;
  auto) have_system_deps || want_deps=1 ;;
esac
if [ $want_deps = 1 ]; then
  # In this shell, not under `timeout`: it exports the prefix's paths for the later steps.
  echo "== gpu-check: deps ($DEPS_DIR) $(date -u +%H:%M:%S)"
  t0=$(now)
  if unpack_deps > "$LOGS/deps.log" 2>&1; then outcome=ok; else outcome=FAILED; status=1; fi
  STEP_LINES+=("$(printf '%-12s %-9s %4ss   log: %s' deps "$outcome" $(($(now) - t0)) "${LOGS#"$ROOT"/}/deps.log")")
  tail -2 "$LOGS/deps.log"
  if [ $deps_mode = only ]; then
    # Only the prefix (and the CUDA toolkit, found from nvcc) may satisfy find_package and
    # find_library: what the device image offers. Switching off the environment's paths
    # also hides PATH from find_program, so the tools are named explicitly and PATH is
    # handed back to find_program alone (CMAKE_PROGRAM_PATH).
    CMAKE_EXTRA+=(-DCMAKE_FIND_USE_CMAKE_SYSTEM_PATH=OFF -DCMAKE_FIND_USE_SYSTEM_ENVIRONMENT_PATH=OFF
                  "-DCMAKE_PROGRAM_PATH=${PATH//:/;}" "-DCMAKE_MAKE_PROGRAM=$(command -v ninja)"
                  "-DCMAKE_CXX_COMPILER=$(command -v c++ || command -v g++)")
  fi
fi

# ---------------------------------------------------------------- GPU
GPU_NAME="(none)"
if command -v nvidia-smi > /dev/null && timeout 20 nvidia-smi -L > "$LOGS/nvidia-smi.log" 2>&1; then
  GPU_NAME=$(timeout 20 nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | head -1)
fi
echo "== gpu-check: GPU: $GPU_NAME, $JOBS jobs, budget ${BUDGET}s, build ${BUILD#"$ROOT"/}"
if [ "$GPU_NAME" = "(none)" ] && [ $allow_no_gpu = 0 ]; then
  echo "gpu-check: no GPU visible (nvidia-smi); continuing, but the check counts as failed (--allow-no-gpu to accept)"
  status=1
fi

# ---------------------------------------------------------------- 1-2. configure + build
LAUNCHER=()
if [ $use_ccache = 1 ] && command -v ccache > /dev/null; then
  LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
built=0
if run_step configure 90 300 "$LOGS/configure.log" cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
     -DEMBER_CUDA=ON "-DCMAKE_CUDA_ARCHITECTURES=$ARCH" "${LAUNCHER[@]}" "${CMAKE_EXTRA[@]}"; then
  # Reserve: ctest 60 s + benchmarks 40 s + ember-bench 40 s + the summary.
  run_step build 330 150 "$LOGS/build.log" cmake --build "$BUILD" -j"$JOBS" && built=1
  [ $built = 1 ] || grep -E "error|FAILED" "$LOGS/build.log" | head -20
else
  tail -20 "$LOGS/configure.log"
fi

# ---------------------------------------------------------------- 3. tests
if [ $built = 1 ]; then
  run_step ctest 200 90 "$LOGS/ctest.log" ctest --test-dir "$BUILD" -j"$JOBS" --output-on-failure --timeout 120
  grep -E "\*\*\*Failed|\*\*\*Timeout|\*\*\*Exception|Not Run" "$LOGS/ctest.log" | head -20
fi

# ---------------------------------------------------------------- 4-5. benchmarks
BENCH_OUT=${OUT:-$BUILD}
if [ $built = 1 ]; then
  run_step bench 90 50 "$LOGS/bench.log" "$BUILD/bin/cuda_kernels_bench" --quick --tsv "$LOGS/bench.tsv"
  run_step ember-bench 120 10 "$LOGS/ember-bench.log" "$BUILD/bin/ember-bench" --quick --device all \
    --json "$BENCH_OUT/bench.json" --csv "$BENCH_OUT/bench.csv"
  if [ -f "$BENCH_OUT/bench.json" ] && [ "$(allowance 30 5)" -ge 5 ]; then  # Markdown for docs/benchmarks.md
    timeout "$(allowance 30 5)" python3 benchmarks/plot.py "$BENCH_OUT/bench.json" --markdown "$BENCH_OUT/bench.md" \
      --no-charts > "$LOGS/plot.log" 2>&1 || true
  fi
fi

# ---------------------------------------------------------------- summary (printed last)
summary() {
  local passed=0 failed=0 skipped=0 total=0 line
  if [ -f "$LOGS/ctest.log" ]; then
    # CTest's per-test lines: "  12/345 Test  #12: name ....   Passed    0.01 sec" (or ***Failed ...)
    passed=$(grep -cE "^ *[0-9]+/[0-9]+ Test +#[0-9]+: .* Passed +[0-9.]+ sec" "$LOGS/ctest.log")
    skipped=$(grep -cE "^ *[0-9]+/[0-9]+ Test +#[0-9]+: .*\*\*\*Skipped" "$LOGS/ctest.log")
    failed=$(grep -cE "^ *[0-9]+/[0-9]+ Test +#[0-9]+: .*(\*\*\*Failed|\*\*\*Timeout|\*\*\*Exception|\*\*\*Not Run|Not Run)" "$LOGS/ctest.log")
    total=$(sed -nE 's/.*tests failed out of ([0-9]+).*/\1/p' "$LOGS/ctest.log" | tail -1)
  fi
  echo
  echo "==================================== gpu-check summary ===================================="
  local deps_label="system packages"
  [ -n "$PREFIX" ] && deps_label="unpacked .debs in ${PREFIX#"$ROOT"/} (mode: $deps_mode)"
  echo "GPU: $GPU_NAME | host: $(nproc) cores | CUDA arch $ARCH | deps: $deps_label"
  echo "step         outcome   time"
  for line in "${STEP_LINES[@]}"; do echo "$line"; done
  echo "total        $(( $(now) - START ))s of ${BUDGET}s"
  echo
  echo "tests: ${passed} passed, ${failed} failed, ${skipped} skipped (CTest total ${total:-?})"
  if [ "$skipped" -gt 0 ]; then
    grep -E "\*\*\*Skipped" "$LOGS/ctest.log" | sed -E 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: (.*[^. ]) *\.*\*\*\*Skipped.*/  skipped: \1/' | head -8
    [ "$skipped" -gt 8 ] && echo "  ... ($skipped in all; see ${LOGS#"$ROOT"/}/ctest.log)"
  fi
  echo
  if [ -s "$LOGS/bench.tsv" ]; then
    printf '%-44s %11s %-8s %-10s %11s %7s\n' kernel ember unit peer 'peer value' ratio
    awk -F'\t' '{ ratio = ($5 > 0) ? 100 * $2 / $5 : 0;
                  printf "%-44s %11.1f %-8s %-10s %11.1f %6.1f%%\n", $1, $2, $3, $4, $5, ratio }' "$LOGS/bench.tsv"
  else
    echo "kernels: not measured ($( [ "$GPU_NAME" = "(none)" ] && echo "no GPU" || echo "benchmark did not run"))"
  fi
  [ -f "$BENCH_OUT/bench.md" ] && echo "ember-bench tables: ${BENCH_OUT#"$ROOT"/}/bench.md"
  echo "status: $([ $status = 0 ] && echo PASS || echo FAIL)"
}
summary > "$LOGS/summary.txt"
if [ -n "${OUT:-}" ] && [ -d "${OUT:-}" ]; then
  mkdir -p "$OUT/gpu-check-logs"
  for f in "$LOGS"/*.log "$LOGS"/*.tsv "$LOGS"/summary.txt; do
    [ -f "$f" ] && tail -c 400000 "$f" > "$OUT/gpu-check-logs/$(basename "$f")"
  done
fi
cat "$LOGS/summary.txt"
exit $status
