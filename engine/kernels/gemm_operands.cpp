#include "engine/kernels/gemm_operands.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <memory>
#include <type_traits>
#include <vector>

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
    case Precision::kF32:  // a plain copy (f32 planes only: only transposing needs one)
      if constexpr (std::is_same_v<T, float>) std::copy(x + b, x + e, hi + b);
      break;
  }
}

// dst[j·dst_ld + i] = src[i·src_ld + j] for a [src_rows, src_cols] block with few rows (a slab):
// each destination row is one contiguous run. src_ld should not be a multiple of 4 KiB, or the
// column walk over src lands every row in the same L1 set (callers pad it).
template <typename T>
void TransposeSlab(const T* src, int64_t src_ld, int64_t src_rows, int64_t src_cols, T* dst,
                   int64_t dst_ld) {
  for (int64_t j = 0; j < src_cols; ++j) {
    T* out = dst + j * dst_ld;
    for (int64_t i = 0; i < src_rows; ++i) out[i] = src[i * src_ld + j];
  }
}

// The planes `precision` needs, `n` values each, in this thread's slots [first_slot, +3):
// {hi, mid, lo} with null for the ones it does not use.
template <typename T>
std::array<T*, 3> GetPlanes(int first_slot, std::size_t n, Precision precision) {
  Scratch& scratch = ThreadScratch();
  std::array<T*, 3> planes{scratch.Get<T>(first_slot, n), nullptr, nullptr};
  if (precision == Precision::kHigh || precision == Precision::kHighest) {
    planes[2] = scratch.Get<T>(first_slot + 1, n);
  }
  if (precision == Precision::kHighest) planes[1] = scratch.Get<T>(first_slot + 2, n);
  return planes;
}

// The planes in the order the GEMM's pass schedule indexes them (gemm.cpp's ScheduleFor).
OperandPlanes Ordered(const void* hi, const void* mid, const void* lo, Precision precision) {
  if (precision == Precision::kHighest) return {{hi, mid, lo}, 3};
  if (precision == Precision::kHigh) return {{hi, lo, nullptr}, 2};
  return {{hi, nullptr, nullptr}, 1};
}

template <typename T>
bool Prepare(const float* x, const OperandLayout& layout, Precision precision, int first_slot,
             const ParallelContext& ctx, OperandPlanes* out) {
  const int64_t count = layout.items * layout.rows * layout.cols;
  const std::array<T*, 3> planes =
      GetPlanes<T>(first_slot, static_cast<std::size_t>(count), precision);
  T* const hi = planes[0];
  T* const mid = planes[1];
  T* const lo = planes[2];
  bool done;
  if (!layout.transpose) {
    done = ParallelChunks(ctx, count, kElementwiseGrain, [&](int64_t b, int64_t e) {
      PrepareRange(x, precision, hi, mid, lo, b, e);
    });
  } else {
    // Tiles of kSlab source rows ([cols, rows] per item, so kSlab columns of the planes) by
    // kRowBlock plane rows: the vectorised conversion into a thread-local slab, then a transpose
    // into place. The row block bounds the pages a tile writes (one per plane row): all of them
    // would overflow the TLB with three planes (measured: 5 ns per element instead of 0.9).
    constexpr int64_t kSlab = 32, kRowBlock = 256;
    const int64_t rows = layout.rows, cols = layout.cols;
    const int64_t slabs = (cols + kSlab - 1) / kSlab, blocks = (rows + kRowBlock - 1) / kRowBlock;
    const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / (kSlab * kRowBlock));
    done = ParallelChunks(ctx, layout.items * slabs * blocks, grain, [&](int64_t t0, int64_t t1) {
      constexpr int64_t ld = kRowBlock + 64 / static_cast<int64_t>(sizeof(T));  // TransposeSlab
      thread_local std::vector<T> slab;
      slab.resize(static_cast<std::size_t>(3 * kSlab * ld));
      T* tmp[3] = {slab.data(), slab.data() + kSlab * ld, slab.data() + 2 * kSlab * ld};
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t item = t / (slabs * blocks);
        const int64_t c0 = t / blocks % slabs * kSlab, r0 = t % blocks * kRowBlock;
        const int64_t width = std::min(kSlab, cols - c0), height = std::min(kRowBlock, rows - r0);
        const float* src = x + item * rows * cols + c0 * rows + r0;
        for (int64_t w = 0; w < width; ++w) {
          T* row[3] = {tmp[0] + w * ld, tmp[1] + w * ld, tmp[2] + w * ld};
          PrepareRange(src + w * rows, precision, row[0], row[1], row[2], 0, height);
        }
        for (std::size_t p = 0; p < 3; ++p) {
          if (planes[p] == nullptr) continue;
          TransposeSlab(tmp[p], ld, width, height, planes[p] + item * rows * cols + r0 * cols + c0,
                        cols);
        }
      }
    });
  }
  *out = Ordered(hi, mid, lo, precision);
  return done;
}

template <typename T>
void PrepareRuns(const float* data, int64_t runs, int64_t len, int64_t stride, Precision precision,
                 int first_slot, OperandPlanes* out) {
  const auto planes = GetPlanes<T>(first_slot, static_cast<std::size_t>(runs * len), precision);
  for (int64_t r = 0; r < runs; ++r) {
    std::array<T*, 3> at{};
    for (std::size_t i = 0; i < 3; ++i) at[i] = planes[i] ? planes[i] + r * len : nullptr;
    PrepareRange(data + r * stride, precision, at[0], at[1], at[2], 0, len);
  }
  *out = Ordered(planes[0], planes[1], planes[2], precision);
}

}  // namespace

bool PrepareOperand(const float* data, const OperandLayout& layout, bool bf16_valued,
                    Precision precision, bool bf16_planes, int first_slot,
                    const ParallelContext& ctx, OperandPlanes* out) {
  const bool identity =
      !layout.transpose && (precision == Precision::kF32 ||
                            (precision == Precision::kDefault && bf16_valued && !bf16_planes));
  if (identity) {
    *out = {{data, nullptr, nullptr}, 1};
    return !ctx.cancel.Stopped();
  }
  return bf16_planes ? Prepare<Bf16Bits>(data, layout, precision, first_slot, ctx, out)
                     : Prepare<float>(data, layout, precision, first_slot, ctx, out);
}

void PrepareBlock(const float* data, int64_t runs, int64_t len, int64_t stride, Precision precision,
                  bool bf16_planes, int first_slot, OperandPlanes* out) {
  if (bf16_planes) {
    PrepareRuns<Bf16Bits>(data, runs, len, stride, precision, first_slot, out);
  } else {
    PrepareRuns<float>(data, runs, len, stride, precision, first_slot, out);
  }
}

void TrimScratch() { ThreadScratch().Trim(); }

}  // namespace tpuemu::engine
