// distributed/communication_thread.h — one background thread that runs collectives in order.
//
// Tutorial §9.3 (how DDP overlaps communication with backward). While autograd computes
// the gradients of earlier layers on the main thread, the all-reduce of the buckets that
// are already complete runs here. Tasks run one at a time, in the order they were queued:
// every rank queues its buckets in the same order, so every rank issues the same
// collectives in the same order — what Gloo and NCCL require to match them up.
// submit() returns a std::future; wait on it to get the task's exception, if any.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

namespace ember::distributed {

class CommunicationThread {
 public:
  CommunicationThread();
  ~CommunicationThread();  // finishes the queued tasks, then joins
  CommunicationThread(const CommunicationThread&) = delete;
  CommunicationThread& operator=(const CommunicationThread&) = delete;

  std::future<void> submit(std::function<void()> task);
  std::thread::id id() const { return thread_.get_id(); }

 private:
  void run();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::packaged_task<void()>> queue_;
  bool stopping_ = false;
  std::thread thread_;  // last: starts after the members it uses exist
};

}  // namespace ember::distributed
