// rng-bit-generator with XLA's own algorithms, bit for bit (xla/hlo/builder/lib/prng.cc and
// xla/service/rng_bit_generator_expander.cc): Philox4x32-10 and ThreeFry2x32-20 keyed by
// state[0]. rng_default is Philox, as on XLA's CPU backend. Also the deterministic fills
// (docs/hlo.md): SplitMix64 per element, keyed by the seed and a stream number.
#include <array>
#include <bit>
#include <cmath>

#include "engine/hlo/evaluator_internal.h"

namespace tpuemu::engine::hlo::internal {
namespace {

uint32_t Lo(uint64_t v) { return static_cast<uint32_t>(v); }
uint32_t Hi(uint64_t v) { return static_cast<uint32_t>(v >> 32); }
uint64_t Join(uint32_t lo, uint32_t hi) { return uint64_t{lo} | (uint64_t{hi} << 32); }
uint32_t Rotl(uint32_t v, int d) { return (v << d) | (v >> (32 - d)); }

using Block = std::array<uint32_t, 4>;

Block Philox(Block x, uint32_t k0, uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t{x[0]} * 0xD2511F53u;
    const uint64_t p1 = uint64_t{x[2]} * 0xCD9E8D57u;
    x = {Hi(p1) ^ x[1] ^ k0, Lo(p1), Hi(p0) ^ x[3] ^ k1, Lo(p0)};
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return x;
}

std::array<uint32_t, 2> ThreeFry(uint32_t x0, uint32_t x1, uint32_t k0, uint32_t k1) {
  const uint32_t ks[3] = {k0, k1, 0x1BD11BDAu ^ k0 ^ k1};
  static constexpr int kRot[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  x0 += ks[0];
  x1 += ks[1];
  for (int block = 0; block < 5; ++block) {
    for (int r : kRot[block % 2]) {
      x0 += x1;
      x1 = Rotl(x1, r);
      x1 ^= x0;
    }
    x0 += ks[(block + 1) % 3];
    x1 += ks[(block + 2) % 3] + static_cast<uint32_t>(block + 1);
  }
  return {x0, x1};
}

// Stores raw bits into element k of an array of any evaluable type.
void SetBits(Array& a, int64_t k, uint64_t bits) {
  switch (a.type) {
    case PrimitiveType::kF32:
      a.f[static_cast<size_t>(k)] = std::bit_cast<float>(static_cast<uint32_t>(bits));
      break;
    case PrimitiveType::kBF16:
      a.f[static_cast<size_t>(k)] = Bf16BitsToF32(static_cast<uint16_t>(bits));
      break;
    case PrimitiveType::kF16:
      a.f[static_cast<size_t>(k)] = F16BitsToF32(static_cast<uint16_t>(bits));
      break;
    default:
      a.i[static_cast<size_t>(k)] = CanonicalInt(a.type, static_cast<int64_t>(bits));
  }
}

// Philox: 128-bit counter (low, high) = state, one 4x32 block per counter value.
void PhiloxBits(uint64_t key, uint64_t& low, uint64_t& high, Array& out) {
  const int64_t n = out.size();
  const bool wide = BitWidth(out.type) == 64;
  const int64_t words = wide ? 2 * n : n;
  const int64_t blocks = (words + 3) / 4;
  for (int64_t j = 0; j < blocks; ++j) {
    const uint64_t c_lo = low + static_cast<uint64_t>(j);
    const uint64_t c_hi = high + (c_lo < low ? 1 : 0);
    const Block b = Philox({Lo(c_lo), Hi(c_lo), Lo(c_hi), Hi(c_hi)}, Lo(key), Hi(key));
    if (wide) {
      const uint64_t pair[2] = {Join(b[0], b[1]), Join(b[2], b[3])};
      for (int i = 0; i < 2 && 2 * j + i < n; ++i) SetBits(out, 2 * j + i, pair[i]);
    } else {
      for (int i = 0; i < 4 && 4 * j + i < n; ++i)
        SetBits(out, 4 * j + i, b[static_cast<size_t>(i)]);
    }
  }
  const uint64_t new_low = low + static_cast<uint64_t>(blocks);
  high += new_low < low ? 1 : 0;
  low = new_low;
}

// ThreeFry: 64-bit counter; 32-bit outputs pair up along a split dimension (SplitShapeIntoHalves).
uint64_t ThreeFryBits(uint64_t key, uint64_t counter, Array& out) {
  const int64_t n = out.size();
  if (BitWidth(out.type) == 64) {
    for (int64_t j = 0; j < n; ++j) {
      const uint64_t in = counter + static_cast<uint64_t>(j);
      const auto x = ThreeFry(Lo(in), Hi(in), Lo(key), Hi(key));
      SetBits(out, j, Join(x[0], x[1]));
    }
    return counter + static_cast<uint64_t>(n);
  }
  std::vector<int64_t> dims = out.dims;
  size_t split = 0;
  if (!dims.empty()) {
    int best = -1;
    for (size_t i = 0; i < dims.size() && best < 0; ++i) {
      if (dims[i] % 2 == 0) best = static_cast<int>(i);
    }
    if (best < 0) {
      for (size_t i = 0; i < dims.size(); ++i) {
        if (best < 0 || dims[i] > dims[static_cast<size_t>(best)]) best = static_cast<int>(i);
      }
    }
    split = static_cast<size_t>(best);
  }
  std::vector<int64_t> half = dims.empty() ? std::vector<int64_t>{1} : dims;
  if (!dims.empty()) half[split] = (dims[split] + 1) / 2;
  const int64_t half_n = Product(half);
  const std::vector<int64_t> half_strides = Strides(half);
  std::vector<int64_t> idx(dims.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    // element s along the split dim comes from half position s / 2, output word s % 2
    int64_t j = 0;
    int word = 0;
    for (size_t d = 0; d < dims.size(); ++d) {
      const int64_t v = d == split ? idx[d] / 2 : idx[d];
      if (d == split) word = static_cast<int>(idx[d] % 2);
      j += v * half_strides[d];
    }
    const uint64_t in = counter + static_cast<uint64_t>(j);
    const auto x = ThreeFry(Lo(in), Hi(in), Lo(key), Hi(key));
    SetBits(out, k, x[static_cast<size_t>(word)]);
    NextIndex(idx, dims);
  }
  return counter + static_cast<uint64_t>(half_n);
}

uint64_t SplitMix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

Value RngBitGenerator(const Instruction& inst, const Array& state) {
  const Shape& data_shape = inst.shape.tuple[1];
  Array data = Array::Zeros(data_shape.type, data_shape.dims);
  Array new_state = state;
  auto u = [&](size_t i) { return static_cast<uint64_t>(state.i[i]); };
  const uint64_t key = u(0);
  if (inst.a().rng_algorithm == RngAlgorithm::kThreeFry) {
    new_state.i[1] = static_cast<int64_t>(ThreeFryBits(key, u(1), data));
  } else {
    const bool long_state = state.size() >= 3;
    uint64_t low = u(1), high = long_state ? u(2) : u(0);
    PhiloxBits(key, low, high, data);
    new_state.i[1] = static_cast<int64_t>(low);
    if (long_state) new_state.i[2] = static_cast<int64_t>(high);
  }
  return Value::Tuple({Value::Of(std::move(new_state)), Value::Of(std::move(data))});
}

Array FillDeterministic(const Shape& shape, uint64_t seed, uint64_t stream) {
  Array out = Array::Zeros(shape.type, shape.dims);
  const uint64_t base = SplitMix(seed ^ SplitMix(stream));
  for (int64_t k = 0, n = out.size(); k < n; ++k) {
    const uint64_t z = SplitMix(base + static_cast<uint64_t>(k));
    if (out.floating()) {
      const float unit = static_cast<float>(z >> 40) * (1.0f / 16777216.0f);  // [0, 1)
      out.f[static_cast<size_t>(k)] = RoundToType(shape.type, 2.0f * unit - 1.0f);
    } else if (shape.type == PrimitiveType::kPred) {
      out.i[static_cast<size_t>(k)] = static_cast<int64_t>(z & 1);
    } else {
      out.i[static_cast<size_t>(k)] = static_cast<int64_t>(z % 8);
    }
  }
  return out;
}

Array Rng(const Instruction& inst, const Array& a, const Array& b, uint64_t seed, uint64_t call) {
  Array unit = FillDeterministic(Shape::Array(PrimitiveType::kF32, inst.shape.dims), seed,
                                 call * 0x100000001B3ull);
  Array out = Array::Zeros(inst.shape.type, inst.shape.dims);
  const double lo = a.GetDouble(0), hi = b.GetDouble(0);
  const bool normal = inst.a().distribution == "rng_normal";
  for (int64_t k = 0, n = out.size(); k < n; ++k) {
    const double u01 = (unit.f[static_cast<size_t>(k)] + 1.0) / 2.0;
    double v = lo + (hi - lo) * u01;
    if (normal) {
      const double u2 = (unit.f[static_cast<size_t>((k + 1) % n)] + 1.0) / 2.0;
      v = lo +
          hi * std::sqrt(-2.0 * std::log(std::max(u01, 1e-7))) * std::cos(6.283185307179586 * u2);
    } else if (!out.floating()) {
      v = std::floor(v);
    }
    out.SetDouble(k, v);
  }
  return out;
}

}  // namespace tpuemu::engine::hlo::internal
