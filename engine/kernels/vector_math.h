// Vectorisable f32 math for the vector-unit kernels: exp, tanh and the tanh-GELU and its
// derivative over whole arrays, several times faster than glibc's scalar expf/tanhf.
//
// Accuracy (checked against double-precision std:: in tests/engine/kernels/vector_math_test.cpp):
// exp is Cephes' expf (range reduction by ln2, degree-6 polynomial), within 1 ulp over the normal
// range, exact ±inf / 0 / NaN behaviour at the ends and subnormal results below -87.3; tanh is
// Cephes' tanhf (odd polynomial below 0.625, 1 - 2/(e^2|x| + 1) above), within 2 ulp, tanh(±0) =
// ±0. TPUs compute these on the VPU with their own approximations, so the emulator does not claim
// bit-exactness for transcendental ops (only for the MXU path); the functions give the same bits
// on every x86-64 (base/vector_clones.h). Pure functions on n contiguous values; out may alias
// the input exactly (in place), never partially. Thread-safe.
#pragma once

#include <cstdint>

namespace tpuemu::engine {

// One element of ExpArray / TanhArray, the same bits: the engine's one exp and tanh, which the
// HLO evaluator's elementwise ops use too (engine/hlo/elementwise.h), so the evaluator agrees bit
// for bit with the retired graph executor kept as a test oracle (tests/engine/reference/).
float ExpOne(float x);
float TanhOne(float x);

void ExpArray(const float* x, float* out, int64_t n);
void TanhArray(const float* x, float* out, int64_t n);
// jax.nn.gelu(approximate=True): 0.5·x·(1 + tanh(sqrt(2/pi)·(x + 0.044715·x³))).
void GeluArray(const float* x, float* out, int64_t n);
// out = dy · gelu'(x).
void GeluGradArray(const float* x, const float* dy, float* out, int64_t n);
// out[i] = exp(x[i] - shift); returns Σ out[i] accumulated in double (softmax's denominator).
double ExpShiftSumArray(const float* x, float shift, float* out, int64_t n);

}  // namespace tpuemu::engine
