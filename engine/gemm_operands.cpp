#include "engine/gemm_operands.h"

#include <algorithm>
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

// Element i of the planes from value x.
template <typename T>
inline void PrepareOne(float x, Precision precision, T* hi, T* mid, T* lo, std::size_t i) {
  auto put = [](float v) {
    if constexpr (std::is_same_v<T, float>) {
      return v;
    } else {
      return F32ToBf16Bits(v);  // the parts are bf16 values already: an exact re-encoding
    }
  };
  switch (precision) {
    case Precision::kDefault:
      hi[i] = put(RoundToBf16(x));
      break;
    case Precision::kHigh: {
      const Split2Parts parts = Split2(x);
      hi[i] = put(parts.hi);
      lo[i] = put(parts.lo);
      break;
    }
    case Precision::kHighest: {
      const Split3Parts parts = Split3(x);
      hi[i] = put(parts.hi);
      mid[i] = put(parts.mid);
      lo[i] = put(parts.lo);
      break;
    }
    case Precision::kF32:
      break;
  }
}

// Contiguous values [b, e) through the vectorised bulk helpers of numerics.h.
template <typename T>
void PrepareRange(const float* x, Precision precision, T* hi, T* mid, T* lo, int64_t b, int64_t e) {
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
      break;
  }
}

template <typename T>
bool Prepare(const float* x, const OperandLayout& layout, Precision precision, int first_slot,
             const ParallelContext& ctx, OperandPlanes* out) {
  Scratch& scratch = ThreadScratch();
  const int64_t count = layout.items * layout.rows * layout.cols;
  const auto n = static_cast<std::size_t>(count);
  T* hi = scratch.Get<T>(first_slot, n);
  T* mid = nullptr;
  T* lo = nullptr;
  if (precision == Precision::kHigh || precision == Precision::kHighest) {
    lo = scratch.Get<T>(first_slot + 1, n);
  }
  if (precision == Precision::kHighest) mid = scratch.Get<T>(first_slot + 2, n);
  bool done;
  if (!layout.transpose) {
    done = ParallelChunks(ctx, count, kElementwiseGrain, [&](int64_t b, int64_t e) {
      PrepareRange(x, precision, hi, mid, lo, b, e);
    });
  } else {
    // Output rows in chunks; inside, 32 x 32 blocks keep both sides in cache.
    const int64_t rows = layout.rows, cols = layout.cols;
    const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(cols, 1));
    done = ParallelChunks(ctx, layout.items * rows, grain, [&](int64_t r0, int64_t r1) {
      constexpr int64_t kBlock = 32;
      for (int64_t rb = r0; rb < r1; rb += kBlock) {
        const int64_t re = std::min(r1, rb + kBlock);
        for (int64_t c0 = 0; c0 < cols; c0 += kBlock) {
          for (int64_t r = rb; r < re; ++r) {
            const int64_t item = r / rows, row = r % rows;
            const float* src = x + item * rows * cols;  // [cols, rows]
            for (int64_t c = c0; c < std::min(cols, c0 + kBlock); ++c) {
              PrepareOne(src[c * rows + row], precision, hi, mid, lo,
                         static_cast<std::size_t>(r * cols + c));
            }
          }
        }
      }
    });
  }
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

bool PrepareOperand(const float* data, const OperandLayout& layout, bool bf16_valued,
                    Precision precision, bool bf16_planes, int first_slot,
                    const ParallelContext& ctx, OperandPlanes* out) {
  const bool identity =
      !layout.transpose && precision == Precision::kDefault && bf16_valued && !bf16_planes;
  if (precision == Precision::kF32 || identity) {
    *out = {{data, nullptr, nullptr}, 1};
    return !ctx.cancel.Stopped();
  }
  return bf16_planes ? Prepare<Bf16Bits>(data, layout, precision, first_slot, ctx, out)
                     : Prepare<float>(data, layout, precision, first_slot, ctx, out);
}

void TrimScratch() { ThreadScratch().Trim(); }

}  // namespace tpuemu::engine
