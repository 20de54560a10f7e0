// The whole-array elementwise kernels of the HLO evaluator (elementwise.h): float maps, compares,
// selects, converts and row folds as loops with the opcode's switch outside, built -O3 with
// AVX-512/AVX2 clones (base/vector_clones.h, engine/CMakeLists.txt), each element computed by
// the one-element functions of elementwise_float.h, so every loop gives the scalar path's bits.
#include <algorithm>
#include <bit>
#include <cmath>

#include "base/vector_clones.h"
#include "engine/hlo/elementwise.h"
#include "engine/hlo/elementwise_float.h"
#include "engine/kernels/vector_math.h"

namespace tpuemu::engine::hlo {

using internal::BinaryFloat;
using internal::UnaryFloat;

namespace {

// f32 -> f32 arithmetic with the opcode's switch outside the loop, so the loop vectorises; the
// same value per element as BinaryFloat. False for an opcode it does not cover.
template <typename F>
void MapEach(const float* a, const float* b, float* o, int64_t begin, int64_t end, F f) {
  for (int64_t k = begin; k < end; ++k) o[k] = f(a[k], b[k]);
}
TPUEMU_VECTOR_CLONES bool MapF32(Opcode op, const float* a, const float* b, float* o, int64_t begin,
                                 int64_t end) {
  switch (op) {
    case Opcode::kAdd:
      MapEach(a, b, o, begin, end, [](float x, float y) { return x + y; });
      return true;
    case Opcode::kSubtract:
      MapEach(a, b, o, begin, end, [](float x, float y) { return x - y; });
      return true;
    case Opcode::kMultiply:
      MapEach(a, b, o, begin, end, [](float x, float y) { return x * y; });
      return true;
    case Opcode::kDivide:
      MapEach(a, b, o, begin, end, [](float x, float y) { return x / y; });
      return true;
    case Opcode::kMaximum:
      MapEach(a, b, o, begin, end,
              [](float x, float y) { return BinaryFloat(Opcode::kMaximum, x, y); });
      return true;
    case Opcode::kMinimum:
      MapEach(a, b, o, begin, end,
              [](float x, float y) { return BinaryFloat(Opcode::kMinimum, x, y); });
      return true;
    default:
      return false;
  }
}

// out[k] = a[k] <direction> b[k] (0/1) over float arrays, IEEE order (every compare type but
// TOTALORDER), the direction's switch outside the loop.
template <typename T>
void CompareEach(Direction d, const float* a, const float* b, T* out, int64_t begin, int64_t end) {
  switch (d) {
    case Direction::kEq:
      for (int64_t k = begin; k < end; ++k) out[k] = a[k] == b[k];
      return;
    case Direction::kNe:
      for (int64_t k = begin; k < end; ++k) out[k] = a[k] != b[k];
      return;
    case Direction::kLt:
      for (int64_t k = begin; k < end; ++k) out[k] = a[k] < b[k];
      return;
    case Direction::kLe:
      for (int64_t k = begin; k < end; ++k) out[k] = a[k] <= b[k];
      return;
    case Direction::kGt:
      for (int64_t k = begin; k < end; ++k) out[k] = a[k] > b[k];
      return;
    case Direction::kGe:
      for (int64_t k = begin; k < end; ++k) out[k] = a[k] >= b[k];
      return;
  }
}

TPUEMU_VECTOR_CLONES void CompareToInts(Direction d, const float* a, const float* b, int64_t* out,
                                        int64_t begin, int64_t end) {
  CompareEach(d, a, b, out, begin, end);
}
TPUEMU_VECTOR_CLONES void CompareToFloats(Direction d, const float* a, const float* b, float* out,
                                          int64_t n) {
  CompareEach(d, a, b, out, 0, n);
}

// f32 unary maps: the common ones with the opcode's switch outside the loop (so it vectorises),
// the rest through UnaryFloat; the same value per element either way.
TPUEMU_VECTOR_CLONES void UnaryF32(Opcode op, const float* x, float* o, int64_t begin,
                                   int64_t end) {
  switch (op) {
    case Opcode::kNegate:
      for (int64_t k = begin; k < end; ++k) o[k] = -x[k];
      return;
    case Opcode::kAbs:
      for (int64_t k = begin; k < end; ++k) o[k] = std::fabs(x[k]);
      return;
    case Opcode::kSqrt:
      for (int64_t k = begin; k < end; ++k) o[k] = std::sqrt(x[k]);
      return;
    default:
      for (int64_t k = begin; k < end; ++k) o[k] = UnaryFloat(op, x[k]);
      return;
  }
}

// Mask (0 or not) picks on_true or on_false through a bit mask: no branch for data to mispredict.
template <typename M>
void SelectEach(const M* mask, const float* t, const float* f, float* o, int64_t begin,
                int64_t end) {
  for (int64_t k = begin; k < end; ++k) {
    const uint32_t bits = 0u - static_cast<uint32_t>(mask[k] != 0);
    o[k] = std::bit_cast<float>((std::bit_cast<uint32_t>(t[k]) & bits) |
                                (std::bit_cast<uint32_t>(f[k]) & ~bits));
  }
}
TPUEMU_VECTOR_CLONES void SelectByInts(const int64_t* mask, const float* t, const float* f,
                                       float* o, int64_t begin, int64_t end) {
  SelectEach(mask, t, f, o, begin, end);
}

// out[r] = fold of row r (len elements from init, in order) for r < rows. Eight rows at a time:
// each row's fold is a chain of dependent ops (a NaN-aware max is several), so eight chains side
// by side keep the core busy without changing any row's order.
template <typename F>
void FoldRowsEach(const float* x, int64_t rows, int64_t len, float init, float* out, F f) {
  constexpr int64_t kChains = 8;
  int64_t r = 0;
  for (; r + kChains <= rows; r += kChains) {
    float acc[kChains];
    for (int64_t c = 0; c < kChains; ++c) acc[c] = init;
    const float* row = x + r * len;
    for (int64_t k = 0; k < len; ++k) {
      for (int64_t c = 0; c < kChains; ++c) acc[c] = f(acc[c], row[c * len + k]);
    }
    for (int64_t c = 0; c < kChains; ++c) out[r + c] = acc[c];
  }
  for (; r < rows; ++r) {
    float v = init;
    for (int64_t k = 0; k < len; ++k) v = f(v, x[r * len + k]);
    out[r] = v;
  }
}

// The maximum (or minimum) of each row, folded in any order: sixteen lanes side by side, then
// the lanes. For NaN-free rows that is the in-order fold's value, since every other extreme is
// one unique float; ±0 compare equal, so a row whose extreme is zero, or that holds a NaN, is
// folded again in order (the order decides a zero's sign and the canonical NaN).
template <typename Pick>
void ExtremeRowsEach(Opcode op, const float* x, int64_t rows, int64_t len, float init, float* out,
                     Pick pick) {
  constexpr int64_t kLanes = 16;
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * len;
    float lane[kLanes];
    int32_t nan[kLanes];
    for (int64_t l = 0; l < kLanes; ++l) {
      lane[l] = init;
      nan[l] = 0;
    }
    int64_t k = 0;
    for (; k + kLanes <= len; k += kLanes) {
      for (int64_t l = 0; l < kLanes; ++l) {
        const float v = row[k + l];
        nan[l] |= v != v;
        lane[l] = pick(v, lane[l]);
      }
    }
    bool any_nan = std::isnan(init);
    float m = init;
    for (int64_t l = 0; l < kLanes; ++l) {
      any_nan = any_nan || nan[l] != 0;
      m = pick(lane[l], m);
    }
    for (; k < len; ++k) {
      any_nan = any_nan || std::isnan(row[k]);
      m = pick(row[k], m);
    }
    if (any_nan || m == 0.0f) {
      m = init;
      for (k = 0; k < len; ++k) m = BinaryFloat(op, m, row[k]);
    }
    out[r] = m;
  }
}
TPUEMU_VECTOR_CLONES void ExtremeRows(Opcode op, const float* x, int64_t rows, int64_t len,
                                      float init, float* out) {
  if (op == Opcode::kMaximum) {
    ExtremeRowsEach(op, x, rows, len, init, out, [](float v, float a) { return v > a ? v : a; });
  } else {
    ExtremeRowsEach(op, x, rows, len, init, out, [](float v, float a) { return v < a ? v : a; });
  }
}

}  // namespace

bool FoldRowsF32(Opcode op, const float* x, int64_t rows, int64_t len, float init, float* out) {
  switch (op) {
    case Opcode::kAdd:
      FoldRowsEach(x, rows, len, init, out, [](float v, float e) { return v + e; });
      return true;
    case Opcode::kMultiply:
      FoldRowsEach(x, rows, len, init, out, [](float v, float e) { return v * e; });
      return true;
    case Opcode::kMaximum:
    case Opcode::kMinimum:
      ExtremeRows(op, x, rows, len, init, out);
      return true;
    default:
      return false;
  }
}

void MapBlockF32(const ElementwiseOp& op, const float* a, const float* b, float* o, int64_t n) {
  if (op.opcode == Opcode::kCompare) {
    CompareToFloats(op.direction, a, b, o, n);
  } else if (op.opcode == Opcode::kExp) {
    ExpArray(a, o, n);
  } else if (op.opcode == Opcode::kTanh) {
    TanhArray(a, o, n);
  } else if (IsElementwiseUnary(op.opcode)) {
    UnaryF32(op.opcode, a, o, 0, n);
  } else if (!MapF32(op.opcode, a, b, o, 0, n)) {
    for (int64_t k = 0; k < n; ++k) o[k] = BinaryFloat(op.opcode, a[k], b[k]);
  }
}

TPUEMU_VECTOR_CLONES void SplatRowsF32(const float* values, int64_t inner, int64_t begin, int64_t n,
                                       float* o) {
  for (int64_t k = begin; k < begin + n;) {  // one run per row
    const int64_t row = k / inner;
    const int64_t run_end = std::min((row + 1) * inner, begin + n);
    const float v = values[row];
    for (int64_t j = k; j < run_end; ++j) o[j - begin] = v;
    k = run_end;
  }
}

void SelectBlockF32(const float* mask, const float* on_true, const float* on_false, float* o,
                    int64_t n) {
  SelectEach(mask, on_true, on_false, o, 0, n);
}

bool AccumulateF32(Opcode op, float* acc, const float* x, int64_t n) {
  if (op != Opcode::kAdd && op != Opcode::kMultiply && op != Opcode::kMaximum &&
      op != Opcode::kMinimum) {
    return false;
  }
  return MapF32(op, acc, x, acc, 0, n);
}

Array ApplyUnary(const ElementwiseOp& op, const Array& x, const ParallelContext& parallel,
                 Array* donor) {
  const int64_t n = x.size();
  const bool floats = x.floating() && IsFloating(op.out_type);
  const bool vector_math = floats && (op.opcode == Opcode::kExp || op.opcode == Opcode::kTanh);
  const bool convert = floats && op.opcode == Opcode::kConvert;
  const bool float_map =
      convert || (floats && IsElementwiseUnary(op.opcode) && op.opcode != Opcode::kIsFinite);
  if (!vector_math && !float_map) {
    Array out = Array::Uninitialized(op.out_type, x.dims);
    for (int64_t k = 0; k < n; ++k) SetScalar(out, k, ApplyUnary(op, GetScalar(x, k)));
    return out;
  }
  const float* in = x.f.data();  // taken first: the donor may be x
  Array out = Array::Uninitialized(op.out_type, x.dims, donor);
  float* o = out.f.data();
  // exp and tanh over whole arrays: the vectorised loops, the same bits as one element at a time.
  if (vector_math) {
    ParallelChunks(parallel, n, kElementwiseGrain, [&](int64_t begin, int64_t end) {
      (op.opcode == Opcode::kExp ? ExpArray : TanhArray)(in + begin, o + begin, end - begin);
      if (op.out_type != PrimitiveType::kF32) {
        RoundToType(op.out_type, o + begin, o + begin, end - begin);
      }
    });
    return out;
  }
  // The common float maps (and float-to-float converts) skip the Scalar round trip.
  ParallelChunks(parallel, n, kElementwiseGrain, [&](int64_t begin, int64_t end) {
    if (convert) {
      RoundToType(op.out_type, in + begin, o + begin, end - begin);
      return;
    }
    if (op.out_type == PrimitiveType::kF32) {
      UnaryF32(op.opcode, in, o, begin, end);
      return;
    }
    for (int64_t k = begin; k < end; ++k) {
      o[k] = RoundToType(op.out_type, UnaryFloat(op.opcode, in[k]));
    }
  });
  return out;
}

Array ApplyBinary(const ElementwiseOp& op, const Array& a, const Array& b,
                  const ParallelContext& parallel, Array* donor) {
  const PrimitiveType out_type = op.opcode == Opcode::kCompare ? PrimitiveType::kPred : op.out_type;
  const int64_t n = a.size();
  if (a.floating() && IsFloating(out_type)) {
    const float* pa = a.f.data();  // taken first: the donor may be a or b
    const float* pb = b.f.data();
    Array out = Array::Uninitialized(out_type, a.dims, donor);
    float* o = out.f.data();
    ParallelChunks(parallel, n, kElementwiseGrain, [&](int64_t begin, int64_t end) {
      if (op.out_type == PrimitiveType::kF32 && MapF32(op.opcode, pa, pb, o, begin, end)) return;
      for (int64_t k = begin; k < end; ++k) {
        o[k] = RoundToType(op.out_type, BinaryFloat(op.opcode, pa[k], pb[k]));
      }
    });
    return out;
  }
  if (op.opcode == Opcode::kCompare && a.floating() &&
      op.compare_type != CompareType::kTotalOrder) {
    const float* pa = a.f.data();
    const float* pb = b.f.data();
    Array out = Array::Uninitialized(out_type, a.dims);
    int64_t* o = out.i.data();
    ParallelChunks(parallel, n, kElementwiseGrain, [&](int64_t begin, int64_t end) {
      CompareToInts(op.direction, pa, pb, o, begin, end);
    });
    return out;
  }
  Array out = Array::Uninitialized(out_type, a.dims);
  for (int64_t k = 0; k < n; ++k) {
    SetScalar(out, k, ApplyBinary(op, GetScalar(a, k), GetScalar(b, k)));
  }
  return out;
}

Array Select(const Array& pred, const Array& on_true, const Array& on_false,
             const ParallelContext& parallel, Array* donor) {
  const bool scalar = pred.dims.empty();
  const int64_t n = on_true.size();
  if (on_true.floating() && on_true.type == on_false.type) {
    const int64_t* p = pred.i.data();  // taken first: the donor may be an operand
    const float* t = on_true.f.data();
    const float* f = on_false.f.data();
    Array out = Array::Uninitialized(on_true.type, on_true.dims, donor);
    float* o = out.f.data();
    ParallelChunks(parallel, n, kElementwiseGrain, [&](int64_t begin, int64_t end) {
      if (scalar) {
        const float* src = p[0] != 0 ? t : f;
        for (int64_t k = begin; k < end; ++k) o[k] = src[k];
        return;
      }
      SelectByInts(p, t, f, o, begin, end);
    });
    return out;
  }
  Array out = Array::Uninitialized(on_true.type, on_true.dims);
  for (int64_t k = 0; k < n; ++k) {
    const bool p = pred.i[static_cast<size_t>(scalar ? 0 : k)] != 0;
    const Array& src = p ? on_true : on_false;
    Scalar s = GetScalar(src, k);
    if (src.type != out.type) s.f = RoundToType(out.type, s.f);
    SetScalar(out, k, s);
  }
  return out;
}

Array Clamp(const Array& lo, const Array& x, const Array& hi, PrimitiveType out_type) {
  Array out = Array::Uninitialized(out_type, x.dims);
  const int64_t n = x.size();
  ElementwiseOp max_op{Opcode::kMaximum, out_type};
  ElementwiseOp min_op{Opcode::kMinimum, out_type};
  for (int64_t k = 0; k < n; ++k) {
    const Scalar l = GetScalar(lo, lo.dims.empty() ? 0 : k);
    const Scalar h = GetScalar(hi, hi.dims.empty() ? 0 : k);
    SetScalar(out, k, ApplyBinary(min_op, ApplyBinary(max_op, GetScalar(x, k), l), h));
  }
  return out;
}

}  // namespace tpuemu::engine::hlo
