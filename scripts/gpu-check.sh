#!/usr/bin/env bash
# scripts/gpu-check.sh — the one prepared check for a real GPU (an H200, sm_90).
#
# Steps, each under its own timeout inside one overall deadline (default 340 s: the whole
# script stays under 6 minutes on 16 cores, so a second run still fits in 15 minutes of
# device time), later steps keeping a reserve so a slow build cannot starve them of time.
# A failing step never stops the check: whatever was built is run, and the summary is
# printed at the end — also after a failure, and on SIGTERM/SIGINT.
#   0. deps       unpack .gpu-deps/*.deb (scripts/gpu-deps.sh) into a private prefix when the
#                 system lacks ember's libraries (the device image has no Catch2, JSON,
#                 CLI11, Gloo, zlib headers); never into /
#   1. configure  CUDA build for sm_90 only (CMAKE_CUDA_ARCHITECTURES=90: one architecture,
#                 the fastest nvcc build); notes whether the NCCL backend is ON or OFF (why)
#   2. build      everything: library, tests, benchmarks (-j$(nproc)), with `-k 0`: one
#                 target that fails to compile does not stop the others (Ninja otherwise
#                 stops at the first error and nothing would run)
#   3. ctest      every test whose binary was built (the rest are listed "not built"), with
#                 CUDA_LAUNCH_BLOCKING=1 so a failing kernel is reported at its own launch;
#                 not the CPU-only re-runs CI makes (EMBER_KERNELS=reference suites, docs)
#   4. sanitizers compute-sanitizer memcheck and racecheck (then initcheck and synccheck
#                 when time is left) on the GPU op tests (ember_cuda_tests "[gpu]~[large]";
#                 racecheck also without "[gradcheck]"), each under its own timeout
#   5. bench      cuda_kernels_bench: ember's kernels vs cuBLAS and cudaMemcpy
#   6. ember-bench --quick on the GPU (JSON/CSV/Markdown into $OUT or the build)
# and prints ONE summary table at the very end: step times, NCCL backend ON/OFF, tests
# passed/failed/skipped/not built, each sanitizer's verdict, and each kernel's GFLOP/s or
# GB/s against its peer with the ratio. With $OUT set (the device tool's result folder) the
# summary (summary.txt) and the logs (gpu-check-logs.tar.gz: the tool returns at most 8 files) go there.
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
#   --budget S      overall deadline in seconds (default 340; a larger one scales every
#                   step's cap and reserve in proportion)
#   --arch LIST     CMAKE_CUDA_ARCHITECTURES (default 90)
#   --ccache        compile through ccache (when installed)
#   --dry-run       print each step's command instead of running it (then the summary)
# Device tool: run(command="bash scripts/gpu-check.sh", carry=[".gpu-deps"], timeout_s=420).
# Its logic runs without a GPU in tests/scripts/test_gpu_check.sh (stub cmake, ctest,
# nvidia-smi and compute-sanitizer; a build that fails half way).
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
BUDGET=340
ARCH=90
use_ccache=0
dry_run=0
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
    --dry-run) dry_run=1 ;;
    -h|--help) sed -n 2,48p "$0"; exit 0 ;;
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
# What the summary reports, filled in by the steps (declared here: a signal may end any step).
declare -a STEP_LINES=() NOT_BUILT=() SANITIZER_LINES=()
NCCL_STATUS="unknown (configure did not run)"
GPU_NAME="(none)"
PREFIX=""
BENCH_OUT=${OUT:-$BUILD}
# Stopped from outside (the device tool's timeout sends SIGTERM first): the summary of what
# ran so far is still printed (finish, at the end of this file).
CHILD=""
on_signal() {
  trap - TERM INT
  [ -n "$CHILD" ] && kill -TERM "$CHILD" 2> /dev/null  # the step's `timeout`, which stops its command
  STEP_LINES+=("$(printf '%-12s %-9s' stopped "SIG$1")")
  status=1
  finish
}
trap 'on_signal TERM' TERM
trap 'on_signal INT' INT

now() { date +%s; }
# Step caps and reserves are sized for the default 340 s budget on 16 cores; a larger
# --budget (a slower machine: trying the flow here) scales them in proportion.
SCALE=$(( BUDGET > 340 ? BUDGET * 100 / 340 : 100 ))
# Seconds a step may take: at most CAP, leaving RESERVE seconds for the steps after it.
allowance() {
  local cap=$(($1 * SCALE / 100)) reserve=$(($2 * SCALE / 100)) left
  left=$((DEADLINE - $(now) - reserve))
  [ "$left" -lt "$cap" ] && cap=$left
  echo "$cap"
}
# run_step NAME CAP RESERVE LOGFILE command...  — runs under timeout, records the outcome.
# OPTIONAL=1 before the call: a step skipped for want of time does not fail the check.
run_step() {
  local name=$1 cap=$2 reserve=$3 log=$4
  shift 4
  local limit t0 rc outcome
  limit=$(allowance "$cap" "$reserve")
  if [ "$limit" -lt 5 ]; then
    STEP_LINES+=("$(printf '%-12s %-9s %5s   (no time left in the %ss budget)' "$name" skipped - "$BUDGET")")
    [ "${OPTIONAL:-0}" = 1 ] || status=1
    return 99
  fi
  echo "== gpu-check: $name (timeout ${limit}s) $(date -u +%H:%M:%S)"
  t0=$(now)
  if [ $dry_run = 1 ]; then
    echo "would run: $*" | tee "$log"
    rc=0
  else
    # In the background and waited for: `wait` returns at once when a signal arrives, so
    # on_signal can print the summary now rather than when the step ends.
    timeout --kill-after=5 "$limit" "$@" > "$log" 2>&1 &
    CHILD=$!
    wait $CHILD
    rc=$?
    CHILD=""
  fi
  case $rc in
    0) outcome=ok ;;
    124|137) outcome=TIMEOUT; status=1 ;;
    *) outcome="FAILED($rc)"; status=1 ;;
  esac
  STEP_LINES+=("$(printf '%-12s %-9s %4ss   log: %s' "$name" "$outcome" $(($(now) - t0)) "${log#"$ROOT"/}")")
  return $rc
}

# ---------------------------------------------------------------- summary (printed last)
# Defined before the steps: on_signal may need it during any of them.
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
  echo "NCCL backend $NCCL_STATUS"
  echo "step         outcome   time"
  for line in "${STEP_LINES[@]}"; do echo "$line"; done
  echo "total        $(( $(now) - START ))s of ${BUDGET}s"
  echo
  echo "tests: ${passed} passed, ${failed} failed, ${skipped} skipped (CTest total ${total:-?})"
  [ ${#NOT_BUILT[@]} -gt 0 ] && echo "  not built (their tests did not run): ${NOT_BUILT[*]}"
  if [ ${#SANITIZER_LINES[@]} -gt 0 ]; then
    echo "compute-sanitizer on ember_cuda_tests [gpu]~[large] (racecheck: also ~[gradcheck]):"
    for line in "${SANITIZER_LINES[@]}"; do echo "  $line"; done
  fi
  if [ "$skipped" -gt 0 ]; then
    grep -E "\*\*\*Skipped" "$LOGS/ctest.log" | sed -E 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: (.*[^. ]) *\.*\*\*\*Skipped.*/  skipped: \1/' | head -8
    [ "$skipped" -gt 8 ] && echo "  ... ($skipped in all; see ${LOGS#"$ROOT"/}/ctest.log)"
  fi
  echo
  if [ -s "$LOGS/bench.tsv" ]; then
    printf '%-50s %11s %-8s %-10s %11s %7s\n' kernel ember unit peer 'peer value' ratio
    awk -F'\t' '{ ratio = ($5 > 0) ? 100 * $2 / $5 : 0;
                  printf "%-50s %11.1f %-8s %-10s %11.1f %6.1f%%\n", $1, $2, $3, $4, $5, ratio }' "$LOGS/bench.tsv"
  else
    echo "kernels: not measured ($( [ "$GPU_NAME" = "(none)" ] && echo "no GPU" || echo "benchmark did not run"))"
  fi
  [ -f "$BENCH_OUT/bench.md" ] && echo "ember-bench tables: ${BENCH_OUT#"$ROOT"/}/bench.md"
  echo "status: $([ $status = 0 ] && echo PASS || echo FAIL)"
}
# Writes the summary (and copies the logs into $OUT), prints it, and exits with the status.
finish() {
  summary > "$LOGS/summary.txt"
  if [ -n "${OUT:-}" ] && [ -d "${OUT:-}" ]; then
    # One archive: the device tool brings back at most 8 files (the first H200 run lost
    # the sanitizer logs to that limit).
    cp "$LOGS/summary.txt" "$OUT/summary.txt"
    tar -czf "$OUT/gpu-check-logs.tar.gz" -C "$LOGS" . 2> /dev/null
  fi
  cat "$LOGS/summary.txt"
  exit $status
}

# ---------------------------------------------------------------- 0. dependencies
have_system_deps() {
  # The device image lacks all of these at once; checking two is enough to tell.
  [ -f /usr/lib/cmake/Catch2/Catch2Config.cmake ] || [ -f /usr/local/lib/cmake/Catch2/Catch2Config.cmake ] || return 1
  [ -f /usr/share/cmake/Gloo/GlooConfig.cmake ] || [ -f /usr/local/share/cmake/Gloo/GlooConfig.cmake ] || return 1
}
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
# The test binaries one layer each (tests/CMakeLists.txt); which of them the build produced.
TEST_BINARIES=(ember_core_tests ember_autograd_tests ember_nn_tests ember_data_tests ember_distributed_tests
               ember_cuda_tests ember_conformance_tests ember_apps_tests)
# Whether BUILD/bin/NAME exists (a dry run pretends everything was built).
was_built() { [ $dry_run = 1 ] || [ -x "$BUILD/bin/$1" ]; }
configured=0
if run_step configure 60 270 "$LOGS/configure.log" cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
     -DEMBER_CUDA=ON "-DCMAKE_CUDA_ARCHITECTURES=$ARCH" "${LAUNCHER[@]}" "${CMAKE_EXTRA[@]}"; then
  configured=1
else
  tail -20 "$LOGS/configure.log"
fi
# "-- ember: NCCL backend: ON (/usr/lib/.../libnccl.so.2)" or "OFF (why)" (distributed/find_nccl.cmake).
NCCL_LINE=$(sed -nE 's/.*ember: NCCL backend: (.*)/\1/p' "$LOGS/configure.log" 2>/dev/null | tail -1)
[ -n "$NCCL_LINE" ] && NCCL_STATUS=$NCCL_LINE
if [ $configured = 1 ]; then
  # -k 0: keep going past a failed target; everything that can be built is. Reserve: ctest
  # 50 s + sanitizers 45 s + benchmarks 35 s.
  run_step build 200 130 "$LOGS/build.log" cmake --build "$BUILD" -j"$JOBS" -- -k 0 ||
    grep -E "error|FAILED" "$LOGS/build.log" | head -20
fi
for binary in "${TEST_BINARIES[@]}"; do was_built "$binary" || NOT_BUILT+=("$binary"); done

# ---------------------------------------------------------------- 3. tests
# Whatever built runs: CTest stands in "<target>_NOT_BUILT" for a test binary that is
# missing (Catch's test discovery); those are left out here and listed in the summary.
if [ $configured = 1 ] && [ ${#NOT_BUILT[@]} -lt ${#TEST_BINARIES[@]} ]; then
  # Left out here: the CPU-only re-runs that CI makes anyway (the suites again under
  # EMBER_KERNELS=reference, the docs' path checker, ember-bench --quick's own test: the
  # benchmark step below runs it on the GPU). The first H200 run spent its 70 s on them.
  run_step ctest 90 80 "$LOGS/ctest.log" env CUDA_LAUNCH_BLOCKING=1 \
    ctest --test-dir "$BUILD" -j"$JOBS" --output-on-failure --timeout 120 \
    -E "_NOT_BUILT$|^reference kernels: |^docs: |^benchmarks: "
  grep -E "\*\*\*Failed|\*\*\*Timeout|\*\*\*Exception|Not Run" "$LOGS/ctest.log" | head -20
fi

# ---------------------------------------------------------------- 4. compute-sanitizer
# The GPU op tests ("[gpu]": they launch ember's kernels on the device) under each tool;
# memcheck and racecheck always, initcheck and synccheck when the budget still has room.
SANITIZER=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer \
            /usr/local/cuda/compute-sanitizer/compute-sanitizer 2>/dev/null | head -1)
if [ $configured = 1 ] && was_built ember_cuda_tests; then
  if [ -z "$SANITIZER" ]; then
    SANITIZER_LINES+=("compute-sanitizer: not found (PATH, /usr/local/cuda/bin, /usr/local/cuda/compute-sanitizer)")
    status=1
  else
    for tool in memcheck racecheck initcheck synccheck; do
      case $tool in
        memcheck) cap=30; reserve=75; optional=0 ;;
        racecheck) cap=60; reserve=45; optional=0 ;;
        *) cap=20; reserve=45; optional=1 ;;
      esac
      # --report-api-errors no: some tests provoke API errors on purpose (a bad device
      # index, an oversized block); ember reports those itself. The tools look for memory
      # errors, races, uninitialised reads and bad barriers.
      # The GEMM of more than 65535 row tiles ([large]) is left out: under racecheck its
      # millions of shared-memory accesses alone outlast the step (first H200 run: > 40 s).
      # racecheck also skips gradcheck ([gradcheck]: thousands of launches of the kernels
      # the other tests run; the second H200 run spent its 70 s there).
      filter="[gpu]~[large]"
      [ "$tool" = racecheck ] && filter="[gpu]~[large]~[gradcheck]"
      OPTIONAL=$optional run_step "$tool" $cap $reserve "$LOGS/sanitizer-$tool.log" "$SANITIZER" --tool "$tool" \
        --error-exitcode 86 --report-api-errors no --print-limit 20 "$BUILD/bin/ember_cuda_tests" "$filter"
      verdict=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$LOGS/sanitizer-$tool.log" 2>/dev/null | tail -1)
      SANITIZER_LINES+=("$(printf '%-10s %s' "$tool" "${verdict:-(no verdict: see the step outcome above)}" |
                          sed 's/=========  *//')")
    done
  fi
fi

# ---------------------------------------------------------------- 5-6. benchmarks
if was_built cuda_kernels_bench; then
  run_step bench 30 25 "$LOGS/bench.log" "$BUILD/bin/cuda_kernels_bench" --quick --tsv "$LOGS/bench.tsv"
fi
if was_built ember-bench; then
  # The GPU figures only: the device machine's CPU is not ember's CPU target, and the
  # PyTorch peer's CPU settings alone outlasted the step in the first H200 run.
  run_step ember-bench 60 5 "$LOGS/ember-bench.log" "$BUILD/bin/ember-bench" --quick --device cuda \
    --json "$BENCH_OUT/bench.json" --csv "$BENCH_OUT/bench.csv"
fi
if [ $dry_run = 0 ]; then
  if [ -f "$BENCH_OUT/bench.json" ] && [ "$(allowance 30 5)" -ge 5 ]; then  # Markdown for docs/benchmarks.md
    timeout "$(allowance 30 5)" python3 benchmarks/plot.py "$BENCH_OUT/bench.json" --markdown "$BENCH_OUT/bench.md" \
      --no-charts > "$LOGS/plot.log" 2>&1 || true
  fi
fi

# ---------------------------------------------------------------- the end
finish
