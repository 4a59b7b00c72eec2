#!/usr/bin/env bash
# scripts/fuzz.sh — builds ember's libFuzzer harnesses (tests/fuzz/) with clang, ASan and
# UBSan, and runs each on its committed seed corpus for a bounded time.
#
#   scripts/fuzz.sh                 every harness for 45 s
#   scripts/fuzz.sh 60 csv idx      those two for 60 s each
#   scripts/fuzz.sh --build-only    build, run nothing
#
# Fails (exit 1) on any finding: a crash, a sanitizer report, a broken contract (the harness
# aborts with "FUZZ FINDING"), a timeout or an out-of-memory; the input that caused it is in
# $FUZZ_BUILD/fuzz-findings/ and is printed. New corpus entries go to $FUZZ_BUILD/fuzz-corpus/
# (never into the committed seeds). Environment: FUZZ_BUILD (default build-sanitize), FUZZ_JOBS
# (build parallelism, default nproc), FUZZ_ARGS (more libFuzzer flags, e.g. -runs=1000000),
# EMBER_FUZZ_KNOWN=1 (also run the API calls known to crash today: tests/fuzz/api_fuzzer.cpp).
set -euo pipefail
cd "$(dirname "$0")/.."

ALL=(safetensors idx idx_gzip csv checkpoint api)
build_only=0
if [ "${1:-}" = "--build-only" ]; then build_only=1; shift; fi
seconds=${1:-45}
shift || true
names=("$@")
[ ${#names[@]} -eq 0 ] && names=("${ALL[@]}")
case "$seconds" in ''|*[!0-9]*) echo "fuzz.sh: SECONDS must be a whole number, got '$seconds'" >&2; exit 2;; esac
build=${FUZZ_BUILD:-build-sanitize}

bash scripts/install-deps.sh fuzz
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
# One sanitized tree serves the fuzzers and the sanitized test suite (`make test-sanitize`
# configures it through this script): every library is compiled once, with clang, ASan, UBSan
# and the fuzzer's coverage counters. The libraries at -O1 (the suite runs about twice as fast
# as at -O0), the test files at -O0 (they are most of the compile time, and -O1 doubles it
# under the sanitizers); line tables for symbolised stack traces; assert() stays on (no
# NDEBUG); no benchmarks (timing code).
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -gline-tables-only" \
  -DCMAKE_C_FLAGS_RELEASE="-O1 -gline-tables-only" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DEMBER_CUDA=OFF -DEMBER_FUZZ=ON -DEMBER_BUILD_TESTS=ON -DEMBER_TEST_OPTIMIZATION=-O0 \
  -DEMBER_BUILD_BENCHMARKS=OFF "${launcher[@]}" >/dev/null
cmake --build "$build" -j "${FUZZ_JOBS:-$(nproc)}" --target ember_fuzzers
[ $build_only -eq 1 ] && exit 0

max_len() {
  case "$1" in
    api) echo 256 ;;
    csv|checkpoint) echo 2048 ;;
    *) echo 4096 ;;
  esac
}

# The API harness's known finding (tests/fuzz/api_fuzzer.cpp) does not fail a run unless
# EMBER_FUZZ_KNOWN=1: no leak checks (KNOWN-3: an in-place op on a saved non-leaf tensor
# makes a reference cycle through its graph, as in PyTorch). Every other report fails.
known_skipped() { [ "$1" = api ] && [ -z "${EMBER_FUZZ_KNOWN:-}" ]; }
extra_flags() { if known_skipped "$1"; then echo "-detect_leaks=0"; fi; }
asan_options() { if known_skipped "$1"; then echo "detect_leaks=0"; else echo "detect_leaks=1"; fi; }

failed=()
for name in "${names[@]}"; do
  binary="$build/bin/${name}_fuzzer"
  seeds="tests/fuzz/corpus/$name"
  [ -x "$binary" ] || { echo "fuzz.sh: no harness named '$name' (have: ${ALL[*]})" >&2; exit 2; }
  work="$build/fuzz-corpus/$name"
  findings="$build/fuzz-findings"
  log="$build/fuzz-logs/$name.log"
  mkdir -p "$work" "$findings" "$(dirname "$log")"
  echo "fuzz.sh: $name for ${seconds} s (log: $log)"
  status=0
  # shellcheck disable=SC2086  # FUZZ_ARGS is a list of flags
  ASAN_OPTIONS="$(asan_options "$name")${ASAN_OPTIONS:+:$ASAN_OPTIONS}" "$binary" -max_total_time="$seconds" -max_len="$(max_len "$name")" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$findings/$name-" $(extra_flags "$name") ${FUZZ_ARGS:-} "$work" "$seeds" >"$log" 2>&1 || status=$?
  grep -E '^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb)' "$log" | sed 's/^/  /' || true
  reports=$(grep -c "runtime error:" "$log" || true)
  if [ $status -ne 0 ] || [ "$reports" -gt 0 ]; then
    echo "fuzz.sh: FINDING in $name (exit $status):" >&2
    grep -E "FUZZ FINDING|ERROR: |runtime error:|Test unit written|SUMMARY" "$log" | head -20 >&2 || true
    failed+=("$name")
  fi
done
if [ ${#failed[@]} -ne 0 ]; then
  echo "fuzz.sh: findings in ${failed[*]} (inputs in $build/fuzz-findings/)" >&2
  exit 1
fi
echo "fuzz.sh: no findings in ${names[*]}"
