#include "engine/chip/timing.h"

#include <algorithm>
#include <cmath>

#include "base/ceil_div.h"

namespace tpuemu::engine {
namespace {

// SCALE-Sim's spatio-temporal mapping (topology_utils.calc_spatio_temporal_params): the two
// dimensions laid over the array's rows and columns, and the one streamed through it.
struct Mapping {
  int64_t sr, sc, t;
};

Mapping MapGemm(GemmShape s, Dataflow dataflow) {
  switch (dataflow) {
    case Dataflow::kWeightStationary:
      return {s.k, s.n, s.m};
    case Dataflow::kOutputStationary:
      return {s.m, s.n, s.k};
    case Dataflow::kInputStationary:
      return {s.k, s.m, s.n};
  }
  return {s.k, s.n, s.m};
}

bool Empty(GemmShape s) { return s.m <= 0 || s.n <= 0 || s.k <= 0; }

int64_t Folds(const Mapping& map, ArrayShape array) {
  return CeilDiv(map.sr, array.rows) * CeilDiv(map.sc, array.cols);
}

// Every fold but the last is full along each axis, so the per-fold used_rows·used_cols sum to
// Sr·Sc and SCALE-Sim's mean over folds has this closed form.
double MappingEfficiency(const Mapping& map, int64_t folds, ArrayShape array) {
  return static_cast<double>(map.sr) * static_cast<double>(map.sc) /
         (static_cast<double>(folds) * array.rows * array.cols);
}

int64_t SecondsToCycles(double seconds, double clock_hz) {
  return static_cast<int64_t>(std::ceil(seconds * clock_hz));
}

double BandwidthPerTensorCore(const ChipSpec& spec) {
  return spec.hbm_bandwidth_bytes_per_s / spec.tensorcores_per_chip;
}

// Fills the fields every op kind derives the same way from compute/memory/collective cycles.
void Finish(const ChipSpec& spec, int tensorcores, OpCost& cost) {
  cost.cycles = std::max(cost.compute_cycles, cost.memory_cycles) + cost.collective_cycles;
  cost.seconds = static_cast<double>(cost.cycles) / spec.clock_hz;
  cost.bound = BoundName(cost.compute_cycles, cost.memory_cycles, cost.collective_cycles);
  const double peak_flops_per_cycle = PeakFlopsPerCycle(spec, tensorcores);
  cost.mxu_utilization =
      cost.cycles > 0 && cost.folds > 0
          ? std::min(1.0, cost.flops / (static_cast<double>(cost.cycles) * peak_flops_per_cycle))
          : 0.0;
}

}  // namespace

std::string_view DataflowName(Dataflow dataflow) {
  switch (dataflow) {
    case Dataflow::kWeightStationary:
      return "ws";
    case Dataflow::kOutputStationary:
      return "os";
    case Dataflow::kInputStationary:
      return "is";
  }
  return "ws";
}

std::string_view TimingModeName(TimingMode mode) {
  return mode == TimingMode::kScaleSim ? "scalesim" : "tpu";
}

Result<Dataflow> ParseDataflow(std::string_view name) {
  if (name == "ws") return Dataflow::kWeightStationary;
  if (name == "os") return Dataflow::kOutputStationary;
  if (name == "is") return Dataflow::kInputStationary;
  return Status::InvalidArgument("unknown dataflow '" + std::string(name) +
                                 "' (expected ws, os or is)");
}

Result<TimingMode> ParseTimingMode(std::string_view name) {
  if (name == "tpu") return TimingMode::kTpu;
  if (name == "scalesim") return TimingMode::kScaleSim;
  return Status::InvalidArgument("unknown timing mode '" + std::string(name) +
                                 "' (expected tpu or scalesim)");
}

int64_t ScaleSimFoldCycles(int64_t t, ArrayShape array, Dataflow dataflow) {
  // ws/is: R cycles of weight (input) load before the stream; os has no preload.
  const int64_t preload = dataflow == Dataflow::kOutputStationary ? 0 : array.rows;
  return preload + array.rows + array.cols + t - 2;
}

int64_t ScaleSimCycles(int64_t folds, int64_t t, ArrayShape array, Dataflow dataflow) {
  if (folds <= 0 || t <= 0) return 0;
  // SCALE-Sim reports the index of the last cycle (ofmap_serviced_cycles[-1]), hence the −1.
  return folds * ScaleSimFoldCycles(t, array, dataflow) - 1;
}

int64_t TpuMxuCycles(int64_t folds, int64_t t, ArrayShape array) {
  if (folds <= 0 || t <= 0) return 0;
  const int64_t r = array.rows;
  return r + (folds - 1) * std::max(t, r) + t + r + array.cols - 2;
}

GemmTiming ScaleSimGemm(GemmShape shape, ArrayShape array, Dataflow dataflow) {
  GemmTiming timing;
  if (Empty(shape)) return timing;
  const Mapping map = MapGemm(shape, dataflow);
  timing.folds = Folds(map, array);
  timing.cycles = ScaleSimCycles(timing.folds, map.t, array, dataflow);
  timing.mapping_efficiency = MappingEfficiency(map, timing.folds, array);
  // SCALE-Sim's cycles_this_fold = demand.shape[0] + demand.shape[1] − 1 of the matrix it measures
  // (ws/is: the filter demand, 2R + C + T − 2 rows by C columns; os: the unskewed ofmap demand,
  // T − 1 + R rows by C columns). Constant per fold, so the mean is the mapping mean times this.
  const int64_t cycles_this_fold = dataflow == Dataflow::kOutputStationary
                                       ? array.rows + array.cols + map.t - 2
                                       : 2 * array.rows + 2 * array.cols + map.t - 3;
  timing.compute_utilization = timing.mapping_efficiency * static_cast<double>(map.t) /
                               static_cast<double>(cycles_this_fold);
  timing.overall_utilization = static_cast<double>(shape.m) * shape.n * shape.k /
                               (static_cast<double>(timing.cycles) * array.rows * array.cols);
  return timing;
}

GemmTiming TpuMxuGemm(GemmShape shape, ArrayShape array) {
  GemmTiming timing;
  if (Empty(shape)) return timing;
  const Mapping map = MapGemm(shape, Dataflow::kWeightStationary);
  const int64_t t = CeilDiv(shape.m, array.macs_per_cell_per_cycle);
  timing.folds = Folds(map, array);
  timing.cycles = TpuMxuCycles(timing.folds, t, array);
  timing.mapping_efficiency = MappingEfficiency(map, timing.folds, array);
  const double mac_slots_per_cycle =
      static_cast<double>(array.rows) * array.cols * array.macs_per_cell_per_cycle;
  const double macs = static_cast<double>(shape.m) * shape.n * shape.k;
  timing.compute_utilization =
      macs / (static_cast<double>(timing.folds) * static_cast<double>(t) * mac_slots_per_cycle);
  timing.overall_utilization = macs / (static_cast<double>(timing.cycles) * mac_slots_per_cycle);
  return timing;
}

ConvShape WithPadding(ConvShape conv, Padding padding) {
  if (padding == Padding::kValid) {
    conv.pad_h = conv.pad_w = 0;
    return conv;
  }
  auto same = [](int64_t in, int64_t f, int64_t s) {
    const int64_t out = CeilDiv(in, s);
    return std::max<int64_t>((out - 1) * s + f - in, 0);
  };
  conv.pad_h = same(conv.h, conv.fh, std::max<int64_t>(conv.stride_h, 1));
  conv.pad_w = same(conv.w, conv.fw, std::max<int64_t>(conv.stride_w, 1));
  return conv;
}

namespace {
int64_t ConvOutput(int64_t in, int64_t pad, int64_t f, int64_t s) {
  s = std::max<int64_t>(s, 1);
  if (in <= 0 || f <= 0 || in + pad < f) return 0;
  return CeilDiv(in + pad - f + s, s);
}
}  // namespace

int64_t ConvOutputHeight(const ConvShape& conv) {
  return ConvOutput(conv.h, conv.pad_h, conv.fh, conv.stride_h);
}

int64_t ConvOutputWidth(const ConvShape& conv) {
  return ConvOutput(conv.w, conv.pad_w, conv.fw, conv.stride_w);
}

GemmShape ConvAsGemm(const ConvShape& conv) {
  return {conv.batch * ConvOutputHeight(conv) * ConvOutputWidth(conv), conv.filters,
          conv.fh * conv.fw * conv.c};
}

OpCost DotCost(const ChipSpec& spec, int64_t batch, GemmShape shape, int passes,
               int bytes_per_element, int tensorcores, TimingMode mode, Dataflow dataflow) {
  OpCost cost;
  tensorcores = std::max(tensorcores, 1);
  passes = std::max(passes, 1);
  if (batch <= 0 || Empty(shape)) {
    Finish(spec, tensorcores, cost);
    return cost;
  }
  cost.flops = 2.0 * static_cast<double>(batch) * shape.m * shape.n * shape.k;

  // Data-parallel split: whole batch items per TensorCore, or one item's rows over a group.
  int64_t gemms_per_tc = 1;
  int64_t m_per_tc = shape.m;
  int64_t tcs_per_item = 1;
  if (batch >= tensorcores) {
    gemms_per_tc = CeilDiv(batch, tensorcores);
    cost.tensorcores_used = tensorcores;
  } else {
    const int64_t group = tensorcores / batch;
    m_per_tc = CeilDiv(shape.m, group);
    tcs_per_item = CeilDiv(shape.m, m_per_tc);
    cost.tensorcores_used = static_cast<int>(batch * tcs_per_item);
  }
  const GemmShape tc_shape{m_per_tc, shape.n, shape.k};

  // Fold the per-TensorCore GEMM onto its MXUs; the busiest MXU sets the time.
  ArrayShape array{spec.mxu_dim, spec.mxu_dim, spec.macs_per_cell_per_cycle};
  Mapping map =
      MapGemm(tc_shape, mode == TimingMode::kTpu ? Dataflow::kWeightStationary : dataflow);
  // SCALE-Sim models one MAC per cell per cycle; only the TPU mode streams macs rows per cycle.
  if (mode == TimingMode::kTpu) map.t = CeilDiv(map.t, array.macs_per_cell_per_cycle);
  const int64_t folds_per_tc = Folds(map, array) * gemms_per_tc * passes;
  const int64_t mxus = spec.mxus_per_tensorcore;
  int64_t folds_per_mxu = CeilDiv(folds_per_tc, mxus);
  int64_t t = map.t;
  if (folds_per_tc < mxus) {
    folds_per_mxu = 1;
    t = CeilDiv(map.t, mxus / folds_per_tc);
  }
  cost.compute_cycles = mode == TimingMode::kTpu
                            ? TpuMxuCycles(folds_per_mxu, t, array)
                            : ScaleSimCycles(folds_per_mxu, t, array, dataflow);
  // Total tiles: one set per batch item, or one per TensorCore of a split item.
  cost.folds = Folds(map, array) * passes * (batch >= tensorcores ? batch : cost.tensorcores_used);

  // HBM: every TensorCore reads its LHS rows and the whole RHS of its items and writes its rows.
  const double bpe = bytes_per_element;
  const double tc_bytes =
      static_cast<double>(gemms_per_tc) * bpe *
      (static_cast<double>(m_per_tc) * shape.k + static_cast<double>(shape.k) * shape.n +
       static_cast<double>(m_per_tc) * shape.n);
  cost.hbm_bytes =
      bpe * static_cast<double>(batch) *
      (static_cast<double>(shape.m) * shape.k + static_cast<double>(shape.m) * shape.n +
       static_cast<double>(tcs_per_item) * shape.k * shape.n);
  cost.memory_cycles = SecondsToCycles(tc_bytes / BandwidthPerTensorCore(spec), spec.clock_hz);
  Finish(spec, tensorcores, cost);
  return cost;
}

OpCost VectorCost(const ChipSpec& spec, int64_t elements, double ops_per_element, double hbm_bytes,
                  int tensorcores) {
  OpCost cost;
  tensorcores = std::max(tensorcores, 1);
  if (elements <= 0) {
    Finish(spec, tensorcores, cost);
    return cost;
  }
  const int64_t used = std::min<int64_t>(tensorcores, elements);
  cost.tensorcores_used = static_cast<int>(used);
  const int64_t per_tc = CeilDiv(elements, used);
  cost.compute_cycles =
      static_cast<int64_t>(std::ceil(static_cast<double>(per_tc) * std::max(ops_per_element, 0.0) /
                                     static_cast<double>(kVpuElementsPerCycle)));
  cost.flops = static_cast<double>(elements) * std::max(ops_per_element, 0.0);
  cost.hbm_bytes = std::max(hbm_bytes, 0.0);
  cost.memory_cycles = SecondsToCycles(
      cost.hbm_bytes / static_cast<double>(used) / BandwidthPerTensorCore(spec), spec.clock_hz);
  Finish(spec, tensorcores, cost);
  return cost;
}

const char* BoundName(int64_t compute_cycles, int64_t memory_cycles, int64_t collective_cycles) {
  if (collective_cycles > std::max(compute_cycles, memory_cycles)) return "collective";
  return memory_cycles > compute_cycles ? "memory" : "compute";
}

double PeakFlopsPerCycle(const ChipSpec& spec, int tensorcores) {
  return 2.0 * spec.mxus_per_tensorcore * spec.mxu_dim * spec.mxu_dim *
         spec.macs_per_cell_per_cycle * tensorcores;
}

}  // namespace tpuemu::engine
