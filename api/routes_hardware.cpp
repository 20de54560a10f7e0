// GET /_emulator/hardware[?acceleratorType=v4-8]: the engine's figures behind every accelerator
// type (chips, hosts, TensorCores, MXUs, clock, HBM, peak bf16 TFLOPS of the slice, zones that
// offer it), for the dashboard's Catalog page, and "gemmKernel": the host kernel this process runs
// the MXU ops on (engine::GemmKernelName, chosen at run time from the CPU). An emulator extension,
// not part of Cloud TPU v2.
#include "api/api_common.h"
#include "api/google_error.h"
#include "api/routes.h"
#include "engine/kernels/gemm.h"

namespace tpuemu::api {
namespace {

using nlohmann::json;

json HardwareJson(const service::AcceleratorHardware& hw) {
  return {{"acceleratorType", hw.type},
          {"generation", hw.generation},
          {"topology", hw.topology},
          {"chips", hw.chips},
          {"hosts", hw.workers},
          {"workers", hw.workers},
          {"tensorcores", hw.tensorcores},
          {"mxusPerTensorcore", hw.mxus_per_tensorcore},
          {"mxus", hw.tensorcores * hw.mxus_per_tensorcore},
          {"mxuSize", hw.mxu_size},
          {"clockHz", hw.clock_hz},
          {"hbmBytes", hw.hbm_bytes},
          {"hbmBandwidthBytesPerSecondPerChip", hw.hbm_bandwidth_bytes_per_s},
          {"peakBf16Tflops", hw.peak_bf16_tflops},
          {"zones", hw.zones}};
}

}  // namespace

void RegisterHardwareRoutes(Router& router, const service::Catalog& catalog,
                            int64_t zone_capacity_tensorcores) {
  router.Add("GET", "/_emulator/hardware",
             [&catalog, zone_capacity_tensorcores](const HttpRequest& req, const PathParams&) {
               json types = json::array();
               if (std::optional<std::string> only = req.Query("acceleratorType")) {
                 Result<service::AcceleratorHardware> hw = catalog.HardwareOf(*only);
                 if (!hw.ok()) return ErrorResponse(hw.status());
                 types.push_back(HardwareJson(*hw));
               } else {
                 for (const service::AcceleratorHardware& hw : catalog.Hardware()) {
                   types.push_back(HardwareJson(hw));
                 }
               }
               return JsonResponse(200, json{{"zoneCapacityTensorcores", zone_capacity_tensorcores},
                                             {"gemmKernel", engine::GemmKernelName()},
                                             {"acceleratorTypes", types}});
             });
}

}  // namespace tpuemu::api
