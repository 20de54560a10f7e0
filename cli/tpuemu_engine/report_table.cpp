#include "cli/tpuemu_engine/report_table.h"

#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <sstream>
#include <vector>

namespace tpuemu::cli {

using Report = nlohmann::ordered_json;

std::string FormatNumber(const Report& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number_float()) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", v.get<double>());
    return buf;
  }
  return v.dump();
}

// Scalars as aligned "key  value" lines; an array of objects (the per-op rows) as a column
// table after them, one row per element, columns padded to their widest cell.
std::string RenderTable(const Report& report) {
  size_t width = 0;
  for (const auto& [key, value] : report.items()) {
    if (!value.is_array()) width = std::max(width, key.size());
  }
  std::ostringstream out;
  for (const auto& [key, value] : report.items()) {
    if (value.is_array()) continue;
    out << std::left << std::setw(static_cast<int>(width) + 2) << key << FormatNumber(value)
        << "\n";
  }
  for (const auto& [key, rows] : report.items()) {
    if (!rows.is_array() || rows.empty()) continue;
    std::vector<std::string> columns;
    for (const auto& [column, cell] : rows.front().items()) columns.push_back(column);
    std::vector<std::vector<std::string>> cells{columns};
    for (const Report& row : rows) {
      std::vector<std::string> line;
      for (const std::string& column : columns) {
        line.push_back(row.contains(column) ? FormatNumber(row[column]) : "");
      }
      cells.push_back(std::move(line));
    }
    std::vector<size_t> widths(columns.size(), 0);
    for (const auto& line : cells) {
      for (size_t i = 0; i < line.size(); ++i) widths[i] = std::max(widths[i], line[i].size());
    }
    out << "\n" << key << ":\n";
    for (const auto& line : cells) {
      for (size_t i = 0; i < line.size(); ++i) {
        out << std::left << std::setw(static_cast<int>(widths[i]) + 2) << line[i];
      }
      out << "\n";
    }
  }
  return out.str();
}

}  // namespace tpuemu::cli
