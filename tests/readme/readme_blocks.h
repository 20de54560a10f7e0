// ExtractShellBlocks: the README's ```sh blocks that call curl or tpuctl, in README order, with
// the line of their opening fence. A block whose fence is preceded (blank lines aside) by
// `<!-- readme-test: skip -->` is returned with skip = true. Pure function of the text.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace tpuemu::testing {

struct ShellBlock {
  int fence_line = 0;  // 1-based line of the ```sh fence in the README
  std::string text;    // the lines between the fences
  bool skip = false;
};

// True when `text` runs `word` as a command (`tpuctl`, `build/cli/tpuctl`, `$(curl`), not as
// part of another word.
inline bool CallsWord(const std::string& text, const std::string& word) {
  const std::string before = " \t\n;|&($`\"/", after = " \t\n;|&)\"";
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    size_t end = at + word.size();
    bool starts = at == 0 || before.find(text[at - 1]) != std::string::npos;
    bool ends = end == text.size() || after.find(text[end]) != std::string::npos;
    if (starts && ends) return true;
  }
  return false;
}

inline std::vector<ShellBlock> ExtractShellBlocks(const std::string& markdown) {
  std::vector<ShellBlock> blocks;
  std::istringstream in(markdown);
  std::string line, last_nonblank;
  int number = 0;
  bool inside = false, inside_other = false;
  ShellBlock current;
  while (std::getline(in, line)) {
    ++number;
    if (inside) {
      if (line.rfind("```", 0) == 0) {
        inside = false;
        if (CallsWord(current.text, "curl") || CallsWord(current.text, "tpuctl")) {
          blocks.push_back(current);
        }
      } else {
        current.text += line + "\n";
      }
      continue;
    }
    if (inside_other) {
      if (line.rfind("```", 0) == 0) inside_other = false;
      continue;
    }
    if (line == "```sh" || line == "```bash" || line == "```shell") {
      inside = true;
      current = ShellBlock{number, "", last_nonblank == "<!-- readme-test: skip -->"};
    } else if (line.rfind("```", 0) == 0) {
      inside_other = true;
    }
    if (line.find_first_not_of(" \t") != std::string::npos) last_nonblank = line;
  }
  return blocks;
}

}  // namespace tpuemu::testing
