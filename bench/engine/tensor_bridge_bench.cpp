// What the tensor conversions of a job step cost (engine/hlo/tensor_bridge.h): an MLP training
// step (forward, softmax loss, backward to one gradient per weight) run as a job runs it
// (engine/frontend/graph_program.h's HloGraphProgram::Run, on the calling thread), and beside it,
// on arrays of the step's own sizes:
//   in        ArgumentOf on every feed (weights and data): the copy every step makes;
//   out copy  TensorOf on every output while another reference holds it: the copy every step
//             made before the outputs moved (and still makes for int32 and shared arrays);
//   out move  TensorOf on every output that nobody else holds: what a step does now.
// The conversions' share of a step is (in + out) / step, with the step as measured (now) and as
// it was (step - out move + out copy). Each part runs `reps` times, interleaved, and the best wall
// time is kept (the machine is shared; wall time, because the GEMM library may run the step's dots
// on threads of its own). Not a ctest: run by hand,
// ./bench_engine_tensor_bridge [width=2048] [batch=64] [reps=5] (a few seconds at the defaults).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/cpu_model.h"
#include "engine/frontend/graph_program.h"
#include "engine/hlo/tensor_bridge.h"

namespace tpuemu::engine {
namespace {

double Seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Tensor Random(Shape shape, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  FloatBuffer v(static_cast<size_t>(shape.NumElements()));
  for (float& x : v) x = dist(rng);
  return *Tensor::FromF32(std::move(shape), std::move(v));
}

// x[batch,64] -> relu(x·w0) -> relu(·w1) -> ·w2 -> 16 classes; the loss and dw0, dw1, dw2.
Graph Mlp(int64_t width, int64_t batch) {
  Graph g("mlp_step");
  const std::string x = g.Parameter("x", {batch, 64});
  const std::string labels = g.Parameter("labels", {batch}, DType::kI32);
  const std::string w0 = g.Parameter("w0", {64, width});
  const std::string w1 = g.Parameter("w1", {width, width});
  const std::string w2 = g.Parameter("w2", {width, 16});
  const std::string z0 = g.Dot("z0", x, w0);
  const std::string h0 = g.Relu("h0", z0);
  const std::string z1 = g.Dot("z1", h0, w1);
  const std::string h1 = g.Relu("h1", z1);
  const std::string logits = g.Dot("logits", h1, w2);
  g.MarkOutput(g.SoftmaxCrossEntropy("loss", logits, labels));
  const std::string dlogits = g.SoftmaxCrossEntropyGrad("dlogits", logits, labels);
  g.MarkOutput(g.Dot("dw2", h1, dlogits, /*transpose_lhs=*/true));
  const std::string dh1 = g.Dot("dh1", dlogits, w2, false, /*transpose_rhs=*/true);
  const std::string dz1 = g.ReluGrad("dz1", z1, dh1);
  g.MarkOutput(g.Dot("dw1", h0, dz1, /*transpose_lhs=*/true));
  const std::string dh0 = g.Dot("dh0", dz1, w1, false, /*transpose_rhs=*/true);
  const std::string dz0 = g.ReluGrad("dz0", z0, dh0);
  g.MarkOutput(g.Dot("dw0", x, dz0, /*transpose_lhs=*/true));
  return g;
}

int Run(int64_t width, int64_t batch, int reps) {
  Graph graph = Mlp(width, batch);
  if (!graph.status().ok()) {
    std::fprintf(stderr, "graph: %s\n", graph.status().ToString().c_str());
    return 1;
  }
  auto program = hlo::HloGraphProgram::Lower(graph);
  if (!program.ok()) {
    std::fprintf(stderr, "lower: %s\n", program.status().ToString().c_str());
    return 1;
  }
  std::map<std::string, Tensor> feeds;
  feeds["x"] = Random({batch, 64}, 1, 1.0f);
  std::vector<int32_t> labels(static_cast<size_t>(batch));
  for (int64_t i = 0; i < batch; ++i) labels[static_cast<size_t>(i)] = static_cast<int32_t>(i % 16);
  feeds["labels"] = *Tensor::FromI32({batch}, labels);
  feeds["w0"] = Random({64, width}, 2, 0.1f);
  feeds["w1"] = Random({width, width}, 3, 0.02f);
  feeds["w2"] = Random({width, 16}, 4, 0.02f);
  FeedView view;
  for (const auto& [id, t] : feeds) view[id] = &t;
  const Precision precision = Precision::kDefault;

  // The step's outputs as arrays of their sizes, made afresh for each measurement.
  std::vector<std::pair<std::vector<int64_t>, DType>> outputs;
  for (const std::string& id : (*program)->lowering().outputs) {
    outputs.push_back({graph.Find(id)->shape.dims, graph.Find(id)->dtype});
  }
  auto make_outputs = [&] {
    std::vector<std::shared_ptr<const hlo::Array>> arrays;
    for (const auto& [dims, dtype] : outputs) {
      hlo::Array a = hlo::Array::Uninitialized(hlo::LoweredType(dtype), dims);
      std::fill(a.f.begin(), a.f.end(), 0.5f);
      arrays.push_back(hlo::Value::Of(std::move(a)).array);
    }
    return arrays;
  };

  const double inf = std::numeric_limits<double>::infinity();
  double step_s = inf, in_s = inf, copy_s = inf, move_s = inf;
  int64_t out_bytes = 0, in_bytes = 0;
  for (const auto& [id, t] : feeds) in_bytes += t.num_elements() * 4;
  for (int r = 0; r < reps; ++r) {
    double t0 = Seconds();
    auto ran = (*program)->Run(graph, view, precision);
    step_s = std::min(step_s, Seconds() - t0);
    if (!ran.ok()) {
      std::fprintf(stderr, "run: %s\n", ran.status().ToString().c_str());
      return 1;
    }
    t0 = Seconds();
    {
      std::vector<hlo::Value> args;
      for (const auto& [id, t] : feeds) args.push_back(hlo::ArgumentOf(t));
    }
    in_s = std::min(in_s, Seconds() - t0);

    auto held = make_outputs();
    t0 = Seconds();
    {
      std::vector<Tensor> out;
      for (size_t k = 0; k < held.size(); ++k) {
        out.push_back(*hlo::TensorOf(held[k], outputs[k].second, {}));  // held: a copy
      }
      out_bytes = 0;
      for (const Tensor& t : out) out_bytes += t.num_elements() * 4;
    }
    copy_s = std::min(copy_s, Seconds() - t0);

    auto sole = make_outputs();
    t0 = Seconds();
    {
      std::vector<Tensor> out;
      for (size_t k = 0; k < sole.size(); ++k) {
        out.push_back(*hlo::TensorOf(std::move(sole[k]), outputs[k].second, {}));  // moved
      }
    }
    move_s = std::min(move_s, Seconds() - t0);
  }
  const double before = step_s - move_s + copy_s;
  std::printf("CPU: %s\n", bench::CpuModel().c_str());
  std::printf(
      "MLP step width %lld batch %lld: %.1f MiB fed, %.1f MiB of outputs; best of %d, "
      "wall time\n",
      static_cast<long long>(width), static_cast<long long>(batch),
      static_cast<double>(in_bytes) / (1 << 20), static_cast<double>(out_bytes) / (1 << 20), reps);
  std::printf("  step (HloGraphProgram::Run)  %9.2f ms\n", step_s * 1e3);
  std::printf("  in: ArgumentOf, every feed   %9.2f ms\n", in_s * 1e3);
  std::printf("  out: TensorOf, copied        %9.2f ms   (before: every float output)\n",
              copy_s * 1e3);
  std::printf("  out: TensorOf, moved         %9.3f ms   (now)\n", move_s * 1e3);
  std::printf(
      "conversions' share of a step: before %.1f%% (%.2f of %.2f ms), now %.1f%% "
      "(%.2f of %.2f ms)\n",
      100.0 * (in_s + copy_s) / before, (in_s + copy_s) * 1e3, before * 1e3,
      100.0 * (in_s + move_s) / step_s, (in_s + move_s) * 1e3, step_s * 1e3);
  return 0;
}

}  // namespace
}  // namespace tpuemu::engine

int main(int argc, char** argv) {
  const int64_t width = argc > 1 ? std::atoll(argv[1]) : 2048;
  const int64_t batch = argc > 2 ? std::atoll(argv[2]) : 64;
  const int reps = argc > 3 ? std::atoi(argv[3]) : 5;
  return tpuemu::engine::Run(width, batch, reps);
}
