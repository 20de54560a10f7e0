// tpuemu-engine: offline engine tools (`tpuemu-engine estimate ...`); see
// cli/tpuemu_engine/app.h.
#include <exception>
#include <iostream>

#include "cli/tpuemu_engine/app.h"

int main(int argc, char** argv) {
  try {
    return tpuemu::cli::RunEngineCli(argc, argv, std::cout, std::cerr);
  } catch (const std::exception& e) {  // nothing should escape; never die with a bare abort
    std::cerr << "tpuemu-engine: " << e.what() << "\n";
    return 1;
  }
}
