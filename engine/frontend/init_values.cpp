#include "engine/frontend/init_values.h"

#include <cmath>
#include <cstdint>
#include <numbers>

namespace tpuemu::engine {
namespace {

// splitmix64: a tiny, portable, well-mixed generator, so seeds give the same values everywhere.
uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
double Uniform01(uint64_t& state) {  // in (0, 1)
  return (static_cast<double>(SplitMix64(state) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

}  // namespace

Status MaterializeInit(const Init& init, Tensor& out, const CancelToken& cancel) {
  const int64_t n = out.num_elements();
  const bool ints = out.dtype() == DType::kI32;
  switch (init.kind) {
    case Init::Kind::kNone:
      return Status::InvalidArgument("no init spec");
    case Init::Kind::kFill:
      for (int64_t i = 0; i < n; ++i) {
        if (ints) {
          out.i32()[i] = static_cast<int32_t>(std::llround(init.fill));
        } else {
          out.f32()[i] = static_cast<float>(init.fill);
        }
      }
      break;
    case Init::Kind::kValues:
      for (int64_t i = 0; i < n; ++i) {
        const double v = init.values[static_cast<size_t>(i)];
        if (ints) {
          out.i32()[i] = static_cast<int32_t>(std::llround(v));
        } else {
          out.f32()[i] = static_cast<float>(v);
        }
      }
      break;
    case Init::Kind::kRandom: {
      uint64_t state = init.seed;
      float* o = out.f32();
      // Chunks of an even length (a Box-Muller pair never straddles two), ~1 ms each.
      constexpr int64_t kChunk = int64_t{1} << 16;
      for (int64_t begin = 0; begin < n; begin += kChunk) {
        if (cancel.Stopped()) return cancel.Check("while materialising a random init");
        const int64_t end = std::min(n, begin + kChunk);
        if (init.distribution == Init::Distribution::kUniform) {
          for (int64_t i = begin; i < end; ++i) {
            o[i] = static_cast<float>((2.0 * Uniform01(state) - 1.0) * init.scale);
          }
        } else {
          for (int64_t i = begin; i < end; i += 2) {  // Box-Muller: two normals per pair
            const double r = std::sqrt(-2.0 * std::log(Uniform01(state)));
            const double t = 2.0 * std::numbers::pi * Uniform01(state);
            o[i] = static_cast<float>(r * std::cos(t) * init.scale);
            if (i + 1 < n) o[i + 1] = static_cast<float>(r * std::sin(t) * init.scale);
          }
        }
      }
      break;
    }
  }
  out.RoundToDType();
  return Status::Ok();
}

}  // namespace tpuemu::engine
