// tests/distributed/multiprocess.cpp — see multiprocess.h.
#include "multiprocess.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <ember/distributed/tcp_store.h>

extern char** environ;

namespace ember::testing {

int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = 0;
  ::inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    ::close(fd);
    throw std::runtime_error("free_port: bind failed");
  }
  socklen_t length = sizeof(address);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

bool is_worker() { return std::getenv("EMBER_TEST_WORKER") != nullptr; }

std::string describe(const WorkerResult& result) {
  std::ostringstream text;
  if (result.killed_by_limit) text << "killed after the test's time limit";
  else if (result.signal != 0) text << "killed by signal " << result.signal << " (" << ::strsignal(result.signal) << ")";
  else text << "exit code " << result.exit_code;
  text << " after " << result.seconds << " s; output:\n" << result.output;
  return text.str();
}

void require_all_passed(const std::vector<WorkerResult>& results) {
  for (std::size_t rank = 0; rank < results.size(); ++rank) {
    INFO("rank " << rank << ": " << describe(results[rank]));
    REQUIRE(results[rank].exit_code == 0);
  }
}

namespace {

std::map<std::string, std::string> inherited_environment() {
  std::map<std::string, std::string> inherited;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string text(*entry);
    auto equals = text.find('=');
    if (equals != std::string::npos) inherited[text.substr(0, equals)] = text.substr(equals + 1);
  }
  return inherited;
}

// posix_spawn of this test binary running `worker_test`, stdout and stderr into `log`.
pid_t spawn_test_process(const std::string& worker_test, const std::map<std::string, std::string>& variables,
                         const std::string& log) {
  std::vector<std::string> environment_text;
  for (const auto& [key, value] : variables) environment_text.push_back(key + "=" + value);
  std::vector<char*> environment;
  for (auto& text : environment_text) environment.push_back(text.data());
  environment.push_back(nullptr);
  std::string program = "/proc/self/exe";
  std::string test_name = worker_test;
  std::vector<char*> arguments{program.data(), test_name.data(), nullptr};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  int failed = ::posix_spawn(&pid, program.c_str(), &actions, nullptr, arguments.data(), environment.data());
  posix_spawn_file_actions_destroy(&actions);
  if (failed != 0) throw std::runtime_error(std::string("posix_spawn failed: ") + std::strerror(failed));
  return pid;
}

}  // namespace

SpawnedWorker::~SpawnedWorker() {
  if (pid > 0) {
    ::kill(pid, SIGKILL);  // also ends a stopped process
    ::waitpid(pid, nullptr, 0);
  }
  std::remove(log.c_str());
}

std::unique_ptr<SpawnedWorker> spawn_worker(const std::string& worker_test, const std::map<std::string, std::string>& env) {
  static int counter = 0;
  auto worker = std::make_unique<SpawnedWorker>();
  std::ostringstream log;  // (not string operator+: GCC 12 warns falsely about it here, -Wrestrict)
  log << "/tmp/ember_dist_" << ::getpid() << "_spawned_" << counter++ << ".log";
  worker->log = log.str();
  std::map<std::string, std::string> variables = inherited_environment();
  variables.insert_or_assign("EMBER_TEST_WORKER", std::string(1, '1'));
  for (const auto& [key, value] : env) variables[key] = value;
  worker->pid = spawn_test_process(worker_test, variables, worker->log);
  return worker;
}

std::vector<WorkerResult> run_workers(const std::string& worker_test, int world_size, std::chrono::seconds limit,
                                      const std::map<std::string, std::string>& extra_env) {
  // The rendezvous store lives in this (parent) process on a kernel-chosen port; it must
  // outlive every worker, so it is destroyed only when this function returns.
  distributed::TCPStore store("127.0.0.1", 0, /*is_master=*/true, std::chrono::seconds(5));
  const int port = store.port();
  const auto start = std::chrono::steady_clock::now();

  const std::map<std::string, std::string> inherited = inherited_environment();
  std::vector<pid_t> pids;
  std::vector<std::string> logs;
  for (int rank = 0; rank < world_size; ++rank) {
    std::map<std::string, std::string> variables = inherited;
    variables["RANK"] = std::to_string(rank);
    variables["LOCAL_RANK"] = std::to_string(rank);
    variables["WORLD_SIZE"] = std::to_string(world_size);
    variables["MASTER_ADDR"] = "127.0.0.1";
    variables["MASTER_PORT"] = std::to_string(port);
    variables["TORCHELASTIC_USE_AGENT_STORE"] = "True";
    variables["EMBER_TEST_WORKER"] = "1";
    for (const auto& [key, value] : extra_env) variables[key] = value;
    std::string log = "/tmp/ember_dist_" + std::to_string(::getpid()) + "_" + std::to_string(port) + "_" +
                      std::to_string(rank) + ".log";
    logs.push_back(log);
    try {
      pids.push_back(spawn_test_process(worker_test, variables, log));
    } catch (...) {
      for (pid_t started : pids) {
        ::kill(started, SIGKILL);
        ::waitpid(started, nullptr, 0);
      }
      throw;
    }
  }

  std::vector<WorkerResult> results(static_cast<std::size_t>(world_size));
  std::vector<bool> done(pids.size(), false);
  const auto deadline = start + limit;
  std::size_t remaining = pids.size();
  auto elapsed = [&start] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  while (remaining > 0) {
    for (std::size_t i = 0; i < pids.size(); ++i) {
      if (done[i]) continue;
      int status = 0;
      if (::waitpid(pids[i], &status, WNOHANG) == pids[i]) {
        done[i] = true;
        --remaining;
        results[i].seconds = elapsed();
        if (WIFEXITED(status)) results[i].exit_code = WEXITSTATUS(status);
        if (WIFSIGNALED(status)) results[i].signal = WTERMSIG(status);
      }
    }
    if (remaining == 0) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      for (std::size_t i = 0; i < pids.size(); ++i) {
        if (done[i]) continue;
        ::kill(pids[i], SIGKILL);
        ::waitpid(pids[i], nullptr, 0);
        results[i].killed_by_limit = true;
        results[i].seconds = elapsed();
        done[i] = true;
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (std::size_t i = 0; i < logs.size(); ++i) {
    std::ifstream in(logs[i]);
    std::stringstream text;
    text << in.rdbuf();
    results[i].output = text.str();
    std::remove(logs[i].c_str());
  }
  return results;
}

}  // namespace ember::testing
