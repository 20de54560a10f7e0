// HLO import speed: parse + verify + price throughput on a generated 1 MB before-optimizations
// transformer train step (target: 1 MB in under 1 s on one core), and the estimate of a large
// generated train step (a multi-billion-parameter transformer, forward and backward, unrolled)
// in under 1 s. Prints the CPU model and the figures; each measurement is the best of `reps`
// runs (thread CPU time; wall time alongside).
// Usage: bench_hlo [reps=3]
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

#include "bench/hlo/stablehlo_text.h"
#include "engine/hlo/cost_model.h"
#include "engine/hlo/parser.h"
#include "engine/hlo/verifier.h"
#include "engine/stablehlo/import.h"

namespace tpuemu::engine::hlo {
namespace {

struct Config {
  int layers;
  int64_t batch, seq, d_model, heads, d_ff;
};

// A jit(train_step)-style module: per layer layer-norm, q/k/v/o projections, batched attention
// with softmax, a GELU MLP, residuals, and the backward dots (input and weight gradients) —
// unrolled, bf16 activations and weights, f32 softmax statistics, op_name metadata on every
// instruction as JAX prints it.
class Generator {
 public:
  explicit Generator(const Config& c) : c_(c) {}

  std::string Module() {
    const int64_t t = c_.batch * c_.seq, d = c_.d_model, f = c_.d_ff;
    out_ = "HloModule jit_train_step, entry_computation_layout={(bf16[" + std::to_string(t) + "," +
           std::to_string(d) + "]{1,0})->bf16[" + std::to_string(t) + "," + std::to_string(d) +
           "]{1,0}}\n\n";
    out_ +=
        "%region_add (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
        "  %b = f32[] parameter(1)\n  ROOT %s = f32[] add(f32[] %a, f32[] %b)\n}\n\n";
    out_ +=
        "%region_max (a.1: f32[], b.1: f32[]) -> f32[] {\n  %a.1 = f32[] parameter(0)\n"
        "  %b.1 = f32[] parameter(1)\n  ROOT %m = f32[] maximum(f32[] %a.1, f32[] %b.1)\n}\n\n";
    out_ += "ENTRY %main (x: bf16[" + std::to_string(t) + "," + std::to_string(d) + "]) -> bf16[" +
            std::to_string(t) + "," + std::to_string(d) + "] {\n";
    std::string x = Emit("bf16", {t, d}, "parameter(0)", "x");
    next_param_ = 1;
    zero_ = Emit("f32", {}, "constant(0)", "zero");
    ninf_ = Emit("f32", {}, "constant(-inf)", "ninf");
    for (int l = 0; l < c_.layers; ++l) x = Layer(l, x, t, d, f);
    out_ += "  ROOT %out = bf16[" + std::to_string(t) + "," + std::to_string(d) + "]{1,0} copy(" +
            Ref("bf16", {t, d}, x) + ")\n}\n";
    return std::move(out_);
  }
  int64_t params() const { return params_; }

 private:
  static std::string Dims(const std::vector<int64_t>& dims) {
    std::string s;
    for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
    return s;
  }
  static std::string Layout(size_t rank) {
    std::string s;
    for (size_t i = 0; i < rank; ++i) s += (i ? "," : "") + std::to_string(rank - 1 - i);
    return "{" + s + "}";
  }
  static std::string Shape(const std::string& type, const std::vector<int64_t>& dims) {
    return type + "[" + Dims(dims) + "]" + (dims.empty() ? "" : Layout(dims.size()));
  }
  std::string Ref(const std::string& type, const std::vector<int64_t>& dims, const std::string& n) {
    return Shape(type, dims) + " %" + n;
  }
  std::string Emit(const std::string& type, const std::vector<int64_t>& dims,
                   const std::string& rhs, const std::string& what) {
    std::string name = what + "." + std::to_string(++counter_);
    for (char& ch : name) ch = ch == '/' ? '_' : ch;
    out_ += "  %" + name + " = " + Shape(type, dims) + " " + rhs +
            ", metadata={op_name=\"jit(train_step)/" + scope_ + "/" + what +
            "\" source_file=\"/workspace/model.py\" source_line=" +
            std::to_string(100 + counter_ % 400) + "}\n";
    return name;
  }
  std::string Param(const std::vector<int64_t>& dims) {
    int64_t n = 1;
    for (int64_t x : dims) n *= x;
    params_ += n;
    return Emit("bf16", dims, "parameter(" + std::to_string(next_param_++) + ")", "param");
  }
  std::string Dot(const std::string& a, std::vector<int64_t> ad, const std::string& b,
                  std::vector<int64_t> bd, int64_t lc, int64_t rc, std::vector<int64_t> out,
                  const std::string& what, const std::string& batch = "") {
    return Emit("bf16", out,
                "dot(" + Ref("bf16", ad, a) + ", " + Ref("bf16", bd, b) + ")" + batch +
                    ", lhs_contracting_dims={" + std::to_string(lc) + "}, rhs_contracting_dims={" +
                    std::to_string(rc) + "}",
                what);
  }
  std::string Unary(const std::string& op, const std::string& a, const std::vector<int64_t>& dims,
                    const std::string& type = "bf16") {
    return Emit(type, dims, op + "(" + Ref(type, dims, a) + ")", op);
  }
  std::string Binary(const std::string& op, const std::string& a, const std::string& b,
                     const std::vector<int64_t>& dims, const std::string& type = "bf16") {
    return Emit(type, dims, op + "(" + Ref(type, dims, a) + ", " + Ref(type, dims, b) + ")", op);
  }

  std::string Layer(int l, const std::string& x, int64_t t, int64_t d, int64_t f) {
    scope_ = "layer_" + std::to_string(l);
    const int64_t h = c_.heads, dh = d / h, s = c_.seq, b = c_.batch;
    // layer norm (f32 statistics)
    const std::string xf =
        Emit("f32", {t, d}, "convert(" + Ref("bf16", {t, d}, x) + ")", "ln/convert");
    const std::string mean = Emit("f32", {t},
                                  "reduce(" + Ref("f32", {t, d}, xf) + ", f32[] %" + zero_ +
                                      "), dimensions={1}, to_apply=%region_add",
                                  "ln/mean");
    const std::string mb =
        Emit("f32", {t, d}, "broadcast(" + Ref("f32", {t}, mean) + "), dimensions={0}", "ln/bcast");
    const std::string cen = Binary("subtract", xf, mb, {t, d}, "f32");
    const std::string sq = Binary("multiply", cen, cen, {t, d}, "f32");
    const std::string var = Emit("f32", {t},
                                 "reduce(" + Ref("f32", {t, d}, sq) + ", f32[] %" + zero_ +
                                     "), dimensions={1}, to_apply=%region_add",
                                 "ln/var");
    const std::string rs = Unary("rsqrt", var, {t}, "f32");
    const std::string rb =
        Emit("f32", {t, d}, "broadcast(" + Ref("f32", {t}, rs) + "), dimensions={0}", "ln/bcast");
    const std::string nf = Binary("multiply", cen, rb, {t, d}, "f32");
    const std::string n = Emit("bf16", {t, d}, "convert(" + Ref("f32", {t, d}, nf) + ")", "ln/out");
    // attention
    const std::string wq = Param({d, d}), wk = Param({d, d}), wv = Param({d, d}),
                      wo = Param({d, d});
    const std::string q = Dot(n, {t, d}, wq, {d, d}, 1, 0, {t, d}, "attn/q_proj");
    const std::string k = Dot(n, {t, d}, wk, {d, d}, 1, 0, {t, d}, "attn/k_proj");
    const std::string v = Dot(n, {t, d}, wv, {d, d}, 1, 0, {t, d}, "attn/v_proj");
    const std::vector<int64_t> bshd{b, s, h, dh};
    const std::string q4 =
        Emit("bf16", bshd, "reshape(" + Ref("bf16", {t, d}, q) + ")", "attn/reshape");
    const std::string k4 =
        Emit("bf16", bshd, "reshape(" + Ref("bf16", {t, d}, k) + ")", "attn/reshape");
    const std::string v4 =
        Emit("bf16", bshd, "reshape(" + Ref("bf16", {t, d}, v) + ")", "attn/reshape");
    const std::vector<int64_t> bhss{b, h, s, s};
    const std::string scores = Emit("bf16", bhss,
                                    "dot(" + Ref("bf16", bshd, q4) + ", " + Ref("bf16", bshd, k4) +
                                        "), lhs_batch_dims={0,2}, lhs_contracting_dims={3}, "
                                        "rhs_batch_dims={0,2}, rhs_contracting_dims={3}",
                                    "attn/qk");
    const std::string sf =
        Emit("f32", bhss, "convert(" + Ref("bf16", bhss, scores) + ")", "attn/softmax/convert");
    const std::string mx = Emit("f32", {b, h, s},
                                "reduce(" + Ref("f32", bhss, sf) + ", f32[] %" + ninf_ +
                                    "), dimensions={3}, to_apply=%region_max",
                                "attn/softmax/max");
    const std::string mxb =
        Emit("f32", bhss, "broadcast(" + Ref("f32", {b, h, s}, mx) + "), dimensions={0,1,2}",
             "attn/softmax/bcast");
    const std::string sh = Binary("subtract", sf, mxb, bhss, "f32");
    const std::string e = Unary("exponential", sh, bhss, "f32");
    const std::string den = Emit("f32", {b, h, s},
                                 "reduce(" + Ref("f32", bhss, e) + ", f32[] %" + zero_ +
                                     "), dimensions={3}, to_apply=%region_add",
                                 "attn/softmax/sum");
    const std::string denb =
        Emit("f32", bhss, "broadcast(" + Ref("f32", {b, h, s}, den) + "), dimensions={0,1,2}",
             "attn/softmax/bcast");
    const std::string pf = Binary("divide", e, denb, bhss, "f32");
    const std::string p =
        Emit("bf16", bhss, "convert(" + Ref("f32", bhss, pf) + ")", "attn/softmax/out");
    const std::vector<int64_t> bhsd{b, h, s, dh};
    const std::string pv = Emit("bf16", bhsd,
                                "dot(" + Ref("bf16", bhss, p) + ", " + Ref("bf16", bshd, v4) +
                                    "), lhs_batch_dims={0,1}, lhs_contracting_dims={3}, "
                                    "rhs_batch_dims={0,2}, rhs_contracting_dims={1}",
                                "attn/pv");
    const std::string pvt =
        Emit("bf16", bshd, "transpose(" + Ref("bf16", bhsd, pv) + "), dimensions={0,2,1,3}",
             "attn/transpose");
    const std::string ctx =
        Emit("bf16", {t, d}, "reshape(" + Ref("bf16", bshd, pvt) + ")", "attn/reshape");
    const std::string o = Dot(ctx, {t, d}, wo, {d, d}, 1, 0, {t, d}, "attn/o_proj");
    const std::string r1 = Binary("add", x, o, {t, d});
    // MLP with tanh-GELU
    const std::string w1 = Param({d, f}), w2 = Param({f, d});
    const std::string up = Dot(r1, {t, d}, w1, {d, f}, 1, 0, {t, f}, "mlp/up");
    const std::string th = Unary("tanh", up, {t, f});
    const std::string g = Binary("multiply", up, th, {t, f});
    const std::string down = Dot(g, {t, f}, w2, {f, d}, 1, 0, {t, d}, "mlp/down");
    const std::string r2 = Binary("add", r1, down, {t, d});
    // backward: input and weight gradients of every projection
    scope_ = "layer_" + std::to_string(l) + "/transpose(jvp)";
    const std::string dg = Dot(r2, {t, d}, w2, {f, d}, 1, 1, {t, f}, "mlp/down/dx");
    Dot(g, {t, f}, r2, {t, d}, 0, 0, {f, d}, "mlp/down/dw");
    const std::string dup = Binary("multiply", dg, th, {t, f});
    const std::string dr1 = Dot(dup, {t, f}, w1, {d, f}, 1, 1, {t, d}, "mlp/up/dx");
    Dot(r1, {t, d}, dup, {t, f}, 0, 0, {d, f}, "mlp/up/dw");
    for (const std::string& w : {wq, wk, wv, wo}) {
      Dot(dr1, {t, d}, w, {d, d}, 1, 1, {t, d}, "attn/proj/dx");
      Dot(n, {t, d}, dr1, {t, d}, 0, 0, {d, d}, "attn/proj/dw");
    }
    return r2;
  }

  Config c_;
  std::string out_, scope_, zero_, ninf_;
  int counter_ = 0;
  int next_param_ = 1;
  int64_t params_ = 0;
};

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

struct Timing {
  double cpu = 1e30, wall = 1e30;
};

Timing Best(int reps, const std::function<void()>& fn) {
  Timing best;
  for (int i = 0; i < reps; ++i) {
    const double c0 = ThreadCpuSeconds();
    const auto w0 = std::chrono::steady_clock::now();
    fn();
    best.cpu = std::min(best.cpu, ThreadCpuSeconds() - c0);
    best.wall = std::min(
        best.wall, std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count());
  }
  return best;
}

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

int Run(int reps) {
  std::printf("CPU: %s (%u hardware threads; the bench runs on one)\n", CpuModel().c_str(),
              std::thread::hardware_concurrency());
  std::fflush(stdout);
  // 1. Throughput: layers of a modest transformer until the text passes 1 MB.
  Config small{1, 4, 512, 1024, 16, 4096};
  std::string text;
  for (small.layers = 1; text.size() < (1u << 20); ++small.layers) text = Generator(small).Module();
  const double mb = static_cast<double>(text.size()) / (1 << 20);
  auto slice = Slice::FromAcceleratorType("v5p-8");
  if (!slice.ok()) return 1;
  Result<Module> check = ParseModule(text);
  if (!check.ok()) {
    std::fprintf(stderr, "generated module does not parse: %s\n",
                 check.status().ToString().c_str());
    return 1;
  }
  const Timing parse = Best(reps, [&] { (void)Parse(text); });
  const Timing verify = Best(reps, [&] { (void)ParseModule(text); });
  const Timing price = Best(reps, [&] {
    Result<Module> m = ParseModule(text);
    (void)PriceModule(*m, *slice);
  });
  std::printf("module: %.2f MB of HLO text, %lld instructions (%d unrolled layers)\n", mb,
              static_cast<long long>(check->instruction_count), small.layers - 1);
  std::printf("  parse                 %7.1f ms cpu  %7.1f ms wall  %6.1f MB/s\n", parse.cpu * 1e3,
              parse.wall * 1e3, mb / parse.cpu);
  std::printf("  parse+verify          %7.1f ms cpu  %7.1f ms wall  %6.1f MB/s\n", verify.cpu * 1e3,
              verify.wall * 1e3, mb / verify.cpu);
  std::printf("  parse+verify+price    %7.1f ms cpu  %7.1f ms wall  %6.1f MB/s\n", price.cpu * 1e3,
              price.wall * 1e3, mb / price.cpu);
  std::printf("  target: 1 MB parsed and compiled in under 1 s on one core: %s (%.3f s per MB)\n",
              price.cpu / mb < 1.0 ? "PASS" : "MISS", price.cpu / mb);

  // 1b. StableHLO (docs/stablehlo.md): a 1 MB module as JAX prints an MLP, parsed and lowered
  // to a verified HLO module, beside HLO text's parse+verify above.
  const std::string shlo = StableHloBenchModule(1u << 20);
  const double shlo_mb = static_cast<double>(shlo.size()) / (1 << 20);
  Result<Module> lowered = stablehlo::ParseStableHlo(shlo);
  if (!lowered.ok()) {
    std::fprintf(stderr, "StableHLO module does not lower: %s\n",
                 lowered.status().ToString().c_str());
    return 1;
  }
  const Timing shlo_t = Best(reps, [&] { (void)stablehlo::ParseStableHlo(shlo); });
  std::printf("StableHLO module: %.2f MB, %lld HLO instructions after lowering\n", shlo_mb,
              static_cast<long long>(lowered->instruction_count));
  std::printf(
      "  parse+lower+verify    %7.1f ms cpu  %7.1f ms wall  %6.1f MB/s  (HLO text parse+verify: "
      "%.1f MB/s)\n",
      shlo_t.cpu * 1e3, shlo_t.wall * 1e3, shlo_mb / shlo_t.cpu, mb / verify.cpu);
  std::printf(
      "  target: 1 MB of StableHLO parsed and lowered in under 1 s on one core: %s (%.3f s per "
      "MB)\n",
      shlo_t.cpu / shlo_mb < 1.0 ? "PASS" : "MISS", shlo_t.cpu / shlo_mb);

  // 2. A large train step: 32 layers, d_model 4096, d_ff 16384, 8 x 2048 tokens (6.4B params).
  const Config big{32, 8, 2048, 4096, 32, 16384};
  Generator gen(big);
  const std::string big_text = gen.Module();
  ModuleCost cost;
  const Timing estimate = Best(reps, [&] {
    Result<Module> m = ParseModule(big_text);
    Result<ModuleCost> c = PriceModule(*m, *slice);
    if (c.ok()) cost = std::move(*c);
  });
  std::printf(
      "large train step: %.2fB parameters, %d layers fwd+bwd, %.2f MB of text, %zu priced "
      "instructions on %s\n",
      static_cast<double>(gen.params()) * 1e-9, big.layers,
      static_cast<double>(big_text.size()) / (1 << 20), cost.rows.size(),
      cost.accelerator_type.c_str());
  std::printf("  parse+estimate        %7.1f ms cpu  %7.1f ms wall  target under 1 s: %s\n",
              estimate.cpu * 1e3, estimate.wall * 1e3, estimate.cpu < 1.0 ? "PASS" : "MISS");
  std::printf("  step %.3f s (%lld cycles), %.1f TFLOP per device, MXU utilization %.1f%%\n",
              cost.seconds, static_cast<long long>(cost.cycles), cost.flops * 1e-12,
              cost.mxu_utilization * 100);
  std::printf("  HBM peak %.1f GiB per TensorCore of %.1f GiB: %s\n",
              static_cast<double>(cost.peak_hbm_bytes_per_tensorcore) / (1 << 30),
              cost.hbm_capacity_bytes_per_tensorcore / (1 << 30),
              cost.fits ? "fits" : "does not fit");
  return 0;
}

}  // namespace
}  // namespace tpuemu::engine::hlo

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  return tpuemu::engine::hlo::Run(reps);
}
