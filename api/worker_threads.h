// WorkerThreads: a small fixed pool for handlers that block (mutations wait for their group
// commit), so the IO threads stay free to read and answer other requests. More waiting writers also
// means larger commit batches. Thread-safe; the destructor finishes queued work and joins.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "api/http_types.h"

namespace tpuemu::api {

class WorkerThreads {
 public:
  explicit WorkerThreads(int threads);
  ~WorkerThreads();
  WorkerThreads(const WorkerThreads&) = delete;
  WorkerThreads& operator=(const WorkerThreads&) = delete;

  void Post(std::function<void()> task);

  // Wraps a blocking handler: the request and path params are copied (they live only during the
  // IO thread's call) and the handler runs on a worker, which then answers through the Responder.
  AsyncHandler Offload(Handler handler);

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;  // guarded by mu_
  bool stopping_ = false;                    // guarded by mu_
  std::vector<std::thread> threads_;
};

}  // namespace tpuemu::api
