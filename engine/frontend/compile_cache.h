// CompileCache: an LRU of compiled programs, like torch_xla's ComputationCache (reference §5),
// compiled (each holds the HLO module jobs evaluate).
//
// Key = the graph's StructureKey (op kinds, ids, attributes, wiring, shapes, dtypes — NOT constant
// values or seeds) + precision + generation + the other CompileOptions. So a changed shape or
// dtype recompiles, a changed constant does not (a run reads constants from the Graph it runs).
// Entries are compared by the full key text, not only its hash, so collisions cannot alias.
// Counters are cumulative: hits ("CachedCompile") and misses ("UncachedCompile"); a failed compile
// counts as a miss and is not cached. Two threads missing on the same key at once both compile;
// the second insert wins (rare, harmless: the programs are identical).
// Thread-safe: all state is guarded by mu_; compiles run outside the lock.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "engine/frontend/compiler.h"

namespace tpuemu::engine {

class CompileCache {
 public:
  struct Lookup {
    std::shared_ptr<const CompiledProgram> program;
    bool hit = false;
    double compile_seconds = 0;  // 0 on a hit
  };
  struct Stats {
    int64_t hits = 0;
    int64_t misses = 0;
    int64_t entries = 0;
    int64_t evictions = 0;
    double compile_seconds_total = 0;
  };

  explicit CompileCache(size_t capacity = 1024);

  // Errors are Compile's (or ValidateOptions' even on a would-be hit).
  Result<Lookup> GetOrCompile(const Graph& graph, const Slice& slice,
                              const CompileOptions& options);
  Stats GetStats() const;
  size_t capacity() const { return capacity_; }
  void Clear();  // drops entries, keeps counters

  // The cache key text for (graph, generation, options).
  static std::string Key(const Graph& graph, Generation generation, const CompileOptions& options);

 private:
  using Entry = std::pair<std::string, std::shared_ptr<const CompiledProgram>>;

  const size_t capacity_;
  mutable std::mutex mu_;
  std::list<Entry> lru_;  // most recent first; guarded by mu_
  std::unordered_map<std::string_view, std::list<Entry>::iterator> index_;  // keys live in lru_
  Stats stats_;                                                             // guarded by mu_
};

}  // namespace tpuemu::engine
