# tests/benchmarks/check_bench_compare.cmake — `ember-bench --compare` (issue 23) on the
# synthetic reports next to this file, one CASE per CTest test (tests/benchmarks.cmake):
#   compare_base.json           an older report (no "repeats"): 7 records on machine A
#   compare_new.json            gemm/square/128 cpu ember 1.50x slower (tight samples); copy
#                               2.00x faster (3 samples: the min-max rule); elementwise inside
#                               base's IQR; train_step 1.10x slower but base's median inside
#                               new's wide IQR (so within noise); one skipped, one figure only
#                               in each file
#   compare_minor.json          gemm/square/128 cpu ember 1.05x slower (significant), the rest noise
#   compare_other_machine.json  base's records on machine B (another CPU, no GPU)
#   compare_not_json.json, compare_no_results.json   bad inputs
# Each case checks exact lines and exit statuses, never that it merely ran.
#   cmake -DBENCH=path/to/ember-bench -DDATA=tests/benchmarks -DWORK=build-dir -DCASE=name -P check_bench_compare.cmake
cmake_minimum_required(VERSION 3.25)

function(fail message)
  message(FATAL_ERROR "ember-bench --compare check (${CASE}): ${message}")
endfunction()

# Runs ember-bench with ARGN in DATA (so the table shows the bare file names); sets rc, stdout, stderr.
macro(run_bench)
  execute_process(COMMAND "${BENCH}" ${ARGN} WORKING_DIRECTORY "${DATA}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
endmacro()

function(expect_rc expected)
  if(NOT rc STREQUAL "${expected}")
    fail("exit status ${rc}, expected ${expected}\nstdout:\n${stdout}\nstderr:\n${stderr}")
  endif()
endfunction()

# The arguments, concatenated, must appear verbatim in stdout (string(FIND): no regex escaping
# of "±", "(", "." ...). Read one by one: a list expansion would split the summary at its ';'.
function(expect_output)
  set(text "")
  math(EXPR last "${ARGC} - 1")
  foreach(i RANGE ${last})
    string(APPEND text "${ARGV${i}}")
  endforeach()
  string(FIND "${stdout}" "${text}" position)
  if(position EQUAL -1)
    fail("stdout lacks:\n${text}\nstdout:\n${stdout}")
  endif()
endfunction()

function(expect_no_output text)
  string(FIND "${stdout}" "${text}" position)
  if(NOT position EQUAL -1)
    fail("stdout should not contain '${text}':\n${stdout}")
  endif()
endfunction()

set(header "figure                             device   impl               base  spread   n         new  spread   n    ratio  change        verdict\n")

if(CASE STREQUAL "slowdown")
  run_bench(--compare compare_base.json compare_new.json)
  expect_rc(0)  # without --fail-on-regression a slowdown is reported, not an error
  # The whole table, in order: largest slowdown first, the clear one flagged; the 1.10x change
  # whose base median lies inside new's spread is noise; copy's spread is min-max (3 samples:
  # ±3.0% = (104 - 98) / 2 / 100); base's n comes from samples_s (the file has no "repeats").
  expect_output("${header}"
    "gemm/square/128                    cpu      ember         100.00 us   ±1.0%   5   150.00 us   ±0.7%   5    1.500  1.50x slower  SLOWER\n"
    "train_step/toy/b32                 cpu      ember          40.00 us   ±0.2%   5    44.00 us   ±9.1%   5    1.100  1.10x slower  within noise\n"
    "elementwise/add/1K                 cpu      ember          10.50 us   ±4.8%   5    10.80 us   ±6.0%   5    1.029  1.03x slower  within noise\n"
    "gemm/square/128                    cpu      pytorch        90.00 us   ±1.1%   5    90.00 us   ±1.1%   5    1.000  unchanged     within noise\n"
    "copy/clone/1M                      cpu      memcpy        200.00 us   ±5.0%   3   100.00 us   ±3.0%   3    0.500  2.00x faster  faster\n"
    "\n")
  expect_output("\ncompared 5: 1 slower, 1 faster, 3 within noise; only in base: 1 (dataloader/workers1 cpu ember); "
                "only in new: 1 (gemm/square/256 cpu ember); skipped in a run: 1 (gemm/square/128 cuda:0 ember)\n")
  expect_no_output("warning:")
  expect_no_output("fail-on-regression")
elseif(CASE STREQUAL "fail_on_regression")
  # A 50 % slowdown fails the 10 % gate...
  run_bench(--compare compare_base.json compare_new.json --fail-on-regression 10)
  expect_rc(1)
  expect_output("\nfail-on-regression 10%: FAILED, 1 significant slowdown(s) over 10%: gemm/square/128 cpu ember (1.50x slower)\n")
  # ...and passes a 60 % one (1.5 is not over 1.6).
  run_bench(--compare compare_base.json compare_new.json --fail-on-regression 60)
  expect_rc(0)
  expect_output("\nfail-on-regression 60%: passed (no significant slowdown over 60%)\n")
  # Noise and a significant 5 % slowdown pass the 10 % gate; the 1.10x change inside the noise
  # does not count although it is over 10 %.
  run_bench(--compare compare_base.json compare_minor.json --fail-on-regression 10)
  expect_rc(0)
  expect_output("gemm/square/128                    cpu      ember         100.00 us   ±1.0%   5   105.00 us   ±1.0%   5    1.050  1.05x slower  SLOWER\n")
  expect_output("\ncompared 4: 1 slower, 0 faster, 3 within noise; only in base: 3 (gemm/square/128 cuda:0 ember, "
                "copy/clone/1M cpu memcpy, dataloader/workers1 cpu ember); only in new: 0; skipped in a run: 0\n")
  expect_output("\nfail-on-regression 10%: passed (no significant slowdown over 10%)\n")
  # The same 5 % slowdown fails a 3 % gate.
  run_bench(--compare compare_base.json compare_minor.json --fail-on-regression 3)
  expect_rc(1)
  expect_output("\nfail-on-regression 3%: FAILED, 1 significant slowdown(s) over 3%: gemm/square/128 cpu ember (1.05x slower)\n")
elseif(CASE STREQUAL "other_machine")
  run_bench(--compare compare_base.json compare_other_machine.json)
  expect_rc(0)
  expect_output("\nwarning: the two runs come from different machines (cpu_model 'Synthetic CPU A' vs 'Synthetic CPU B'; "
                "cpu_cores 16 vs 2; gpus 'NVIDIA H200' vs none): a change may be the machine's, not the code's\n")
  expect_output("  new:  compare_other_machine.json  (2026-12-04T10:00:00Z; 2 cores, Synthetic CPU B, no GPU)\n")
  # Still compared: the same samples on both sides, every figure unchanged.
  expect_output("gemm/square/128                    cuda:0   ember          20.00 us   ±5.0%   5    20.00 us   ±5.0%   5    1.000  unchanged     within noise\n")
  expect_output("\ncompared 7: 0 slower, 0 faster, 7 within noise; only in base: 0; only in new: 0; skipped in a run: 0\n")
  # The same machine: no warning.
  run_bench(--compare compare_base.json compare_minor.json)
  expect_no_output("warning:")
elseif(CASE STREQUAL "bad_inputs")
  # Each usage error exits 2 and names its problem on stderr; nothing is measured or printed.
  foreach(bad
      "compare_base.json;no_such_report.json|'no_such_report.json': no such file"
      "compare_not_json.json;compare_new.json|'compare_not_json.json' is not valid JSON"
      "compare_base.json;compare_no_results.json|'compare_no_results.json' has no \"results\" list"
      "compare_base.json;.|'.' is a directory"
      "compare_base.json;compare_new.json;--fail-on-regression;ten|--fail-on-regression takes a percentage >= 0, got 'ten'"
      "compare_base.json;compare_new.json;--fail-on-regression;-5|--fail-on-regression takes a percentage >= 0, got '-5'"
      "compare_base.json;compare_new.json;--fail-on-regression;10%|--fail-on-regression takes a percentage >= 0, got '10%'"
      "compare_base.json|--compare: At least 2 required but received 1"
      "compare_base.json;compare_new.json;--json;out.json|--json excludes --compare")
    string(REPLACE "|" ";" parts "${bad}")
    list(POP_BACK parts message)
    run_bench(--compare ${parts})
    expect_rc(2)
    string(FIND "${stderr}" "${message}" position)
    if(position EQUAL -1)
      fail("ember-bench --compare ${parts}: stderr lacks \"${message}\":\n${stderr}")
    endif()
    if(NOT stdout STREQUAL "")
      fail("ember-bench --compare ${parts} printed a table on a usage error:\n${stdout}")
    endif()
  endforeach()
  # Malformed records, written here (into WORK, the build tree) rather than committed.
  set(record "{\"id\": \"gemm/square/128\", \"device\": \"cpu\", \"implementation\": \"ember\", \"samples_s\": [1e-4], \"median_s\": 1e-4, \"skipped\": null}")
  file(WRITE "${WORK}/compare_duplicate.json" "{\"results\": [${record}, ${record}]}\n")
  file(WRITE "${WORK}/compare_no_id.json" "{\"results\": [{\"device\": \"cpu\", \"implementation\": \"ember\"}]}\n")
  foreach(bad
      "compare_duplicate.json|'${WORK}/compare_duplicate.json' has two records for gemm/square/128 cpu ember"
      "compare_no_id.json|'${WORK}/compare_no_id.json': results[0] has no \"id\" string")
    string(REPLACE "|" ";" parts "${bad}")
    list(GET parts 0 name)
    list(GET parts 1 message)
    run_bench(--compare compare_base.json "${WORK}/${name}")
    expect_rc(2)
    string(FIND "${stderr}" "${message}" position)
    if(position EQUAL -1)
      fail("ember-bench --compare compare_base.json ${name}: stderr lacks \"${message}\":\n${stderr}")
    endif()
  endforeach()
  run_bench(--fail-on-regression 10)
  expect_rc(2)
  if(NOT stderr MATCHES "--fail-on-regression requires --compare")
    fail("--fail-on-regression alone: ${stderr}")
  endif()
else()
  fail("unknown CASE '${CASE}'")
endif()
message(STATUS "ember-bench --compare check (${CASE}): ok")
