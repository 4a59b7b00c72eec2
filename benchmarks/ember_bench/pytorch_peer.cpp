// benchmarks/ember_bench/pytorch_peer.cpp — finds a Python with torch and runs the peer script.
#include "pytorch_peer.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "json_io.h"

namespace ember_bench {
namespace {

std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

bool imports_torch(const std::string& python) {
  const std::string command = shell_quote(python) + " -c 'import torch' > /dev/null 2>&1";
  return std::system(command.c_str()) == 0;
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::string find_python_with_torch(const std::string& choice) {
  if (choice == "none") return "";
  if (choice != "auto") return imports_torch(choice) ? choice : "";
  for (const char* candidate : {"python3", "/usr/bin/python3"})
    if (imports_torch(candidate)) return candidate;
  return "";
}

PytorchOutcome run_pytorch_peer(const std::vector<PytorchJob>& jobs, const Policy& policy, int threads,
                                const std::string& python, const std::string& script) {
  PytorchOutcome outcome;
  outcome.python = python;
  const auto stem = std::filesystem::temp_directory_path() / ("ember-bench-" + std::to_string(::getpid()));
  const std::string spec = stem.string() + "-spec.json", out = stem.string() + "-out.json",
                    err = stem.string() + "-err.txt";
  write_pytorch_spec(spec, jobs, policy, threads);
  // GNU OpenMP's default busy-waiting makes every PyTorch op cost ~8 ms when the cores are
  // shared (measured on a 2-core VM): let its threads sleep unless the user chose otherwise.
  const std::string environment = std::getenv("OMP_WAIT_POLICY") ? "" : "OMP_WAIT_POLICY=PASSIVE ";
  const std::string command = environment + shell_quote(python) + " " + shell_quote(script) + " --spec " + shell_quote(spec) +
                              " > " + shell_quote(out) + " 2> " + shell_quote(err);
  const int rc = std::system(command.c_str());
  try {
    if (rc != 0) throw std::runtime_error("exit status " + std::to_string(rc) + ": " + read_text(err).substr(0, 400));
    read_pytorch_output(read_text(out), jobs, outcome);
    outcome.status = "ok";
  } catch (const std::exception& error) {
    outcome.status = std::string("failed: ") + error.what();
    outcome.records.clear();
  }
  for (const auto& path : {spec, out, err}) std::filesystem::remove(path);
  return outcome;
}

}  // namespace ember_bench
