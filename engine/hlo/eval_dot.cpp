// dot on the MXU path: operands transposed to [batch, M, K] x [batch, K, N], one engine::Matmul
// per batch item at the instruction's precision (engine/gemm.h); integer dots accumulate exactly.
#include <algorithm>

#include "engine/gemm.h"
#include "engine/hlo/eval_internal.h"

namespace tpuemu::engine::hlo::internal {
namespace {

// Dims of `rank` not in `a` or `b`, in order.
std::vector<int64_t> FreeDims(int64_t rank, const std::vector<int64_t>& a,
                              const std::vector<int64_t>& b) {
  std::vector<int64_t> free;
  for (int64_t i = 0; i < rank; ++i) {
    if (!Contains(a, i) && !Contains(b, i)) free.push_back(i);
  }
  return free;
}

int64_t SizeOf(const Array& x, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= x.dims[static_cast<size_t>(d)];
  return n;
}

std::vector<int64_t> Concat(std::vector<int64_t> a, const std::vector<int64_t>& b,
                            const std::vector<int64_t>& c = {}) {
  a.insert(a.end(), b.begin(), b.end());
  a.insert(a.end(), c.begin(), c.end());
  return a;
}

// x with its dims in `perm` order: x itself when that is its order already (a plain row-major
// matmul: no copy of up to 16.7 M elements), else a transposed copy (on `parallel`'s threads)
// held in *copy.
const Array& Arranged(const Array& x, const std::vector<int64_t>& perm, Array* copy,
                      const ParallelContext& parallel) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) {
      *copy = Transpose(x, perm, parallel);
      return *copy;
    }
  }
  return x;
}

}  // namespace

Precision EffectivePrecision(DotPrecision text, Precision fallback) {
  switch (text) {
    case DotPrecision::kDefault:
      return Precision::kDefault;
    case DotPrecision::kHigh:
      return Precision::kHigh;
    case DotPrecision::kHighest:
      return Precision::kHighest;
    case DotPrecision::kF32:
      return Precision::kF32;
    case DotPrecision::kUnset:
      break;
  }
  return fallback;
}

bool Gemm(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
          Precision precision, const ParallelContext& parallel) {
  GemmProblem p;
  p.m = m, p.n = n, p.k = k;
  p.a.data = a;
  p.b.data = b;
  p.c = c;
  return RunGemm(p, precision, parallel);
}

Status CancelledIn(const Instruction& inst) {
  return Status::Cancelled("HLO execution cancelled in " + inst.Describe());
}

Result<Array> Dot(const Instruction& inst, const Array& lhs, const Array& rhs, Precision precision,
                  const ParallelContext& parallel) {
  const DotDims& d = inst.a().dot;
  const std::vector<int64_t> lfree = FreeDims(lhs.rank(), d.lhs_batch, d.lhs_contracting);
  const std::vector<int64_t> rfree = FreeDims(rhs.rank(), d.rhs_batch, d.rhs_contracting);
  const int64_t batch = SizeOf(lhs, d.lhs_batch);
  const int64_t m = SizeOf(lhs, lfree);
  const int64_t k = SizeOf(lhs, d.lhs_contracting);
  const int64_t n = SizeOf(rhs, rfree);
  Array a_copy, b_copy;
  const Array& a = Arranged(lhs, Concat(d.lhs_batch, lfree, d.lhs_contracting), &a_copy, parallel);
  const Array& b = Arranged(rhs, Concat(d.rhs_batch, d.rhs_contracting, rfree), &b_copy, parallel);
  Array out = Array::Zeros(inst.shape.type, inst.shape.dims);
  if (a.floating() && out.floating()) {
    // The GEMM writes the result in place; a narrower float type rounds it afterwards.
    for (int64_t i = 0; i < batch; ++i) {
      float* c = out.f.data() + i * m * n;
      if (!Gemm(a.f.data() + i * m * k, b.f.data() + i * k * n, c, m, n, k, precision, parallel)) {
        return CancelledIn(inst);
      }
    }
    if (out.type != PrimitiveType::kF32) {
      for (float& v : out.f) v = RoundToType(out.type, v);
    }
    return out;
  }
  if (a.floating()) {  // a float dot with an integer result: converted as XLA converts
    std::vector<float> c(static_cast<size_t>(m * n));
    for (int64_t i = 0; i < batch; ++i) {
      if (!Gemm(a.f.data() + i * m * k, b.f.data() + i * k * n, c.data(), m, n, k, precision,
                parallel)) {
        return CancelledIn(inst);
      }
      for (int64_t j = 0; j < m * n; ++j) out.SetDouble(i * m * n + j, c[static_cast<size_t>(j)]);
    }
    return out;
  }
  const bool unsigned_in = IsUnsignedInt(lhs.type);
  for (int64_t i = 0; i < batch; ++i) {
    for (int64_t r = 0; r < m; ++r) {
      if (parallel.cancel.Stopped()) return CancelledIn(inst);
      for (int64_t col = 0; col < n; ++col) {
        uint64_t acc = 0;  // wraps like the result type's arithmetic
        for (int64_t x = 0; x < k; ++x) {
          const int64_t av = a.i[static_cast<size_t>((i * m + r) * k + x)];
          const int64_t bv = b.i[static_cast<size_t>((i * k + x) * n + col)];
          acc += static_cast<uint64_t>(av) * static_cast<uint64_t>(bv);
        }
        const int64_t index = (i * m + r) * n + col;
        if (out.floating()) {
          out.SetDouble(index, unsigned_in ? static_cast<double>(acc)
                                           : static_cast<double>(static_cast<int64_t>(acc)));
        } else {
          out.i[static_cast<size_t>(index)] = CanonicalInt(out.type, static_cast<int64_t>(acc));
        }
      }
    }
  }
  return out;
}

}  // namespace tpuemu::engine::hlo::internal
