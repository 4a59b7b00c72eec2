// tests/apps/test_cli_hostile_files.cpp — `ember train` output paths that could destroy something.
//
// The contract (apps/cli/output_paths.h, nn/atomic_file.h, metrics_log.h, interrupt.h):
//   - an output that is an input (the data, an IDX file, the --resume checkpoint for --log)
//     or the other output is refused before anything is read or written: exit code 2;
//   - --save onto something that is not a regular file is refused (exit code 2), a symlink
//     is written through (the link stays a link); --log may be a FIFO or a device;
//   - a --save name that only the temporary suffix makes too long, or a directory that
//     refuses new files (/proc), fails before training;
//   - a metrics-log write error stops the run with exit code 1 and the reason, and so does
//     output that never reached stdout;
//   - SIGTERM stops like Ctrl-C, exit code 143; leftover temporary files of a killed writer
//     are removed by the next save, and only they;
//   - a resumed run's log holds each step once: the lines of the interrupted run after its
//     checkpoint are cut away.
// Nothing here touches a real device node: /dev/null is only ever reached through a symlink
// in the scratch directory, so even a broken build cannot replace it.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include <ember/nn/serialize.h>

#include "test_cli_helpers.h"

using namespace ember::testing;
using namespace ember::testing::cli;
namespace fs = std::filesystem;

namespace {

const std::string kToy = "train --data toy --hidden 4 --batch-size 2 --lr 0.2 --seed 3 --quiet";

// A pid that certainly belonged to a process which has exited (a child, reaped).
pid_t dead_pid() {
  pid_t child = fork();
  if (child == 0) _exit(0);
  int status = 0;
  waitpid(child, &status, 0);
  return child;
}

// The log's lines without their timings: what must be equal between runs.
std::vector<nlohmann::json> without_timings(std::vector<nlohmann::json> entries) {
  for (auto& entry : entries) {
    entry.erase("samples_per_s");
    entry.erase("elapsed_s");
  }
  return entries;
}

}  // namespace

TEST_CASE("ember train refuses an output path that is one of its inputs or the other output, exit code 2",
          "[cli][files]") {
  ScratchDir scratch("same_paths");
  std::string idx = copy_idx_fixtures(scratch);
  std::string csv = scratch / "data.csv";
  fs::copy(fixtures_dir() + "/tiny.csv", csv);
  const std::string csv_before = read_file(csv);
  std::string checkpoint = scratch / "ck.st";
  int code = -1;
  run_ember(kToy + " --epochs 1 --save " + checkpoint, &code);
  REQUIRE(code == 0);
  const std::string checkpoint_before = read_file(checkpoint);
  fs::create_symlink(csv, scratch / "link-to-data.csv");
  const std::string images = idx + "/train-images-idx3-ubyte.gz";
  const std::string images_before = read_file(images);

  struct Case {
    std::string flags;
    std::string message;
  };
  const Case cases[] = {
      {"--data csv:" + csv + " --log " + csv,
       "--log " + csv + " is the same file as the --data csv:" + csv + " file " + csv + ": the metrics log would overwrite it"},
      {"--data csv:" + csv + " --save " + csv,
       "--save " + csv + " is the same file as the --data csv:" + csv + " file " + csv + ": the checkpoint would replace it"},
      // Another spelling of the same file, and a symlink to it.
      {"--data csv:" + csv + " --log " + scratch.str() + "/./../" + fs::path(scratch.str()).filename().string() +
           "/data.csv",
       "is the same file as the --data csv:" + csv + " file"},
      {"--data csv:" + csv + " --log " + scratch / "link-to-data.csv", "is the same file as the --data csv:"},
      {"--data idx:" + idx + " --log " + images,
       "--log " + images + " is the same file as the --data idx:" + idx + " file " + images},
      {"--data idx:" + idx + " --save " + images, "the checkpoint would replace it"},
      {"--data toy --resume " + checkpoint + " --log " + checkpoint,
       "--log " + checkpoint + " is the same file as the --resume checkpoint " + checkpoint},
      // Two outputs on one (new) file.
      {"--data toy --save " + scratch / "out.st" + " --log " + scratch / "out.st",
       "--log " + scratch / "out.st" + " is the same file as the --save checkpoint " + scratch / "out.st" +
           ": the metrics log and the checkpoint would overwrite each other"},
  };
  for (const Case& c : cases) {
    INFO(c.flags);
    // The check comes before anything is read: no --resume option check, no data loaded.
    std::string output = run_ember("train --hidden 4 --batch-size 2 --epochs 1 --quiet " + c.flags, &code);
    INFO(output);
    CHECK(code == 2);
    CHECK_THAT(output, Catch::Contains("ember: error: "));
    CHECK_THAT(output, Catch::Contains(c.message));
    CHECK_THAT(output, !Catch::Contains("Summary"));
  }
  CHECK(read_file(csv) == csv_before);
  CHECK(read_file(images) == images_before);
  CHECK(read_file(checkpoint) == checkpoint_before);
  CHECK(!fs::exists(scratch / "out.st"));

  // --save onto the --resume checkpoint continues a run in place: still allowed.
  run_ember(kToy + " --epochs 2 --resume " + checkpoint + " --save " + checkpoint, &code);
  CHECK(code == 0);
  ember::Metadata metadata;
  ember::load(checkpoint, &metadata);
  CHECK(metadata.at("epoch") == "2");
}

TEST_CASE("ember train --save refuses a FIFO or device and writes through a symlink", "[cli][files]") {
  ScratchDir scratch("save_targets");
  int code = -1;

  SECTION("a FIFO stays a FIFO") {
    std::string fifo = scratch / "pipe";
    REQUIRE(mkfifo(fifo.c_str(), 0644) == 0);
    std::string output = run_ember(kToy + " --epochs 1 --save " + fifo, &code);
    INFO(output);
    CHECK(code == 2);
    CHECK_THAT(output, Catch::Contains("ember: error: --save " + fifo +
                                       ": is a FIFO (named pipe), not a regular file (a checkpoint replaces its file"));
    CHECK(fs::is_fifo(fs::symlink_status(fifo)));
  }

  SECTION("a symlink to /dev/null: refused, and the link stays") {
    std::string link = scratch / "null-link";
    fs::create_symlink("/dev/null", link);
    std::string output = run_ember(kToy + " --epochs 1 --save " + link, &code);
    INFO(output);
    CHECK(code == 2);
    CHECK_THAT(output, Catch::Contains("--save " + link + ": is a character device, not a regular file"));
    CHECK(fs::is_symlink(fs::symlink_status(link)));
    CHECK(fs::is_character_file(fs::status("/dev/null")));
  }

  SECTION("a symlink to a checkpoint is written through, the link kept") {
    fs::create_directories(scratch / "store");
    std::string target = scratch / "store/real.st", link = scratch / "latest.st";
    fs::create_symlink("store/real.st", link);  // relative, and dangling until the first save
    run_ember(kToy + " --epochs 1 --save " + link, &code);
    REQUIRE(code == 0);
    CHECK(fs::is_symlink(fs::symlink_status(link)));
    ember::Metadata metadata;
    ember::load(target, &metadata);
    CHECK(metadata.at("epoch") == "1");
    // A second save replaces the target again, never the link.
    run_ember(kToy + " --epochs 2 --resume " + link + " --save " + link, &code);
    REQUIRE(code == 0);
    CHECK(fs::is_symlink(fs::symlink_status(link)));
    ember::load(target, &metadata);
    CHECK(metadata.at("epoch") == "2");
    // Nothing else was left in either directory.
    CHECK(std::distance(fs::directory_iterator(scratch / "store"), fs::directory_iterator()) == 1);
  }
}

TEST_CASE("ember train --save checks the real temporary name before training", "[cli][files]") {
  ScratchDir scratch("save_precheck");
  int code = -1;
  // 250 characters: a valid name (NAME_MAX is 255) that ".NAME.tmp.<pid>.<n>" makes too long.
  std::string long_name = scratch / std::string(250, 'c');
  // --data names a directory that does not exist: the path check must come first.
  std::string output = run_ember("train --data idx:" + scratch / "no-data" + " --quiet --save " + long_name, &code);
  INFO(output);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("ember: error: --save " + long_name + ": cannot save to " + long_name +
                                     ": cannot create the temporary file"));
  CHECK_THAT(output, Catch::Contains("File name too long"));
  CHECK_THAT(output, !Catch::Contains("no-data"));
  CHECK(!fs::exists(long_name));

  // /proc refuses new files even to root (who passes the access() check).
  output = run_ember("train --data idx:" + scratch / "no-data" + " --quiet --save /proc/ember-ck.st", &code);
  INFO(output);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("ember: error: --save /proc/ember-ck.st: "));
  CHECK_THAT(output, !Catch::Contains("no-data"));
}

TEST_CASE("ember train stops with exit code 1 when the metrics log cannot be written", "[cli][files]") {
  int code = -1;
  std::string output = run_ember(kToy + " --epochs 2 --log /dev/full", &code);
  INFO(output);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("ember: error: --log /dev/full: cannot write the metrics log (No space left on device)"));
  CHECK_THAT(output, !Catch::Contains("Summary"));

  // A log on a character device that works is fine: /dev/stdout shows the JSON lines.
  output = run_ember(kToy + " --epochs 1 --log /dev/stdout", &code);
  INFO(output);
  CHECK(code == 0);
  CHECK_THAT(output, Catch::Contains("\"event\":\"epoch\""));
  CHECK_THAT(output, Catch::Contains("\"event\":\"summary\""));
}

TEST_CASE("ember train whose output cannot reach stdout fails with exit code 1", "[cli][files]") {
  int code = -1;
  // stderr to the test, stdout to a full disk: the summary is lost, so the run failed.
  std::string output = run_program("ember", kToy + " --epochs 1 2>&1 >/dev/full", &code);
  INFO(output);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::StartsWith("ember: error: cannot write to stdout ("));
}

TEST_CASE("SIGTERM stops ember train like Ctrl-C, with exit code 143", "[cli][files][interrupt]") {
  ScratchDir scratch("sigterm");
  std::string checkpoint = scratch / "ck.st";
  InterruptedRun run = run_ember_signalled(scratch, kToy + " --epochs 100000000 --save " + checkpoint,
                                           "test -f '" + checkpoint + "' && sleep 0.2", "TERM");
  INFO(run.output);
  CHECK(run.exit_code == 143);
  std::regex stop("ember: terminated by SIGTERM (during epoch \\d+ \\(after batch \\d+ of 3\\)|before epoch \\d+ "
                  "started); the checkpoint of epoch (\\d+) in " + checkpoint + " is intact\n");
  std::smatch match;
  REQUIRE(std::regex_search(run.output, match, stop));
  ember::Metadata metadata;
  ember::load(checkpoint, &metadata);
  CHECK(metadata.at("epoch") == match[2].str());
  // No temporary file of the checkpoint is left behind.
  for (const auto& entry : fs::directory_iterator(scratch.str())) {
    CHECK(entry.path().filename().string().find(".ck.st.tmp.") == std::string::npos);
  }
}

TEST_CASE("SIGTERM while the data set loads stops ember train before the first epoch, with its message",
          "[cli][files][interrupt]") {
  // A CSV file large enough that reading it takes a while; the signal is sent once ember has
  // it open (its /proc/PID/fd), i.e. during the load, before any model exists. Without
  // handlers by then, ember would die by the signal without a word.
  ScratchDir scratch("sigterm_loading");
  const std::string data = scratch / "data.csv", checkpoint = scratch / "ck.st";
  std::string rows = "label";
  for (int c = 0; c < 24; ++c) rows += ",p" + std::to_string(c);
  rows += "\n";
  for (int r = 0; r < 150000; ++r) {
    rows += std::to_string(r % 3);
    for (int c = 0; c < 24; ++c) {  // appended piece by piece: `"," + to_string(...)` trips GCC 12's -Wrestrict
      rows += ',';
      rows += std::to_string((r * 7 + c * 13) % 256);
    }
    rows += "\n";
  }
  write_bytes(data, rows);
  InterruptedRun run = run_ember_signalled(scratch, "train --data csv:" + data + " --hidden 5 --epochs 1 --save " + checkpoint,
                                           "ls -l /proc/$pid/fd 2>/dev/null | grep -q data.csv", "TERM");
  INFO(run.output);
  CHECK(run.exit_code == 143);
  // Almost always "before epoch 1 started"; on a machine fast enough to finish reading
  // between two polls the signal may land in the first epoch instead: handled just the same.
  std::regex stop("ember: terminated by SIGTERM (before epoch 1 started|during epoch 1 \\(after batch \\d+ of \\d+\\)); "
                  "no epoch was completed, so no checkpoint was written\n");
  CHECK(std::regex_search(run.output, stop));
  CHECK(!fs::exists(checkpoint));
}

TEST_CASE("a save removes the temporary files a killed writer left, and nothing else", "[cli][files]") {
  ScratchDir scratch("stale_temporaries");
  std::string checkpoint = scratch / "ck.st";
  const std::string dead = std::to_string(dead_pid());
  const std::string alive = std::to_string(getpid());  // this test: a writer still running
  const std::vector<std::string> stale = {".ck.st.tmp." + dead + ".0", ".ck.st.tmp." + dead + ".17"};
  const std::vector<std::string> kept = {
      ".ck.st.tmp." + alive + ".0",    // its writer runs
      ".ck.st.tmp." + dead,            // not the pattern: no counter
      ".ck.st.tmp." + dead + ".0.bak", // not the pattern: a suffix
      ".ck.st.tmp.x1.0",               // not a pid
      ".other.st.tmp." + dead + ".0",  // another target's
      "ck.st.tmp." + dead + ".0",      // no leading dot
  };
  for (const auto& name : stale) write_bytes(scratch / name, "half a checkpoint");
  for (const auto& name : kept) write_bytes(scratch / name, "keep me");
  int code = -1;
  std::string output = run_ember(kToy + " --epochs 1 --save " + checkpoint, &code);
  INFO(output);
  REQUIRE(code == 0);
  for (const auto& name : stale) {
    INFO(name);
    CHECK(!fs::exists(scratch / name));
  }
  for (const auto& name : kept) {
    INFO(name);
    CHECK(read_file(scratch / name) == "keep me");
  }
}

TEST_CASE("a resumed run's metrics log holds every step once", "[cli][files][resume]") {
  ScratchDir scratch("resume_log");
  const std::string flags = kToy + " --log-every 1";
  int code = -1;
  run_ember(flags + " --epochs 4 --log " + scratch / "straight.jsonl", &code);
  REQUIRE(code == 0);
  const auto straight = without_timings(log_entries(scratch / "straight.jsonl"));

  SECTION("a log that ran ahead of the checkpoint is cut back to it") {
    // The log of 4 epochs (and a summary), the checkpoint of epoch 2: as after a run that
    // was stopped in epoch 3 or 4 after saving epoch 2.
    std::string log = scratch / "log.jsonl";
    run_ember(flags + " --epochs 4 --log " + log, &code);
    REQUIRE(code == 0);
    run_ember(flags + " --epochs 2 --save " + scratch / "ck2.st", &code);
    REQUIRE(code == 0);
    std::string output = run_ember(flags + " --epochs 4 --resume " + scratch / "ck2.st" + " --log " + log, &code);
    INFO(output);
    REQUIRE(code == 0);
    // 6 steps and the epoch lines of epochs 3 and 4, and the summary: 6 + 2 + 1.
    CHECK_THAT(output, Catch::Contains("ember: note: --log " + log +
                                       ": removed 9 lines written after step 6 (the end of epoch 2"));
    CHECK(without_timings(log_entries(log)) == straight);
  }

  SECTION("interrupted with Ctrl-C, then resumed") {
    std::string log = scratch / "log.jsonl", checkpoint = scratch / "ck.st";
    InterruptedRun run = run_ember_interrupted(scratch, flags + " --epochs 1000 --save " + checkpoint + " --log " + log,
                                               "test -f '" + checkpoint + "' && sleep 0.1");
    INFO(run.output);
    REQUIRE(run.exit_code == 130);
    ember::Metadata metadata;
    ember::load(checkpoint, &metadata);
    const long long saved = std::stoll(metadata.at("epoch"));
    const long long total = saved + 2;
    run_ember(flags + " --epochs " + std::to_string(total) + " --log " + scratch / "straight2.jsonl", &code);
    REQUIRE(code == 0);
    run_ember(flags + " --epochs " + std::to_string(total) + " --resume " + checkpoint + " --log " + log, &code);
    REQUIRE(code == 0);
    auto resumed = without_timings(log_entries(log));
    CHECK(resumed == without_timings(log_entries(scratch / "straight2.jsonl")));
    // No step twice.
    std::vector<long long> steps;
    for (const auto& entry : resumed) {
      if (entry.at("event") == "step") steps.push_back(entry.at("step").get<long long>());
    }
    for (std::size_t i = 1; i < steps.size(); ++i) CHECK(steps[i] == steps[i - 1] + 1);
  }
}
