#include "engine/gemm_operands.h"

#include <array>
#include <cstddef>
#include <memory>
#include <type_traits>

namespace tpuemu::engine {
namespace {

constexpr std::size_t kRetainedScratchBytes = std::size_t{256} << 20;

// Only the owning thread touches its Scratch (thread_local): no lock.
class Scratch {
 public:
  static constexpr int kSlots = 6;  // hi, mid, lo of A and of B

  // Uninitialised storage for `count` values of T in `slot`, valid until Trim or the next Get of
  // the same slot.
  template <typename T>
  T* Get(int slot, std::size_t count) {
    Buffer& buf = buffers_[static_cast<std::size_t>(slot)];
    const std::size_t bytes = count * sizeof(T);
    if (buf.bytes < bytes) {
      buf.data.reset();  // free first: old and new planes need not coexist
      buf.data.reset(new std::byte[bytes]);
      buf.bytes = bytes;
    }
    return reinterpret_cast<T*>(buf.data.get());
  }

  void Trim() {
    std::size_t total = 0;
    for (const Buffer& buf : buffers_) total += buf.bytes;
    if (total <= kRetainedScratchBytes) return;
    for (Buffer& buf : buffers_) buf = Buffer{};
  }

 private:
  struct Buffer {
    std::unique_ptr<std::byte[]> data;
    std::size_t bytes = 0;
  };
  std::array<Buffer, kSlots> buffers_;
};

Scratch& ThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

template <typename T>
bool Prepare(const float* x, int64_t count, Precision precision, int first_slot,
             const ParallelContext& ctx, OperandPlanes* out) {
  Scratch& scratch = ThreadScratch();
  const auto n = static_cast<std::size_t>(count);
  T* hi = scratch.Get<T>(first_slot, n);
  T* mid = nullptr;
  T* lo = nullptr;
  if (precision == Precision::kHigh || precision == Precision::kHighest) {
    lo = scratch.Get<T>(first_slot + 1, n);
  }
  if (precision == Precision::kHighest) mid = scratch.Get<T>(first_slot + 2, n);
  const bool done = ParallelChunks(ctx, count, kElementwiseGrain, [&](int64_t b, int64_t e) {
    const auto len = static_cast<std::size_t>(e - b);
    switch (precision) {
      case Precision::kDefault:
        if constexpr (std::is_same_v<T, float>) {
          RoundToBf16(x + b, hi + b, len);
        } else {
          RoundToBf16Bits(x + b, hi + b, len);
        }
        break;
      case Precision::kHigh:
        Split2(x + b, hi + b, lo + b, len);
        break;
      case Precision::kHighest:
        Split3(x + b, hi + b, mid + b, lo + b, len);
        break;
      case Precision::kF32:
        break;  // not prepared (PrepareOperand returns the raw operand)
    }
  });
  if (precision == Precision::kHighest) {
    *out = {{hi, mid, lo}, 3};
  } else if (precision == Precision::kHigh) {
    *out = {{hi, lo, nullptr}, 2};
  } else {
    *out = {{hi, nullptr, nullptr}, 1};
  }
  return done;
}

}  // namespace

bool PrepareOperand(const float* data, int64_t count, bool bf16_valued, Precision precision,
                    bool bf16_planes, int first_slot, const ParallelContext& ctx,
                    OperandPlanes* out) {
  if (precision == Precision::kF32 ||
      (precision == Precision::kDefault && bf16_valued && !bf16_planes)) {
    *out = {{data, nullptr, nullptr}, 1};
    return !ctx.cancel.Stopped();
  }
  return bf16_planes ? Prepare<Bf16Bits>(data, count, precision, first_slot, ctx, out)
                     : Prepare<float>(data, count, precision, first_slot, ctx, out);
}

void TrimScratch() { ThreadScratch().Trim(); }

}  // namespace tpuemu::engine
