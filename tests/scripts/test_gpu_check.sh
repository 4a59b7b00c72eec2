#!/usr/bin/env bash
# tests/scripts/test_gpu_check.sh — scripts/gpu-check.sh's logic, without a GPU or a build.
#
# Stub cmake, ctest, nvidia-smi and compute-sanitizer (first on PATH) play a device run in
# which one target fails to compile: configure reports the NCCL backend, the build exits 1
# having produced only ember_cuda_tests and ember_core_tests, CTest has one failure, and
# racecheck finds hazards. The check must still run the tests and the sanitizers on what
# was built, pass -k 0 / CUDA_LAUNCH_BLOCKING=1 / sm_90, and print its summary with every
# verdict and FAIL. A second run is stopped by SIGTERM in the middle of the build: the
# summary must still be printed. Usage: test_gpu_check.sh SOURCE_DIR SCRATCH_DIR
set -uo pipefail
SOURCE=$1
WORK=$2
rm -rf "$WORK"
mkdir -p "$WORK/stubs"
CALLS=$WORK/calls.log
failures=0
expect() {  # expect WHAT FILE EXTENDED_REGEX
  if grep -qE -- "$3" "$2"; then echo "ok: $1"; else echo "FAILED: $1: no line matching '$3' in $2"; failures=$((failures + 1)); fi
}

cat > "$WORK/stubs/cmake" <<STUB
#!/usr/bin/env bash
echo "cmake \$*" >> "$CALLS"
case " \$* " in
  *" --build "*)
    build=\$2
    mkdir -p "\$build/bin"
    for t in ember_cuda_tests ember_core_tests; do printf '#!/bin/sh\necho ran \$0 "\$@"\n' > "\$build/bin/\$t"; chmod +x "\$build/bin/\$t"; done
    sleep "\${STUB_BUILD_SLEEP:-0}"
    echo "FAILED: tests/CMakeFiles/ember_apps_tests.dir/apps/test_cli.cpp.o"
    echo "test_cli.cpp:1:1: error: stub compile error"
    exit 1 ;;
  *) echo "-- ember: NCCL backend: ON (/opt/nccl/lib/libnccl.so.2)"; exit 0 ;;
esac
STUB
cat > "$WORK/stubs/ctest" <<STUB
#!/usr/bin/env bash
echo "CUDA_LAUNCH_BLOCKING=\${CUDA_LAUNCH_BLOCKING:-unset} ctest \$*" >> "$CALLS"
echo "1/2 Test  #1: cuda: a kernel ...........   Passed    0.01 sec"
echo "2/2 Test  #2: cuda: another kernel .....***Failed    0.02 sec"
echo "50% tests passed, 1 tests failed out of 2"
exit 8
STUB
cat > "$WORK/stubs/nvidia-smi" <<'STUB'
#!/bin/sh
case "$1" in -L) echo "GPU 0: NVIDIA H200 (UUID: GPU-stub)" ;; *) echo "NVIDIA H200, 143771 MiB, 580.00" ;; esac
STUB
cat > "$WORK/stubs/compute-sanitizer" <<STUB
#!/usr/bin/env bash
echo "compute-sanitizer \$*" >> "$CALLS"
if [ "\$2" = racecheck ]; then echo "========= RACECHECK SUMMARY: 2 hazards displayed (2 errors, 0 warnings)"; exit 86; fi
echo "========= ERROR SUMMARY: 0 errors"
STUB
chmod +x "$WORK/stubs"/*

# --- a run whose build fails half way
PATH="$WORK/stubs:$PATH" bash "$SOURCE/scripts/gpu-check.sh" --no-deps "$WORK/build" > "$WORK/run.log" 2>&1
code=$?
cat "$WORK/run.log"
if [ $code = 1 ]; then echo "ok: exit code 1"; else echo "FAILED: exit code $code, expected 1"; failures=$((failures + 1)); fi
expect "configure for sm_90 only" "$CALLS" "^cmake -S \. -B $WORK/build .*-DEMBER_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90( |$)"
expect "the build keeps going past a failed target" "$CALLS" "^cmake --build $WORK/build -j[0-9]+ -- -k 0$"
expect "ctest runs after the failed build, blocking launches, without NOT_BUILT stand-ins" "$CALLS" \
  "^CUDA_LAUNCH_BLOCKING=1 ctest --test-dir $WORK/build .*-E _NOT_BUILT\\\$\\|\\^reference kernels: \\|\\^docs: \\|\\^benchmarks: $"
for tool in memcheck racecheck initcheck synccheck; do
  filter='\[gpu\]~\[large\]'
  [ $tool = racecheck ] && filter='\[gpu\]~\[large\]~\[gradcheck\]'
  expect "compute-sanitizer $tool on the GPU op tests" "$CALLS" \
    "^compute-sanitizer --tool $tool --error-exitcode 86 .*$WORK/build/bin/ember_cuda_tests $filter$"
done
expect "summary: NCCL backend" "$WORK/run.log" "^NCCL backend ON \(/opt/nccl/lib/libnccl\.so\.2\)$"
expect "summary: the failed build" "$WORK/run.log" "^build +FAILED\(1\)"
expect "summary: the test counts" "$WORK/run.log" "^tests: 1 passed, 1 failed, 0 skipped \(CTest total 2\)$"
expect "summary: what was not built" "$WORK/run.log" "not built \(their tests did not run\): ember_autograd_tests .*ember_apps_tests$"
expect "summary: memcheck's verdict" "$WORK/run.log" "^  memcheck +ERROR SUMMARY: 0 errors$"
expect "summary: racecheck's verdict" "$WORK/run.log" "^  racecheck +RACECHECK SUMMARY: 2 hazards"
expect "summary: racecheck failed the step" "$WORK/run.log" "^racecheck +FAILED\(86\)"
expect "summary: the verdict" "$WORK/run.log" "^status: FAIL$"
if grep -q "^== gpu-check: bench" "$WORK/run.log"; then
  echo "FAILED: the benchmarks ran although they were not built"; failures=$((failures + 1))
else
  echo "ok: unbuilt benchmarks are not run"
fi

# --- a run stopped by SIGTERM during the build still prints its summary
: > "$CALLS"
STUB_BUILD_SLEEP=30 PATH="$WORK/stubs:$PATH" bash "$SOURCE/scripts/gpu-check.sh" --no-deps "$WORK/build2" \
  > "$WORK/stopped.log" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q -- "--build" "$CALLS" 2> /dev/null && break; sleep 0.1; done
started=$(date +%s)
kill -TERM $pid
wait $pid
code=$?
took=$(($(date +%s) - started))
cat "$WORK/stopped.log"
if [ $code = 1 ] && [ $took -lt 10 ]; then echo "ok: SIGTERM ends the check at once ($took s) with exit code 1"; else
  echo "FAILED: after SIGTERM: exit code $code after $took s"; failures=$((failures + 1)); fi
expect "summary after SIGTERM" "$WORK/stopped.log" "^stopped +SIGTERM"
expect "verdict after SIGTERM" "$WORK/stopped.log" "^status: FAIL$"
if grep -q "^== gpu-check: ctest" "$WORK/stopped.log"; then
  echo "FAILED: the check went on after SIGTERM"; failures=$((failures + 1))
else
  echo "ok: nothing runs after SIGTERM"
fi

echo "$failures failure(s)"
[ $failures = 0 ]
