// StepProfile: one step of a model (a training step, or whatever a program does per step) as the
// cost model prices it, independent of the hardware it will run on.
//
// Every source of a comparison produces one: the analytic llama-like transformer
// (transformer_model.h), a JSON IR program or a built-in workload (program_profile.h, through an
// engine::Graph) and — once the HLO importer lands — an HLO module (program_profile.h's
// ProgramFigures is the hook: per-step FLOPs, bytes, parameter and activation bytes and a cost per
// instruction). estimate.h turns a profile into step time, memory and dollars on one slice.
//
// Figures are for the WHOLE step at the GLOBAL batch, before any sharding: the estimator divides
// them per chip according to each op's Scaling. Plain data; no invariants beyond the comments.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/chip/timing.h"

namespace tpuemu::engine::cost {

// Where an op's time goes: a GEMM on the MXUs, a fused attention kernel (MXU and vector unit
// overlapped, flash-attention style) or a vector-unit op (elementwise, reductions, optimizer).
enum class OpUnit { kMxu, kAttention, kVector };

// How an op's work divides when the step is sharded.
enum class Scaling {
  kBatch,       // carries the batch: each data-parallel replica does its share of it
  kParameters,  // proportional to the parameters a chip holds (the optimizer update)
  kReplicated,  // every chip does all of it
};

// Which GEMM dimension a sharding splits (for the MXU tile model of the per-chip GEMM).
enum class GemmDim { kNone, kBatch, kM, kN, kK };

struct ProfileOp {
  std::string name;
  OpUnit unit = OpUnit::kVector;
  Scaling scaling = Scaling::kBatch;
  bool tp_split = false;   // divides over the tensor-parallel group
  bool per_layer = false;  // one of `layers` identical repeated blocks: figures are for ONE layer
  double count = 1;        // executions per step (2 when rematerialisation recomputes it)
  // Per execution, whole step, global batch:
  double mxu_flops = 0;  // kMxu / kAttention: flops the MXUs execute
  double vpu_ops = 0;    // vector-unit element operations
  double hbm_bytes = 0;  // bytes read + written in HBM
  // kMxu: the GEMM (batch × [m,k]·[k,n]) for the MXU fold model, and the dimensions data and
  // tensor parallelism split. An empty gemm prices mxu_flops at the calibrated efficiency only.
  int64_t gemm_batch = 1;
  GemmShape gemm;
  int passes = 1;  // bf16 MXU passes (3 or 6 for an f32 dot of an HLO module)
  GemmDim batch_dim = GemmDim::kM;
  GemmDim tp_dim = GemmDim::kNone;
};

// Bytes of model state, for one repeated layer or for the rest of the model.
struct StateBytes {
  double weights = 0;    // as stored (f32 master weights for the transformer)
  double gradients = 0;  // as reduced
  double optimizer = 0;  // e.g. Adam's two moments
  double gathered = 0;   // the copy FSDP all-gathers before use (bf16 weights)
};

struct StepProfile {
  std::string name;
  std::string source;            // "model", "program", "workload", "hlo"
  std::string unit = "samples";  // what throughput counts: "tokens" or "samples"
  double units_per_step = 0;     // tokens (batch × seqLen) or samples per step
  int64_t global_batch = 1;      // items data parallelism can split (sequences, samples)
  double model_flops = 0;        // per step: the MFU numerator (a model's, not recompute)
  double parameters = 0;         // count
  bool training = true;          // gradients to reduce
  std::string remat;             // the remat policy's name; empty for programs

  int layers = 0;    // repeated blocks; 0 = the program is one block
  StateBytes layer;  // ONE repeated layer's state (used when layers > 0)
  StateBytes other;  // everything else (embeddings, or the whole program when layers == 0)
  // Activations kept for the backward pass, whole step at global batch: the part every
  // tensor-parallel rank holds in full, and the part split over the tensor-parallel group.
  double activation_bytes = 0;
  double activation_bytes_tp = 0;
  // Peak working set on top of that (one layer's recompute, the logits), at global batch.
  double transient_bytes = 0;
  double transient_bytes_tp = 0;

  // Tensor parallelism (Megatron-style: heads and the MLP's hidden units split): bytes each rank
  // all-reduces per layer and step (forward + backward) at global batch, and the largest degree
  // the shapes divide by. max_tp == 1: tensor parallelism does not apply to this source.
  double tp_allreduce_bytes_per_layer = 0;
  int max_tp = 1;

  // Host offloading (remat policies that offload): bytes of one layer's activations copied to
  // the host in the forward pass and back in the backward pass, whole step at global batch,
  // one direction; the part every tensor-parallel rank holds and the part split over the group.
  double host_offload_bytes_per_layer = 0;
  double host_offload_bytes_per_layer_tp = 0;

  // Mixture of experts: ONE layer's expert weights (not in `layer`), which expert parallelism
  // shards over the expert group instead of all-gathering them; the tokens each layer sends to
  // its experts and back (dispatch + combine, forward, backward and recompute), whole step at
  // global batch; the largest expert-parallel degree (the expert count; 1: not a MoE).
  StateBytes experts;
  double all_to_all_bytes_per_layer = 0;
  int max_ep = 1;

  // XLA's rematerialisation pass (estimate.h): the part of activation_bytes_tp it can recompute
  // when they overflow HBM (every kept tensor but the layer inputs), and the forward MXU FLOPs
  // of one layer that produced it, whole step at global batch.
  double reducible_activation_bytes_tp = 0;
  double reducible_flops_per_layer = 0;

  // Context parallelism: the bf16 K and V of one layer, whole step at global batch, which the
  // chips sharing a sequence all-gather; the degrees must divide max_cp (1: not applicable).
  double cp_allgather_bytes_per_layer = 0;
  int64_t max_cp = 1;

  std::vector<ProfileOp> ops;
};

}  // namespace tpuemu::engine::cost
