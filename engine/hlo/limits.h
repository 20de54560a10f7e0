// Limits on what an HLO module may ask of the importer and the evaluator. Each is enforced with
// INVALID_ARGUMENT naming the limit (e.g. "HLO text is 70000000 bytes, above the limit
// max_text_bytes = 67108864"), so a hostile or runaway module cannot exhaust memory or time.
// The defaults are documented in docs/hlo.md.
#pragma once

#include <cstdint>

namespace tpuemu::engine::hlo {

struct Limits {
  int64_t max_text_bytes = int64_t{64} << 20;  // the whole module text
  int64_t max_instructions = 1'000'000;        // every computation's instructions together
  int max_nesting_depth = 64;                  // tuple shapes, literals, nested ops/computations
  // Evaluation only (estimate prices any size):
  int64_t max_tensor_elements = int64_t{1} << 27;  // one array
  int64_t max_while_trips = 1'000'000;             // iterations of one while loop execution
  int64_t max_devices = 64;                        // replicas x partitions emulated side by side
};

}  // namespace tpuemu::engine::hlo
