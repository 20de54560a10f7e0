#include "service/faults/seeded_rng.h"

namespace tpuemu::service {
namespace {

// FNV-1a: a stable hash of the stream name (std::hash may differ between builds).
uint64_t StreamHash(std::string_view name) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace

SeededRng::SeededRng(uint64_t seed, std::string_view stream) {
  std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                    static_cast<uint32_t>(StreamHash(stream)),
                    static_cast<uint32_t>(StreamHash(stream) >> 32)};
  engine_.seed(seq);
}

double SeededRng::Uniform() {
  std::lock_guard lock(mu_);
  // 53 random bits: exact and identical on every platform (unlike uniform_real_distribution).
  return static_cast<double>(engine_() >> 11) * 0x1.0p-53;
}

bool SeededRng::Bernoulli(double p) {
  if (p <= 0) return false;
  if (p >= 1) return true;
  return Uniform() < p;
}

}  // namespace tpuemu::service
