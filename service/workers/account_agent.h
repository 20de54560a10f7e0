// The account agent: the accounts part of Google's guest agent, a bash script run as root inside
// each worker (service/workers/account_agent.sh, where its contract is written). The build embeds
// the script's text (service/CMakeLists.txt generates kAccountAgentScript's definition from it),
// so tpuemud never reads the source tree at run time. Pure functions, thread-safe.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tpuemu::service {

// account_agent.sh, as it was when tpuemud was built.
extern const char kAccountAgentScript[];

// The agent with `accounts` (user -> "type base64" keys, checked by ssh_keys.h): every user
// exists (home, bash, in group google-sudoers with passwordless sudo) and has exactly those keys
// in ~/.ssh/authorized_keys; users it granted before that are not granted now lose their keys
// and sudo; root and existing system accounts are refused. Returns the command to run as root
// inside and its standard input.
std::pair<std::vector<std::string>, std::string> AccountAgentCommand(
    const std::map<std::string, std::vector<std::string>>& accounts);

// A user the agent refused, from one of its "reject<TAB>user<TAB>why" output lines.
struct AgentRejection {
  std::string user;
  std::string why;
};
// Every refusal in the agent's output, in order (other lines are ignored).
std::vector<AgentRejection> AccountAgentRejections(const std::string& output);

}  // namespace tpuemu::service
