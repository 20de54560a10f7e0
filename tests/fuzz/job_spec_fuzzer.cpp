// Fuzzes the JobSpec parser (service/jobs/job_spec.h) as POST .../jobs uses it: bytes -> JSON ->
// ParseJobSpec. An accepted spec must round-trip: JobSpecToJson(spec) parses again to a spec
// with the same hash. The program branch runs engine::ProgramFromJson (the program fuzzer covers
// compiling and executing); the hlo branch parses and verifies the module's HLO text
// (engine/hlo/parser.h) under the job limits (seeds: corpus/job_spec_fuzzer/hlo_*.json).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "service/jobs/job_spec.h"

using namespace tpuemu;  // NOLINT: a fuzz target's one job

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // As routes_jobs.cpp parses the body (no exceptions) before api/job_codec.h decodes it with
  // ParseJobSpec.
  nlohmann::json body = nlohmann::json::parse(data, data + size, nullptr, false);
  if (body.is_discarded()) return 0;
  Result<service::JobSpec> spec = service::ParseJobSpec(body);
  if (!spec.ok()) return 0;
  nlohmann::json canonical = service::JobSpecToJson(*spec);
  canonical["requestId"] = spec->request_id;
  Result<service::JobSpec> again = service::ParseJobSpec(canonical);
  if (!again.ok() || service::JobSpecHash(*again) != service::JobSpecHash(*spec)) {
    std::fprintf(stderr, "job_spec_fuzzer: canonical spec does not round-trip: %s\n%s\n",
                 again.ok() ? "hash differs" : again.status().ToString().c_str(),
                 canonical.dump().c_str());
    std::abort();
  }
  return 0;
}
