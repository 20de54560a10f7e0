// docs/stablehlo.md's table of ops is the one the code has (engine/stablehlo/op_table.h).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "engine/stablehlo/op_table.h"

namespace tpuemu::engine::stablehlo {
namespace {

TEST(StablehloOpTable, DocsListTheOpsTheCodeTakes) {
  std::ifstream in(std::string(TPUEMU_SOURCE_DIR) + "/docs/stablehlo.md");
  std::stringstream s;
  s << in.rdbuf();
  const std::string doc = s.str();
  const std::string table = OpTableMarkdown();
  EXPECT_NE(doc.find(table), std::string::npos)
      << "docs/stablehlo.md's op table is out of date; paste this in:\n"
      << table;
}

TEST(StablehloOpTable, EverySimpleOpIsInTheTable) {
  for (const OpRow& row : OpTable()) {
    if (row.supported && row.op.rfind("stablehlo.", 0) == 0 && SimpleOpcode(row.op.substr(10))) {
      EXPECT_FALSE(row.hlo.empty()) << row.op;
    }
  }
}

}  // namespace
}  // namespace tpuemu::engine::stablehlo
