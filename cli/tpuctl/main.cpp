// tpuctl: the gcloud-like client of tpuemud; see cli/tpuctl/app.h and the README's "tpuctl".
#include <exception>
#include <iostream>

#include "cli/tpuctl/app.h"

int main(int argc, char** argv) {
  try {
    return tpuemu::cli::RunTpuctl(argc, argv, std::cout, std::cerr);
  } catch (const std::exception& e) {  // nothing should escape; never die with a bare abort
    std::cerr << "ERROR: (tpuctl) " << e.what() << "\n";
    return tpuemu::cli::kExitApiError;
  }
}
