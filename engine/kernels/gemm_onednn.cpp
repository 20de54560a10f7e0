#include "engine/kernels/gemm_onednn.h"

#ifdef TPUEMU_HAVE_ONEDNN

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
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

// A compiled graph's matmuls use a few tile shapes each; a program with more distinct shapes than
// this rebuilds some primitives per step (cheap next to the GEMMs themselves).
constexpr std::size_t kMaxCachedPrimitives = 256;
// A per-thread scratchpad above this size is released after the call that needed it.
constexpr std::size_t kRetainedScratchBytes = std::size_t{256} << 20;

struct Key {
  int64_t batch, m, n, k, lda, ldb, ldc, sa, sb, sc;  // s*: batch strides
  bool ta, tb, bf16, accumulate;
  auto Tie() const {
    return std::tie(batch, m, n, k, lda, ldb, ldc, sa, sb, sc, ta, tb, bf16, accumulate);
  }
  friend bool operator<(const Key& x, const Key& y) { return x.Tie() < y.Tie(); }
};

// A [rows x cols] view with leading dimension ld, row-major or (transposed) column-major; with
// batch > 1 a [batch, rows, cols] stack of them, `batch_stride` apart (0: one matrix broadcast
// over the batch, which oneDNN's matmul expresses as a batch dim of 1).
memory::desc MatrixDesc(int64_t batch, int64_t batch_stride, int64_t rows, int64_t cols, int64_t ld,
                        bool transposed, memory::data_type type) {
  const memory::dims strides = transposed ? memory::dims{1, ld} : memory::dims{ld, 1};
  if (batch == 1) return memory::desc({rows, cols}, type, strides);
  if (batch_stride == 0) {
    return memory::desc({1, rows, cols}, type, {rows * cols, strides[0], strides[1]});
  }
  return memory::desc({batch, rows, cols}, type, {batch_stride, strides[0], strides[1]});
}

struct Descs {
  memory::desc a, b, c;
};

Descs DescsFor(const Key& key) {
  const memory::data_type in = key.bf16 ? memory::data_type::bf16 : memory::data_type::f32;
  return {MatrixDesc(key.batch, key.sa, key.m, key.k, key.lda, key.ta, in),
          MatrixDesc(key.batch, key.sb, key.k, key.n, key.ldb, key.tb, in),
          MatrixDesc(key.batch, key.sc, key.m, key.n, key.ldc, false, memory::data_type::f32)};
}

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
    const Descs d = DescsFor(key);
    dnnl::primitive_attr attr;
    // User scratchpad: the library's shared one forbids running a primitive on another thread.
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    if (key.accumulate) {
      dnnl::post_ops ops;
      ops.append_sum(1.0f);
      attr.set_post_ops(ops);
    }
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(d.a, d.b, d.c), attr, engine);
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

const char* IsaName(dnnl::cpu_isa isa) {
  switch (isa) {
    case dnnl::cpu_isa::sse41:
      return "sse41";
    case dnnl::cpu_isa::avx:
      return "avx";
    case dnnl::cpu_isa::avx2:
      return "avx2";
    case dnnl::cpu_isa::avx2_vnni:
      return "avx2_vnni";
    case dnnl::cpu_isa::avx512_core:
      return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni:
      return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16:
      return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx:
      return "avx512_core_amx";
    default:
      return "other";
  }
}

}  // namespace

bool Bf16Available() {
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

bool F32Available() { return true; }

std::string Describe() {
  const dnnl_version_t* v = dnnl::version();
  std::string isa = "unknown";
  try {
    isa = IsaName(dnnl::get_effective_cpu_isa());
  } catch (const dnnl::error&) {
  }
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
         std::to_string(v->patch) + ", CPU ISA " + isa;
}

bool Pass(const PassArgs& args, bool bf16) {
  try {
    LimitThisThread();
    const dnnl::engine& engine = CpuEngine();
    const Key key{args.batch,
                  args.m,
                  args.n,
                  args.k,
                  args.a.ld,
                  args.b.ld,
                  args.ldc,
                  args.a.batch_stride,
                  args.b.batch_stride,
                  args.c_batch_stride,
                  args.a.transposed,
                  args.b.transposed,
                  bf16,
                  args.accumulate};
    Entry entry = Cache().Get(engine, key);
    const Descs d = DescsFor(key);
    // oneDNN's memory handle is non-const; the primitive only reads src and weights.
    memory a_mem(d.a, engine, const_cast<void*>(args.a.data));
    memory b_mem(d.b, engine, const_cast<void*>(args.b.data));
    memory c_mem(d.c, engine, args.c);
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

std::size_t CachedPrimitives() { return Cache().size(); }

}  // namespace tpuemu::engine::onednn

#else  // !TPUEMU_HAVE_ONEDNN

namespace tpuemu::engine::onednn {

bool Bf16Available() { return false; }
bool F32Available() { return false; }
std::string Describe() { return ""; }
bool Pass(const PassArgs&, bool) { return false; }
std::size_t CachedPrimitives() { return 0; }

}  // namespace tpuemu::engine::onednn

#endif  // TPUEMU_HAVE_ONEDNN
