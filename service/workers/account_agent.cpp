#include "service/workers/account_agent.h"

#include <string_view>

namespace tpuemu::service {

std::pair<std::vector<std::string>, std::string> AccountAgentCommand(
    const std::map<std::string, std::vector<std::string>>& accounts) {
  std::string input;
  for (const auto& [user, keys] : accounts) {
    for (const std::string& key : keys) input += user + " " + key + "\n";
  }
  return {{"/bin/bash", "-c", kAccountAgentScript}, input};
}

std::vector<AgentRejection> AccountAgentRejections(const std::string& output) {
  std::vector<AgentRejection> out;
  size_t at = 0;
  while (at < output.size()) {
    size_t nl = output.find('\n', at);
    if (nl == std::string::npos) nl = output.size();
    const std::string_view line(output.data() + at, nl - at);
    at = nl + 1;
    if (!line.starts_with("reject\t")) continue;
    const std::string_view rest = line.substr(7);
    const size_t tab = rest.find('\t');
    if (tab == std::string_view::npos || tab == 0) continue;
    out.push_back({std::string(rest.substr(0, tab)), std::string(rest.substr(tab + 1))});
  }
  return out;
}

}  // namespace tpuemu::service
