// tests/data/test_readers.cpp — the IDX and CSV readers on the fixtures made by
// tests/data/fixtures/make_fixtures.py (good files, and copies broken one way each), and
// on Fashion-MNIST when the Debian package is installed.
#include <catch2/catch.hpp>

#include <filesystem>
#include <functional>

#include <ember/ember.h>

#include "test_support.h"

using namespace ember;
using Catch::Matchers::Contains;
using ember::testing::to_vector;

namespace {

std::string fixture(const std::string& name) { return std::string(EMBER_SOURCE_DIR) + "/tests/data/fixtures/" + name; }

void rejects(const std::function<void()>& read, const std::string& file, const std::string& problem) {
  INFO(file << ": " << problem);
  REQUIRE_THROWS_AS(read(), IOError);
  REQUIRE_THROWS_WITH(read(), Contains(file) && Contains(problem));
}

}  // namespace

TEST_CASE("read_idx reads every element type, gzipped or not", "[data][idx]") {
  Tensor images = data::read_idx(fixture("images-idx3-ubyte"));
  REQUIRE(images.dtype() == kUInt8);
  REQUIRE(images.sizes() == Shape{3, 2, 3});
  REQUIRE(to_vector(images)[7] == 11.0);  // image 1, pixel 1
  REQUIRE(data::read_idx(fixture("images-idx3-ubyte.gz")).equal(images));
  REQUIRE(data::read_idx(fixture("labels-idx1-ubyte.gz")).equal(ember::tensor({7, 0, 255}, kUInt8)));
  REQUIRE(data::read_idx(fixture("int32-idx1")).equal(ember::tensor({-2, 70000, 5}, kInt32)));
  REQUIRE(data::read_idx(fixture("int16-idx1")).equal(ember::tensor({-300, 12}, kInt32)));
  REQUIRE(data::read_idx(fixture("float32-idx2")).equal(ember::tensor({{1.5f, -0.25f}, {3.0f, 1e-3f}})));
}

TEST_CASE("read_idx_dataset scales pixels and pairs them with labels", "[data][idx]") {
  auto dataset = data::read_idx_dataset(fixture("images-idx3-ubyte.gz"), fixture("labels-idx1-ubyte"));
  REQUIRE(dataset.size() == 3);
  auto example = dataset.get(2);
  REQUIRE(example.data.dtype() == kFloat32);
  REQUIRE(example.data.sizes() == Shape{2, 3});
  REQUIRE(to_vector(example.data)[5] == Approx(25.0f / 255.0f));
  REQUIRE(example.target.item<std::int64_t>() == 255);
}

TEST_CASE("read_idx rejects broken files with a clear IOError", "[data][idx]") {
  auto idx = [](const std::string& name) { return [name] { data::read_idx(fixture(name)); }; };
  rejects(idx("missing-file"), "missing-file", "cannot open");
  rejects(idx("bad-magic-idx"), "bad-magic-idx", "wrong magic number");
  rejects(idx("bad-type-idx"), "bad-type-idx", "unknown element type code 7");
  rejects(idx("tiny-idx"), "tiny-idx", "too short");
  rejects(idx("truncated-idx3-ubyte"), "truncated-idx3-ubyte", "truncated: sizes [3, 2, 3] need 18 bytes");
  rejects(idx("truncated-header-idx"), "truncated-header-idx", "truncated");
  rejects(idx("trailing-idx3-ubyte"), "trailing-idx3-ubyte", "2 bytes left over");
  rejects(idx("truncated-images.gz"), "truncated-images.gz", "");
  rejects([] { data::read_idx_dataset(fixture("images-idx3-ubyte"), fixture("labels2-idx1-ubyte")); },
          "labels2-idx1-ubyte", "count mismatch: 2 labels but");
}

TEST_CASE("read_csv reads features and labels, with or without a header", "[data][csv]") {
  auto table = data::read_csv(fixture("table.csv"));
  REQUIRE(table.header == std::vector<std::string>{"x1", "x2", "label"});
  REQUIRE(table.features.equal(ember::tensor({{0.5f, 1.25f}, {-2.0f, 0.3f}, {4.0f, 5.0f}})));
  REQUIRE(table.labels.equal(ember::tensor({1, 0, 2})));
  auto first = data::read_csv(fixture("table-noheader-label-first.csv"),
                              {.label_column = 0, .has_header = false, .delimiter = ';'});
  REQUIRE(first.header.empty());
  REQUIRE(first.labels.equal(ember::tensor({1, 0})));
  REQUIRE(first.features.sizes() == Shape{2, 2});
  auto dataset = data::read_csv_dataset(fixture("table.csv"));
  REQUIRE(dataset.size() == 3);
  REQUIRE(dataset.get(1).target.item<std::int64_t>() == 0);
}

TEST_CASE("read_csv rejects broken tables naming line and column", "[data][csv]") {
  auto csv = [](const std::string& name, data::CsvOptions options = {}) {
    return [name, options] { data::read_csv(fixture(name), options); };
  };
  rejects(csv("missing.csv"), "missing.csv", "cannot open");
  rejects(csv("bad-cell.csv"), "bad-cell.csv", "line 2, column 2: \"abc\" is not a number");
  rejects(csv("bad-label.csv"), "bad-label.csv", "line 2, column 3: label \"1.5\" is not an integer");
  rejects(csv("ragged.csv"), "ragged.csv", "line 3 has 2 columns, expected 3");
  rejects(csv("header-only.csv"), "header-only.csv", "no data rows");
  rejects(csv("table.csv", {.label_column = 5}), "table.csv", "label column 5 is out of range");
}

TEST_CASE("Fashion-MNIST loads when installed", "[data][idx][fashion]") {
  const std::string root = "/usr/share/datasets/fashion-mnist/";
  if (!std::filesystem::exists(root + "t10k-images-idx3-ubyte.gz")) {
    WARN("SKIPPED: Fashion-MNIST is not installed (apt-get install dataset-fashion-mnist)");
    return;
  }
  auto test_set = data::read_idx_dataset(root + "t10k-images-idx3-ubyte.gz", root + "t10k-labels-idx1-ubyte.gz");
  REQUIRE(test_set.size() == 10000);
  REQUIRE(test_set.data().sizes() == Shape{10000, 28, 28});
  REQUIRE(test_set.targets().max().item<std::int64_t>() == 9);
  REQUIRE(test_set.data().max().item<double>() <= 1.0);
}
