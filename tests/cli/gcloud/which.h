// `command -v PROGRAM` for the gcloud tests: the program's absolute path, or empty when it is not
// installed (the tests then skip, saying so).
#pragma once

#include <cstdio>
#include <string>

namespace tpuemu::testing {

inline std::string Which(const std::string& program) {
  FILE* p = popen(("command -v " + program + " 2>/dev/null").c_str(), "r");
  if (p == nullptr) return "";
  char line[4096] = {0};
  std::string path = std::fgets(line, sizeof(line), p) != nullptr ? line : "";
  pclose(p);
  while (!path.empty() && (path.back() == '\n' || path.back() == ' ')) path.pop_back();
  return path;
}

}  // namespace tpuemu::testing
