#include "engine/kernels/vector_math.h"

#include <bit>
#include <cmath>
#include <limits>

#include "base/vector_clones.h"

namespace tpuemu::engine {
namespace {

// Cephes expf (S. L. Moshier, Cephes Math Library, expf.c): x = n·ln2 + r, |r| <= ln2/2,
// exp(r) by a degree-6 polynomial, times 2^n built from the exponent bits. Branch-free (selects),
// so loops over it vectorise; 2^n is applied in two halves so that n = 128 and the subnormal
// range need no special case.
inline float ExpF(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
  constexpr float kRound = 12582912.0f;  // 1.5·2^23: adding it rounds to an integer
  float xc = x > 88.75f ? 88.75f : x;
  xc = xc < -104.0f ? -104.0f : xc;
  xc = x != x ? 0.0f : xc;  // NaN: a finite stand-in (converting NaN to int is undefined)
  const float n = (xc * kLog2e + kRound) - kRound;
  float r = xc - n * kLn2Hi;
  r = r - n * kLn2Lo;
  float p = 1.9875691500E-4f;
  p = p * r + 1.3981999507E-3f;
  p = p * r + 8.3334519073E-3f;
  p = p * r + 4.1665795894E-2f;
  p = p * r + 1.6666665459E-1f;
  p = p * r + 5.0000001201E-1f;
  p = p * (r * r) + r + 1.0f;
  const auto e = static_cast<int32_t>(n);
  const int32_t e1 = e >> 1, e2 = e - e1;
  const float s1 = std::bit_cast<float>(static_cast<uint32_t>(e1 + 127) << 23);
  const float s2 = std::bit_cast<float>(static_cast<uint32_t>(e2 + 127) << 23);
  float y = (p * s1) * s2;
  y = x > 88.72283935546875f ? std::numeric_limits<float>::infinity() : y;  // ln(FLT_MAX)
  y = x < -103.97208f ? 0.0f : y;  // below half the smallest subnormal
  return x != x ? x : y;
}

// Cephes tanhf (tanhf.c): odd polynomial for |x| < 0.625, else 1 - 2/(e^{2|x|} + 1) with the
// sign of x (|x| capped at 10, where tanh is 1 in f32).
inline float TanhF(float x) {
  const float ax = std::fabs(x);
  const float z = ExpF(2.0f * (ax < 10.0f ? ax : 10.0f));
  const float big = 1.0f - 2.0f / (z + 1.0f);
  const float x2 = x * x;
  float p = -5.70498872745E-3f;
  p = p * x2 + 2.06390887954E-2f;
  p = p * x2 - 5.37397155531E-2f;
  p = p * x2 + 1.33314422036E-1f;
  p = p * x2 - 3.33332819422E-1f;
  const float small = p * x2 * ax + ax;
  const float y = std::copysign(ax < 0.625f ? small : big, x);
  return x != x ? x : y;
}

constexpr float kGeluC = 0.7978845608028654f;  // sqrt(2/pi)
constexpr float kGeluA = 0.044715f;

}  // namespace

float ExpOne(float x) { return ExpF(x); }
float TanhOne(float x) { return TanhF(x); }

TPUEMU_VECTOR_CLONES void ExpArray(const float* x, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = ExpF(x[i]);
}

TPUEMU_VECTOR_CLONES void TanhArray(const float* x, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = TanhF(x[i]);
}

TPUEMU_VECTOR_CLONES void GeluArray(const float* x, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    out[i] = 0.5f * v * (1.0f + TanhF(kGeluC * (v + kGeluA * v * v * v)));
  }
}

TPUEMU_VECTOR_CLONES void GeluGradArray(const float* x, const float* dy, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    const float t = TanhF(kGeluC * (v + kGeluA * v * v * v));
    const float d =
        0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * kGeluC * (1.0f + 3.0f * kGeluA * v * v);
    out[i] = dy[i] * d;
  }
}

TPUEMU_VECTOR_CLONES double ExpShiftSumArray(const float* x, float shift, float* out, int64_t n) {
  // Eight partial sums: independent lanes the compiler can keep in registers.
  double lanes[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int l = 0; l < 8; ++l) {
      const float e = ExpF(x[i + l] - shift);
      out[i + l] = e;
      lanes[l] += e;
    }
  }
  double sum = 0;
  for (; i < n; ++i) {
    out[i] = ExpF(x[i] - shift);
    sum += out[i];
  }
  for (double lane : lanes) sum += lane;
  return sum;
}

}  // namespace tpuemu::engine
