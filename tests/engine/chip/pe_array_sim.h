// A cycle-stepped simulator of an R x C systolic array, for tests only (never linked into the
// engine). It really moves operands through a grid of processing elements one cycle at a time and
// really computes the product, so a test can hold the closed forms of engine/chip/timing.h to it
// cycle for cycle AND check the array's output against a plain matmul.
//
// Conventions (cycle 0 is the first cycle of the first weight load; all registers update at the
// clock edge, so within a cycle every PE reads the values its neighbours held at the end of the
// previous cycle):
//  * SCALE-Sim ws: per fold, R cycles of weights shifting down a column chain (the weight for the
//    bottom row enters first), then the M input rows enter from the left, row r skewed by r cycles,
//    moving one column right per cycle; partial sums move one row down per cycle and leave the
//    bottom of column c. Folds run serially (column fold outer, row fold inner) and the next fold
//    starts the cycle after the previous fold's last output left the array.
//  * SCALE-Sim os: operands enter skewed, A from the left (row r = output row), B from the top
//    (column c = output column); each PE accumulates its output in place and hands it out in the
//    cycle of its last MAC (SCALE-Sim's ofmap demand ends on that cycle too).
//  * SCALE-Sim is: ws with the operands' roles swapped (the input tile stays, the weights stream):
//    out^T = B^T · A^T run through the ws array.
//  * TPU: ws with double-buffered weights. Each PE has an active and a shadow weight. Weights for
//    the next fold travel down a separate pipeline, column c starting c cycles after column 0 (so
//    the load wavefront follows the input wavefront), and every row latches its weight into the
//    shadow register in the same cycle. An input token carries its fold id; a PE whose active
//    weight belongs to an older fold swaps in the shadow when the first token of the new fold
//    reaches it. The controller starts the next fold's weight load when a fold starts streaming,
//    and starts streaming a fold once the input port is free and PE(0,0)'s shadow holds its
//    weights. With macs_per_cell = 2 a token carries two input rows and a PE does two MACs a cycle.
// Any operand arriving out of step (tags that do not match, a psum without its input, a swap to
// the wrong fold) is counted in SimResult::hazards, which a test expects to be 0.
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include "engine/chip/timing.h"

namespace tpuemu::engine::sim {

struct IntMatrix {
  IntMatrix() = default;
  IntMatrix(int64_t r, int64_t c) : rows(r), cols(c), data(static_cast<size_t>(r * c), 0) {}
  int64_t& at(int64_t r, int64_t c) { return data[static_cast<size_t>(r * cols + c)]; }
  int64_t at(int64_t r, int64_t c) const { return data[static_cast<size_t>(r * cols + c)]; }
  IntMatrix Transposed() const;
  friend bool operator==(const IntMatrix&, const IntMatrix&) = default;

  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<int64_t> data;  // row-major
};

IntMatrix ReferenceMatmul(const IntMatrix& a, const IntMatrix& b);
// For GoogleTest failure messages: the matrix row by row.
void PrintTo(const IntMatrix& m, std::ostream* os);

struct SimResult {
  IntMatrix out;           // a · b as the array computed it
  int64_t last_cycle = 0;  // index of the cycle in which the last output left the array
  int64_t folds = 0;
  int64_t hazards = 0;  // operands that met out of step; 0 in a correct schedule
};

// a is [M x K], b is [K x N]; rows x cols is the array.
SimResult SimulateScaleSim(const IntMatrix& a, const IntMatrix& b, int rows, int cols,
                           Dataflow dataflow);
SimResult SimulateTpuMxu(const IntMatrix& a, const IntMatrix& b, int rows, int cols,
                         int macs_per_cell = 1);

}  // namespace tpuemu::engine::sim
