// tests/conformance/test_conformance.cpp — the cross-backend conformance sweep (issue 18,
// item 3), in the spirit of ggml's test-backend-ops.
//
// Every case of tests/reference/conformance.json (an op, a dtype, a layout, parameters, the
// inputs, PyTorch's result or error; written by tests/reference/gen_conformance.py) runs on
// every backend of backends.h. Each result must equal PyTorch's bit for bit (within the
// case's "ulps" for the documented one-rounding gaps), each backend's must equal the CPU's bit
// for bit, and where PyTorch refuses, every backend must throw with PyTorch's message. Then
// gradcheck (float64, non-contiguous inputs included) for every differentiable op and layout
// on the CPU (and a GPU when one is visible; not on the emulator: gradcheck_backends()).
// Softmax may differ between backends by its case's ulps (cross_backend_ulps()). Differences that are known and not yet fixed are listed, and asserted
// to persist, in known_failures.h.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <ember/autograd/gradcheck.h>

#include "backends.h"
#include "conformance_case.h"
#include "known_failures.h"
#include "op_table.h"
#include "test_support.h"

using namespace ember;
using namespace ember::conformance;

namespace {

// What one backend did with a case: a result or an error message.
struct Outcome {
  Tensor result;
  std::optional<std::string> error;
};

// Whether `text` matches `pattern`, in which * stands for any text.
bool glob_match(const char* pattern, const char* text) {
  if (*pattern == '\0') return *text == '\0';
  if (*pattern == '*') return glob_match(pattern + 1, text) || (*text != '\0' && glob_match(pattern, text + 1));
  return *pattern == *text && glob_match(pattern + 1, text + 1);
}

bool matches(const KnownFailure& k, const std::string& key) { return glob_match(k.pattern.c_str(), key.c_str()); }

const KnownFailure* known_failure(const std::string& key, const std::string& comparison) {
  for (const KnownFailure& k : known_failures())
    if (k.comparison == comparison && matches(k, key)) return &k;
  return nullptr;
}

// Per known failure: how many of its cases ran, and how many still differed.
struct KnownTally {
  int ran = 0, differed = 0;
};
std::map<const KnownFailure*, KnownTally>& tallies() {
  static std::map<const KnownFailure*, KnownTally> table;
  return table;
}

// After a group of cases: every known failure that named one of them must still differ in one.
void check_known_failures_still_differ() {
  for (const auto& [known, tally] : tallies()) {
    INFO("known failure now passes everywhere, remove it from known_failures.h: " << known->pattern << " ("
         << known->comparison << ")");
    CHECK(tally.differed > 0);
  }
  tallies().clear();
}

// EMBER_CONFORMANCE_LIST=1 prints every difference on one line (the known-failure list's raw material).
bool list_differences() {
  static const bool on = std::getenv("EMBER_CONFORMANCE_LIST") != nullptr;
  return on;
}

void expect(const json& c, const std::string& comparison, bool same, const std::string& why) {
  const std::string key = case_key(c);
  if (!same && list_differences())
    std::cerr << "DIFF | " << key << " | " << comparison << " | " << why << " | " << describe_inputs(c) << "\n";
  if (const KnownFailure* known = known_failure(key, comparison)) {
    KnownTally& tally = tallies()[known];
    ++tally.ran;
    if (!same) ++tally.differed;
    return;
  }
  INFO(key << ": " << comparison << ": " << why << "\ninputs: " << describe_inputs(c));
  CHECK(same);
}

std::string outcome_text(const Outcome& o) {
  return o.error ? "threw \"" + *o.error + "\"" : "returned a result";
}

// Backends share the element functions, so they agree bit for bit, except where a kernel
// sums in another order: softmax's GPU kernel adds the exponentials in a block tree, the
// CPU in a row, so an inexact sum may round differently (the case's ulps: one).
int cross_backend_ulps(const json& c) { return c.at("family") == "softmax" ? c.value("ulps", 0) : 0; }

// Runs one case on every backend and makes every comparison. Returns the comparisons made.
int run_case(const json& c) {
  const auto entry = op_table().find(c.at("op").get<std::string>());
  INFO("op " << c.at("op") << " has no entry in tests/conformance/op_table.cpp");
  REQUIRE(entry != op_table().end());
  const OpCall& call = entry->second;
  const json& params = c.at("params");
  std::vector<Outcome> outcomes;
  for (const SweepBackend& backend : backends()) {
    Outcome outcome;
    try {
      outcome.result = backend.run([&](Device device) { return call(make_inputs(c, device), params); });
    } catch (const std::exception& e) {
      outcome.error = e.what();
    }
    outcomes.push_back(outcome);
  }
  int comparisons = 0;
  const int ulps = c.value("ulps", 0);
  for (std::size_t b = 0; b < outcomes.size(); ++b) {
    const Outcome& o = outcomes[b];
    const std::string comparison = backends()[b].name + " vs PyTorch";
    if (c.contains("error")) {
      const std::string want = c["error"];
      const bool same = o.error && o.error->find(want) != std::string::npos;
      expect(c, comparison, same, outcome_text(o) + ", PyTorch threw \"" + want + "\"");
    } else if (o.error) {
      expect(c, comparison, false, outcome_text(o) + ", PyTorch returned a result");
    } else {
      std::string why;
      const int allowed = ulps > 0 ? ulps + backends()[b].extra_ulps : 0;
      const bool same = same_bits(o.result, testing::tensor_from_json(c["expected"]), allowed, &why);
      expect(c, comparison, same, why);
    }
    ++comparisons;
  }
  // Every backend against the first, bit for bit: they share the element functions.
  for (std::size_t b = 1; b < outcomes.size(); ++b) {
    const Outcome &first = outcomes[0], &other = outcomes[b];
    const std::string comparison = backends()[b].name + " vs " + backends()[0].name;
    std::string why;
    bool same;
    if (first.error || other.error) {
      same = first.error && other.error && *first.error == *other.error;
      why = outcome_text(other) + ", " + backends()[0].name + " " + outcome_text(first);
    } else {
      const int extra = c.value("ulps", 0) > 0 ? backends()[b].extra_ulps : 0;
      same = same_bits(other.result, first.result, cross_backend_ulps(c) + extra, &why);
    }
    expect(c, comparison, same, why);
    ++comparisons;
  }
  return comparisons;
}

// The families gen_conformance.py writes; a case of any other family fails the sweep, so a
// new family cannot be skipped silently.
const std::vector<std::string> kFamilies{"unary", "binary", "where", "cast", "reduce", "softmax", "mm", "matmul",
                                         "index"};

void run_family(const std::string& family) {
  int cases = 0, comparisons = 0;
  for (const json& c : reference().at("cases")) {
    if (c.at("family") != family) continue;
    comparisons += run_case(c);
    ++cases;
  }
  check_known_failures_still_differ();
  INFO("family " << family);
  REQUIRE(cases > 0);
  REQUIRE(comparisons >= cases * 2);
}

// gradcheck evaluates an op twice per input element and runs a backward per output element:
// on the emulator (a fiber per CUDA thread, a context switch per barrier) the 233 cases take
// about 150 s, against 0.2 s on the CPU, so the emulated backend is left out here. Its
// backward kernels are the forward ones the sweep compares (mul, sum_to's sum, where, ...).
std::vector<SweepBackend> gradcheck_backends() {
  std::vector<SweepBackend> list;
  for (const SweepBackend& backend : backends())
    if (backend.name != "cuda (emulated)") list.push_back(backend);
  return list;
}

}  // namespace

TEST_CASE("conformance: every case belongs to a family the sweep runs", "[conformance]") {
  std::set<std::string> families(kFamilies.begin(), kFamilies.end());
  for (const char* list : {"cases", "gradcheck"})
    for (const json& c : reference().at(list)) {
      INFO(case_key(c));
      CHECK(families.count(c.at("family").get<std::string>()) == 1);
      CHECK(op_table().count(c.at("op").get<std::string>()) == 1);
    }
  REQUIRE(backends().size() >= 3);
  REQUIRE(backends()[0].name == "cpu");
  REQUIRE(backends()[1].name == "cpu (reference kernels)");
  REQUIRE(backends()[2].name == "cuda (emulated)");
}

TEST_CASE("conformance: unary ops match PyTorch and agree across backends", "[conformance][elementwise]") {
  run_family("unary");
}
TEST_CASE("conformance: binary ops match PyTorch and agree across backends", "[conformance][elementwise]") {
  run_family("binary");
}
TEST_CASE("conformance: where matches PyTorch and agrees across backends", "[conformance][elementwise]") {
  run_family("where");
}
TEST_CASE("conformance: casts match PyTorch and agree across backends", "[conformance][elementwise][copy]") {
  run_family("cast");
}
TEST_CASE("conformance: reductions match PyTorch and agree across backends", "[conformance][reduce]") {
  run_family("reduce");
}
TEST_CASE("conformance: softmax and log_softmax match PyTorch and agree across backends", "[conformance][reduce]") {
  run_family("softmax");
}
TEST_CASE("conformance: mm matches PyTorch and agrees across backends", "[conformance][linalg]") { run_family("mm"); }
TEST_CASE("conformance: matmul matches PyTorch and agrees across backends", "[conformance][linalg]") {
  run_family("matmul");
}
TEST_CASE("conformance: indexing ops match PyTorch and agree across backends", "[conformance][indexing]") {
  run_family("index");
}

TEST_CASE("conformance: gradcheck passes for every differentiable op and layout (CPU; a GPU when present)",
          "[conformance][gradcheck]") {
  int checked = 0;
  for (const json& c : reference().at("gradcheck")) {
    const OpCall& call = op_table().at(c.at("op").get<std::string>());
    const json& params = c.at("params");
    auto fn = [&](const autograd::TensorList& inputs) { return call(inputs, params); };
    for (const SweepBackend& backend : gradcheck_backends()) {
      bool passed = false;
      std::string error;
      backend.run([&](Device device) {
        std::vector<Tensor> inputs = make_inputs(c, device, /*requires_grad=*/true);
        try {
          passed = autograd::gradcheck(fn, inputs, 1e-6, 1e-5, 1e-3, /*raise_exception=*/true);
        } catch (const std::exception& e) {
          error = e.what();
        }
        return inputs[0].detach();
      });
      expect(c, backend.name + " gradcheck", passed, error);
      ++checked;
    }
  }
  check_known_failures_still_differ();
  REQUIRE(checked > 0);
}

TEST_CASE("conformance: every known failure names a case of the sweep", "[conformance]") {
  for (const KnownFailure& k : known_failures()) {
    bool found = false;
    for (const char* list : {"cases", "gradcheck"})
      for (const json& c : reference().at(list)) found = found || matches(k, case_key(c));
    INFO("stale entry in known_failures.h: " << k.pattern << " (" << k.comparison << ")");
    CHECK(found);
  }
}
