#!/usr/bin/env bash
# tests/docs/check_gdb_printer.sh — runs scripts/gdb/ember_printers.py in gdb (batch mode) on
# tests/docs/gdb_printer_target.cpp and checks every line it prints against
# tests/docs/expected_gdb_printer.txt. Exit 4 (CTest: skipped) when gdb is not installed.
#   check_gdb_printer.sh <target binary> <printers.py> <expected.txt>
set -u
target=$1 printers=$2 expected=$3
if ! command -v gdb > /dev/null 2>&1; then
  echo "gdb is not installed: skipping"
  exit 4
fi
# -nx: no ~/.gdbinit; the printers are the only thing loaded besides libstdc++'s own.
actual=$(gdb -batch -nx -ex "source $printers" -ex "break stop_here" -ex run -ex up \
  -ex "print matrix" -ex "print transposed" -ex "print row" -ex "print weight" -ex "print undefined" \
  -ex "print sizes" -ex "print long_sizes" -ex "print loss" -ex "ember-tensor x" -ex "ember-graph loss" -ex "ember-grad weight" -ex "ember-grad matrix" -ex kill "$target" 2>&1 |
  grep -E '^\$[0-9]+ = |^ember::Tensor|^\(no grad|^ *[A-Za-z]+Backward[0-9]|^ *AccumulateGrad|^ *None')
if [ "$actual" == "$(cat "$expected")" ]; then
  echo "gdb printed every tensor as expected"
  exit 0
fi
echo "gdb's output differs from $expected:"
diff <(echo "$actual") "$expected"
exit 1
