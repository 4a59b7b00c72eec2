// tests/apps/test_cli_gpt.cpp — `ember train --model gpt` (issue 21): per-step losses, learning
// rates and evaluations equal the same loop in PyTorch (tests/reference/gen_cli_gpt.py, three
// configurations on tests/apps/fixtures/words-sample.txt: constant lr, cosine with warm-up and
// clipping, dropout without weight decay), the checkpoint's contents, flags that do not fit
// (exit 2, an output that is the input among them) and data that cannot train (exit 1: too
// short, invalid UTF-8), Ctrl-C saving the model, and --resume continuing a run exactly.
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

#include <ember/ember.h>

#include "gpt_test_helpers.h"
#include "test_cli_helpers.h"

using namespace ember;
using namespace ember::testing;
using namespace ember::testing::cli;

namespace {

std::string joined(const nlohmann::json& flags) {
  std::string out;
  for (const auto& flag : flags) {
    out += ' ';
    out += flag.get<std::string>();
  }
  return out;
}

}  // namespace

TEST_CASE("ember train --model gpt: every step's loss and lr and every evaluation are PyTorch's",
          "[cli][gpt]") {
  const auto reference = load_reference("cli_gpt.json");
  for (const auto& c : reference["configs"]) {
    SECTION(c["name"].get<std::string>()) {
      ScratchDir scratch("gpt_parity");
      const std::string log = scratch / "log.jsonl", checkpoint = scratch / "gpt.st";
      run_ok("train --device cpu --data text:" + sample_text() + joined(c["flags"]) + " --log-every 1 --log " + log +
             " --save " + checkpoint + " --quiet");
      require_log_matches(log, c);
      REQUIRE(events_of(log, "summary").size() == 1);
      const nlohmann::json summary = events_of(log, "summary")[0];
      REQUIRE(summary["val_loss"].get<double>() == Approx(c["evals"].back()["val_loss"].get<double>()).epsilon(1e-4));
      REQUIRE(summary["steps"] == c["steps"].size());

      // ember sample on the trained model: PyTorch's text, with and without the KV cache.
      for (const auto& sample : c["samples"]) {
        const std::string prompt = sample["prompt"];
        std::string arguments = "sample --device cpu --checkpoint " + checkpoint + " --tokens " +
                                std::to_string(sample["tokens"].get<int>()) + " --temperature " +
                                sample["temperature"].dump() + " --top-k " + sample["top_k"].dump() + " --seed " +
                                sample["seed"].dump() + " --num-samples " + sample["num_samples"].dump();
        if (prompt != "\n") arguments += " --prompt " + prompt;
        INFO("ember " << arguments);
        REQUIRE(run_ok(arguments) == sample["output"].get<std::string>());
        REQUIRE(run_ok(arguments + " --no-cache") == sample["output"].get<std::string>());
      }
    }
  }
}

TEST_CASE("ember sample: prompts and checkpoints it cannot use are clear errors", "[cli][gpt][usage]") {
  ScratchDir scratch("gpt_sample_errors");
  const std::string checkpoint = scratch / "gpt.st";
  run_ok("train --model gpt --device cpu --data text:" + sample_text() +
         " --block-size 8 --n-layer 1 --n-head 2 --n-embd 8 --batch-size 4 --max-steps 1 --quiet --save " + checkpoint);
  const std::string sample = "sample --device cpu --checkpoint " + checkpoint + " ";
  check_failures({
      {sample + "--prompt 'a~b'", "--prompt: ", 2},  // '~' is not in the word list's vocabulary
      {sample + "--prompt ''", "--prompt is empty", 2},
      {sample + "--temperature 0", "--temperature", 2},
      {sample + "--tokens 0", "--tokens", 2},
      {sample + "--top-k -1", "--top-k", 2},
      {"sample --device cpu --checkpoint " + scratch.str(), "--checkpoint", 2},
      {"sample --device cpu --checkpoint " + std::string(EMBER_SOURCE_DIR) + "/tests/apps/fixtures/words-sample.txt",
       "words-sample.txt", 1},
  });
}

TEST_CASE("ember train --model gpt --save writes the model, the vocabulary and the optimizer", "[cli][gpt]") {
  ScratchDir scratch("gpt_save");
  const std::string checkpoint = scratch / "gpt.st";
  const std::string output = run_ok("train --model gpt --device cpu --data text:" + sample_text() +
                                    " --block-size 8 --n-layer 1 --n-head 2 --n-embd 8 --batch-size 4 --max-steps 3 "
                                    "--save " + checkpoint);
  REQUIRE_THAT(output, Catch::Contains("trained 3 steps"));
  ember::Metadata metadata;
  auto tensors = ember::load(checkpoint, &metadata);
  REQUIRE(metadata.at("format") == "ember-gpt-checkpoint/1");
  REQUIRE(metadata.at("step") == "3");
  const auto config = nlohmann::json::parse(metadata.at("config"));
  REQUIRE(config["model"] == "gpt");
  REQUIRE(config["block_size"] == 8);
  const std::string vocabulary = config["vocabulary"];
  REQUIRE(config["vocab_size"] == 65);
  REQUIRE(vocabulary.find("\xC3\xA9") != std::string::npos);  // é
  REQUIRE(tensors.contains("model.transformer.wte.weight"));
  REQUIRE(tensors.contains("model.lm_head.weight"));
  REQUIRE(tensors.at("model.transformer.wte.weight").sizes() == Shape{65, 8});
  REQUIRE(tensors.contains("optimizer.param_groups.1.weight_decay"));
  REQUIRE(tensors.at("optimizer.param_groups.1.weight_decay").item<double>() == 0.0);
  REQUIRE(tensors.at("optimizer.param_groups.0.weight_decay").item<double>() == Approx(0.1));

  // ember info describes it; ember eval, which reads classifiers, says what it is.
  const std::string info = run_ok("info --checkpoint " + checkpoint);
  REQUIRE_THAT(info, Catch::Contains("model:      GPT, ") && Catch::Contains("(1 layer, 2 heads, width 8, context 8, "
                                                                              "vocabulary 65 characters)") &&
                         Catch::Contains("trained:    3 steps, on text:") && Catch::Contains("(c_attn): Linear("));
  const auto config_file = nlohmann::json::parse(run_ok("info --checkpoint " + checkpoint + " --print-config"));
  REQUIRE(config_file["max-steps"] == 3);
  int code = -1;
  const std::string eval = run_ember("eval --checkpoint " + checkpoint, &code);
  REQUIRE(code == 1);
  REQUIRE_THAT(eval, Catch::Contains("a GPT's checkpoint (ember train --model gpt)"));
}

TEST_CASE("ember train --model gpt: flags that do not fit are usage errors (exit 2)", "[cli][gpt][usage]") {
  const std::string gpt = "train --model gpt --device cpu --data text:" + sample_text() + " ";
  check_failures({
      {gpt + "--hidden 10", "--hidden: --model gpt does not take it"},
      {gpt + "--epochs 3", "--epochs: --model gpt does not take it"},
      {gpt + "--grad-accum 2", "--grad-accum: --model gpt does not take it"},
      {gpt + "--save " + sample_text(), "the checkpoint would replace it"},
      {gpt + "--n-embd 10 --n-head 4", "--n-embd 10 must be a multiple of --n-head 4"},
      {gpt + "--optimizer sgd", "--model gpt trains with adamw or adam"},
      {gpt + "--lr-schedule onecycle", "constant or cosine"},
      {gpt + "--lr-schedule cosine --warmup-steps 10 --max-steps 10", "shorter than --max-steps"},
      {gpt + "--dropout 1", "use [0, 1)"},
      {gpt + "--block-size 0", "--block-size"},
      {"train --model gpt --device cpu --data toy", "--model gpt trains on text"},
      {"train --device cpu --data text:" + sample_text(), "use it with --model gpt"},
      {"train --device cpu --data toy --n-layer 2", "--n-layer: only --model gpt takes it"},
  });
}

TEST_CASE("ember train --model gpt: text it cannot train on is an error (exit 1), nothing overwritten",
          "[cli][gpt]") {
  ScratchDir scratch("gpt_hostile");
  const std::string short_text = scratch / "short.txt", bad_utf8 = scratch / "bad.txt";
  write_bytes(short_text, "abcdefghij");
  write_bytes(bad_utf8, "hello\xFFworld");
  const std::string flags = " --model gpt --device cpu --max-steps 1 --n-layer 1 --n-embd 8 --n-head 2 ";
  check_failures({
      {"train" + flags + "--data text:" + short_text + " --block-size 8",
       "its validation split has 1 characters; --block-size 8 needs at least 9", 1},
      {"train" + flags + "--data text:" + bad_utf8, "invalid UTF-8 at byte 5", 1},
      {"train" + flags + "--data text:" + scratch.str(), "not a regular file", 1},
  });
  REQUIRE(read_file(short_text) == "abcdefghij");
}

TEST_CASE("ember train --model gpt: Ctrl-C saves the model of the last step and exits 130", "[cli][gpt]") {
  ScratchDir scratch("gpt_interrupt");
  const std::string checkpoint = scratch / "gpt.st", log = scratch / "log.jsonl";
  auto run = run_ember_interrupted(scratch,
                                   "train --model gpt --device cpu --data text:" + sample_text() +
                                       " --block-size 8 --n-layer 1 --n-head 2 --n-embd 8 --batch-size 4 "
                                       "--max-steps 1000000 --eval-every 0 --log-every 1 --log " + log +
                                       " --save " + checkpoint,
                                   "grep -q '\"step\":5' '" + log + "'");
  INFO(run.output);
  REQUIRE(run.exit_code == 130);
  REQUIRE_THAT(run.output, Catch::Contains("the model at that step is in " + checkpoint));
  ember::Metadata metadata;
  ember::load(checkpoint, &metadata);
  REQUIRE(std::stoll(metadata.at("step")) >= 5);
}

TEST_CASE("ember train --model gpt --resume continues the run exactly, and refuses other options",
          "[cli][gpt][resume]") {
  ScratchDir scratch("gpt_resume");
  const std::string whole = scratch / "whole.jsonl", part = scratch / "part.jsonl", checkpoint = scratch / "gpt.st";
  const std::string flags = "train --model gpt --device cpu --data text:" + sample_text() +
                            " --block-size 8 --n-layer 1 --n-head 2 --batch-size 4 --eval-every 4 "
                            "--eval-batches 2 --clip-grad-norm 1 --log-every 1 --quiet";
  const std::string same = flags + " --lr 0.003 --n-embd 8";
  run_ok(same + " --max-steps 12 --log " + whole);
  // The same run stopped after 8 steps (its checkpoint is written at the evaluation of step 8),
  // then resumed to 12 with the same log: the log cut back to step 8 and continued.
  run_ok(same + " --max-steps 8 --save " + checkpoint + " --log " + part);
  REQUIRE(events_of(part, "summary").size() == 1);
  const std::string resumed = run_ok(same + " --max-steps 12 --resume " + checkpoint + " --save " + checkpoint +
                                     " --log " + part);
  INFO(resumed);
  require_resumed_log_equals(part, whole, 12, 3);
  REQUIRE(events_of(part, "summary").size() == 1);  // the first run's summary was cut
  ember::Metadata metadata;
  ember::load(checkpoint, &metadata);
  REQUIRE(metadata.at("step") == "12");

  // Options that change the numbers: an error listing them (exit 1), unless
  // --allow-config-change; a model of another shape or a --max-steps below the checkpoint's
  // step are refused too.
  int code = -1;
  std::string output = run_ember(flags + " --n-embd 8 --max-steps 12 --lr 0.01 --resume " + checkpoint, &code);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("--lr: checkpoint 0.003, now 0.01"));
  output = run_ember(flags + " --n-embd 8 --max-steps 16 --lr 0.01 --allow-config-change --resume " + checkpoint, &code);
  CHECK(code == 0);
  CHECK_THAT(output, Catch::Contains("continuing " + checkpoint + " with other options"));
  output = run_ember(same + " --max-steps 4 --resume " + checkpoint, &code);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("--max-steps 4 is below the step of"));
  output = run_ember(flags + " --lr 0.003 --max-steps 20 --n-embd 16 --allow-config-change --resume " + checkpoint, &code);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("is not the one these flags describe"));
}

TEST_CASE("ember sample: a crafted GPT checkpoint is an error naming the file, before any model is built",
          "[cli][gpt][hostile]") {
  ScratchDir scratch("gpt_crafted");
  const std::string good = scratch / "gpt.st";
  run_ok("train --model gpt --device cpu --data text:" + sample_text() +
         " --block-size 8 --n-layer 1 --n-head 2 --n-embd 8 --batch-size 4 --max-steps 1 --quiet --save " + good);
  ember::Metadata metadata;
  const auto tensors = ember::load(good, &metadata);
  const auto config = nlohmann::json::parse(metadata.at("config"));
  auto crafted = [&](const std::string& name, const std::function<void(nlohmann::json&, ember::Metadata&)>& edit) {
    nlohmann::json c = config;
    ember::Metadata m = metadata;
    edit(c, m);
    m["config"] = c.dump();
    const std::string path = scratch / name;
    ember::save(tensors, path, m);
    return path;
  };
  const std::string huge = crafted("huge.st", [](nlohmann::json& c, ember::Metadata&) { c["n_embd"] = 1 << 30; });
  const std::string unsorted = crafted("unsorted.st", [](nlohmann::json& c, ember::Metadata&) {
    std::string v = c["vocabulary"];
    std::swap(v[0], v[1]);
    c["vocabulary"] = v;
  });
  const std::string short_vocabulary = crafted("short.st", [](nlohmann::json& c, ember::Metadata&) {
    c["vocabulary"] = c["vocabulary"].get<std::string>().substr(1);
  });
  const std::string bad_step = crafted("step.st", [](nlohmann::json&, ember::Metadata& m) { m["step"] = "-3"; });
  const std::string classifier_format = crafted("format.st", [](nlohmann::json&, ember::Metadata& m) {
    m["format"] = "ember-cli-checkpoint/1";
  });
  const std::string missing_rank = crafted("ranks.st", [](nlohmann::json&, ember::Metadata& m) {
    m["world_size"] = std::string("3");  // (assigning the literal itself trips GCC 12's -Wrestrict false positive)
  });
  const std::string many_ranks = crafted("many.st", [](nlohmann::json&, ember::Metadata& m) { m["world_size"] = "99999999"; });
  const std::string sample = "sample --device cpu --tokens 5 --checkpoint ";
  check_failures({
      {sample + huge, "does not match its", 1},
      {sample + unsorted, "unsorted.st", 1},
      {sample + short_vocabulary, "its vocabulary has 64 characters for vocab_size 65", 1},
      {sample + bad_step, "the checkpoint's step \"-3\" is not a non-negative whole number", 1},
      {sample + classifier_format, "not a GPT checkpoint", 1},
      {sample + missing_rank, "(no \"generator.rank1\" in its metadata)", 1},
      {sample + many_ranks, "its world_size 99999999 is not between 1 and 65536", 1},
      {"train --model gpt --device cpu --data text:" + sample_text() +
           " --block-size 8 --n-layer 1 --n-head 2 --n-embd 8 --batch-size 4 --max-steps 2 --resume " + huge,
       "width 1073741824) is not the one these flags describe", 1},
  });
}
