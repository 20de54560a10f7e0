#include "engine/gemm_onednn.h"

#ifdef TPUEMU_HAVE_ONEDNN

#include <oneapi/dnnl/dnnl.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

// GNU OpenMP's entry point, declared here so that no -fopenmp (which would also parallelise
// Eigen) and no omp.h (absent from clang's include path) are needed; libgomp is linked.
extern "C" void omp_set_num_threads(int num_threads);

namespace tpuemu::engine::onednn {
namespace {

using dnnl::memory;

// Enough for every shape a compiled graph uses; a workload with more distinct shapes rebuilds.
constexpr std::size_t kMaxCachedPrimitives = 64;
// A per-thread scratchpad above this size is released after the call that needed it.
constexpr std::size_t kRetainedScratchBytes = std::size_t{256} << 20;

struct Key {
  int64_t m, n, k;
  bool bf16;
  bool accumulate;
  friend bool operator<(const Key& x, const Key& y) {
    return std::tie(x.m, x.n, x.k, x.bf16, x.accumulate) <
           std::tie(y.m, y.n, y.k, y.bf16, y.accumulate);
  }
};

struct Entry {
  std::shared_ptr<const dnnl::matmul> primitive;
  memory::desc scratchpad;
  uint64_t last_use = 0;
};

class PrimitiveCache {
 public:
  // Returns the cached primitive for `key`, building it (outside the lock) on a miss.
  // Throws dnnl::error when oneDNN cannot build it.
  Entry Get(const dnnl::engine& engine, const Key& key) {
    {
      std::lock_guard lock(mu_);
      auto it = entries_.find(key);
      if (it != entries_.end()) {
        it->second.last_use = ++clock_;
        return it->second;
      }
    }
    Entry built = Build(engine, key);
    std::lock_guard lock(mu_);
    if (entries_.size() >= kMaxCachedPrimitives && !entries_.contains(key)) {
      auto oldest = entries_.begin();
      for (auto it = entries_.begin(); it != entries_.end(); ++it) {
        if (it->second.last_use < oldest->second.last_use) oldest = it;
      }
      entries_.erase(oldest);
    }
    built.last_use = ++clock_;
    entries_[key] = built;  // a racing builder of the same key simply replaces an equal entry
    return built;
  }

  std::size_t size() {
    std::lock_guard lock(mu_);
    return entries_.size();
  }

 private:
  static Entry Build(const dnnl::engine& engine, const Key& key) {
    const memory::data_type in_type = key.bf16 ? memory::data_type::bf16 : memory::data_type::f32;
    memory::desc a_md({key.m, key.k}, in_type, memory::format_tag::ab);
    memory::desc b_md({key.k, key.n}, in_type, memory::format_tag::ab);
    memory::desc c_md({key.m, key.n}, memory::data_type::f32, memory::format_tag::ab);
    dnnl::primitive_attr attr;
    // User scratchpad: the library's shared one forbids running a primitive on another thread.
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    if (key.accumulate) {
      dnnl::post_ops ops;
      ops.append_sum(1.0f);
      attr.set_post_ops(ops);
    }
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, c_md), attr, engine);
    Entry entry;
    entry.primitive = std::make_shared<const dnnl::matmul>(pd);
    entry.scratchpad = pd.scratchpad_desc();
    return entry;
  }

  std::mutex mu_;
  std::map<Key, Entry> entries_;  // guarded by mu_
  uint64_t clock_ = 0;            // guarded by mu_
};

PrimitiveCache& Cache() {
  static PrimitiveCache* cache = new PrimitiveCache();  // never destroyed: threads may outlive main
  return *cache;
}

const dnnl::engine& CpuEngine() {
  static const dnnl::engine* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

// One OpenMP thread per calling thread: the engine's Pool already uses every core.
void LimitThisThread() {
  thread_local bool limited = false;
  if (!limited) {
    omp_set_num_threads(1);
    limited = true;
  }
}

bool Run(const void* a, const void* b, float* c, const Key& key) {
  try {
    LimitThisThread();
    const dnnl::engine& engine = CpuEngine();
    Entry entry = Cache().Get(engine, key);
    const memory::data_type in_type = key.bf16 ? memory::data_type::bf16 : memory::data_type::f32;
    // oneDNN's memory handle is non-const; the primitive only reads src and weights.
    memory a_mem({{key.m, key.k}, in_type, memory::format_tag::ab}, engine, const_cast<void*>(a));
    memory b_mem({{key.k, key.n}, in_type, memory::format_tag::ab}, engine, const_cast<void*>(b));
    memory c_mem({{key.m, key.n}, memory::data_type::f32, memory::format_tag::ab}, engine, c);
    thread_local std::vector<std::byte> scratch;
    if (scratch.size() < entry.scratchpad.get_size()) scratch.resize(entry.scratchpad.get_size());
    memory scratch_mem(entry.scratchpad, engine, scratch.data());
    dnnl::stream stream(engine);
    entry.primitive->execute(stream, {{DNNL_ARG_SRC, a_mem},
                                      {DNNL_ARG_WEIGHTS, b_mem},
                                      {DNNL_ARG_DST, c_mem},
                                      {DNNL_ARG_SCRATCHPAD, scratch_mem}});
    stream.wait();
    // Same policy as gemm.cpp's operand buffers: keep small scratchpads, drop huge ones.
    if (scratch.size() > kRetainedScratchBytes) std::vector<std::byte>().swap(scratch);
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

}  // namespace

bool Available() {
  static const bool available = [] {
    try {
      const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
      return isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
    } catch (const dnnl::error&) {
      return false;
    }
  }();
  return available;
}

bool Bf16Pass(const Bf16Bits* a, const Bf16Bits* b, float* c, int64_t m, int64_t n, int64_t k,
              bool accumulate) {
  return Run(a, b, c, Key{m, n, k, /*bf16=*/true, accumulate});
}

bool F32Gemm(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k) {
  return Run(a, b, c, Key{m, n, k, /*bf16=*/false, /*accumulate=*/false});
}

std::size_t CachedPrimitives() { return Cache().size(); }

}  // namespace tpuemu::engine::onednn

#else  // !TPUEMU_HAVE_ONEDNN

namespace tpuemu::engine::onednn {

bool Available() { return false; }
bool Bf16Pass(const Bf16Bits*, const Bf16Bits*, float*, int64_t, int64_t, int64_t, bool) {
  return false;
}
bool F32Gemm(const float*, const float*, float*, int64_t, int64_t, int64_t) { return false; }
std::size_t CachedPrimitives() { return 0; }

}  // namespace tpuemu::engine::onednn

#endif  // TPUEMU_HAVE_ONEDNN
