// The training-step graphs bench_workloads measures (bench only), built from engine/frontend/ir.h
// alone like service/workloads' built-in ones, with every parameter's value and which outputs are
// which weights' gradients (for the data-parallel step's update):
//   matmul       one 2048³ dot (a 2048³ matmul job's program);
//   transformer  2 blocks, dModel 256, 4 heads, seqLen 128: attention + 4x GELU MLP, residuals,
//                forward and backward (dots with transposed operands, softmax backward from
//                vector ops), mean cross-entropy over 4 classes;
//   mlp          4 ReLU layers of 1024 on 16 input features, 4 classes, forward and backward;
//   cnn          a cnn job's step at its defaults: a 3x3 same conv to 16 channels on 256 8x8x2
//                images, ReLU, a dense layer to 4 classes, and its backward (dfilter, ddense).
// Data parameters are "x" and "labels"; the rest are weights.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "engine/frontend/ir.h"
#include "engine/hlo/array.h"
#include "engine/hlo/module.h"

namespace tpuemu::bench {

struct StepGraph {
  std::string name;
  engine::Graph graph;
  std::map<std::string, engine::Tensor> feeds;  // every parameter's value
  double target = 0.5;                          // the ratio to the best raw GEMM to reach
  std::vector<std::pair<std::string, std::string>> grads;  // weight id, its gradient's output id
};

StepGraph MatmulGraph(std::mt19937_64& rng);
StepGraph MlpGraph(int64_t batch, std::mt19937_64& rng);
StepGraph TransformerGraph(int64_t batch, std::mt19937_64& rng);  // batch of sequences
StepGraph CnnGraph(std::mt19937_64& rng);

// The argument a step's module takes for parameter `id` (from_graph.h: every parameter and
// constant is one): its fed value, or a constant's init spec materialised, as a job's step does.
Result<engine::hlo::Value> ArgumentFor(const StepGraph& g, const std::string& id);

// "name opcode shape" per entry instruction of `module`, for the profile's lines.
std::vector<std::string> InstructionLabels(const engine::hlo::Module& module);

}  // namespace tpuemu::bench
