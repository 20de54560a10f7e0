// The "hlo" field of a JobSpec (job_spec.h): an XLA HLO module a job runs or prices, decoded and
// checked once at submit and kept typed with the job (docs/hlo.md has the format).
//
//   "hlo": {"text": "HloModule m ...",        the module as JAX / XLA_FLAGS dumps print it
//           "params": {"0": [1, 2, 3], "2": 0.5},   row-major values of entry parameter N (one
//                                             value fills it); the rest come from the job's seed
//           "distinctPerDevice": false,       seeded parameters differ per device
//           "estimateOnly": false,            price without running (any size)
//           "allowUnsupported": false}        estimateOnly: price unsupported instructions at 0
//
// Devices: replica_count x num_partitions of the module's header when that is more than one
// (then `cores` may be left out or must equal it); else the job's `cores`, the module running as
// that many replicas. A device is a JAX device: a chip's two TensorCores on v4 and v5p
// (megacore), one TensorCore elsewhere; PriceHloJobOnNode holds it against the node.
// Errors are INVALID_ARGUMENT naming the field: `hlo.text: HLO text line L, column C: expected
// X, found Y`, a limit by name (max_hlo_text_bytes, max_instructions), a run that cannot execute
// an instruction (its name, opcode or custom-call target, and line) or holds an array above the
// tensor limit. Stateless functions: thread-safe; an HloJobSpec is immutable once made.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "engine/hardware/hardware.h"
#include "engine/hardware/numerics.h"
#include "engine/hlo/cost_model.h"
#include "engine/hlo/limits.h"
#include "engine/hlo/module.h"

namespace tpuemu::service {

// What a job may ask of the HLO importer (JobLimits carries them; tpuemud's flags set them).
struct HloJobLimits {
  int64_t max_text_bytes = 768 << 10;
  int64_t max_instructions = 100'000;
  int64_t max_tensor_elements = int64_t{1} << 24;  // one array of a run (JobLimits')
};

struct HloJobSpec {
  std::string text;                                   // as submitted (the canonical JSON's)
  std::shared_ptr<const engine::hlo::Module> module;  // verified; devices() = the job's
  std::map<int64_t, std::vector<double>> params;      // entry parameter -> values
  bool distinct_per_device = false;
  bool estimate_only = false;
  bool allow_unsupported = false;
  engine::hlo::Limits limits;  // parsed under them; a run evaluates under them

  int64_t devices() const { return module->devices(); }
};

// Decodes `hlo` (the field's JSON) for a job of `cores` (cores_given: the spec named it). The
// spec's cores become the result's devices().
Result<std::shared_ptr<const HloJobSpec>> ParseHloJobSpec(const nlohmann::json& hlo, int64_t cores,
                                                          bool cores_given,
                                                          const HloJobLimits& limits);

// The field's canonical JSON: ParseHloJobSpec of it gives back the same spec.
nlohmann::json HloJobSpecToJson(const HloJobSpec& spec);

// The module priced for a node's accelerator type, and how long that took (the job's compile).
struct HloPrice {
  engine::hlo::ModuleCost cost;
  double seconds = 0;
};

// Whether the job fits `type`: its devices on the node's chips (INVALID_ARGUMENT naming both),
// and, estimate-only without allowUnsupported, every instruction priceable. Prices the module
// once (milliseconds even for large modules); that price goes with the job to its run
// (JobSpec::hlo_price), so a job is priced once.
Result<std::shared_ptr<const HloPrice>> PriceHloJobOnNode(const HloJobSpec& spec,
                                                          const engine::AcceleratorType& type,
                                                          engine::Precision precision);

}  // namespace tpuemu::service
