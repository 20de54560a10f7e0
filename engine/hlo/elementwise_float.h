// One element of the float ops, as XLA's CPU reference computes them: shared by the scalar
// semantics (elementwise.cpp) and the whole-array loops (elementwise_loops.cpp), inline so that a
// loop over a fixed opcode compiles to straight vector code. Internal to engine/hlo.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "engine/hlo/module.h"
#include "engine/kernels/vector_math.h"

namespace tpuemu::engine::hlo::internal {

// Floats as integers in total order: -NaN < -inf < ... < -0 < +0 < ... < inf < NaN.
inline int32_t TotalOrderKey(float f) {
  const auto bits = std::bit_cast<int32_t>(f);
  return bits < 0 ? static_cast<int32_t>(bits ^ 0x7fffffff) : bits;
}

inline float UnaryFloat(Opcode op, float x) {
  switch (op) {
    case Opcode::kAbs:
      return std::fabs(x);
    case Opcode::kAcos:
      return std::acos(x);
    case Opcode::kAcosh:
      return std::acosh(x);
    case Opcode::kAsin:
      return std::asin(x);
    case Opcode::kAsinh:
      return std::asinh(x);
    case Opcode::kAtan:
      return std::atan(x);
    case Opcode::kAtanh:
      return std::atanh(x);
    case Opcode::kCbrt:
      return std::cbrt(x);
    case Opcode::kCeil:
      return std::ceil(x);
    case Opcode::kCos:
      return std::cos(x);
    case Opcode::kCosh:
      return std::cosh(x);
    case Opcode::kErf:
      return std::erf(x);
    case Opcode::kExp:
      return ExpOne(x);
    case Opcode::kExpm1:
      return std::expm1(x);
    case Opcode::kFloor:
      return std::floor(x);
    case Opcode::kLog:
      return std::log(x);
    case Opcode::kLog1p:
      return std::log1p(x);
    case Opcode::kLogistic:
      return 1.0f / (1.0f + ExpOne(-x));
    case Opcode::kNegate:
      return -x;
    case Opcode::kRoundNearestAfz:
      return std::round(x);
    case Opcode::kRoundNearestEven:
      return std::nearbyint(x);
    case Opcode::kRsqrt:
      return 1.0f / std::sqrt(x);
    case Opcode::kSign:
      return x > 0 ? 1.0f : (x < 0 ? -1.0f : x);
    case Opcode::kSin:
      return std::sin(x);
    case Opcode::kSinh:
      return std::sinh(x);
    case Opcode::kSqrt:
      return std::sqrt(x);
    case Opcode::kTan:
      return std::tan(x);
    case Opcode::kTanh:
      return TanhOne(x);
    default:
      return x;
  }
}

inline float BinaryFloat(Opcode op, float a, float b) {
  switch (op) {
    case Opcode::kAdd:
      return a + b;
    case Opcode::kSubtract:
      return a - b;
    case Opcode::kMultiply:
      return a * b;
    case Opcode::kDivide:
      return a / b;
    case Opcode::kMaximum:
      return std::isnan(a) || std::isnan(b) ? std::nanf("") : std::max(a, b);
    case Opcode::kMinimum:
      return std::isnan(a) || std::isnan(b) ? std::nanf("") : std::min(a, b);
    case Opcode::kPower:
      return std::pow(a, b);
    case Opcode::kRemainder:
      return std::fmod(a, b);
    case Opcode::kAtan2:
      return std::atan2(a, b);
    default:
      return a;
  }
}

template <typename T>
bool Ordered(Direction d, T a, T b) {
  switch (d) {
    case Direction::kEq:
      return a == b;
    case Direction::kNe:
      return a != b;
    case Direction::kLt:
      return a < b;
    case Direction::kLe:
      return a <= b;
    case Direction::kGt:
      return a > b;
    case Direction::kGe:
      return a >= b;
  }
  return false;
}

}  // namespace tpuemu::engine::hlo::internal
