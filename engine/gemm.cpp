#include "engine/gemm.h"

#include <Eigen/Core>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

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

void NanToZeroInPlace(float* c, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) c[i] = NanToZero(c[i]);
}

// The bf16 operand planes of one matmul, as floats (Eigen) or bf16 bits (oneDNN).
template <typename T>
struct Planes {
  std::vector<T> hi, mid, lo;
};

template <typename T>
Planes<T> SplitOperand(const float* x, std::size_t count, Precision precision) {
  Planes<T> p;
  p.hi.resize(count);
  p.lo.resize(count);
  if (precision == Precision::kHigh) {
    Split2(x, p.hi.data(), p.lo.data(), count);
  } else {
    p.mid.resize(count);
    Split3(x, p.hi.data(), p.mid.data(), p.lo.data(), count);
  }
  return p;
}

// Runs the X3 / X6 pass schedule of reference §4 with `pass(a_part, b_part, accumulate)`; the
// order and the nan_to_zero before the hi·hi pass are XLA's (dot_algorithm_rewriter.cc).
// Returns false as soon as a pass fails.
template <typename T, typename PassFn>
bool RunSplitPasses(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
                    Precision precision, PassFn pass) {
  const Planes<T> pa = SplitOperand<T>(a, static_cast<std::size_t>(m * k), precision);
  const Planes<T> pb = SplitOperand<T>(b, static_cast<std::size_t>(k * n), precision);
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
      std::vector<float> ar(static_cast<std::size_t>(m * k));
      std::vector<float> br(static_cast<std::size_t>(k * n));
      RoundToBf16(a, ar.data(), ar.size());
      RoundToBf16(b, br.data(), br.size());
      EigenGemm(ar.data(), br.data(), c, m, n, k, false);
      return;
    }
    case Precision::kHigh:
    case Precision::kHighest:
      RunSplitPasses<float>(
          a, b, c, m, n, k, precision,
          [&](const std::vector<float>& x, const std::vector<float>& y, bool accumulate) {
            EigenGemm(x.data(), y.data(), c, m, n, k, accumulate);
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
      std::vector<Bf16Bits> ar(static_cast<std::size_t>(m * k));
      std::vector<Bf16Bits> br(static_cast<std::size_t>(k * n));
      RoundToBf16Bits(a, ar.data(), ar.size());
      RoundToBf16Bits(b, br.data(), br.size());
      return onednn::Bf16Pass(ar.data(), br.data(), c, m, n, k, false);
    }
    case Precision::kHigh:
    case Precision::kHighest:
      return RunSplitPasses<Bf16Bits>(
          a, b, c, m, n, k, precision,
          [&](const std::vector<Bf16Bits>& x, const std::vector<Bf16Bits>& y, bool accumulate) {
            return onednn::Bf16Pass(x.data(), y.data(), c, m, n, k, accumulate);
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
  if (ResolveBackend(backend) == GemmBackend::kOneDnn &&
      OneDnnMatmul(a, b, c, m, n, k, precision)) {
    return;
  }
  // No oneDNN here, or it failed (C may hold a partial result: every path overwrites it first).
  EigenMatmul(a, b, c, m, n, k, precision);
}

}  // namespace tpuemu::engine
