// tests/nn/test_serialize_fuzz_findings.cpp — inputs that the libFuzzer harnesses of
// tests/fuzz/ found to break the safetensors writer or reader, each kept as a regression test.
#include <catch2/catch.hpp>

#include <ember/ember.h>

using namespace ember;
using Catch::Matchers::Contains;

TEST_CASE("save refuses metadata and names that are not UTF-8 with a ValueError", "[nn][serialize][fuzz]") {
  // checkpoint_fuzzer: a metadata value holding byte 0xDF made nlohmann's dump() throw its
  // own type_error out of ember::save ("invalid UTF-8 byte at index 129: 0xDF").
  nn::StateDict tensors;
  tensors.insert("weight", ember::zeros({2}));
  const Metadata bad_value = {{"config", "{\"class_names\": [\"caf\xDF\"]}"}};
  REQUIRE_THROWS_AS(save_to_bytes(tensors, bad_value), ValueError);
  REQUIRE_THROWS_WITH(save_to_bytes(tensors, bad_value),
                      Contains("metadata value of \"config\" is not valid UTF-8"));
  REQUIRE_THROWS_AS(save_to_bytes(tensors, {{"k\xFF", "v"}}), ValueError);

  nn::StateDict bad_name;
  bad_name.insert("w\xC3", ember::zeros({2}));
  REQUIRE_THROWS_AS(save_to_bytes(bad_name), ValueError);
  REQUIRE_THROWS_WITH(save_to_bytes(bad_name), Contains("tensor name") && Contains("is not valid UTF-8"));
  // Valid UTF-8 beyond ASCII still saves and loads back.
  Metadata metadata_back;
  load_from_bytes(save_to_bytes(tensors, {{"name", "caf\xC3\xA9"}}), &metadata_back);
  REQUIRE(metadata_back.at("name") == "caf\xC3\xA9");
}
