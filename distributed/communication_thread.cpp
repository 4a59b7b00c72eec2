// distributed/communication_thread.cpp — see communication_thread.h.
#include <ember/distributed/communication_thread.h>
#include <ember/core/profiler.h>

namespace ember::distributed {

CommunicationThread::CommunicationThread() : thread_([this] { run(); }) {}

CommunicationThread::~CommunicationThread() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::future<void> CommunicationThread::submit(std::function<void()> task) {
  std::packaged_task<void()> packaged(std::move(task));
  std::future<void> result = packaged.get_future();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(packaged));
  }
  wake_.notify_one();
  return result;
}

void CommunicationThread::run() {
  profiler::set_thread_name("DDP communication");  // its track in a profile
  while (true) {
    std::packaged_task<void()> task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and nothing left to do
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();  // a packaged_task stores an exception in its future instead of throwing
  }
}

}  // namespace ember::distributed
