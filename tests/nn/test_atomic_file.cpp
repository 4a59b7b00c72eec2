// tests/nn/test_atomic_file.cpp — ember::save's write path: symlinks, non-regular targets,
// the real temporary name, stale temporary files (nn/atomic_file.h).
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <ember/ember.h>
#include <ember/nn/atomic_file.h>

#include "test_support.h"

using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("ember_atomic_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

ember::nn::StateDict small_state() {
  ember::nn::StateDict state;
  state.insert("w", ember::tensor({1.0, 2.0}));
  return state;
}

}  // namespace

TEST_CASE("save writes through a symlink and keeps the link", "[nn][serialize][atomic]") {
  fs::path dir = fresh_dir("symlink");
  fs::create_directories(dir / "real");
  fs::create_symlink("real/model.st", dir / "link.st");  // dangling until the first save
  fs::create_symlink("link.st", dir / "link2.st");       // a chain of two
  ember::save(small_state(), (dir / "link2.st").string());
  CHECK(fs::is_symlink(fs::symlink_status(dir / "link.st")));
  CHECK(fs::is_symlink(fs::symlink_status(dir / "link2.st")));
  CHECK(fs::is_regular_file(fs::symlink_status(dir / "real/model.st")));
  CHECK(ember::load((dir / "link2.st").string()).at("w").equal(ember::tensor({1.0, 2.0})));

  fs::create_symlink("loop-b", dir / "loop-a");
  fs::create_symlink("loop-a", dir / "loop-b");
  CHECK_THROWS_WITH(ember::save(small_state(), (dir / "loop-a").string()),
                    Contains("too many levels of symbolic links"));
  fs::remove_all(dir);
}

TEST_CASE("save refuses a target that is not a regular file", "[nn][serialize][atomic]") {
  fs::path dir = fresh_dir("nonregular");
  const std::string fifo = (dir / "pipe").string();
  REQUIRE(mkfifo(fifo.c_str(), 0644) == 0);
  CHECK_THROWS_AS(ember::save(small_state(), fifo), ember::IOError);
  CHECK_THROWS_WITH(ember::save(small_state(), fifo), Contains("cannot save to " + fifo + ": it is a FIFO"));
  CHECK(fs::is_fifo(fs::symlink_status(fifo)));
  // /dev/null reached through a link in the scratch directory (never the real path: as root
  // a broken build would replace the device node).
  fs::create_symlink("/dev/null", dir / "null");
  CHECK_THROWS_WITH(ember::save(small_state(), (dir / "null").string()),
                    Contains("(-> /dev/null): it is a character device, not a regular file"));
  CHECK(fs::is_character_file(fs::status("/dev/null")));
  CHECK(fs::is_symlink(fs::symlink_status(dir / "null")));
  fs::remove_all(dir);
}

TEST_CASE("check_atomic_write tries the real temporary name", "[nn][serialize][atomic]") {
  fs::path dir = fresh_dir("precheck");
  ember::check_atomic_write((dir / "fine.st").string());
  CHECK(fs::is_empty(dir));  // created and removed
  const std::string long_name = (dir / std::string(250, 'x')).string();
  CHECK_THROWS_WITH(ember::check_atomic_write(long_name),
                    Contains("cannot create the temporary file") && Contains("File name too long"));
  fs::remove_all(dir);
}

TEST_CASE("temporary names: exactly .<target>.tmp.<pid>.<n>", "[nn][serialize][atomic]") {
  CHECK(ember::is_temporary_name_of(".model.st.tmp.123.0", "model.st"));
  CHECK(ember::is_temporary_name_of(".model.st.tmp.1.42", "model.st"));
  CHECK_FALSE(ember::is_temporary_name_of(".model.st.tmp.123", "model.st"));
  CHECK_FALSE(ember::is_temporary_name_of(".model.st.tmp.123.", "model.st"));
  CHECK_FALSE(ember::is_temporary_name_of(".model.st.tmp..0", "model.st"));
  CHECK_FALSE(ember::is_temporary_name_of(".model.st.tmp.12a.0", "model.st"));
  CHECK_FALSE(ember::is_temporary_name_of(".model.st.tmp.1.0.bak", "model.st"));
  CHECK_FALSE(ember::is_temporary_name_of("model.st.tmp.1.0", "model.st"));
  CHECK_FALSE(ember::is_temporary_name_of(".other.st.tmp.1.0", "model.st"));
  CHECK_FALSE(ember::is_temporary_name_of(".model.st.tmp.1234567890123.0", "model.st"));  // not a pid
}

TEST_CASE("save removes temporary files of writers that no longer run", "[nn][serialize][atomic]") {
  fs::path dir = fresh_dir("stale");
  pid_t child = fork();
  if (child == 0) _exit(0);
  int status = 0;
  waitpid(child, &status, 0);  // a pid that certainly ran and ended
  const std::string stale = ".model.st.tmp." + std::to_string(child) + ".3";
  const std::string live = ".model.st.tmp." + std::to_string(getppid()) + ".3";  // our parent runs
  for (const auto& name : {stale, live}) {
    std::ofstream(dir / name) << "half";
  }
  ember::save(small_state(), (dir / "model.st").string());
  CHECK_FALSE(fs::exists(dir / stale));
  CHECK(fs::exists(dir / live));
  CHECK(fs::exists(dir / "model.st"));
  fs::remove_all(dir);
}
