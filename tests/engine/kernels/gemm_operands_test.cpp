// The planes a GEMM's passes read (engine/kernels/gemm_operands.h): a transposed operand's, and one
// tile's block, against the planes of the plain operand.
#include "engine/kernels/gemm_operands.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <vector>

#include "engine/hardware/numerics.h"
#include "engine/runtime/parallel.h"
#include "tests/engine/kernels/gemm_test_matrices.h"

namespace tpuemu::engine {
namespace {

// oneDNN's f32 GEMM (and the bf16 one, for one A shared by a batch) gets A transposed while its
// planes are made: the planes of a transposed operand must be exactly those of its explicit
// transpose, for every precision and plane type.
TEST(GemmOperandsTest, PreparingATransposedOperandEqualsPreparingItsTranspose) {
  const int64_t items = 2, rows = 45, cols = 70;
  std::vector<float> stored;  // per item [cols, rows]
  std::vector<float> plain;   // per item [rows, cols]
  for (int64_t i = 0; i < items; ++i) {
    const std::vector<float> x = RandomMatrix(rows, cols, 60 + static_cast<unsigned>(i));
    const std::vector<float> t = Transposed(x, rows, cols);
    plain.insert(plain.end(), x.begin(), x.end());
    stored.insert(stored.end(), t.begin(), t.end());
  }
  const std::size_t count = plain.size();
  for (bool bf16_planes : {false, true}) {
    for (Precision p : {Precision::kDefault, Precision::kHigh, Precision::kHighest}) {
      OperandPlanes from_plain, from_stored;
      ASSERT_TRUE(PrepareOperand(plain.data(), {items, rows, cols, false}, false, p, bf16_planes, 0,
                                 ParallelContext{}, &from_plain));
      ASSERT_TRUE(PrepareOperand(stored.data(), {items, rows, cols, true}, false, p, bf16_planes, 3,
                                 ParallelContext{}, &from_stored));
      ASSERT_EQ(from_plain.count, from_stored.count);
      const std::size_t bytes = count * (bf16_planes ? 2 : 4);
      for (int i = 0; i < from_plain.count; ++i) {
        EXPECT_EQ(std::memcmp(from_plain.plane[i], from_stored.plane[i], bytes), 0)
            << PrecisionName(p) << " plane " << i << " bf16=" << bf16_planes;
      }
    }
  }
}

// One tile's block, rounded on the calling thread into a dense matrix: rows [10, 26) of a
// [45, 70] operand from its row-major storage (one run) and from its transposed storage (70 runs
// of 16), equal to those rows of the whole operand's planes, for every precision and plane type.
TEST(GemmOperandsTest, ABlockIsTheDenseCopyOfThoseRowsOfTheWholePlanes) {
  const int64_t rows = 45, cols = 70, r0 = 10, w = 16;
  const std::vector<float> plain = RandomMatrix(rows, cols, 90);
  const std::vector<float> stored = Transposed(plain, rows, cols);  // [cols, rows]
  for (bool bf16_planes : {false, true}) {
    const std::size_t elem = bf16_planes ? 2 : 4;
    for (Precision p : {Precision::kDefault, Precision::kHigh, Precision::kHighest}) {
      OperandPlanes whole, rows_block, columns_block;
      ASSERT_TRUE(PrepareOperand(plain.data(), {1, rows, cols, false}, false, p, bf16_planes, 0,
                                 ParallelContext{}, &whole));
      PrepareBlock(plain.data() + r0 * cols, 1, w * cols, 0, p, bf16_planes, 3, &rows_block);
      ASSERT_EQ(whole.count, rows_block.count);
      int mismatches = 0;
      for (int plane = 0; plane < whole.count; ++plane) {
        const auto* want = static_cast<const std::byte*>(whole.plane[plane]);
        mismatches += std::memcmp(rows_block.plane[plane], want + r0 * cols * elem,
                                  static_cast<std::size_t>(w * cols) * elem) != 0;
      }
      // The transposed storage's block lands in the same slots: check it after the first.
      PrepareBlock(stored.data() + r0, cols, w, rows, p, bf16_planes, 3, &columns_block);
      ASSERT_EQ(whole.count, columns_block.count);
      for (int plane = 0; plane < whole.count; ++plane) {
        const auto* want = static_cast<const std::byte*>(whole.plane[plane]);
        const auto* got = static_cast<const std::byte*>(columns_block.plane[plane]);
        for (int64_t r = 0; r < w; ++r) {
          for (int64_t c = 0; c < cols; ++c) {  // element (r0 + r, c) at c · w + r
            mismatches += std::memcmp(got + (c * w + r) * elem, want + ((r0 + r) * cols + c) * elem,
                                      elem) != 0;
          }
        }
      }
      EXPECT_EQ(mismatches, 0) << PrecisionName(p) << " bf16=" << bf16_planes;
    }
  }
}

}  // namespace
}  // namespace tpuemu::engine
