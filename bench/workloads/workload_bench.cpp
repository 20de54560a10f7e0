// Whole-step host throughput of the engine on training-step graphs, against the best raw GEMM of
// this machine at the same thread count, measured in the same run.
//
// Graphs, built from engine/ir.h alone, like service/workloads' built-in ones at these sizes:
//   matmul       one 2048³ dot (a 2048³ matmul job's program);
//   transformer  2 blocks, dModel 256, 4 heads, seqLen 128, batch 8: attention + 4x GELU MLP,
//                residuals, forward and backward (dots with transposed operands, softmax
//                backward from vector ops), mean cross-entropy over 4 classes;
//   mlp          4 ReLU layers of 1024 on 256 x 16 inputs, 4 classes, forward and backward;
//   cnn          a cnn job's step at its defaults: a 3x3 same conv to 16 channels on 256 8x8x2
//                images, ReLU, a dense layer to 4 classes, and its backward (dfilter, ddense).
// Each graph runs as a job's step does: lowered to HLO (engine/hlo/from_graph.h) and evaluated
// by the HLO evaluator with loop fusion (engine/hlo/evaluator.h). Per graph and thread count T
// (1, 2, 4, … up to the machine's hardware threads): host GFLOPS = the program's flops
// (totals.flops, what a job reports) / host wall time of one evaluation (best of `steps` after a
// warm-up), and the ratio to the best raw 2048³ GEMM at T threads (bench/engine/raw_gemm.h).
// Targets: >= 0.8 for matmul, >= 0.5 for the others. Then each graph's speed-up over T = 1 and
// its serial share (the step's host time in instructions no faster than at one thread); targets
// (issue 27): at T = 2, transformer and mlp >= 1.9x with a serial share <= 5%. With --profile,
// the host time per opcode and the slowest instructions of each step, and the instructions that
// lose most to the split.
// Usage: bench_workloads [steps=5] [--profile]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench/engine/raw_gemm.h"
#include "engine/compiler.h"
#include "engine/gemm.h"
#include "engine/hlo/evaluator.h"
#include "engine/hlo/from_graph.h"
#include "engine/init_values.h"
#include "engine/pool.h"

namespace tpuemu::engine {
namespace {

constexpr int64_t kClasses = 4;

struct Workload {
  std::string name;
  Graph graph;
  std::map<std::string, Tensor> feeds;
  double target = 0.5;
};

Tensor Normal(Shape shape, double stddev, std::mt19937_64& rng) {
  std::normal_distribution<float> dist(0.0f, static_cast<float>(stddev));
  FloatBuffer v(static_cast<size_t>(shape.NumElements()));
  for (float& x : v) x = dist(rng);
  return *Tensor::FromF32(std::move(shape), std::move(v));
}

Tensor Labels(int64_t n, std::mt19937_64& rng) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  for (int32_t& x : v) x = static_cast<int32_t>(rng() % kClasses);
  return *Tensor::FromI32({n}, v);
}

// Parameters x [rows, features] ~ N(0, 1) and labels int32[rows], fed.
void AddData(Workload& w, int64_t rows, int64_t features, std::mt19937_64& rng) {
  w.graph.Parameter("x", {rows, features});
  w.graph.Parameter("labels", {rows}, DType::kI32);
  w.feeds["x"] = Normal({rows, features}, 1.0, rng);
  w.feeds["labels"] = Labels(rows, rng);
}

Workload Matmul(std::mt19937_64& rng) {
  Workload w{"matmul 2048^3", Graph("matmul"), {}, 0.8};
  w.graph.Parameter("a", {2048, 2048});
  w.graph.Parameter("b", {2048, 2048});
  w.graph.MarkOutput(w.graph.Dot("c", "a", "b"));
  w.feeds["a"] = Normal({2048, 2048}, 1.0, rng);
  w.feeds["b"] = Normal({2048, 2048}, 1.0, rng);
  return w;
}

Workload Mlp(std::mt19937_64& rng) {
  constexpr int64_t kBatch = 256, kHidden = 1024, kLayers = 4, kFeatures = 16;
  Workload w{"mlp 4x1024, batch 256", Graph("mlp"), {}, 0.5};
  Graph& g = w.graph;
  AddData(w, kBatch, kFeatures, rng);
  std::vector<int64_t> widths{kFeatures};
  for (int64_t l = 0; l < kLayers; ++l) widths.push_back(kHidden);
  widths.push_back(kClasses);
  std::vector<std::string> inputs, pre;
  std::string h = "x";
  const size_t layers = widths.size() - 1;
  for (size_t i = 0; i < layers; ++i) {
    const std::string wid = "w" + std::to_string(i);
    g.Parameter(wid, {widths[i], widths[i + 1]});
    w.feeds[wid] = Normal({widths[i], widths[i + 1]}, std::sqrt(2.0 / widths[i]), rng);
    inputs.push_back(h);
    pre.push_back(g.Dot("z" + std::to_string(i), h, wid));
    h = i + 1 < layers ? g.Relu("h" + std::to_string(i), pre.back()) : pre.back();
  }
  g.MarkOutput(g.SoftmaxCrossEntropy("loss", h, "labels"));
  std::string dy = g.SoftmaxCrossEntropyGrad("dlogits", h, "labels");
  for (size_t i = layers; i-- > 0;) {
    const std::string wid = "w" + std::to_string(i);
    g.MarkOutput(g.Dot("d" + wid, inputs[i], dy, /*transpose_lhs=*/true));
    if (i == 0) break;
    const std::string dh = g.Dot("dh" + std::to_string(i), dy, wid, false, true);
    dy = g.ReluGrad("dz" + std::to_string(i), pre[i - 1], dh);
  }
  return w;
}

Workload Cnn(std::mt19937_64& rng) {
  constexpr int64_t kBatch = 256, kSide = 8, kIn = 2, kChannels = 16;
  // Its ops are small (1-3 MFLOP each beside a GEMM of 17 GFLOP): no GFLOPS target.
  Workload w{"cnn 3x3x16, batch 256", Graph("cnn"), {}, 0.0};
  Graph& g = w.graph;
  Conv2DParams same;
  same.padding = ConvPadding::kSame;
  g.Parameter("x", {kBatch, kSide, kSide, kIn});
  w.feeds["x"] = Normal({kBatch, kSide, kSide, kIn}, 1.0, rng);
  g.Parameter("labels", {kBatch}, DType::kI32);
  w.feeds["labels"] = Labels(kBatch, rng);
  g.Parameter("filter", {3, 3, kIn, kChannels});
  w.feeds["filter"] = Normal({3, 3, kIn, kChannels}, std::sqrt(2.0 / (9 * kIn)), rng);
  g.Parameter("dense", {kSide * kSide * kChannels, kClasses});
  w.feeds["dense"] = Normal({kSide * kSide * kChannels, kClasses}, 0.03, rng);
  g.Conv2D("z", "x", "filter", same);
  g.Relu("h", "z");
  g.Reshape("flat", "h", {kBatch, kSide * kSide * kChannels});
  g.Dot("logits", "flat", "dense");
  g.MarkOutput(g.SoftmaxCrossEntropy("loss", "logits", "labels"));
  g.SoftmaxCrossEntropyGrad("dlogits", "logits", "labels");
  g.MarkOutput(g.Dot("ddense", "flat", "dlogits", /*transpose_lhs=*/true));
  g.Dot("dflat", "dlogits", "dense", false, /*transpose_rhs=*/true);
  g.Reshape("dh", "dflat", {kBatch, kSide, kSide, kChannels});
  g.ReluGrad("dz", "z", "dh");
  g.MarkOutput(g.Conv2DBackpropFilter("dfilter", "x", {3, 3, kIn, kChannels}, "dz", same));
  return w;
}

Workload Transformer(std::mt19937_64& rng) {
  constexpr int64_t kLayers = 2, d = 256, heads = 4, s = 128, b = 8, dh = d / heads, t = b * s;
  Workload w{"transformer 2x256, seq 128, batch 8", Graph("transformer"), {}, 0.5};
  Graph& g = w.graph;
  AddData(w, t, d, rng);
  g.Constant("scale", {}, Init::Fill(1.0 / std::sqrt(static_cast<double>(dh))));
  auto weight = [&](const std::string& id, int64_t in, int64_t out) {
    g.Parameter(id, {in, out});
    w.feeds[id] = Normal({in, out}, 1.0 / std::sqrt(static_cast<double>(in)), rng);
    return id;
  };
  auto heads_of = [&](const std::string& id, const std::string& x) {  // [t, d] -> [b·h, s, dh]
    g.Reshape(id + ".4d", x, {b, s, heads, dh});
    g.Transpose(id + ".t", id + ".4d", {0, 2, 1, 3});
    return g.Reshape(id, id + ".t", {b * heads, s, dh});
  };
  auto tokens_of = [&](const std::string& id, const std::string& x) {  // and back
    g.Reshape(id + ".4d", x, {b, heads, s, dh});
    g.Transpose(id + ".t", id + ".4d", {0, 2, 1, 3});
    return g.Reshape(id, id + ".t", {t, d});
  };
  struct Saved {
    std::string in, qh, kh, vh, probs, ctx, r1, up, gelu;
  };
  std::vector<Saved> saved;
  std::string h = "x";
  for (int64_t l = 0; l < kLayers; ++l) {
    const std::string p = "l" + std::to_string(l) + ".";
    Saved sv{h};
    sv.qh = heads_of(p + "qh", g.Dot(p + "q", h, weight(p + "wq", d, d)));
    sv.kh = heads_of(p + "kh", g.Dot(p + "k", h, weight(p + "wk", d, d)));
    sv.vh = heads_of(p + "vh", g.Dot(p + "v", h, weight(p + "wv", d, d)));
    g.Dot(p + "scores", sv.qh, sv.kh, false, true);
    sv.probs = g.Softmax(p + "probs", g.Mul(p + "scaled", p + "scores", "scale"));
    sv.ctx = tokens_of(p + "ctx", g.Dot(p + "ctxh", sv.probs, sv.vh));
    sv.r1 = g.Add(p + "r1", h, g.Dot(p + "attn", sv.ctx, weight(p + "wo", d, d)));
    sv.up = g.Dot(p + "up", sv.r1, weight(p + "w1", d, 4 * d));
    sv.gelu = g.Gelu(p + "gelu", sv.up);
    h = g.Add(p + "r2", sv.r1, g.Dot(p + "down", sv.gelu, weight(p + "w2", 4 * d, d)));
    saved.push_back(sv);
  }
  g.Dot("logits", h, weight("wout", d, kClasses));
  g.MarkOutput(g.SoftmaxCrossEntropy("loss", "logits", "labels"));
  auto grad = [&](const std::string& id, const std::string& in, const std::string& dy) {
    g.MarkOutput(g.Dot(id, in, dy, /*transpose_lhs=*/true));
  };
  g.SoftmaxCrossEntropyGrad("dlogits", "logits", "labels");
  grad("dwout", h, "dlogits");
  std::string dy = g.Dot("dy", "dlogits", "wout", false, true);
  for (int64_t l = kLayers - 1; l >= 0; --l) {
    const std::string p = "l" + std::to_string(l) + ".";
    const Saved& sv = saved[static_cast<size_t>(l)];
    grad(p + "dw2", sv.gelu, dy);
    g.GeluGrad(p + "dup", sv.up, g.Dot(p + "dgelu", dy, p + "w2", false, true));
    grad(p + "dw1", sv.r1, p + "dup");
    const std::string dr1 =
        g.Add(p + "dr1", dy, g.Dot(p + "dr1.mlp", p + "dup", p + "w1", false, true));
    grad(p + "dwo", sv.ctx, dr1);
    const std::string dctx = heads_of(p + "dctxh", g.Dot(p + "dctx", dr1, p + "wo", false, true));
    g.Dot(p + "dprobs", dctx, sv.vh, false, true);
    const std::string dvh = g.Dot(p + "dvh", sv.probs, dctx, true);
    g.Mul(p + "dp.p", p + "dprobs", sv.probs);
    g.Reduce(p + "dp.sum", p + "dp.p", ReduceKind::kSum, {2}, true);
    g.Sub(p + "dp.c", p + "dprobs", p + "dp.sum");
    const std::string ds =
        g.Mul(p + "dscores", g.Mul(p + "dscaled", sv.probs, p + "dp.c"), "scale");
    const std::string dq = tokens_of(p + "dq", g.Dot(p + "dqh", ds, sv.kh));
    const std::string dk = tokens_of(p + "dk", g.Dot(p + "dkh", ds, sv.qh, true));
    const std::string dv = tokens_of(p + "dv", dvh);
    grad(p + "dwq", sv.in, dq);
    grad(p + "dwk", sv.in, dk);
    grad(p + "dwv", sv.in, dv);
    if (l == 0) break;
    g.Add(p + "din.q", dr1, g.Dot(p + "din.dq", dq, p + "wq", false, true));
    g.Add(p + "din.k", p + "din.q", g.Dot(p + "din.dk", dk, p + "wk", false, true));
    dy = g.Add(p + "din", p + "din.k", g.Dot(p + "din.dv", dv, p + "wv", false, true));
  }
  return w;
}

// The host time of one profiled evaluation per opcode, the largest first, as lines to print (a
// fused loop's time is booked on its last member, a GELU's on its final multiply).
std::string HloProfile(const hlo::Module& module, const std::vector<int64_t>& host_ns) {
  std::map<std::string, std::pair<int64_t, int>> by_opcode;  // ns, instructions
  int64_t total = 0;
  const hlo::Computation& entry = module.entry_computation();
  for (size_t i = 0; i < entry.instructions.size(); ++i) {
    auto& [ns, count] = by_opcode[std::string(hlo::OpcodeName(entry.instructions[i].opcode))];
    ns += host_ns[i];
    ++count;
    total += host_ns[i];
  }
  std::vector<std::pair<int64_t, std::string>> sorted;
  for (const auto& [name, v] : by_opcode) sorted.push_back({v.first, name});
  std::sort(sorted.rbegin(), sorted.rend());
  std::string text;
  for (size_t i = 0; i < std::min<size_t>(8, sorted.size()); ++i) {
    const auto& [ns, name] = sorted[i];
    char line[128];
    std::snprintf(line, sizeof line, "      %-22s %3d instr %8.2f ms  %4.1f%%\n", name.c_str(),
                  by_opcode[name].second, static_cast<double>(ns) * 1e-6,
                  total > 0 ? 100.0 * static_cast<double>(ns) / static_cast<double>(total) : 0.0);
    text += line;
  }
  return text;
}

// A workload's step as a job runs it: its graph lowered to HLO once, its values as arguments.
struct HloStep {
  hlo::Module module;
  std::vector<hlo::Value> args;
  std::vector<std::string> names;  // per entry instruction: "name opcode shape"
};

Result<HloStep> Lower(const Workload& w) {
  Result<hlo::GraphLowering> lowering = hlo::LowerGraph(w.graph);
  if (!lowering.ok()) return lowering.status();
  HloStep step{std::move(lowering->module), {}, {}};  // the module a job's step runs
  for (const std::string& id : lowering->parameters) {
    if (auto fed = w.feeds.find(id); fed != w.feeds.end()) {
      step.args.push_back(hlo::ArgumentOf(fed->second));
      continue;
    }
    const Op& op = *w.graph.Find(id);  // a constant: its init spec, as a job's step takes it
    Tensor value(op.dtype, op.shape);
    TPUEMU_RETURN_IF_ERROR(MaterializeInit(op.attrs.init, value));
    step.args.push_back(hlo::ArgumentOf(value));
  }
  for (const hlo::Instruction& inst : step.module.entry_computation().instructions) {
    step.names.push_back(inst.name + " " + std::string(hlo::OpcodeName(inst.opcode)) + " " +
                         inst.shape.ToString());
  }
  return step;
}

struct Measured {
  bench::Timing best;
  std::vector<int64_t> instruction_ns;  // each entry instruction's best host ns over the steps
};

// The best host time of `steps` evaluations on T threads (after a warm-up), each profiled: one
// clock read per instruction, noise beside a step's milliseconds.
Result<Measured> Measure(const HloStep& step, Pool& pool, int threads, int steps) {
  hlo::EvalOptions options;
  options.pool = threads > 1 ? &pool : nullptr;
  options.max_threads = threads;
  options.profile = true;
  Measured m;
  for (int s = -1; s < steps; ++s) {
    Result<hlo::EvalResult> r = Status::Internal("not run");
    const bench::Timing t =
        bench::Measure([&] { r = hlo::Evaluate(step.module, {step.args}, options); });
    if (!r.ok()) return r.status();
    if (s < 0) continue;
    m.best = s == 0 ? t : bench::Min(m.best, t);
    // Each instruction's best time over the measured steps (one slow step must not decide it).
    const std::vector<int64_t>& ns = r->host_ns[static_cast<size_t>(step.module.entry)];
    if (s == 0) m.instruction_ns.assign(ns.size(), std::numeric_limits<int64_t>::max());
    for (size_t i = 0; i < ns.size(); ++i)
      m.instruction_ns[i] = std::min(m.instruction_ns[i], ns[i]);
  }
  return m;
}

int Run(int steps, bool profile) {
  std::printf("CPU: %s\nengine GEMM kernel: %s\n", bench::CpuModel().c_str(),
              GemmKernelName().c_str());
  std::printf(
      "each step lowered to HLO and run on the HLO evaluator, as jobs run it; host GFLOPS = "
      "program "
      "flops / best wall time of %d steps (after a warm-up); cpu = the same over process CPU time "
      "/ T\n\n",
      steps);
  std::mt19937_64 rng(7);
  std::vector<Workload> workloads;
  workloads.push_back(Matmul(rng));
  workloads.push_back(Transformer(rng));
  workloads.push_back(Mlp(rng));
  workloads.push_back(Cnn(rng));
  const Slice slice = *Slice::FromAcceleratorType("v4-8");
  std::map<std::string, HloStep> lowered;
  std::map<std::string, double> flops;
  for (const Workload& w : workloads) {
    if (!w.graph.status().ok()) {
      std::fprintf(stderr, "%s: %s\n", w.name.c_str(), w.graph.status().ToString().c_str());
      return 1;
    }
    auto program = Compile(w.graph, slice, {});
    Result<HloStep> step = Lower(w);
    if (!program.ok() || !step.ok()) {
      std::fprintf(stderr, "%s: %s\n", w.name.c_str(),
                   (program.ok() ? step.status() : program.status()).ToString().c_str());
      return 1;
    }
    flops[w.name] = (*program)->totals.flops;
    lowered.emplace(w.name, std::move(*step));
  }
  // T = 1, 2, 4, ... up to every hardware thread: the pool has T_max - 1 workers, the evaluating
  // thread is the T-th; each step may use T (EvalOptions::max_threads, a job's cores).
  const int hardware = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  std::vector<int> thread_counts;
  for (int t = 1; t < hardware; t *= 2) thread_counts.push_back(t);
  thread_counts.push_back(hardware);
  Pool pool(std::max(1, hardware - 1));
  bench::RawGemm raw_gemm(2048);
  bool all_ok = true;
  std::map<std::string, std::map<int, Measured>> measured;  // workload -> T -> its steps
  for (int threads : thread_counts) {
    const auto [raw_name, raw] = raw_gemm.Best(threads, 3);
    const double raw_flops = 2.0 * 2048 * 2048 * 2048;
    std::printf("T=%d best raw 2048^3 GEMM: %s %.1f GFLOPS (cpu %.1f)\n", threads, raw_name.c_str(),
                raw_flops / raw.wall_s * 1e-9, raw_flops / (raw.cpu_s / threads) * 1e-9);
    for (const Workload& w : workloads) {
      const HloStep& step = lowered.at(w.name);
      Result<Measured> m = Measure(step, pool, threads, steps);
      if (!m.ok()) {
        std::fprintf(stderr, "%s: %s\n", w.name.c_str(), m.status().ToString().c_str());
        return 1;
      }
      const bench::Timing& best = m->best;
      const double f = flops.at(w.name);
      const double ratio = (f / best.wall_s) / (raw_flops / raw.wall_s);
      const double cpu_ratio = (f / best.cpu_s) / (raw_flops / raw.cpu_s);
      all_ok = all_ok && ratio >= w.target;
      std::printf(
          "T=%d %-36s %8.2f ms/step %7.1f GFLOPS (cpu %6.1f)  ratio %.2f (cpu %.2f, target "
          "%.1f)\n",
          threads, w.name.c_str(), best.wall_s * 1e3, f / best.wall_s * 1e-9,
          f / (best.cpu_s / threads) * 1e-9, ratio, cpu_ratio, w.target);
      if (profile) {
        std::printf("%s", HloProfile(step.module, m->instruction_ns).c_str());
        std::vector<size_t> slowest(m->instruction_ns.size());
        for (size_t i = 0; i < slowest.size(); ++i) slowest[i] = i;
        std::sort(slowest.begin(), slowest.end(),
                  [&](size_t a, size_t b) { return m->instruction_ns[a] > m->instruction_ns[b]; });
        for (size_t i = 0; i < std::min<size_t>(8, slowest.size()); ++i) {
          std::printf("      slowest: %-48s %7.2f ms\n", step.names[slowest[i]].c_str(),
                      static_cast<double>(m->instruction_ns[slowest[i]]) * 1e-6);
        }
      }
      measured[w.name][threads] = std::move(*m);
      std::fflush(stdout);
    }
  }
  // Speed-up over T = 1, and the share of the step's host time spent in instructions that did
  // not get faster with T threads (at >= 90% of their 1-thread time: they ran on one thread, or
  // their split bought nothing) — the serial share the issue bounds at 5%.
  std::printf(
      "\nspeed-up over 1 thread (wall; process CPU time / T), and the serial share: host time in "
      "instructions that did not speed up\n");
  for (const auto& [name, by_threads] : measured) {
    const Measured& one = by_threads.at(1);
    for (int threads : thread_counts) {
      if (threads == 1) continue;
      const Measured& t = by_threads.at(threads);
      int64_t all = 0, serial = 0;
      for (size_t i = 0; i < t.instruction_ns.size() && i < one.instruction_ns.size(); ++i) {
        all += t.instruction_ns[i];
        if (t.instruction_ns[i] >= 0.9 * static_cast<double>(one.instruction_ns[i])) {
          serial += t.instruction_ns[i];
        }
      }
      const double speedup = one.best.wall_s / t.best.wall_s;
      const double share = all > 0 ? static_cast<double>(serial) / static_cast<double>(all) : 0;
      const bool target =
          threads == 2 && (name.rfind("transformer", 0) == 0 || name.rfind("mlp", 0) == 0);
      std::printf("  %-36s T=%-3d %5.2fx (cpu %5.2fx)  serial share %4.1f%%%s\n", name.c_str(),
                  threads, speedup, one.best.cpu_s / (t.best.cpu_s / threads), 100.0 * share,
                  target ? (speedup >= 1.9 && share <= 0.05 ? "  (target >= 1.9x, <= 5%: met)"
                                                            : "  (target >= 1.9x, <= 5%: MISSED)")
                         : "");
      if (profile) {
        // The instructions that lose the most against a perfect split (their T-thread time minus
        // a T-th of their 1-thread time): where the serial share comes from.
        std::vector<std::pair<double, size_t>> lost;
        for (size_t i = 0; i < t.instruction_ns.size() && i < one.instruction_ns.size(); ++i) {
          lost.push_back({static_cast<double>(t.instruction_ns[i]) -
                              static_cast<double>(one.instruction_ns[i]) / threads,
                          i});
        }
        std::sort(lost.rbegin(), lost.rend());
        const std::vector<std::string>& names = lowered.at(name).names;
        for (size_t i = 0; i < std::min<size_t>(6, lost.size()); ++i) {
          const size_t k = lost[i].second;
          std::printf("      loses %6.2f ms: %-44s %7.2f ms at T=1, %7.2f ms at T=%d\n",
                      lost[i].first * 1e-6, names[k].c_str(), one.instruction_ns[k] * 1e-6,
                      t.instruction_ns[k] * 1e-6, threads);
        }
      }
    }
  }
  std::printf("\n%s\n", all_ok ? "all ratios on target" : "SOME RATIOS BELOW TARGET");
  return 0;
}

}  // namespace
}  // namespace tpuemu::engine

int main(int argc, char** argv) {
  int steps = 5;
  bool profile = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--profile") == 0) {
      profile = true;
    } else {
      steps = std::max(1, std::atoi(argv[i]));
    }
  }
  return tpuemu::engine::Run(steps, profile);
}
