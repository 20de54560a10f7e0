#include "engine/kernels/gemm.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "engine/kernels/gemm_onednn.h"
#include "engine/kernels/gemm_operands.h"
#include "engine/kernels/gemm_pass.h"
#include "engine/kernels/isa.h"

namespace tpuemu::engine {
namespace {

// A tile's pass does at most this many MACs: ~7 ms of oneDNN f32 on one AVX2 core, ~25 ms of
// baseline-ISA Eigen. Tiles are the cancellation points and the units of parallel work.
constexpr int64_t kTileMacs = int64_t{1} << 29;
// The bf16 primitives (AMX, AVX512-BF16) are faster per core, and their fast (brgemm)
// implementation wants dense operands: their tiles are whole rows of C over the full contraction
// (row blocks), up to this many MACs. Measured with AMX on a 2-core VM: ~100-150 GFLOPS per core,
// so 2^33 MACs took 100-350 ms a pass and held a cancel that long; 2^30 takes ~10-40 ms.
constexpr int64_t kDenseTileMacs = int64_t{1} << 30;
// oneDNN's f32 GEMM on AVX2 runs at full speed on tiles of >= 512 x 2048 or 1024 x 1024 outputs
// whatever the contraction (measured: 512 x 512 tiles lose 14%, cutting K into 256-long chunks
// nothing), so tiles are wide and the contraction is cut into chunks, accumulated in turn (an
// f32 re-association), to stay within kTileMacs.
constexpr int64_t kMaxTileOutputs = int64_t{1} << 21;
constexpr int64_t kMinTileK = 256;
// Below this many MACs a GEMM runs as one tile on the caller: hand-out would cost more.
constexpr int64_t kMinParallelMacs = int64_t{1} << 21;
// Tiles are at least this many rows/columns (oneDNN and Eigen lose efficiency below).
constexpr int64_t kMinTileSide = 32;

GemmBackend BackendFromEnvironment() {
  static const GemmBackend from_env = [] {
    const char* value = std::getenv("TPUEMU_GEMM_BACKEND");
    const std::string v = value == nullptr ? "" : value;
    if (v == "eigen") return GemmBackend::kEigen;
    if (v == "onednn_f32") return GemmBackend::kOneDnnF32;
    if (v == "onednn" || v == "onednn_bf16") return GemmBackend::kOneDnn;
    return GemmBackend::kAuto;
  }();
  return from_env;
}

// How the problem is cut: items of the batch per tile, and tile rows / columns / contraction.
struct TilePlan {
  int64_t items = 1, mb = 0, nb = 0, kb = 0;
};

// Tiles of at most the budget, their number a multiple of `threads` when the problem is big
// enough to share, so that every thread gets the same work. Wide tiles (up to kMaxTileOutputs,
// whole rows preferred) over contraction chunks; with dense_rows (the bf16 primitives) whole-row
// (or whole-column) tiles over the whole contraction, so every operand block stays a dense matrix.
TilePlan ChooseTiles(int64_t batch, int64_t m, int64_t n, int64_t k, int threads, bool dense_rows) {
  TilePlan plan;
  const int64_t budget = dense_rows ? kDenseTileMacs : kTileMacs;
  plan.mb = m;
  plan.nb = n;
  plan.kb = k;
  const bool share = threads > 1 && batch * m * n * k >= kMinParallelMacs;
  const int64_t want = share ? threads : 1;
  const int64_t item_macs = m * n * k;
  // oneDNN's f32 GEMM on AVX2 halves its speed on fewer than 512 rows wider than 256 columns
  // over a long contraction (measured: 256x1024x1024 at 45 GFLOPS, 256x256x1024 at 89): such
  // items are cut into 256-column tiles.
  const bool narrow = !dense_rows && m < 512 && n > 256 && k > 256;
  if (item_macs <= budget / 2 && !narrow) {
    // Small items: whole items per tile, grouped to the budget and the thread count.
    int64_t groups = std::max(CeilDiv(batch * item_macs, budget), want);
    groups = std::min(CeilDiv(groups, want) * want, batch);
    plan.items = CeilDiv(batch, groups);
    if (plan.items > 1 || batch > 1 || !share || m < 2 * kMinTileSide) return plan;
  }
  // One item per tile, its outputs cut into tm x tn tiles: at least what the thread count (and,
  // for dense rows, the budget) needs, a multiple of the thread count across the batch where
  // possible, least operand re-reading (m·tn + n·tm: whole rows win).
  const int64_t needed =
      std::max(want, dense_rows ? CeilDiv(item_macs, budget) : CeilDiv(m * n, kMaxTileOutputs));
  // Dense tiles are whole rows or (one item only, where the tile rounds its own block of B, see
  // RunTile) whole columns, never both: each operand block stays a dense matrix.
  const int64_t max_tm = std::max<int64_t>(1, m / kMinTileSide);
  const int64_t max_tn = dense_rows && batch > 1 ? 1 : std::max<int64_t>(1, n / kMinTileSide);
  int64_t best_tm = narrow ? 1 : std::min(max_tm, needed);
  int64_t best_tn = narrow ? std::min(max_tn, CeilDiv(n, 256)) : 1;
  double best_cost = -1;
  for (int64_t tm = 1; tm <= std::min<int64_t>(max_tm, 256); ++tm) {
    for (int64_t tn = 1; tn <= std::min<int64_t>(max_tn, 64); ++tn) {
      const int64_t tiles = tm * tn;
      if (tiles < needed || tiles > 2 * needed + want) continue;
      if (narrow && tn < CeilDiv(n, 256)) continue;
      if (dense_rows && tm > 1 && tn > 1) continue;
      double cost = static_cast<double>(m * tn + n * tm);
      if ((batch * tiles) % want != 0) cost *= 1.5;  // an idle thread at the end
      if (best_cost < 0 || cost < best_cost) best_cost = cost, best_tm = tm, best_tn = tn;
    }
  }
  plan.mb = CeilDiv(m, best_tm);
  plan.nb = CeilDiv(n, best_tn);
  if (!dense_rows && plan.mb * plan.nb * k > budget) {
    // Equal contraction chunks of at least kMinTileK within the budget.
    const int64_t kb = std::max(kMinTileK, budget / (plan.mb * plan.nb));
    plan.kb = CeilDiv(k, CeilDiv(k, kb));
  }
  return plan;
}

// The pass schedule in XLA's order (dot_algorithm_rewriter.cc, see numerics.h): pairs of (A plane,
// B plane) indices into hi = 0, mid = 1, lo = 2 for Split3, hi = 0, lo = 1 for Split2. The last
// pair is hi·hi, added after nan_to_zero of the sum of the others.
struct Schedule {
  std::vector<std::pair<int, int>> passes;
  bool nan_to_zero_before_last = false;
};

Schedule ScheduleFor(Precision precision) {
  switch (precision) {
    case Precision::kHigh:
      return {{{1, 0}, {0, 1}, {0, 0}}, true};  // lo·hi + hi·lo, then hi·hi
    case Precision::kHighest:  // mid·mid + hi·lo + lo·hi + hi·mid + mid·hi, then hi·hi
      return {{{1, 1}, {0, 2}, {2, 0}, {0, 1}, {1, 0}, {0, 0}}, true};
    case Precision::kDefault:
    case Precision::kF32:
      break;
  }
  return {{{0, 0}}, false};
}

// Backends the prepared planes can run on.
enum class Kernel { kEigen, kOneDnnF32, kOneDnnBf16 };

struct Job {
  const GemmProblem* problem;
  Kernel kernel;
  OperandPlanes a, b;
  std::size_t elem_bytes;  // of the planes: 4 (f32) or 2 (bf16 bits)
  // Each tile rounds its own block of A / of B (RoundOwnBlock); else that operand is in a / b.
  bool own_a = false, own_b = false;
  std::thread::id caller = std::this_thread::get_id();  // whose planes hold the shared operands
  Precision precision;
  Schedule schedule;
  TilePlan plan;
  int64_t tiles_b, tiles_m, tiles_n;
  std::atomic<bool> stopped{false};
  std::atomic<bool> failed{false};  // a oneDNN pass failed: rerun on Eigen
};

// Pointer to element (row, col) of a plane holding a [rows, cols] operand per item (stored
// transposed when `transposed`), for batch item `item`.
const void* At(const void* plane, std::size_t elem_bytes, int64_t item, int64_t rows, int64_t cols,
               bool transposed, int64_t row, int64_t col) {
  const int64_t offset = item * rows * cols + (transposed ? col * rows + row : row * cols + col);
  return static_cast<const std::byte*>(plane) + static_cast<std::size_t>(offset) * elem_bytes;
}

bool RunPass(const Job& job, const PassArgs& args) {
  switch (job.kernel) {
    case Kernel::kEigen:
      eigen_gemm::Pass(args);
      return true;
    case Kernel::kOneDnnF32:
      return onednn::Pass(args, /*bf16=*/false);
    case Kernel::kOneDnnBf16:
      return onednn::Pass(args, /*bf16=*/job.elem_bytes == 2);
  }
  return false;
}

// Rows [r0, r1) of `items` consecutive items of an operand whose items are [rows, k] matrices,
// stored row-major or, when `transposed`, as [k, rows] (A as it is; B as Bᵀ, whose rows are B's
// columns), rounded on this thread into slots [slot, slot + 3) as a dense block per item:
// [r1 - r0, k], or [k, r1 - r0] when transposed. Several items only come whole. Returns the
// blocks' leading dimension.
int64_t RoundOwnBlock(const Job& job, const float* data, int64_t items, int64_t rows, int64_t k,
                      bool transposed, int64_t r0, int64_t r1, int slot, OperandPlanes* out) {
  const int64_t w = r1 - r0;
  const bool bf16 = job.elem_bytes == 2;
  if (!transposed || w == rows) {  // one contiguous run
    PrepareBlock(data + (transposed ? 0 : r0 * k), 1, items * w * k, 0, job.precision, bf16, slot,
                 out);
  } else {  // one item: k runs of w
    PrepareBlock(data + r0, k, w, rows, job.precision, bf16, slot, out);
  }
  return transposed ? w : k;
}

void RunTilePasses(Job& job, int64_t tile, const CancelToken& cancel) {
  const GemmProblem& p = *job.problem;
  const TilePlan& plan = job.plan;
  const int64_t tb = tile / (job.tiles_m * job.tiles_n);
  const int64_t tm = tile / job.tiles_n % job.tiles_m;
  const int64_t tn = tile % job.tiles_n;
  const int64_t i0 = tb * plan.items, items = std::min(plan.items, p.batch - i0);
  const int64_t m0 = tm * plan.mb, m1 = std::min(p.m, m0 + plan.mb);
  const int64_t n0 = tn * plan.nb, n1 = std::min(p.n, n0 + plan.nb);
  float* c = p.c + i0 * p.m * p.n + m0 * p.n + n0;
  // The blocks this tile alone reads (its items; its rows of A or its columns of B, over the
  // whole contraction) are rounded here, on its own core.
  OperandPlanes a_block, b_block;
  int64_t a_block_ld = 0, b_block_ld = 0;
  if (job.own_a || job.own_b) {
    if (cancel.Stopped()) {
      job.stopped.store(true);
      return;
    }
    if (job.own_a) {
      a_block_ld = RoundOwnBlock(job, p.a.data + i0 * p.m * p.k, items, p.m, p.k, p.a.transposed,
                                 m0, m1, 0, &a_block);
    }
    if (job.own_b) {
      b_block_ld = RoundOwnBlock(job, p.b.data + i0 * p.k * p.n, items, p.n, p.k, !p.b.transposed,
                                 n0, n1, 3, &b_block);
    }
  }
  const int64_t passes = static_cast<int64_t>(job.schedule.passes.size());
  for (int64_t pass = 0; pass < passes; ++pass) {
    if (pass == passes - 1 && job.schedule.nan_to_zero_before_last) {
      // A NaN in the low terms (inf·0, inf - inf in a split) must not poison a finite hi·hi.
      for (int64_t t = 0; t < items; ++t) {
        for (int64_t r = 0; r < m1 - m0; ++r) {
          NanToZeroInPlace(c + t * p.m * p.n + r * p.n, static_cast<std::size_t>(n1 - n0));
        }
      }
    }
    const auto [ai, bi] = job.schedule.passes[static_cast<std::size_t>(pass)];
    for (int64_t k0 = 0; k0 < p.k; k0 += plan.kb) {
      if (job.stopped.load(std::memory_order_relaxed) || job.failed.load()) return;
      if (cancel.Stopped()) {
        job.stopped.store(true);
        return;
      }
      const int64_t k1 = std::min(p.k, k0 + plan.kb);
      const int64_t a_item = p.a.shared ? 0 : i0, b_item = p.b.shared ? 0 : i0;
      PassArgs args;
      if (job.own_a) {
        args.a = {a_block.plane[ai], a_block_ld, p.a.transposed, (m1 - m0) * p.k};
      } else {
        args.a = {At(job.a.plane[ai], job.elem_bytes, a_item, p.m, p.k, p.a.transposed, m0, k0),
                  p.a.transposed ? p.m : p.k, p.a.transposed, p.a.shared ? 0 : p.m * p.k};
      }
      if (job.own_b) {
        args.b = {b_block.plane[bi], b_block_ld, p.b.transposed, p.k * (n1 - n0)};
      } else {
        args.b = {At(job.b.plane[bi], job.elem_bytes, b_item, p.k, p.n, p.b.transposed, k0, n0),
                  p.b.transposed ? p.k : p.n, p.b.transposed, p.b.shared ? 0 : p.k * p.n};
      }
      args.c = c;
      args.ldc = p.n;
      args.c_batch_stride = p.m * p.n;
      args.batch = items;
      args.m = m1 - m0;
      args.n = n1 - n0;
      args.k = k1 - k0;
      args.accumulate = pass > 0 || k0 > 0;
      if (!RunPass(job, args)) {
        job.failed.store(true);
        return;
      }
    }
  }
}

void RunTile(Job& job, int64_t tile, const CancelToken& cancel) {
  RunTilePasses(job, tile, cancel);
  // A helper thread's planes hold only the blocks its tiles rounded: they obey the same bound as
  // the calling thread's, which hold the shared planes and are trimmed once the GEMM is done.
  if ((job.own_a || job.own_b) && std::this_thread::get_id() != job.caller) TrimScratch();
}

// Runs the problem on `kernel`; false when stopped. *failed: a oneDNN pass failed.
bool RunOn(const GemmProblem& p, Precision precision, const ParallelContext& ctx, Kernel kernel,
           bool* failed) {
  Job job;
  job.kernel = kernel;
  // F32 runs a plain f32 GEMM: on oneDNN's f32 pass even where the bf16 one exists.
  const bool bf16_planes = kernel == Kernel::kOneDnnBf16 && precision != Precision::kF32;
  job.elem_bytes = bf16_planes ? 2 : 4;
  job.schedule = ScheduleFor(precision);
  job.precision = precision;
  job.plan = ChooseTiles(p.batch, p.m, p.n, p.k, ctx.Threads(), bf16_planes);
  job.tiles_b = CeilDiv(p.batch, job.plan.items);
  job.tiles_m = CeilDiv(p.m, job.plan.mb);
  job.tiles_n = CeilDiv(p.n, job.plan.nb);
  // The bf16 primitives, cut into several tiles: each tile rounds the blocks it alone reads (its
  // items of an operand that is not shared; A's rows in row tiles, B's columns in column tiles)
  // into dense matrices on its own core; the rest is rounded before, in parallel. Rounded in
  // parallel beforehand, half of a tile's block would come from the other core's cache
  // (measured: two 128-row tiles of 256x1024x1024 took 0.77-0.92 ms each after a shared
  // rounding, 0.69 ms after a private one). One tile reads everything: its operands are rounded
  // before, in parallel when the context allows.
  const bool several_tiles = job.tiles_b * job.tiles_m * job.tiles_n > 1;
  job.own_a = bf16_planes && several_tiles && !p.a.shared && job.tiles_n == 1;
  job.own_b = bf16_planes && several_tiles && !p.b.shared && job.tiles_m == 1;
  // The bf16 primitives take a dense transposed A (an item's whole A, or a tile's own block) as
  // it is: a transpose cost 8x the rounding. Elsewhere (and for one A shared by a batch, not
  // measured) oneDNN gets A row-major: a transposed A is transposed while its planes are made
  // (one pass over A next to the GEMM's k passes); the f32 GEMM on AVX2 runs a transposed A at
  // half speed when n is small (measured: 1024x256x1024 at 43 GFLOPS against 84). B may stay
  // transposed (whole, or in tiles, it is fast either way).
  const bool transpose_a =
      p.a.transposed && kernel != Kernel::kEigen && !(bf16_planes && (p.batch == 1 || !p.a.shared));
  GemmProblem row_major = p;
  row_major.a.transposed = p.a.transposed && !transpose_a;
  job.problem = &row_major;
  const int64_t a_items = p.a.shared ? 1 : p.batch, b_items = p.b.shared ? 1 : p.batch;
  const OperandLayout a_layout{a_items, p.m, p.k, transpose_a};
  const OperandLayout b_layout{b_items, p.k, p.n, false};
  // A GEMM too small to share its tiles converts its operands on the caller too: handing a few
  // hundred K elements to another core costs more than it saves, and the GEMM then reads what the
  // other core wrote (measured: a 1024x4x256 weight gradient went from 0.17 to 0.30 ms).
  const bool small = p.batch * p.m * p.n * p.k < kMinParallelMacs;
  ParallelContext serial;
  if (small) {
    serial = ctx;
    serial.max_threads = 1;
  }
  const ParallelContext& prepare = small ? serial : ctx;
  if ((!job.own_a && !PrepareOperand(p.a.data, a_layout, p.a.bf16_valued, precision, bf16_planes, 0,
                                     prepare, &job.a)) ||
      (!job.own_b && !PrepareOperand(p.b.data, b_layout, p.b.bf16_valued, precision, bf16_planes, 3,
                                     prepare, &job.b))) {
    return false;
  }
  const int64_t tiles = job.tiles_b * job.tiles_m * job.tiles_n;
  if (tiles == 1 || ctx.Threads() <= 1) {
    for (int64_t t = 0; t < tiles && !job.stopped && !job.failed; ++t) RunTile(job, t, ctx.cancel);
  } else {
    ctx.pool->ParallelFor(
        ctx.group, tiles, [&](int64_t t) { RunTile(job, t, ctx.cancel); }, ctx.Threads());
  }
  *failed = job.failed.load();
  return !job.stopped.load();
}

}  // namespace

bool OneDnnAvailable() { return onednn::Bf16Available(); }
bool OneDnnF32Available() { return onednn::F32Available(); }

GemmBackend ResolveBackend(GemmBackend requested) {
  if (requested == GemmBackend::kAuto) requested = BackendFromEnvironment();
  if (requested == GemmBackend::kEigen) return GemmBackend::kEigen;
  if (requested != GemmBackend::kOneDnnF32 && OneDnnAvailable()) return GemmBackend::kOneDnn;
  return OneDnnF32Available() ? GemmBackend::kOneDnnF32 : GemmBackend::kEigen;
}

std::string_view GemmBackendName(GemmBackend backend) {
  switch (backend) {
    case GemmBackend::kAuto:
      return "auto";
    case GemmBackend::kEigen:
      return "eigen";
    case GemmBackend::kOneDnn:
      return "onednn_bf16";
    case GemmBackend::kOneDnnF32:
      return "onednn_f32";
  }
  return "unknown";
}

std::string GemmKernelName() {
  const GemmBackend backend = ResolveBackend(GemmBackend::kAuto);
  const std::string name(GemmBackendName(backend));
  switch (backend) {
    case GemmBackend::kOneDnn:
      return name + " (" + onednn::Describe() + ": bf16 x bf16 -> f32 matmul)";
    case GemmBackend::kOneDnnF32:
      return name + " (" + onednn::Describe() + ": f32 GEMM on bf16-rounded operands)";
    case GemmBackend::kEigen:
    case GemmBackend::kAuto:
      break;
  }
  return name + " (Eigen f32 GEMM on bf16-rounded operands, " + IsaName(HostIsa()) + " build)";
}

bool RunGemm(const GemmProblem& problem, Precision precision, const ParallelContext& ctx,
             GemmBackend backend) {
  const GemmProblem& p = problem;
  if (p.batch <= 0 || p.m <= 0 || p.n <= 0) return !ctx.cancel.Stopped();
  if (p.k <= 0) {
    std::fill_n(p.c, static_cast<std::size_t>(p.batch * p.m * p.n), 0.0f);
    return !ctx.cancel.Stopped();
  }
  Kernel kernel = Kernel::kEigen;
  switch (ResolveBackend(backend)) {
    case GemmBackend::kOneDnn:
      kernel = Kernel::kOneDnnBf16;
      break;
    case GemmBackend::kOneDnnF32:
      kernel = Kernel::kOneDnnF32;
      break;
    case GemmBackend::kEigen:
    case GemmBackend::kAuto:
      break;
  }
  bool failed = false;
  bool done = RunOn(p, precision, ctx, kernel, &failed);
  if (done && failed) {
    // oneDNN refused a shape (C may hold a partial result: every pass schedule overwrites it).
    done = RunOn(p, precision, ctx, Kernel::kEigen, &failed);
  }
  TrimScratch();
  return done;
}

void Matmul(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
            Precision precision, GemmBackend backend) {
  GemmProblem p;
  p.m = m, p.n = n, p.k = k;
  p.a.data = a;
  p.b.data = b;
  p.c = c;
  RunGemm(p, precision, ParallelContext{}, backend);
}

}  // namespace tpuemu::engine
