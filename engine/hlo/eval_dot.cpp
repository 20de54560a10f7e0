// dot on the MXU path: one batched GEMM [batch, M, K] x [batch, K, N] at the instruction's
// precision (engine/kernels/gemm.h), each operand read in place (row-major or transposed) where its
// layout allows; integer dots accumulate exactly.
#include <algorithm>

#include "engine/hlo/evaluator_internal.h"
#include "engine/kernels/gemm.h"

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

bool IsIdentity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

// One GEMM operand of x, which the GEMM reads per batch item as [rows, cols] with its dims in
// `order` = batch + row dims + column dims: x itself when stored so, x itself read transposed when
// stored as batch + column dims + row dims (what a dot of a transposed operand gives: no copy),
// else a transposed copy (on `parallel`'s threads) held in *copy.
GemmOperand OperandOf(const Array& x, const std::vector<int64_t>& batch,
                      const std::vector<int64_t>& rows, const std::vector<int64_t>& cols,
                      Array* copy, const ParallelContext& parallel) {
  GemmOperand op;
  op.bf16_valued = x.type == PrimitiveType::kBF16;
  const std::vector<int64_t> order = Concat(batch, rows, cols);
  if (IsIdentity(order)) {
    op.data = x.f.data();
  } else if (IsIdentity(Concat(batch, cols, rows))) {
    op.data = x.f.data();
    op.transposed = true;
  } else {
    *copy = Transpose(x, order, parallel);
    op.data = copy->f.data();
  }
  return op;
}

// x with its dims in `perm` order: x itself when that is its order already, else a transposed
// copy held in *copy (the integer dot's operands).
const Array& Arranged(const Array& x, const std::vector<int64_t>& perm, Array* copy,
                      const ParallelContext& parallel) {
  if (IsIdentity(perm)) return x;
  *copy = Transpose(x, perm, parallel);
  return *copy;
}

}  // namespace

bool DotReadsInPlace(int64_t rank, const std::vector<int64_t>& batch,
                     const std::vector<int64_t>& contracting, bool lhs, bool floating) {
  const std::vector<int64_t> free = FreeDims(rank, batch, contracting);
  const std::vector<int64_t>& rows = lhs ? free : contracting;
  const std::vector<int64_t>& cols = lhs ? contracting : free;
  // OperandOf's cases; an integer dot's Arranged takes the first only.
  return IsIdentity(Concat(batch, rows, cols)) ||
         (floating && IsIdentity(Concat(batch, cols, rows)));
}

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
  Array out = Array::Uninitialized(inst.shape.type, inst.shape.dims);  // every element written
  if (lhs.floating()) {
    // One batched GEMM; an operand stored transposed is read in place (engine/kernels/gemm.h's
    // GemmOperand), so only an operand whose batch dims are not leading is copied.
    Array a_copy, b_copy;
    GemmProblem p;
    p.batch = batch, p.m = m, p.n = n, p.k = k;
    p.a = OperandOf(lhs, d.lhs_batch, lfree, d.lhs_contracting, &a_copy, parallel);
    p.b = OperandOf(rhs, d.rhs_batch, d.rhs_contracting, rfree, &b_copy, parallel);
    std::vector<float> scratch;
    if (out.floating()) {
      p.c = out.f.data();  // the GEMM writes the result in place
    } else {
      scratch.resize(static_cast<size_t>(batch * m * n));
      p.c = scratch.data();
    }
    if (!RunGemm(p, precision, parallel)) return CancelledIn(inst);
    if (!out.floating()) {  // a float dot with an integer result: converted as XLA converts
      for (size_t j = 0; j < scratch.size(); ++j) {
        out.SetDouble(static_cast<int64_t>(j), scratch[j]);
      }
    } else if (out.type != PrimitiveType::kF32) {  // a narrower float type rounds afterwards
      RoundToType(out.type, out.f.data(), out.f.data(), static_cast<int64_t>(out.f.size()));
    }
    return out;
  }
  Array a_copy, b_copy;
  const Array& a = Arranged(lhs, Concat(d.lhs_batch, lfree, d.lhs_contracting), &a_copy, parallel);
  const Array& b = Arranged(rhs, Concat(d.rhs_batch, d.rhs_contracting, rfree), &b_copy, parallel);
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
