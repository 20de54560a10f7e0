// JobSpec: what a client submits to a node (POST .../nodes/N/jobs), decoded and validated.
//
// JSON form (camelCase, every field optional but one of workload/program):
//   {"workload": {"matmul": {"m": 128, "n": 128, "k": 128, "dtype": "bf16"}}
//              | {"mlp": {"layers": 2, "batch": 32, "hidden": 64, "steps": 20,
//                         "learningRate": 0.5}}
//              | {"cnn": {"batch": 16, "channels": 8, "steps": 10, "learningRate": 0.1}}
//              | {"transformer": {"layers": 2, "dModel": 32, "heads": 4, "seqLen": 16,
//                                 "batch": 8, "steps": 10, "learningRate": 0.05}},
//    "program": {...engine/frontend/program_json.h...},
//    "hlo": {"text": "HloModule ...", "params": {"0": [1, 2]}, "distinctPerDevice": false,
//            "estimateOnly": false, "allowUnsupported": false},   (hlo_job_spec.h)
//    "precision": "DEFAULT", "cores": 1, "steps": 1, "seed": 0, "timeoutSeconds": 0,
//    "priority": 0, "labels": {"k": "v"}, "requestId": "...", "maxRetries": 0}
// Exactly one of workload, program, hlo. An hlo job's `cores` counts the module's devices (JAX
// devices: a chip's two TensorCores on v4 and v5p); a module whose header gives replica_count x
// num_partitions > 1 sets it. Each step runs the module once on the same inputs (the job's seed
// fills what hlo.params leaves); an estimateOnly job prices it without running (no steps).
// Errors are INVALID_ARGUMENT naming the field ("workload.mlp.layers must be 1..64", "hlo.text:
// HLO text line 3, column 7: expected ..."). Checks that need the node (cores <= its TensorCores,
// an hlo job's devices on its chips) are JobManager's. Stateless functions: thread-safe.
// A spec is decoded once per job: a program's engine graph and an HLO module are built by
// ParseJobSpec and shared by the spec's copies (immutable), so the run never reads the JSON again.
// maxRetries (0..kMaxJobRetries, like a Kubernetes Job's backoffLimit): how many times a job that
// a fault interrupted (host maintenance) is run again instead of ending (JobManager).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "engine/frontend/ir.h"
#include "engine/hardware/numerics.h"
#include "engine/runtime/tensor.h"
#include "service/jobs/hlo_job_spec.h"

namespace tpuemu::service {

enum class WorkloadKind { kMatmul, kMlp, kCnn, kTransformer, kProgram, kHlo };

inline constexpr int64_t kMaxJobRetries = 10;

// Server-wide job settings from tpuemud's flags: the limits.
struct JobLimits {
  int64_t max_steps = 10000;
  int64_t max_timeout_seconds = 86400;
  int64_t max_tensor_elements = int64_t{1} << 24;
  // Server-wide run-time cap (tpuemud --max-job-seconds); 0 = none. It replaces a job's
  // timeoutSeconds when that is 0 or larger, and the job ends TIMED_OUT naming the limit.
  int64_t max_job_seconds = 0;
  // Host memory (README "Host memory"; 0 = none). A job whose planned peak host bytes exceed
  // max_job_host_memory_bytes (or the whole budget) is rejected at submit; the jobs that run at
  // once reserve at most host_memory_budget_bytes between them, the others wait QUEUED.
  int64_t max_job_host_memory_bytes = 0;
  int64_t host_memory_budget_bytes = 0;
  // hlo jobs (tpuemud --max-hlo-text-bytes, --max-hlo-instructions). The text arrives inside the
  // JSON body, so a module also has to fit --body-limit-bytes with its JSON escapes (a newline or
  // a quote takes two bytes): the default leaves a quarter of the default 1 MiB body for them.
  int64_t max_hlo_text_bytes = 768 << 10;
  int64_t max_hlo_instructions = 100'000;
};

struct JobSpec {
  WorkloadKind kind = WorkloadKind::kMatmul;
  // matmul
  int64_t m = 128, n = 128, k = 128;
  engine::DType dtype = engine::DType::kBF16;
  // mlp: `layers` hidden layers of width `hidden` on 16 input features, 4 classes
  int64_t layers = 2, batch = 32, hidden = 64;
  double learning_rate = 0.5;
  // cnn: conv2d 3x3 SAME (2 -> `channels`) on 8x8x2 images, ReLU, dense to 4 classes
  int64_t channels = 8;
  // transformer: `layers` blocks (attention with `heads` heads + a 4x GELU MLP, both residual) on
  // [batch, seq_len, d_model] inputs, a head to 4 classes per token (layers/batch shared with mlp)
  int64_t d_model = 32, heads = 4, seq_len = 16;
  // program: the engine IR as JSON, as submitted (kept for the canonical JSON), and the graph
  // ParseJobSpec built from it (never null for a parsed program spec)
  nlohmann::json program;
  std::shared_ptr<const engine::Graph> graph;
  // hlo: the module and how to feed it, decoded once (never null for a parsed hlo spec)
  std::shared_ptr<const HloJobSpec> hlo;
  // hlo: the price Submit made on the node's type, which the run uses (null after a restart:
  // the run prices it). Not part of the canonical JSON.
  std::shared_ptr<const HloPrice> hlo_price;
  engine::Precision precision = engine::Precision::kDefault;
  int cores = 1;
  int64_t steps = 1;  // workload.<mlp|cnn|transformer>.steps overrides when given
  uint64_t seed = 0;
  int64_t timeout_seconds = 0;  // 0 = no limit
  int64_t priority = 0;         // higher runs first; FIFO within a level
  std::map<std::string, std::string> labels;
  std::string request_id;
  int64_t max_retries = 0;  // re-runs after a fault interrupted the job
};

Result<JobSpec> ParseJobSpec(const nlohmann::json& body, const JobLimits& limits = {});

// The canonical JSON of a spec (stored; also hashed for requestId idempotency, so it excludes
// requestId itself). ParseJobSpec(JobSpecToJson(s)) gives back s.
nlohmann::json JobSpecToJson(const JobSpec& spec);

// The canonical JSON as compact text — what the store keeps and a job's JSON shows — and its
// 64-bit hash in hex, made from one serialization.
struct CanonicalSpec {
  std::string json;
  std::string hash;
};
CanonicalSpec Canonicalize(const JobSpec& spec);
std::string JobSpecHash(const JobSpec& spec);  // Canonicalize(spec).hash

std::string_view WorkloadKindName(
    WorkloadKind kind);  // "matmul", "mlp", "cnn", "transformer", "program", "hlo"

}  // namespace tpuemu::service
