// Running a program the way a shell does for tpuctl's ssh/scp/ssh-keygen: fork + execvp (PATH
// lookup), the child's stdout and stderr ours (or stdout on `stdout_fd`), stdin ours or
// /dev/null. Blocks until the child ends. Safe to call from several threads at once (the child
// only execs). Returns the child's exit status; 128 + N when signal N ended it; 127 when the
// program could not be run (with a line on stderr, as a shell says it).
#pragma once

#include <string>
#include <vector>

namespace tpuemu::cli {

int RunProcess(const std::vector<std::string>& argv, bool inherit_stdin, int stdout_fd = 1);

}  // namespace tpuemu::cli
