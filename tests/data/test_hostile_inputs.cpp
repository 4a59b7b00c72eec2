// tests/data/test_hostile_inputs.cpp — the data layer against hostile files and failures
// (issue 16): a UTF-8 BOM, non-finite CSV features, an IDX gzip bomb and headers promising
// impossible sizes, read_idx_dataset's unscaled mode, and DataLoader worker threads that
// cannot start (a failure injected through data::detail::before_worker_start).
#include <catch2/catch.hpp>

#include <zlib.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <system_error>
#include <unistd.h>

#include <ember/ember.h>

#include "test_support.h"

using namespace ember;
using Catch::Matchers::Contains;
using ember::testing::to_vector;

namespace {

// A file in the temporary directory, removed at the end of the test.
class TempFile {
 public:
  explicit TempFile(const std::string& name)
      : path_((std::filesystem::temp_directory_path() / (name + "_" + std::to_string(getpid()))).string()) {}
  ~TempFile() {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }
  const std::string& path() const { return path_; }
  void write(const std::string& bytes) const {
    FILE* file = std::fopen(path_.c_str(), "wb");
    REQUIRE(file != nullptr);
    std::fwrite(bytes.data(), 1, bytes.size(), file);
    std::fclose(file);
  }
  void write_gzip(const std::string& bytes) const {
    gzFile file = gzopen(path_.c_str(), "wb9");
    REQUIRE(file != nullptr);
    for (std::size_t at = 0; at < bytes.size(); at += 1 << 20) {
      const auto n = static_cast<unsigned>(std::min<std::size_t>(1 << 20, bytes.size() - at));
      REQUIRE(gzwrite(file, bytes.data() + at, n) == static_cast<int>(n));
    }
    gzclose(file);
  }

 private:
  std::string path_;
};

std::string big_endian(std::uint32_t value) {
  return {static_cast<char>(value >> 24), static_cast<char>(value >> 16), static_cast<char>(value >> 8),
          static_cast<char>(value)};
}

}  // namespace

TEST_CASE("read_csv skips a UTF-8 byte order mark", "[data][csv][hostile]") {
  TempFile file("ember_bom.csv");
  file.write("\xEF\xBB\xBF" "0,1.5,2\n1,3,4\n");
  data::CsvTable table = data::read_csv(file.path(), {.label_column = 0, .has_header = false});
  // Before: "\xEF\xBB\xBF0" was not an integer label (and the CLI took the row for a header).
  REQUIRE(table.labels.equal(ember::tensor({0, 1})));
  REQUIRE(to_vector(table.features) == std::vector<double>{1.5, 2, 3, 4});
  data::CsvTable with_header = data::read_csv(file.path(), {.label_column = 0, .has_header = true});
  REQUIRE(with_header.header == std::vector<std::string>{"0", "1.5", "2"});
}

TEST_CASE("read_csv refuses features that are not finite float32 numbers", "[data][csv][hostile]") {
  TempFile file("ember_nonfinite.csv");
  for (const std::string cell : {"nan", "NaN", "inf", "-inf", "infinity", "1e39", "-3.5e38"}) {
    INFO(cell);
    file.write("label,a,b\n0,1,2\n1," + cell + ",4\n");
    REQUIRE_THROWS_AS(data::read_csv(file.path(), {.label_column = 0}), IOError);
    REQUIRE_THROWS_WITH(data::read_csv(file.path(), {.label_column = 0}),
                        Contains(file.path()) && Contains("line 3, column 2: \"" + cell +
                                                          "\" is not a finite float32 number"));
  }
  // The largest float32 is still a number.
  file.write("0,3.4028234e38\n");
  REQUIRE(to_vector(data::read_csv(file.path(), {.label_column = 0, .has_header = false}).features)[0] ==
          Approx(3.4028234e38));
}

TEST_CASE("read_idx stops inflating a gzip bomb at the size its header promises", "[data][idx][hostile]") {
  // A valid 1-element IDX file followed by 64 MiB of zeros (~64 KB compressed).
  TempFile bomb("ember_bomb-idx1-ubyte.gz");
  bomb.write_gzip(std::string("\x00\x00\x08\x01", 4) + big_endian(1) + "\x07" + std::string(64 << 20, '\0'));
  REQUIRE(std::filesystem::file_size(bomb.path()) < (1 << 20));
  // Before: the whole 64 MiB was inflated, then "67108864 bytes left over"; now the reader
  // stops 64 KiB past the promised data.
  REQUIRE_THROWS_AS(data::read_idx(bomb.path()), IOError);
  REQUIRE_THROWS_WITH(data::read_idx(bomb.path()),
                      Contains("more than 65536 bytes left over after the data for sizes [1]"));
}

TEST_CASE("read_idx refuses headers promising more than the file can hold", "[data][idx][hostile]") {
  TempFile file("ember_promise-idx4-ubyte");
  // 4 x (2^32 - 1) elements of 8 bytes: the byte count overflows 64 bits.
  const std::string huge = big_endian(0xFFFFFFFFu);
  file.write(std::string("\x00\x00\x0E\x04", 4) + huge + huge + huge + huge);
  REQUIRE_THROWS_WITH(data::read_idx(file.path()), Contains("promise more data than any file can hold"));
  // 60000 x 28 x 28 bytes promised by a 100-byte gzip file: refused before inflating.
  TempFile small("ember_promise-idx3-ubyte.gz");
  small.write_gzip(std::string("\x00\x00\x08\x03", 4) + big_endian(60000) + big_endian(28) + big_endian(28) + "abc");
  REQUIRE_THROWS_WITH(data::read_idx(small.path()), Contains("truncated: sizes [60000, 28, 28] need 47040000 bytes") &&
                                                        Contains("but the gzipped file is only"));
}

TEST_CASE("read_idx_dataset can leave the pixels unscaled", "[data][idx][hostile]") {
  const std::string dir = std::string(EMBER_SOURCE_DIR) + "/tests/data/fixtures/";
  auto raw = data::read_idx_dataset(dir + "images-idx3-ubyte.gz", dir + "labels-idx1-ubyte", /*scale_to_unit=*/false);
  auto scaled = data::read_idx_dataset(dir + "images-idx3-ubyte.gz", dir + "labels-idx1-ubyte");
  REQUIRE(to_vector(raw.get(2).data)[5] == 25.0);
  REQUIRE((raw.data() / 255.0).equal(scaled.data()));  // x / 255 bit for bit
}

TEST_CASE("DataLoader: a worker thread that cannot start is an ember::Error, the others joined",
          "[data][dataloader][hostile]") {
  auto dataset = std::make_shared<data::TensorDataset>(ember::arange(20, kFloat32).reshape({10, 2}),
                                                       ember::arange(10, kInt64));
  data::DataLoader loader(dataset, {.batch_size = 2, .num_workers = 8});
  std::atomic<int> started{0};
  data::detail::before_worker_start = [&](std::int64_t worker) {
    if (worker == 5) throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again));
    ++started;
  };
  // Before: the five running std::threads were destroyed joinable -> std::terminate.
  REQUIRE_THROWS_AS(loader.begin(), Error);
  REQUIRE_THROWS_WITH(loader.begin(), Contains("DataLoader: could not start worker thread 6 of 8 (") &&
                                          Contains("use fewer workers (num_workers)"));
  REQUIRE(started == 10);  // five per attempt
  data::detail::before_worker_start = nullptr;
  // The loader still works afterwards.
  std::int64_t batches = 0;
  for (auto& batch : loader) {
    REQUIRE(batch.data.size(0) == 2);
    ++batches;
  }
  REQUIRE(batches == 5);
}
