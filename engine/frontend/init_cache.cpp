#include "engine/frontend/init_cache.h"

#include <cstdio>

#include "engine/frontend/init_values.h"

namespace tpuemu::engine {
namespace {

std::string KeyOf(DType dtype, const Shape& shape, const Init& init) {
  char params[96];
  std::snprintf(params, sizeof params, "|%llu|%d|%.17g", static_cast<unsigned long long>(init.seed),
                static_cast<int>(init.distribution), init.scale);
  return ShapeString(dtype, shape) + params;
}

}  // namespace

InitCache& InitCache::Global() {
  static InitCache* cache = new InitCache(size_t{256} << 20);  // never destroyed: see BufferCache
  return *cache;
}

Result<std::shared_ptr<const Tensor>> InitCache::Get(DType dtype, const Shape& shape,
                                                     const Init& init, const CancelToken& cancel) {
  const bool cacheable = init.kind == Init::Kind::kRandom;
  const std::string key = cacheable ? KeyOf(dtype, shape, init) : std::string();
  if (cacheable) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(key);
    if (it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      ++stats_.hits;
      return it->second->tensor;
    }
    ++stats_.misses;
  }
  auto tensor = std::make_shared<Tensor>(Tensor::Uninitialized(dtype, shape));
  TPUEMU_RETURN_IF_ERROR(MaterializeInit(init, *tensor, cancel));
  const auto bytes = static_cast<size_t>(tensor->num_elements()) * 4;
  if (!cacheable || bytes > capacity_bytes_) return std::shared_ptr<const Tensor>(tensor);
  std::lock_guard<std::mutex> lock(mu_);
  if (!index_.contains(key)) {
    lru_.push_front({key, tensor, bytes});
    index_[key] = lru_.begin();
    cached_bytes_ += bytes;
    while (cached_bytes_ > capacity_bytes_) {
      cached_bytes_ -= lru_.back().bytes;
      index_.erase(lru_.back().key);
      lru_.pop_back();
    }
  }
  return std::shared_ptr<const Tensor>(tensor);
}

InitCache::Stats InitCache::GetStats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats s = stats_;
  s.cached_bytes = cached_bytes_;
  return s;
}

}  // namespace tpuemu::engine
