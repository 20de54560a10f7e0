// Which StableHLO and chlo ops the front end takes and how (the table docs/stablehlo.md is
// generated from, checked by tests/engine/stablehlo/op_table_test.cpp), and why the others are
// refused. Pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/hlo/opcode.h"

namespace tpuemu::engine::stablehlo {

// The HLO opcode of an op (short name, without "stablehlo.") that maps one to one, operands and
// result type unchanged: elementwise maps, convert, bitcast_convert, reshape, select, clamp, ...
std::optional<hlo::Opcode> SimpleOpcode(std::string_view op);
// The op (short name) SimpleOpcode maps to `opcode`; empty when none does.
std::string_view SimpleOpName(hlo::Opcode opcode);
// all_reduce, all_gather, reduce_scatter, all_to_all, collective_permute, collective_broadcast.
bool IsCollectiveOp(std::string_view op);
// Why an op (short name) is refused: dynamic shapes, quantization, ...; "" for unknown names.
std::string RefusalReason(std::string_view op);

struct OpRow {
  std::string op;   // "stablehlo.add", "chlo.erf"
  std::string hlo;  // what it lowers to ("add", "call", "while + tuple", ...)
  bool supported = true;
  std::string note;  // why refused, or how lowered
};
// Every op the front end knows, supported and refused, sorted by name.
std::vector<OpRow> OpTable();
// The table as Markdown rows (`| op | lowers to | note |`), for docs/stablehlo.md.
std::string OpTableMarkdown();

}  // namespace tpuemu::engine::stablehlo
