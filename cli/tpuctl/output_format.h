// --format for tpuctl: gcloud's json | yaml | table | value | none, with gcloud projections.
//
//   json                 the resource (an array for list commands), 2-space indent
//   yaml                 the resource; a list prints one document per item separated by "---"
//   table / table(COLS)  aligned columns under UPPER_SNAKE headings; plain `table` uses the
//                        command's default columns
//   value(COLS)          the columns of each item tab-separated, no heading (for shell scripts)
//   none                 prints nothing
// COLS are comma-separated projections: a field path (`acceleratorConfig.type`, `labels.env`,
// `networkEndpoints[0].ipAddress`), optionally followed by transforms `.basename()`,
// `.segment(N)` (N may be negative) or `.len()` (elements of a list or map, characters of a
// string), and an optional `:label=HEADING`. Cells render strings as
// is, booleans as True/False, lists joined by ";" and maps as "k=v;k2=v2"; a missing field is
// empty. ParseFormat/ParseColumns return INVALID_ARGUMENT naming the bad part. Stateless.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace tpuemu::cli {

struct Column {
  struct Transform {
    enum Kind { kBasename, kSegment, kLen } kind = kBasename;
    int segment = 0;
  };
  std::string path;  // "a.b[0].c"
  std::vector<Transform> transforms;
  std::string label;  // heading; derived from the path when not given
};

struct OutputFormat {
  enum Kind { kDefault, kJson, kYaml, kTable, kValue, kNone };
  Kind kind = kDefault;
  std::vector<Column> columns;  // table(...) / value(...); empty = the command's defaults
};

Result<OutputFormat> ParseFormat(const std::string& text);  // "" -> kDefault
Result<std::vector<Column>> ParseColumns(const std::string& text);

// The value at a dotted path with [N] indexes; nullptr when absent.
nlohmann::json Lookup(const nlohmann::json& item, const std::string& path);
// One cell of a table/value row (projection applied).
std::string Cell(const nlohmann::json& item, const Column& column);

std::string ToYaml(const nlohmann::json& value);

// Renders a list (`items` is an array): kDefault means table with `default_columns`.
std::string RenderList(const OutputFormat& format, const nlohmann::json& items,
                       const std::vector<Column>& default_columns);
// Renders one resource: kDefault means yaml.
std::string RenderOne(const OutputFormat& format, const nlohmann::json& item,
                      const std::vector<Column>& default_columns);

}  // namespace tpuemu::cli
