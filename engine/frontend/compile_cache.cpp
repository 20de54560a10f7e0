#include "engine/frontend/compile_cache.h"

#include <algorithm>
#include <chrono>

namespace tpuemu::engine {

CompileCache::CompileCache(size_t capacity) : capacity_(std::max<size_t>(capacity, 1)) {}

std::string CompileCache::Key(const Graph& graph, Generation generation,
                              const CompileOptions& options) {
  std::string key = "gen=" + std::to_string(static_cast<int>(generation)) +
                    " precision=" + std::string(PrecisionName(options.precision)) +
                    " tc=" + std::to_string(options.tensorcores) +
                    " timing=" + std::string(TimingModeName(options.timing_mode)) +
                    " dataflow=" + std::string(DataflowName(options.dataflow)) +
                    " max_elements=" + std::to_string(options.max_tensor_elements) + "\n";
  key += StructureKey(graph);
  return key;
}

Result<CompileCache::Lookup> CompileCache::GetOrCompile(const Graph& graph, const Slice& slice,
                                                        const CompileOptions& options) {
  TPUEMU_RETURN_IF_ERROR(graph.status());
  // A cached program from a bigger slice of the same generation must not bypass this check.
  TPUEMU_RETURN_IF_ERROR(ValidateOptions(slice, options));
  std::string key = Key(graph, slice.spec().generation, options);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(key);
    if (it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      ++stats_.hits;
      return Lookup{it->second->second, true, 0.0};
    }
    ++stats_.misses;
  }
  const auto start = std::chrono::steady_clock::now();
  auto compiled = Compile(graph, slice, options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::lock_guard<std::mutex> lock(mu_);
  stats_.compile_seconds_total += seconds;
  if (!compiled.ok()) return compiled.status();
  auto it = index_.find(key);
  if (it != index_.end()) {  // another thread compiled the same key meanwhile
    lru_.splice(lru_.begin(), lru_, it->second);
    it->second->second = *compiled;
  } else {
    lru_.emplace_front(std::move(key), *compiled);
    index_.emplace(lru_.front().first, lru_.begin());
    while (lru_.size() > capacity_) {
      index_.erase(lru_.back().first);
      lru_.pop_back();
      ++stats_.evictions;
    }
  }
  return Lookup{*compiled, false, seconds};
}

CompileCache::Stats CompileCache::GetStats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats s = stats_;
  s.entries = static_cast<int64_t>(lru_.size());
  return s;
}

void CompileCache::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  index_.clear();
  lru_.clear();
}

}  // namespace tpuemu::engine
