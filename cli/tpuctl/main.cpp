// tpuctl: the gcloud-like client of tpuemud; see cli/tpuctl/app.h and the README's "tpuctl".
// Called as `tpu-info` (a TPU VM worker has it at /usr/local/bin/tpu-info), it is
// `tpuctl tpu-info` (cli/tpuctl/tpu_info.h).
#include <exception>
#include <iostream>
#include <string_view>
#include <vector>

#include "cli/tpuctl/app.h"

int main(int argc, char** argv) {
  std::vector<const char*> args(argv, argv + argc);
  const std::string_view self = argc > 0 ? argv[0] : "";
  if (self.substr(self.rfind('/') + 1) == "tpu-info") args.insert(args.begin() + 1, "tpu-info");
  try {
    return tpuemu::cli::RunTpuctl(static_cast<int>(args.size()), args.data(), std::cout, std::cerr);
  } catch (const std::exception& e) {  // nothing should escape; never die with a bare abort
    std::cerr << "ERROR: (tpuctl) " << e.what() << "\n";
    return tpuemu::cli::kExitApiError;
  }
}
