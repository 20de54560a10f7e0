// The timing model: how many cycles a GEMM takes on one systolic array, and what a whole op costs
// on a slice's TensorCores (a roofline of MXU / vector-unit compute against HBM traffic, plus ICI
// all-reduce).
//
// Two array models (docs/hardware-model.md §4, "Systolic-array timing"):
//  * kScaleSim reproduces SCALE-Sim v2's "Total Cycles" (CALC interface, no stalls) for ws/os/is:
//      folds · per_fold − 1, per_fold = 2R + C + T − 2 (ws, is) or R + C + T − 2 (os),
//    where (Sr, Sc, T) = (K, N, M) for ws, (M, N, K) for os, (K, M, N) for is and
//    folds = ⌈Sr/R⌉·⌈Sc/C⌉. The −1 is SCALE-Sim's: it reports the index of the last cycle.
//  * kTpu is the real MXU: weight-stationary with DOUBLE-BUFFERED weights ([sb] App. B; TPUv1
//    paper). The next fold's R-cycle weight load shifts into the shadow registers while the current
//    fold streams, so only the first load is exposed, and a fold can start streaming no earlier
//    than T cycles (input port busy) and R cycles (its weights loaded) after the previous one:
//      cycles = R + (F − 1)·max(T, R) + T + (R − 1) + (C − 1) + 1
//             = R + (F − 1)·max(T, R) + T + R + C − 2,     T = ⌈M / macs_per_cell_per_cycle⌉,
//    counted from the first weight-load cycle to the cycle the last output leaves the array,
//    inclusive (a count, not SCALE-Sim's last index; for F = 1 it is SCALE-Sim ws's per-fold
//    length). Derived from, and tested cycle for cycle against, the PE-array simulator in
//    tests/engine/chip/pe_array_sim.h.
// R and C are the ARRAY dimensions: a partial fold costs as much as a full one (as in SCALE-Sim).
//
// Everything here is a pure function of its arguments: thread-safe, no state, no errors.
// Preconditions: array rows/cols and macs_per_cell_per_cycle >= 1. GEMM dimensions < 1 mean an
// empty GEMM and cost 0 cycles (a zero-size dot is legal in a graph); callers that must reject them
// validate first.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/hardware/hardware.h"

namespace tpuemu::engine {

enum class Dataflow { kWeightStationary, kOutputStationary, kInputStationary };  // ws, os, is
enum class TimingMode { kTpu, kScaleSim };

// How a matmul's work is divided over TensorCores.
enum class SplitKind {
  kNone,         // one TensorCore, or a vector op split evenly
  kRows,         // data-parallel over batch items / output rows: no reduction
  kContraction,  // over K: each TensorCore computes a partial product, then an all-reduce
};

// "ws" / "os" / "is" and "tpu" / "scalesim", as the CLI and the JSON options spell them.
std::string_view DataflowName(Dataflow dataflow);
std::string_view TimingModeName(TimingMode mode);
// INVALID_ARGUMENT naming the accepted spellings.
Result<Dataflow> ParseDataflow(std::string_view name);
Result<TimingMode> ParseTimingMode(std::string_view name);

struct GemmShape {  // [m x k] · [k x n] = [m x n]
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  friend bool operator==(const GemmShape&, const GemmShape&) = default;
};

struct ArrayShape {
  int rows = 128;
  int cols = 128;
  int macs_per_cell_per_cycle = 1;  // 2 on v6e (see hardware.cpp); used by kTpu only
};

// One GEMM on ONE systolic array.
struct GemmTiming {
  int64_t cycles = 0;
  int64_t folds = 0;
  double mapping_efficiency = 0;   // mean over folds of used_rows·used_cols / (R·C), 0..1
  double compute_utilization = 0;  // SCALE-Sim's "Compute Util" / 100, quirks included (§2)
  double overall_utilization = 0;  // M·N·K / (cycles · R · C · macs_per_cell), 0..1
};

// SCALE-Sim v2 Total Cycles, CALC, no stalls. Also its mapping efficiency and compute util
// (per fold cycles_this_fold = 2R + 2C + T − 3 for ws/is: SCALE-Sim's quirk) and overall util.
GemmTiming ScaleSimGemm(GemmShape shape, ArrayShape array, Dataflow dataflow);
// The real MXU (formula above). mapping efficiency as for ws; compute util = useful MACs over the
// array's MAC slots during the streamed part of the folds.
GemmTiming TpuMxuGemm(GemmShape shape, ArrayShape array);

// The closed forms behind the two functions above, for `folds` folds of stream length `t` rows run
// back to back on one array. Exposed so that DotCost and the simulator tests use the same formula.
int64_t ScaleSimFoldCycles(int64_t t, ArrayShape array, Dataflow dataflow);  // one fold's length
int64_t ScaleSimCycles(int64_t folds, int64_t t, ArrayShape array, Dataflow dataflow);
int64_t TpuMxuCycles(int64_t folds, int64_t t, ArrayShape array);  // t already divided by macs

// A 2-D convolution in NHWC with filters [fh, fw, c, filters]. pad_h / pad_w are the TOTAL padding
// rows / columns added (top + bottom, left + right).
struct ConvShape {
  int64_t batch = 1, h = 0, w = 0, c = 0, fh = 0, fw = 0, filters = 0;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_h = 0, pad_w = 0;
};
enum class Padding { kValid, kSame };
// Fills pad_h / pad_w the TensorFlow way: VALID adds none; SAME makes out = ⌈in / stride⌉ with
// pad = max((out − 1)·s + f − in, 0).
ConvShape WithPadding(ConvShape conv, Padding padding);
// Output height / width: ⌈(H + pad − Fh + s) / s⌉ (SCALE-Sim's formula with padding added);
// 0 when the filter does not fit.
int64_t ConvOutputHeight(const ConvShape& conv);
int64_t ConvOutputWidth(const ConvShape& conv);
// SCALE-Sim's im2col mapping: M = batch·out_h·out_w, K = fh·fw·c, N = filters. SCALE-Sim itself
// fixes batch at 1; to reproduce it pass batch = 1 (the CLI does so in scalesim mode and costs
// each image separately through DotCost's batch).
GemmShape ConvAsGemm(const ConvShape& conv);

// Whole-op cost on `tensorcores` TensorCores of one generation.
struct OpCost {
  int64_t cycles = 0;          // max(compute, memory) + collective, at the chip clock
  int64_t compute_cycles = 0;  // busiest MXU, or the vector unit
  int64_t memory_cycles = 0;   // busiest TensorCore's HBM bytes / its share of the chip's bandwidth
  int64_t collective_cycles = 0;  // ICI / on-chip all-reduce
  double seconds = 0;             // cycles / clock_hz
  double flops = 0;               // useful flops: 2·M·N·K·batch for a dot (not × passes)
  double hbm_bytes = 0;           // total over all TensorCores
  double mxu_utilization = 0;     // flops / (cycles · peak flops per cycle of `tensorcores`), 0..1
  int64_t folds = 0;              // total MXU folds (tiles) over all TensorCores and passes
  int tensorcores_used = 0;       // TensorCores that got work
  std::string bound;              // "compute", "memory" or "collective"
};

// What bounds an op of these cycles: "collective" when it outweighs compute and memory together,
// else "memory" when memory outweighs compute, else "compute" (OpCost::bound).
const char* BoundName(int64_t compute_cycles, int64_t memory_cycles, int64_t collective_cycles);

// MXU FLOPs per cycle of `tensorcores` TensorCores at peak: 2 · MXUs · dim² · MACs per cell.
double PeakFlopsPerCycle(const ChipSpec& spec, int tensorcores);

// A batched dot [batch, m, k] · [batch, k, n] on `tensorcores` TensorCores of `spec`.
//  * passes: 1 (DEFAULT, bf16), 3 (HIGH), 6 (HIGHEST and f32) bf16 MXU passes.
//  * bytes_per_element: operands and result as stored in HBM (2 bf16, 4 f32).
//  * Work is split data-parallel over TensorCores: whole batch items when batch >= tensorcores,
//    otherwise each batch item's M rows over ⌊tensorcores / batch⌋ TensorCores (each reads all of
//    its RHS). A data-parallel split needs no reduction, so collective_cycles is 0 here; a caller
//    that splits K adds an all-reduce itself (chip_model.h CollectiveCycles).
//  * On a TensorCore the folds (× passes) are spread over its MXUs; the busiest MXU sets the time.
//    With fewer folds than MXUs, the stream dimension T is split over the idle MXUs instead.
//  * mode kTpu uses TpuMxuCycles; kScaleSim uses ScaleSimCycles with `dataflow` (ws, os or is).
OpCost DotCost(const ChipSpec& spec, int64_t batch, GemmShape shape, int passes,
               int bytes_per_element, int tensorcores, TimingMode mode = TimingMode::kTpu,
               Dataflow dataflow = Dataflow::kWeightStationary);

// Vector-unit costs per element, in VPU issue slots. The VPU is 8 sublanes x 128 lanes of f32
// ALUs issuing one op per cycle ([sb] App. C), so simple elementwise ops cost 1. Google publishes
// no throughput for transcendentals or cross-lane reductions; these are our assumptions, chosen to
// be small and to keep softmax/GELU (a handful of ops per element) visibly dearer than ReLU.
inline constexpr double kVpuOpsElementwise = 1.0;     // add, mul, max, select, compare
inline constexpr double kVpuOpsDivide = 4.0;          // reciprocal estimate + Newton steps
inline constexpr double kVpuOpsTranscendental = 8.0;  // exp, log, tanh, erf: polynomial evaluation
inline constexpr double kVpuOpsReduce = 2.0;          // lane op + cross-lane (XLU) step
inline constexpr int64_t kVpuElementsPerCycle = 8 * 128;

// A vector-unit op over `elements` elements, split evenly over `tensorcores`:
// compute = ⌈⌈elements / tc⌉ · ops_per_element / 1024⌉ cycles (chip_model.h VectorCycles); memory =
// hbm_bytes spread evenly over the TensorCores at their share of the chip's HBM bandwidth; cycles =
// max of the two (roofline).
OpCost VectorCost(const ChipSpec& spec, int64_t elements, double ops_per_element, double hbm_bytes,
                  int tensorcores);

}  // namespace tpuemu::engine
