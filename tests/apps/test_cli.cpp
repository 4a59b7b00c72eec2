// tests/apps/test_cli.cpp — `ember` on bad input: usage errors, broken data files, no GPU.
//
// The CLI's contract (apps/cli/main.cpp): a wrong command line exits with 2 after CLI11's
// message and the usage; a problem with the data, a checkpoint or the device exits with 1
// after one "ember: error: ..." line naming the file and the problem; nothing crashes.
// The corrupt files are made here, from copies of the committed fixtures.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <ember/core/cpu/gemm_kernels.h>
#include <ember/core/cuda_hooks.h>
#include <ember/core/parallel.h>
#include <ember/distributed/process_group.h>

#include "test_cli_helpers.h"

using namespace ember::testing;
using namespace ember::testing::cli;

namespace {
std::string toy_flags() { return "train --data toy --hidden 4 --epochs 1 --batch-size 2 --lr 0.5 --quiet"; }

// The value `ember info` prints after "  LABEL" (spaces trimmed), "" when there is none.
std::string info_value(const std::string& output, const std::string& label) {
  auto at = output.find("  " + label);
  if (at == std::string::npos) return "";
  at = output.find_first_not_of(' ', at + 2 + label.size());
  return output.substr(at, output.find('\n', at) - at);
}
}  // namespace

TEST_CASE("ember with bad command lines prints CLI11's message and the usage, exit code 2", "[cli][usage]") {
  struct Case {
    const char* arguments;
    const char* message;
  };
  const Case cases[] = {
      {"", "A subcommand is required"},
      {"train --bogus", "The following argument was not expected: --bogus"},
      {"train --epochs 0", "--epochs: must be at least 1, got 0"},
      {"train --batch-size two", "--batch-size: expected a whole number, got 'two'"},
      {"train --lr -1", "--lr: must be positive, got -1"},
      {"train --momentum -0.5", "--momentum: must be non-negative, got -0.5"},
      {"train --hidden 30,0", "--hidden: must be at least 1, got 0"},
      {"train --optimizer rmsprop", "--optimizer: rmsprop not in {sgd,adam,adamw}"},
      {"train --device tpu", "--device: expected auto, cpu, cuda or cuda:N, got 'tpu'"},
      {"train --data mnist", "--data: expected fashion-mnist, toy, idx:DIR, csv:FILE or text[:FILE], got 'mnist'"},
      {"train --dropout 1.5", "--dropout: must be in [0, 1], got 1.5"},
      {"train --val-split abc", "--val-split: expected a number in [0, 1), got 'abc'"},
      {"train --val-split 1", "--val-split: must be in [0, 1), got 1"},
      {"train --device cuda:99999999999", "--device: CUDA device index 99999999999 is out of range"},
      {"train --optimizer adam --momentum 0.9", "--momentum: only --optimizer sgd takes a momentum"},
      {"train --optimizer adamw --momentum 0", "--momentum: only --optimizer sgd takes a momentum"},
      {"train --optimizer adam --nesterov", "--nesterov: only --optimizer sgd has Nesterov momentum"},
      {"train --nesterov", "--nesterov: Nesterov momentum requires a momentum (--momentum > 0)"},
      {"train --nesterov --momentum 0", "--nesterov: Nesterov momentum requires a momentum"},
      {"train --allow-config-change", "--allow-config-change: only means something with --resume"},
      {"train --header --no-header", "--header excludes --no-header"},
      {"eval", "--checkpoint is required"},
      {"predict --checkpoint /nonexistent.safetensors --input x", "/nonexistent.safetensors"},
  };
  for (const Case& c : cases) {
    INFO("ember " << c.arguments);
    int code = -1;
    std::string output = run_ember(c.arguments, &code);
    CHECK(code == 2);
    CHECK_THAT(output, Catch::Contains(c.message));
    CHECK_THAT(output, Catch::Contains("Usage: ember"));
  }
}

TEST_CASE("ember --help lists the commands and exits with 0", "[cli][usage]") {
  int code = -1;
  std::string output = run_ember("--help", &code);
  CHECK(code == 0);
  for (const char* command : {"train", "eval", "predict", "info"}) CHECK_THAT(output, Catch::Contains(command));
  output = run_ember("train --help", &code);
  CHECK(code == 0);
  for (const char* flag : {"--hidden", "--val-split", "--resume", "--log-every", "--device", "--nesterov"}) {
    CHECK_THAT(output, Catch::Contains(flag));
  }
}

TEST_CASE("ember train names the file and the problem for broken IDX data, exit code 1", "[cli][data]") {
  ScratchDir scratch("idx_errors");
  struct Case {
    const char* name;
    const char* damaged_file;
    std::string bytes;
    const char* message;
  };
  const std::string labels_header("\x00\x00\x08\x01\x00\x00\x00", 7);
  const Case cases[] = {
      {"wrong magic", "t10k-labels-idx1-ubyte", std::string("\x00\x01\x08\x01\x00\x00\x00\x08", 8), "wrong magic"},
      {"truncated", "t10k-images-idx3-ubyte", std::string("\x00\x00\x08\x03\x00\x00\x00\x08\x00\x00\x00\x04\x00\x00\x00\x04\x01\x02", 18),
       "truncated"},
      {"count mismatch", "t10k-labels-idx1-ubyte", labels_header + std::string("\x07\x00\x01\x02\x00\x01\x02\x00", 8),
       "count mismatch: 7 labels"},
      {"label out of range", "t10k-labels-idx1-ubyte",
       labels_header + std::string("\x08\x00\x01\x02\x00\x01\x05\x00\x01", 9), "label 5 of example 5 is out of range for 3 classes"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    std::string directory = copy_idx_fixtures(scratch);
    std::string damaged = directory + "/" + c.damaged_file;
    write_bytes(damaged, c.bytes);
    int code = -1;
    std::string output = run_ember("train --data idx:" + directory + " --hidden 4 --epochs 1 --quiet", &code);
    CHECK(code == 1);
    CHECK_THAT(output, Catch::Contains("ember: error:"));
    CHECK_THAT(output, Catch::Contains(damaged));
    CHECK_THAT(output, Catch::Contains(c.message));
    std::filesystem::remove_all(directory);
  }
}

TEST_CASE("ember train reports a truncated gzip file and a missing directory", "[cli][data]") {
  ScratchDir scratch("gzip_errors");
  std::string directory = copy_idx_fixtures(scratch);
  std::string images = directory + "/train-images-idx3-ubyte.gz";
  std::string bytes = read_file(images);
  write_bytes(images, bytes.substr(0, bytes.size() / 2));
  int code = -1;
  std::string output = run_ember("train --data idx:" + directory + " --quiet", &code);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains(images));
  CHECK_THAT(output, Catch::Contains("truncated"));

  output = run_ember("train --data idx:" + scratch / "missing" + " --quiet", &code);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains(scratch / "missing" + "/train-images-idx3-ubyte[.gz]: no such file"));
}

TEST_CASE("ember train names the file, line and problem for broken CSV data", "[cli][data]") {
  ScratchDir scratch("csv_errors");
  struct Case {
    const char* name;
    const char* contents;
    const char* message;
  };
  const Case cases[] = {
      {"not a number", "label,a,b\n0,1,2\n1,x,3\n", "line 3, column 2: \"x\" is not a number"},
      {"short row", "label,a,b\n0,1,2\n1,3\n", "line 3 has 2 columns, expected 3"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    std::string path = scratch / "data.csv";
    write_bytes(path, c.contents);
    int code = -1;
    std::string output = run_ember("train --data csv:" + path + " --hidden 3 --epochs 1 --quiet", &code);
    CHECK(code == 1);
    CHECK_THAT(output, Catch::Contains(path));
    CHECK_THAT(output, Catch::Contains(c.message));
  }
  int code = -1;
  std::string output = run_ember("train --data csv:" + scratch / "none.csv" + " --quiet", &code);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains(scratch / "none.csv"));
}

TEST_CASE("ember train reads the committed IDX and CSV fixtures", "[cli][data]") {
  int code = -1;
  std::string output = run_ember("train --data idx:" + fixtures_dir() + "/idx --hidden 8 --epochs 1 --quiet", &code);
  CHECK(code == 0);
  CHECK_THAT(output, Catch::Contains("16-8-3 MLP"));  // 4x4 images, 3 classes
  CHECK_THAT(output, Catch::Contains("(24 examples)"));
  CHECK_THAT(output, Catch::Contains("test accuracy:   "));
  CHECK_THAT(output, Catch::Contains("(8 examples)"));

  output = run_ember("train --data csv:" + fixtures_dir() + "/tiny.csv --hidden 5 --epochs 1 --quiet", &code);
  CHECK(code == 0);
  CHECK_THAT(output, Catch::Contains("16-5-3 MLP"));
  CHECK_THAT(output, Catch::Contains("(12 examples)"));
  CHECK_THAT(output, Catch::Contains("has no test split"));

  // --label-column / --no-header: the same table with the label moved last and no header.
  ScratchDir scratch("csv_layout");
  std::string moved = scratch / "moved.csv";
  {
    std::ifstream in(fixtures_dir() + "/tiny.csv");
    std::ofstream out(moved);
    std::string line;
    std::getline(in, line);  // drop the header
    while (std::getline(in, line)) {
      auto comma = line.find(',');
      out << line.substr(comma + 1) << "," << line.substr(0, comma) << "\n";
    }
  }
  output = run_ember("train --data csv:" + moved + " --label-column 16 --no-header --hidden 5 --epochs 1 --quiet", &code);
  CHECK(code == 0);
  CHECK_THAT(output, Catch::Contains("16-5-3 MLP"));
  CHECK_THAT(output, Catch::Contains("(12 examples)"));
}

TEST_CASE("ember train --device cuda without a GPU is a clear error", "[cli][device]") {
  if (ember::cuda::is_available()) {
    SUCCEED("a GPU is present: nothing to check");
    return;
  }
  for (const char* device : {"cuda", "cuda:0", "cuda:3"}) {
    INFO(device);
    int code = -1;
    std::string output = run_ember(toy_flags() + " --device " + device, &code);
    CHECK(code == 1);
    CHECK_THAT(output, Catch::Contains(std::string("ember: error: --device ") + device));
    CHECK_THAT(output, Catch::Contains(ember::cuda::is_built() ? "no CUDA device" : "built without CUDA"));
  }
  int code = -1;
  std::string output = run_ember(toy_flags() + " --device auto", &code);
  CHECK(code == 0);
  CHECK_THAT(output, Catch::Contains("device:          cpu"));
}

TEST_CASE("ember info reports version, build options, devices and CPU features", "[cli][info]") {
  unsetenv("EMBER_GEMM_KERNEL");
  int code = -1;
  std::string output = run_ember("info", &code);
  INFO(output);
  CHECK(code == 0);
  for (const char* line : {"ember 0.1.0", "CUDA architectures:", "devices:", "AVX2:", "AVX-512F:"}) {
    CHECK_THAT(output, Catch::Contains(line));
  }
  // Each value is what the library itself says (this test links the same library).
  CHECK(info_value(output, "CUDA backend:") == (ember::cuda::is_built() ? "on" : "off"));
  CHECK(info_value(output, "NCCL:") == (ember::distributed::is_nccl_available() ? "yes" : "no"));
  CHECK(info_value(output, "Gloo:") == "yes");  // a required dependency of the distributed layer
  CHECK(ember::distributed::is_gloo_available());
  CHECK(info_value(output, "ember threads:") == std::to_string(ember::get_num_threads()));
  CHECK(info_value(output, "GEMM micro-kernel:") ==
        ember::cpu::active_gemm_kernel_name() + " (the best this CPU runs; EMBER_GEMM_KERNEL overrides)");
  int gpus = ember::cuda::device_count();
  CHECK((gpus == 0) == (output.find("cuda:0") == std::string::npos));
}

TEST_CASE("ember info names the bfloat16 GEMM, and EMBER_AMX=0 or a bad EMBER_AMX", "[cli][info]") {
  unsetenv("EMBER_GEMM_KERNEL");
  unsetenv("EMBER_AMX");
  ember::cpu::reload_gemm_kernel_choice();
  int code = -1;
  std::string output = run_ember("info", &code);
  CHECK(code == 0);
  const std::string expected = ember::cpu::amx_bfloat16_usable()    ? "AMX tiles (tdpbf16ps; EMBER_AMX=0 turns them off)"
                               : ember::cpu::bfloat16_gemm_usable() ? "AVX512-BF16 (vdpbf16ps)"
                                                                    : "float32 (operands widened)";
  CHECK(info_value(output, "bfloat16 GEMM:") == expected);
  setenv("EMBER_AMX", "0", 1);
  output = run_ember("info", &code);
  CHECK(code == 0);
  CHECK(info_value(output, "bfloat16 GEMM:") != "AMX tiles (tdpbf16ps; EMBER_AMX=0 turns them off)");
  setenv("EMBER_AMX", "2", 1);
  output = run_ember("info", &code);
  unsetenv("EMBER_AMX");
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("ember: error: EMBER_AMX must be 0 or 1 (or unset), got '2'"));
}

TEST_CASE("ember info names the GEMM micro-kernel EMBER_GEMM_KERNEL forces", "[cli][info]") {
  for (const char* kernel : {"portable", "avx2", "avx512"}) {
    if (!ember::cpu::gemm_kernel_available(kernel)) continue;
    INFO(kernel);
    setenv("EMBER_GEMM_KERNEL", kernel, 1);
    int code = -1;
    std::string output = run_ember("info", &code);
    CHECK(code == 0);
    CHECK(info_value(output, "GEMM micro-kernel:") == std::string(kernel) + " (set by EMBER_GEMM_KERNEL)");
  }
  setenv("EMBER_GEMM_KERNEL", "sse9", 1);
  int code = -1;
  std::string output = run_ember("info", &code);
  unsetenv("EMBER_GEMM_KERNEL");
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("ember: error: EMBER_GEMM_KERNEL must be portable, avx2 or avx512, got 'sse9'"));
  CHECK_THAT(output, Catch::Contains("ember threads:"));  // the rest of the report still came
}

TEST_CASE("ember train refuses --save and --log paths it could not write, before training", "[cli][usage]") {
  ScratchDir scratch("output_paths");
  write_bytes(scratch / "file", "not a directory");
  struct Case {
    std::string flags;
    std::string message;
    int exit_code;  // 2: the path names the wrong kind of thing (usage); 1: the file system refuses
  };
  const Case cases[] = {
      {"--save " + scratch / "missing/model.st", "--save " + scratch / "missing/model.st" + ": directory " +
                                                     scratch / "missing" + " does not exist", 1},
      {"--save " + scratch / "file/model.st", ": " + scratch / "file" + " is not a directory", 1},
      {"--save " + scratch.str(), "--save " + scratch.str() + ": is a directory (expected a file name)", 2},
      {"--log " + scratch.str(), "--log " + scratch.str() + ": is a directory (expected a file name)", 2},
      {"--log " + scratch / "missing/log.jsonl", "--log " + scratch / "missing/log.jsonl" + ": directory", 1},
  };
  for (const Case& c : cases) {
    INFO(c.flags);
    int code = -1;
    // --data names a directory that does not exist: the path check must come first.
    std::string output = run_ember("train --data idx:" + scratch / "no-data" + " --quiet " + c.flags, &code);
    CHECK(code == c.exit_code);
    CHECK_THAT(output, Catch::Contains("ember: error: " + c.flags + ": "));
    CHECK_THAT(output, Catch::Contains(c.message));
    CHECK_THAT(output, !Catch::Contains("no-data"));
  }
}

TEST_CASE("ember train tells a CSV header from a first example", "[cli][data]") {
  // The same 12 rows with and without a header line: both train on 12 examples.
  for (const char* file : {"tiny.csv", "tiny_noheader.csv"}) {
    INFO(file);
    int code = -1;
    std::string output =
        run_ember("train --data csv:" + fixtures_dir() + "/" + file + " --hidden 5 --epochs 1 --quiet", &code);
    CHECK(code == 0);
    CHECK_THAT(output, Catch::Contains("train accuracy:  "));
    CHECK_THAT(output, Catch::Contains("(12 examples)"));
  }
  // --header forces one (the first example is then skipped); --no-header on a header line
  // reads its words as numbers and fails naming the cell.
  int code = -1;
  std::string output = run_ember(
      "train --data csv:" + fixtures_dir() + "/tiny_noheader.csv --header --hidden 5 --epochs 1 --quiet", &code);
  CHECK(code == 0);
  CHECK_THAT(output, Catch::Contains("(11 examples)"));
  output = run_ember("train --data csv:" + fixtures_dir() + "/tiny.csv --no-header --hidden 5 --epochs 1 --quiet", &code);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("line 1, column 1: label \"label\" is not an integer"));
}
