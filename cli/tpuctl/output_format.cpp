#include "cli/tpuctl/output_format.h"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace tpuemu::cli {
namespace {

using nlohmann::json;

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

// Splits on `sep` outside parentheses.
std::vector<std::string> SplitTop(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string cur;
  int depth = 0;
  for (char c : s) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == sep && depth == 0) {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  parts.push_back(cur);
  return parts;
}

// acceleratorType -> ACCELERATOR_TYPE
std::string Heading(const std::string& path) {
  std::string last =
      path.substr(path.find_last_of('.') == std::string::npos ? 0 : path.find_last_of('.') + 1);
  last = last.substr(0, last.find('['));
  std::string out;
  for (size_t i = 0; i < last.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(last[i]);
    if (std::isupper(c) && i > 0) out.push_back('_');
    out.push_back(static_cast<char>(std::toupper(c)));
  }
  return out;
}

Result<Column> ParseColumn(const std::string& text) {
  std::vector<std::string> attrs = SplitTop(text, ':');
  Column col;
  std::string expr = Trim(attrs[0]);
  if (expr.empty()) return Status::InvalidArgument("--format: empty column in \"" + text + "\"");
  for (size_t i = 1; i < attrs.size(); ++i) {
    std::string attr = Trim(attrs[i]);
    if (attr.rfind("label=", 0) == 0) {
      col.label = attr.substr(6);
    } else if (attr.rfind("sort=", 0) != 0 && attr.rfind("align=", 0) != 0 && attr != "reverse") {
      return Status::InvalidArgument("--format: unknown column attribute \"" + attr + "\"");
    }
  }
  std::vector<std::string> parts = SplitTop(expr, '.');
  std::vector<std::string> path_parts;
  for (const std::string& part : parts) {
    size_t paren = part.find('(');
    if (paren == std::string::npos) {
      if (!col.transforms.empty()) {
        return Status::InvalidArgument("--format: a field follows a transform in \"" + expr + "\"");
      }
      if (part.empty()) return Status::InvalidArgument("--format: bad field path \"" + expr + "\"");
      path_parts.push_back(part);
      continue;
    }
    std::string name = part.substr(0, paren);
    if (part.back() != ')') {
      return Status::InvalidArgument("--format: bad transform \"" + part + "\"");
    }
    std::string arg = part.substr(paren + 1, part.size() - paren - 2);
    Column::Transform t;
    if (name == "basename" && arg.empty()) {
      t.kind = Column::Transform::kBasename;
    } else if (name == "len" && arg.empty()) {
      t.kind = Column::Transform::kLen;
    } else if (name == "segment") {
      t.kind = Column::Transform::kSegment;
      try {
        size_t used = 0;
        t.segment = std::stoi(arg, &used);
        if (used != arg.size()) throw std::invalid_argument(arg);
      } catch (const std::exception&) {
        return Status::InvalidArgument("--format: segment() needs an integer, got \"" + arg + "\"");
      }
    } else {
      return Status::InvalidArgument("--format: unknown transform \"" + part +
                                     "\" (basename(), segment(N), len())");
    }
    col.transforms.push_back(t);
  }
  if (path_parts.empty()) return Status::InvalidArgument("--format: no field in \"" + expr + "\"");
  for (size_t i = 0; i < path_parts.size(); ++i) col.path += (i ? "." : "") + path_parts[i];
  if (col.label.empty()) col.label = Heading(col.path);
  return col;
}

std::string Scalar(const json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  if (v.is_array()) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) out += (i ? ";" : "") + Scalar(v[i]);
    return out;
  }
  if (v.is_object()) {
    std::string out;
    bool first = true;
    for (const auto& [k, x] : v.items()) {
      out += (first ? "" : ";") + k + "=" + Scalar(x);
      first = false;
    }
    return out;
  }
  return v.dump();
}

bool NeedsQuotes(const std::string& s) {
  if (s.empty()) return true;
  static const char* kWords[] = {"true", "false", "yes", "no", "null", "on", "off", "~",
                                 "True", "False", "Yes", "No", "Null", "ON", "OFF"};
  for (const char* w : kWords) {
    if (s == w) return true;
  }
  if (std::string("-?:,[]{}#&*!|>'\"%@` ").find(s.front()) != std::string::npos) return true;
  if (s.back() == ' ' || s.back() == ':') return true;
  if (s.find(": ") != std::string::npos || s.find(" #") != std::string::npos) return true;
  // Looks like a number (123, 1.5, 1e3, 0x1f): quote so it stays a string.
  json n = json::parse(s, nullptr, /*allow_exceptions=*/false);
  if (!n.is_discarded() && n.is_number()) return true;
  if (s.rfind("0x", 0) == 0) return true;
  if (std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); })) {
    return true;  // 0123 (octal in YAML 1.1)
  }
  // A date or timestamp (2024-01-02, 2024-01-02T03:04:05Z) would be read back as one.
  return s.size() >= 10 && std::isdigit(static_cast<unsigned char>(s[0])) && s[4] == '-' &&
         s[7] == '-';
}

std::string YamlScalar(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (!v.is_string()) return v.dump();
  const std::string s = v.get<std::string>();
  if (s.find('\n') != std::string::npos || s.find('\t') != std::string::npos) return v.dump();
  if (!NeedsQuotes(s)) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

bool IsEmptyContainer(const json& v) { return (v.is_object() || v.is_array()) && v.empty(); }

void EmitYaml(const json& v, int indent, std::ostringstream& out);

// The value after "key:" or "- ": inline when scalar or empty, else on the next lines.
void EmitValue(const json& v, int indent, bool in_list, std::ostringstream& out) {
  if (IsEmptyContainer(v)) {
    out << (v.is_object() ? " {}\n" : " []\n");
  } else if (v.is_object()) {
    out << "\n";
    EmitYaml(v, indent + 2, out);
  } else if (v.is_array()) {
    out << "\n";
    // gcloud style: a list under a key is not indented further.
    EmitYaml(v, in_list ? indent + 2 : indent, out);
  } else {
    out << " " << YamlScalar(v) << "\n";
  }
}

void EmitYaml(const json& v, int indent, std::ostringstream& out) {
  const std::string pad(indent, ' ');
  if (v.is_object()) {
    for (const auto& [k, x] : v.items()) {
      out << pad << k << ":";
      EmitValue(x, indent, false, out);
    }
  } else if (v.is_array()) {
    for (const json& x : v) {
      if (x.is_object() && !x.empty()) {
        // First key on the dash line, the rest aligned under it.
        std::ostringstream inner;
        EmitYaml(x, indent + 2, inner);
        std::string text = inner.str();
        out << pad << "-" << text.substr(indent + 1);
      } else if (x.is_array() && !x.empty()) {
        out << pad << "-";
        EmitValue(x, indent, true, out);
      } else {
        out << pad << "-";
        EmitValue(x, indent, true, out);
      }
    }
  } else {
    out << pad << YamlScalar(v) << "\n";
  }
}

std::string Table(const json& items, const std::vector<Column>& columns, bool heading) {
  std::vector<std::vector<std::string>> rows;
  if (heading) {
    std::vector<std::string> head;
    for (const Column& c : columns) head.push_back(c.label);
    rows.push_back(head);
  }
  for (const json& item : items) {
    std::vector<std::string> row;
    for (const Column& c : columns) row.push_back(Cell(item, c));
    rows.push_back(row);
  }
  std::vector<size_t> width(columns.size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      if (!heading) {
        line += (i ? "\t" : "") + row[i];
      } else {
        line += row[i];
        if (i + 1 < row.size()) line += std::string(width[i] - row[i].size() + 2, ' ');
      }
    }
    while (heading && !line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

}  // namespace

Result<std::vector<Column>> ParseColumns(const std::string& text) {
  std::vector<Column> columns;
  for (const std::string& part : SplitTop(text, ',')) {
    Result<Column> col = ParseColumn(part);
    if (!col.ok()) return col.status();
    columns.push_back(*col);
  }
  return columns;
}

Result<OutputFormat> ParseFormat(const std::string& raw) {
  std::string text = Trim(raw);
  OutputFormat f;
  if (text.empty()) return f;
  size_t paren = text.find('(');
  std::string name = text.substr(0, paren);
  std::string args;
  if (paren != std::string::npos) {
    if (text.back() != ')') {
      return Status::InvalidArgument("--format \"" + raw + "\" is missing a closing parenthesis");
    }
    args = text.substr(paren + 1, text.size() - paren - 2);
  }
  if (name == "json") {
    f.kind = OutputFormat::kJson;
  } else if (name == "yaml") {
    f.kind = OutputFormat::kYaml;
  } else if (name == "none") {
    f.kind = OutputFormat::kNone;
  } else if (name == "table" || name == "value") {
    f.kind = name == "table" ? OutputFormat::kTable : OutputFormat::kValue;
    if (name == "value" && Trim(args).empty()) {
      return Status::InvalidArgument("--format=value needs columns, e.g. value(name,state)");
    }
    if (!Trim(args).empty()) {
      Result<std::vector<Column>> cols = ParseColumns(args);
      if (!cols.ok()) return cols.status();
      f.columns = *cols;
    }
  } else {
    return Status::InvalidArgument("--format \"" + raw +
                                   "\" is not one of json, yaml, table, value(...), none");
  }
  if (paren != std::string::npos &&
      (f.kind == OutputFormat::kJson || f.kind == OutputFormat::kYaml ||
       f.kind == OutputFormat::kNone)) {
    return Status::InvalidArgument("--format " + name + " takes no columns");
  }
  return f;
}

json Lookup(const json& item, const std::string& path) {
  const json* cur = &item;
  std::stringstream ss(path);
  std::string part;
  while (std::getline(ss, part, '.')) {
    std::string key = part.substr(0, part.find('['));
    if (!key.empty()) {
      if (!cur->is_object() || !cur->contains(key)) return nullptr;
      cur = &(*cur)[key];
    }
    for (size_t open = part.find('['); open != std::string::npos; open = part.find('[', open + 1)) {
      size_t close = part.find(']', open);
      if (close == std::string::npos || !cur->is_array()) return nullptr;
      long index = std::strtol(part.substr(open + 1, close - open - 1).c_str(), nullptr, 10);
      if (index < 0) index += static_cast<long>(cur->size());
      if (index < 0 || static_cast<size_t>(index) >= cur->size()) return nullptr;
      cur = &(*cur)[static_cast<size_t>(index)];
    }
  }
  return *cur;
}

std::string Cell(const json& item, const Column& column) {
  const json found = Lookup(item, column.path);
  std::string value = Scalar(found);
  for (const Column::Transform& t : column.transforms) {
    if (t.kind == Column::Transform::kLen) {
      value = std::to_string(found.is_array() || found.is_object() ? found.size()
                             : found.is_string()                   ? value.size()
                                                                   : 0);
    } else if (t.kind == Column::Transform::kBasename) {
      size_t slash = value.find_last_of('/');
      if (slash != std::string::npos) value = value.substr(slash + 1);
    } else {
      std::vector<std::string> segs;
      std::stringstream ss(value);
      std::string seg;
      while (std::getline(ss, seg, '/')) segs.push_back(seg);
      int i = t.segment < 0 ? static_cast<int>(segs.size()) + t.segment : t.segment;
      value = i >= 0 && i < static_cast<int>(segs.size()) ? segs[static_cast<size_t>(i)] : "";
    }
  }
  return value;
}

std::string ToYaml(const json& value) {
  std::ostringstream out;
  if (IsEmptyContainer(value)) return value.is_object() ? "{}\n" : "[]\n";
  EmitYaml(value, 0, out);
  return out.str();
}

std::string RenderList(const OutputFormat& format, const json& items,
                       const std::vector<Column>& default_columns) {
  const std::vector<Column>& columns = format.columns.empty() ? default_columns : format.columns;
  switch (format.kind) {
    case OutputFormat::kNone:
      return "";
    case OutputFormat::kJson:
      return items.dump(2) + "\n";
    case OutputFormat::kYaml: {
      std::string out;
      for (size_t i = 0; i < items.size(); ++i) out += (i ? "---\n" : "") + ToYaml(items[i]);
      return out;
    }
    case OutputFormat::kValue:
      return Table(items, columns, /*heading=*/false);
    case OutputFormat::kDefault:
    case OutputFormat::kTable:
      if (items.empty()) return "";
      return Table(items, columns, /*heading=*/true);
  }
  return "";
}

std::string RenderOne(const OutputFormat& format, const json& item,
                      const std::vector<Column>& default_columns) {
  switch (format.kind) {
    case OutputFormat::kDefault:
    case OutputFormat::kYaml:
      return ToYaml(item);
    case OutputFormat::kJson:
      return item.dump(2) + "\n";
    default:
      return RenderList(format, json::array({item}), default_columns);
  }
}

}  // namespace tpuemu::cli
