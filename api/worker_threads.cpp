#include "api/worker_threads.h"

#include <memory>

namespace tpuemu::api {

WorkerThreads::WorkerThreads(int threads) {
  for (int i = 0; i < threads; ++i) {
    threads_.emplace_back([this] {
      std::unique_lock lock(mu_);
      while (true) {
        cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;
        std::function<void()> task = std::move(queue_.front());
        queue_.pop_front();
        lock.unlock();
        task();
        lock.lock();
      }
    });
  }
}

WorkerThreads::~WorkerThreads() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void WorkerThreads::Post(std::function<void()> task) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(task));
  }
  cv_.notify_one();
}

AsyncHandler WorkerThreads::Offload(Handler handler) {
  auto shared = std::make_shared<Handler>(std::move(handler));
  return [this, shared](const HttpRequest& req, const PathParams& params, Responder respond) {
    Post([shared, req, params, respond = std::move(respond)] { respond((*shared)(req, params)); });
  };
}

}  // namespace tpuemu::api
