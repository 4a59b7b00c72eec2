// tests/nn/test_serialize.cpp — safetensors checkpoints: round trips, the layout of the
// bytes, every check of the reader (including sizes that overflow), atomic writes under a
// forced write failure, and interop with Python's safetensors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include <sys/resource.h>
#include <unistd.h>

#include <ember/ember.h>

#include "nn_test_helpers.h"

using namespace ember;
using Catch::Matchers::Contains;

namespace {

std::filesystem::path scratch_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("ember_serialize_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// A file made of an explicit header and a data section (for the reader's error paths).
std::string make_file(const std::string& header, const std::string& data, std::uint64_t declared_length = ~0ULL) {
  const std::uint64_t length = declared_length == ~0ULL ? header.size() : declared_length;
  std::string bytes;
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((length >> (8 * i)) & 0xFF));
  return bytes + header + data;
}

nn::StateDict sample_tensors() {
  nn::StateDict tensors;
  tensors.insert("weight", ember::tensor({{1.5, -2.0, 3.25}, {0.0, 4.0, -1.0}}));
  tensors.insert("steps", ember::tensor({1, 2, 3}));
  tensors.insert("flags", ember::tensor({true, false}));
  tensors.insert("scalar", ember::tensor(2.5, kFloat64));
  tensors.insert("empty", ember::zeros({0, 4}));
  tensors.insert("bytes", ember::tensor({7, 255}, kUInt8));
  tensors.insert("ints", ember::tensor({-5, 9}, kInt32));
  return tensors;
}

// Every file directly in `dir`, by name.
std::vector<std::string> directory_listing(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& item : std::filesystem::directory_iterator(dir)) names.push_back(item.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Lowers the limit on the size of files this process writes (RLIMIT_FSIZE) until the end
// of the scope: a write past it fails with EFBIG, which is how a full disk looks to the
// writer, and it works as root (unlike a read-only directory). SIGXFSZ, which the kernel
// also sends, is ignored for the same scope.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    REQUIRE(::getrlimit(RLIMIT_FSIZE, &saved_) == 0);
    previous_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    rlimit lowered = saved_;
    lowered.rlim_cur = bytes;
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &lowered) == 0);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, previous_handler_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  rlimit saved_{};
  void (*previous_handler_)(int) = SIG_DFL;
};

}  // namespace

TEST_CASE("save/load round-trips every dtype, 0-d and empty tensors", "[nn][serialize]") {
  auto dir = scratch_dir("roundtrip");
  const auto path = (dir / "tensors.safetensors").string();
  nn::StateDict tensors = sample_tensors();
  // A non-contiguous tensor is written row-major.
  tensors.insert("transposed", ember::tensor({{1.0, 2.0}, {3.0, 4.0}}).t());
  save(tensors, path, {{"format", "pt"}, {"epoch", "3"}});
  Metadata metadata;
  nn::StateDict loaded = load(path, &metadata);
  REQUIRE(metadata == Metadata{{"format", "pt"}, {"epoch", "3"}});
  REQUIRE(loaded.size() == tensors.size());
  for (const auto& [name, tensor] : tensors) {
    INFO(name);
    const Tensor& back = loaded.at(name);
    REQUIRE(back.dtype() == tensor.dtype());
    REQUIRE(back.sizes() == tensor.sizes());
    REQUIRE(back.equal(tensor));
  }
  // Nothing but the target is left in the directory (the temporary file was renamed).
  REQUIRE(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()) == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("the file layout is safetensors': u64 length, padded JSON header, data", "[nn][serialize]") {
  nn::StateDict tensors;
  tensors.insert("a", ember::tensor({1.0, 2.0}));
  const std::string bytes = save_to_bytes(tensors);
  std::uint64_t length = 0;
  for (int i = 0; i < 8; ++i) length |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  REQUIRE(length % 8 == 0);
  REQUIRE(bytes.size() == 8 + length + 8);
  const auto header = nlohmann::json::parse(bytes.substr(8, length));
  REQUIRE(header["a"]["dtype"] == "F32");
  REQUIRE(header["a"]["shape"] == nlohmann::json::array({2}));
  REQUIRE(header["a"]["data_offsets"] == nlohmann::json::array({0, 8}));
  REQUIRE_FALSE(header.contains("__metadata__"));
}

TEST_CASE("a model checkpoint restores the model", "[nn][serialize]") {
  auto dir = scratch_dir("model");
  const auto path = (dir / "model.safetensors").string();
  manual_seed(1);
  auto model = nn::sequential({std::make_shared<nn::Linear>(3, 4), std::make_shared<nn::ReLU>(),
                               std::make_shared<nn::Linear>(4, 2)});
  save(model->state_dict(), path);
  auto copy = nn::sequential({std::make_shared<nn::Linear>(3, 4), std::make_shared<nn::ReLU>(),
                              std::make_shared<nn::Linear>(4, 2)});
  copy->load_state_dict(load(path));
  Tensor x = ember::ones({2, 3});
  REQUIRE((*copy)(x).equal((*model)(x)));
  // Saving over an existing file replaces it.
  save(copy->state_dict(), path);
  REQUIRE(load(path).size() == 4);
  std::filesystem::remove_all(dir);
}

TEST_CASE("the reader rejects malformed files, naming file and tensor", "[nn][serialize]") {
  const std::string f32x2 = R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  const std::string eight(8, '\0');
  REQUIRE(load_from_bytes(make_file(f32x2, eight)).size() == 1);

  auto rejects = [](const std::string& bytes, const std::string& fragment) {
    INFO(fragment);
    REQUIRE_THROWS_AS(load_from_bytes(bytes, nullptr, "ckpt.safetensors"), IOError);
    REQUIRE_THROWS_WITH(load_from_bytes(bytes, nullptr, "ckpt.safetensors"),
                        Contains("ckpt.safetensors") && Contains(fragment));
  };
  rejects(std::string(5, '\0'), "too short");
  rejects(make_file(f32x2, eight, 200'000'000), "100 MB");
  rejects(make_file(f32x2, eight, f32x2.size() + 100), "runs past the end of the file");
  rejects(make_file("[1, 2, 3]", ""), "not a JSON object");
  rejects(make_file("{\"t\": ", ""), "not valid JSON");
  rejects(make_file(R"({"t":{"dtype":"Q7","shape":[2],"data_offsets":[0,8]}})", eight), "\"t\" has unknown dtype");
  rejects(make_file(R"({"t":{"dtype":"I16","shape":[4],"data_offsets":[0,8]}})", eight), "ember does not support");
  rejects(make_file(R"({"t":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", eight), "tensor \"t\" has 8 bytes");
  rejects(make_file(R"({"t":{"dtype":"F32","shape":[2]}})", eight), "tensor \"t\" needs");
  rejects(make_file(R"({"t":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", eight), "tensor \"t\" has a shape");
  rejects(make_file(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", eight), "end before they begin");
  rejects(make_file(f32x2, eight + "xx"), "bytes after the last tensor");
  rejects(make_file(f32x2, "1234"), "\"t\" runs past the end of the file");
  rejects(make_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                    R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                    eight + "1234"),
          "\"b\" has data_offsets that overlap");
  rejects(make_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", eight), "\"a\" has data_offsets that leave a gap");
  rejects(make_file(R"({"__metadata__":{"k":1}})", ""), "__metadata__ value of \"k\"");
  REQUIRE_THROWS_WITH(load("/nonexistent/dir/model.safetensors"), Contains("/nonexistent/dir/model.safetensors"));
  REQUIRE_THROWS_AS(save(sample_tensors(), "/nonexistent/dir/model.safetensors"), IOError);
}

TEST_CASE("the reader rejects sizes whose products overflow instead of crashing", "[nn][serialize]") {
  auto rejects = [](const std::string& header, const std::string& data, const std::string& fragment) {
    INFO(header);
    const std::string bytes = make_file(header, data);
    REQUIRE_THROWS_AS(load_from_bytes(bytes, nullptr, "big.safetensors"), IOError);
    REQUIRE_THROWS_WITH(load_from_bytes(bytes, nullptr, "big.safetensors"),
                        Contains("big.safetensors") && Contains("tensor \"t\"") && Contains(fragment));
  };
  // 2^62 float32 elements are 2^64 bytes, which wraps to 0 in 64 bits: an unchecked
  // product would accept data_offsets [0, 0] and build a tensor with 2^62 elements.
  rejects(R"({"t":{"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,0]}})", "",
          "size in bytes overflows");
  rejects(R"({"t":{"dtype":"F64","shape":[2305843009213693952],"data_offsets":[0,0]}})", "",
          "size in bytes overflows");
  // The element count itself overflows (2^32 * 2^32 = 2^64 -> 0).
  rejects(R"({"t":{"dtype":"U8","shape":[4294967296,4294967296],"data_offsets":[0,0]}})", "",
          "number of elements overflows");
  rejects(R"({"t":{"dtype":"U8","shape":[3037000500,3037000500],"data_offsets":[0,0]}})", "",
          "number of elements overflows");
  // A size above INT64_MAX cannot be an ember size, even where the product would be 0.
  rejects(R"({"t":{"dtype":"F32","shape":[9223372036854775808],"data_offsets":[0,0]}})", "",
          "shape entry 9223372036854775808, larger than the largest size (INT64_MAX)");
  rejects(R"({"t":{"dtype":"F32","shape":[0,18446744073709551615],"data_offsets":[0,0]}})", "",
          "larger than the largest size");
  // An empty tensor whose other sizes multiply past int64 would overflow its strides.
  rejects(R"({"t":{"dtype":"F32","shape":[0,4294967296,4294967296],"data_offsets":[0,0]}})", "",
          "number of elements overflows");
  // Numbers beyond 64 bits are not integers JSON can give us.
  rejects(R"({"t":{"dtype":"F32","shape":[18446744073709551616],"data_offsets":[0,0]}})", "", "not a non-negative integer");
  rejects(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,18446744073709551616]}})", std::string(8, '\0'),
          "needs data_offsets");
  // Offsets near 2^64 must not wrap around the end-of-file check.
  rejects(R"({"t":{"dtype":"U8","shape":[1],"data_offsets":[18446744073709551614,18446744073709551615]}})",
          std::string(8, '\0'), "leave a gap");
  // BOOL bytes other than 0 and 1 read as true (as numpy does), never as an invalid bool.
  const Tensor flags = load_from_bytes(make_file(R"({"t":{"dtype":"BOOL","shape":[3],"data_offsets":[0,3]}})",
                                                 std::string("\x00\x02\xff", 3)))
                           .at("t");
  REQUIRE(flags.equal(ember::tensor({false, true, true})));
  REQUIRE(flags.sum().item<std::int64_t>() == 2);
  // Largest legal sizes still load when they describe an empty tensor.
  const std::string empty_ok = R"({"t":{"dtype":"F32","shape":[0,9223372036854775807],"data_offsets":[0,0]}})";
  REQUIRE(load_from_bytes(make_file(empty_ok, "")).at("t").numel() == 0);
  // A header length near 2^64 is rejected before any arithmetic with it.
  REQUIRE_THROWS_WITH(load_from_bytes(make_file("{}", "", ~0ULL - 1), nullptr, "big.safetensors"),
                      Contains("big.safetensors") && Contains("100 MB"));
}

TEST_CASE("a failed save leaves the previous checkpoint intact and no temporary file", "[nn][serialize]") {
  auto dir = scratch_dir("atomic");
  const auto path = (dir / "model.safetensors").string();
  nn::StateDict small;
  small.insert("w", ember::tensor({1.0, 2.0}));
  save(small, path);
  const std::string before = ember::testing::read_file(path);

  nn::StateDict large;
  large.insert("w", ember::ones({4096}));  // 16 KiB of data: past the limit below
  {
    // A "disk" that fills up after 1 KiB: the temporary file's write fails part way.
    FileSizeLimit limit(1024);
    REQUIRE_THROWS_AS(save(large, path), IOError);
    REQUIRE_THROWS_WITH(save(large, path), Contains("cannot write") && Contains(".model.safetensors.tmp."));
  }
  REQUIRE(ember::testing::read_file(path) == before);
  REQUIRE(load(path).at("w").equal(small.at("w")));
  REQUIRE(directory_listing(dir) == std::vector<std::string>{"model.safetensors"});

  // The target is a directory: refused before a temporary file exists (nn/atomic_file.h).
  const auto blocked = dir / "blocked.safetensors";
  std::filesystem::create_directories(blocked / "keep");
  REQUIRE_THROWS_WITH(save(small, blocked.string()), Contains("it is a directory, not a regular file"));
  REQUIRE(std::filesystem::is_directory(blocked / "keep"));
  REQUIRE(directory_listing(dir) == std::vector<std::string>{"blocked.safetensors", "model.safetensors"});

  // The temporary file cannot be created (no such directory): nothing is touched.
  REQUIRE_THROWS_WITH(save(small, (dir / "missing" / "model.safetensors").string()),
                      Contains("cannot create") && Contains("missing"));
  REQUIRE(directory_listing(dir) == std::vector<std::string>{"blocked.safetensors", "model.safetensors"});

  // After the failures a save works again and replaces the file.
  save(large, path);
  REQUIRE(load(path).at("w").equal(large.at("w")));
  REQUIRE(directory_listing(dir) == std::vector<std::string>{"blocked.safetensors", "model.safetensors"});
  std::filesystem::remove_all(dir);
}

TEST_CASE("files interoperate with Python's safetensors (numpy side)", "[nn][serialize][interop]") {
  const std::optional<std::string> python = ember::testing::find_python("safetensors.numpy, numpy");
  // CI installs safetensors (.ci/run): there a missing module is a broken setup, not a skip.
  EMBER_REQUIRE_IN_CI(python.has_value(), "no python3 can import safetensors and numpy (pip install safetensors numpy)");
  auto dir = scratch_dir("interop");
  const auto ember_file = (dir / "from_ember.safetensors").string();
  const auto python_file = (dir / "from_python.safetensors").string();
  save(sample_tensors(), ember_file, {{"source", "ember"}});

  // Python reads ember's file and checks every value, then writes its own file.
  const std::string script = dir.string() + "/check.py";
  std::ofstream(script) << R"(import sys
import numpy as np
from safetensors import safe_open
from safetensors.numpy import load_file, save_file
t = load_file(sys.argv[1])
assert t["weight"].dtype == np.float32 and t["weight"].tolist() == [[1.5, -2.0, 3.25], [0.0, 4.0, -1.0]]
assert t["steps"].dtype == np.int64 and t["steps"].tolist() == [1, 2, 3]
assert t["flags"].dtype == np.bool_ and t["flags"].tolist() == [True, False]
assert t["scalar"].dtype == np.float64 and t["scalar"].shape == () and float(t["scalar"]) == 2.5
assert t["empty"].shape == (0, 4)
assert t["bytes"].dtype == np.uint8 and t["bytes"].tolist() == [7, 255]
assert t["ints"].dtype == np.int32 and t["ints"].tolist() == [-5, 9]
with safe_open(sys.argv[1], framework="np") as f:
    assert f.metadata() == {"source": "ember"}
save_file({"x": np.arange(6, dtype=np.float32).reshape(2, 3) / 4,
           "y": np.array([3, -1], dtype=np.int64),
           "z": np.array([[True], [False]])}, sys.argv[2], metadata={"made_by": "python"})
print("ok")
)";
  const std::string command = "'" + *python + "' " + script + " " + ember_file + " " + python_file;
  int exit_code = 0;
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[256] = {};
  std::string output;
  while (std::fgets(buffer, sizeof buffer, pipe)) output += buffer;
  exit_code = pclose(pipe);
  REQUIRE(exit_code == 0);
  REQUIRE(output == "ok\n");

  Metadata metadata;
  nn::StateDict from_python = load(python_file, &metadata);
  REQUIRE(metadata.at("made_by") == "python");
  REQUIRE(from_python.at("x").equal(ember::arange(6, kFloat32).reshape({2, 3}) / 4.0));
  REQUIRE(from_python.at("y").equal(ember::tensor({3, -1})));
  REQUIRE(from_python.at("z").equal(ember::tensor({{true}, {false}})));
  std::filesystem::remove_all(dir);
}

TEST_CASE("files load in safetensors.torch when Debian's PyTorch has it", "[nn][serialize][interop]") {
  const std::optional<std::string> python = ember::testing::find_python("safetensors.torch, torch");
  if (!python) {
    ember::testing::mark_skipped("no python3 has both torch and safetensors; the numpy-side interop test covers the format");
    return;
  }
  auto dir = scratch_dir("torch_interop");
  const auto path = (dir / "model.safetensors").string();
  manual_seed(123);
  nn::Linear lin(3, 2);
  save(lin.state_dict(), path);
  const std::string command = "'" + *python + "' -c \"import torch; from safetensors.torch import load_file; "
                              "torch.manual_seed(123); lin = torch.nn.Linear(3, 2); t = load_file('" + path +
                              "'); assert torch.equal(t['weight'], lin.weight.detach()); "
                              "assert torch.equal(t['bias'], lin.bias.detach())\"";
  REQUIRE(std::system(command.c_str()) == 0);
  // And the other way: safetensors.torch writes, ember reads.
  const auto from_torch = (dir / "from_torch.safetensors").string();
  const std::string write = "'" + *python + "' -c \"import torch; from safetensors.torch import save_file; "
                            "save_file({'w': torch.arange(6, dtype=torch.float64).reshape(2, 3) / 8, "
                            "'i': torch.tensor([1, -2], dtype=torch.int32)}, '" + from_torch + "')\"";
  REQUIRE(std::system(write.c_str()) == 0);
  nn::StateDict loaded = load(from_torch);
  REQUIRE(loaded.at("w").equal(ember::arange(6, kFloat64).reshape({2, 3}) / 8.0));
  REQUIRE(loaded.at("i").equal(ember::tensor({1, -2}, kInt32)));
  std::filesystem::remove_all(dir);
}
