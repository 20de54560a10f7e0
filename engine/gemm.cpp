#include "engine/gemm.h"

#include <Eigen/Core>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>

#include "engine/gemm_onednn.h"

namespace tpuemu::engine {
namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Eigen is built without OpenMP here, so it is single-threaded already; setNbThreads(1) states
// it and keeps it so should someone add -fopenmp. It writes a global, hence call_once.
void EigenSingleThread() {
  static std::once_flag once;
  std::call_once(once, [] { Eigen::setNbThreads(1); });
}

// c = a·b, or c += a·b when accumulate (Eigen adds the product into c block by block, which is
// a re-association of the f32 sum, nothing more).
void EigenGemm(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
               bool accumulate) {
  Eigen::Map<const RowMajor> am(a, m, k);
  Eigen::Map<const RowMajor> bm(b, k, n);
  Eigen::Map<RowMajor> cm(c, m, n);
  if (accumulate) {
    cm.noalias() += am * bm;
  } else {
    cm.noalias() = am * bm;
  }
}

// Per-thread operand buffers reused across calls: first-touching fresh pages costs more than
// the bf16 split itself (4096³ HIGHEST: 3.1 s per call with fresh 200 MB of planes, 2.5 s with
// reused ones, against 6 x 0.41 s of oneDNN passes). A call that needed more than
// kRetainedScratchBytes (enough for 4096² HIGHEST in bf16) frees them afterwards, which bounds
// what each pool thread pins. Only the owning thread touches its Scratch (thread_local): no lock.
constexpr std::size_t kRetainedScratchBytes = std::size_t{256} << 20;

class Scratch {
 public:
  static constexpr int kSlots = 6;  // hi, mid, lo of A and of B

  // Uninitialised storage for `count` values of T in `slot`, valid until Trim or the next Get of
  // the same slot.
  template <typename T>
  T* Get(int slot, std::size_t count) {
    Buffer& buf = buffers_[static_cast<std::size_t>(slot)];
    const std::size_t bytes = count * sizeof(T);
    if (buf.bytes < bytes) {
      buf.data.reset(new std::byte[bytes]);
      buf.bytes = bytes;
    }
    return reinterpret_cast<T*>(buf.data.get());
  }

  void Trim() {
    std::size_t total = 0;
    for (const Buffer& buf : buffers_) total += buf.bytes;
    if (total <= kRetainedScratchBytes) return;
    for (Buffer& buf : buffers_) buf = Buffer{};
  }

 private:
  struct Buffer {
    std::unique_ptr<std::byte[]> data;
    std::size_t bytes = 0;
  };
  std::array<Buffer, kSlots> buffers_;
};

Scratch& ThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

// The bf16 operand planes of one matmul, as floats (Eigen) or bf16 bits (oneDNN); mid is null
// for Split2.
template <typename T>
struct Planes {
  const T* hi = nullptr;
  const T* mid = nullptr;
  const T* lo = nullptr;
};

template <typename T>
Planes<T> SplitOperand(const float* x, std::size_t count, Precision precision, int first_slot) {
  Scratch& scratch = ThreadScratch();
  T* hi = scratch.Get<T>(first_slot, count);
  T* lo = scratch.Get<T>(first_slot + 1, count);
  if (precision == Precision::kHigh) {
    Split2(x, hi, lo, count);
    return {hi, nullptr, lo};
  }
  T* mid = scratch.Get<T>(first_slot + 2, count);
  Split3(x, hi, mid, lo, count);
  return {hi, mid, lo};
}

// Runs the X3 / X6 pass schedule of reference §4 with `pass(a_part, b_part, accumulate)`; the
// order and the nan_to_zero before the hi·hi pass are XLA's (dot_algorithm_rewriter.cc).
// Returns false as soon as a pass fails.
template <typename T, typename PassFn>
bool RunSplitPasses(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
                    Precision precision, PassFn pass) {
  const Planes<T> pa = SplitOperand<T>(a, static_cast<std::size_t>(m * k), precision, 0);
  const Planes<T> pb = SplitOperand<T>(b, static_cast<std::size_t>(k * n), precision, 3);
  bool ok = true;
  if (precision == Precision::kHigh) {
    ok = ok && pass(pa.lo, pb.hi, false);
    ok = ok && pass(pa.hi, pb.lo, true);
  } else {
    ok = ok && pass(pa.mid, pb.mid, false);
    ok = ok && pass(pa.hi, pb.lo, true);
    ok = ok && pass(pa.lo, pb.hi, true);
    ok = ok && pass(pa.hi, pb.mid, true);
    ok = ok && pass(pa.mid, pb.hi, true);
  }
  if (!ok) return false;
  // A NaN in the low terms (inf·0, inf - inf in a split) must not poison a finite hi·hi.
  NanToZeroInPlace(c, static_cast<std::size_t>(m * n));
  return pass(pa.hi, pb.hi, true);
}

void EigenMatmul(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
                 Precision precision) {
  EigenSingleThread();
  switch (precision) {
    case Precision::kF32:
      EigenGemm(a, b, c, m, n, k, false);
      return;
    case Precision::kDefault: {
      const auto a_count = static_cast<std::size_t>(m * k);
      const auto b_count = static_cast<std::size_t>(k * n);
      float* ar = ThreadScratch().Get<float>(0, a_count);
      float* br = ThreadScratch().Get<float>(3, b_count);
      RoundToBf16(a, ar, a_count);
      RoundToBf16(b, br, b_count);
      EigenGemm(ar, br, c, m, n, k, false);
      return;
    }
    case Precision::kHigh:
    case Precision::kHighest:
      RunSplitPasses<float>(a, b, c, m, n, k, precision,
                            [&](const float* x, const float* y, bool accumulate) {
                              EigenGemm(x, y, c, m, n, k, accumulate);
                              return true;
                            });
      return;
  }
}

bool OneDnnMatmul(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
                  Precision precision) {
  switch (precision) {
    case Precision::kF32:
      return onednn::F32Gemm(a, b, c, m, n, k);
    case Precision::kDefault: {
      const auto a_count = static_cast<std::size_t>(m * k);
      const auto b_count = static_cast<std::size_t>(k * n);
      Bf16Bits* ar = ThreadScratch().Get<Bf16Bits>(0, a_count);
      Bf16Bits* br = ThreadScratch().Get<Bf16Bits>(3, b_count);
      RoundToBf16Bits(a, ar, a_count);
      RoundToBf16Bits(b, br, b_count);
      return onednn::Bf16Pass(ar, br, c, m, n, k, false);
    }
    case Precision::kHigh:
    case Precision::kHighest:
      return RunSplitPasses<Bf16Bits>(a, b, c, m, n, k, precision,
                                      [&](const Bf16Bits* x, const Bf16Bits* y, bool accumulate) {
                                        return onednn::Bf16Pass(x, y, c, m, n, k, accumulate);
                                      });
  }
  return false;
}

GemmBackend BackendFromEnvironment() {
  static const GemmBackend from_env = [] {
    const char* value = std::getenv("TPUEMU_GEMM_BACKEND");
    const std::string v = value == nullptr ? "" : value;
    if (v == "eigen") return GemmBackend::kEigen;
    if (v == "onednn") return GemmBackend::kOneDnn;
    return GemmBackend::kAuto;
  }();
  return from_env;
}

}  // namespace

bool OneDnnAvailable() { return onednn::Available(); }

GemmBackend ResolveBackend(GemmBackend requested) {
  if (requested == GemmBackend::kAuto) requested = BackendFromEnvironment();
  if (requested == GemmBackend::kEigen) return GemmBackend::kEigen;
  return OneDnnAvailable() ? GemmBackend::kOneDnn : GemmBackend::kEigen;
}

std::string_view GemmBackendName(GemmBackend backend) {
  switch (backend) {
    case GemmBackend::kAuto:
      return "auto";
    case GemmBackend::kEigen:
      return "eigen";
    case GemmBackend::kOneDnn:
      return "onednn";
  }
  return "unknown";
}

void Matmul(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
            Precision precision, GemmBackend backend) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    std::fill_n(c, static_cast<std::size_t>(m * n), 0.0f);
    return;
  }
  if (ResolveBackend(backend) != GemmBackend::kOneDnn ||
      !OneDnnMatmul(a, b, c, m, n, k, precision)) {
    // No oneDNN here, or it failed (C may hold a partial result: every path overwrites it first).
    EigenMatmul(a, b, c, m, n, k, precision);
  }
  ThreadScratch().Trim();
}

}  // namespace tpuemu::engine
