#include "service/common/validation.h"

#include <string>

namespace tpuemu::service {
namespace {

bool IsLower(unsigned char c) { return c >= 'a' && c <= 'z'; }
bool IsDigit(unsigned char c) { return c >= '0' && c <= '9'; }
// Non-ASCII UTF-8 bytes: \p{Ll}/\p{Lo} letters are allowed; we do not reject them.
bool IsUtf8(unsigned char c) { return c >= 0x80; }

// Counts UTF-8 code points (the 63-character limits are in characters).
std::size_t CodePoints(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

Status LabelPartError(std::string_view field, std::string_view what, std::string_view value,
                      std::size_t index, std::string_view key) {
  return Status::InvalidArgument("resource labels are invalid: " + std::string(what) + " \"" +
                                 std::string(value) + "\" contains invalid character '" +
                                 std::string(1, value[index]) + "' at index " +
                                 std::to_string(index) + " for key \"" + std::string(key) +
                                 "\" in '" + std::string(field) + "'");
}

}  // namespace

Status ValidateNodeId(std::string_view id) {
  bool ok = !id.empty() && id.size() <= 63 && IsLower(id.front()) &&
            (IsLower(id.back()) || IsDigit(id.back()));
  for (unsigned char c : id) ok = ok && (IsLower(c) || IsDigit(c) || c == '-');
  if (ok) return Status::Ok();
  return Status::InvalidArgument(
      "Invalid value for field 'nodeId': '" + std::string(id) +
      "'. Must be 1-63 characters, start with a lowercase letter, contain only lowercase letters, "
      "digits and '-', and not end with '-' (^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$).");
}

Status ValidateLabels(const nlohmann::json& labels, std::string_view field) {
  if (labels.is_null()) return Status::Ok();
  if (!labels.is_object()) {
    return Status::InvalidArgument("Invalid value at '" + std::string(field) + "': expected a map");
  }
  if (labels.size() > 64) {
    return Status::InvalidArgument(
        "resource labels are invalid: at most 64 labels are allowed, got " +
        std::to_string(labels.size()));
  }
  for (const auto& [key, value] : labels.items()) {
    if (!value.is_string()) {
      return Status::InvalidArgument("Invalid value at '" + std::string(field) + "[" + key +
                                     "]' (TYPE_STRING): " + value.dump());
    }
    const std::string& v = value.get_ref<const std::string&>();
    if (key.empty() || CodePoints(key) > 63 || key.size() >= 128) {
      return Status::InvalidArgument("resource labels are invalid: key \"" + key +
                                     "\" must be 1-63 characters");
    }
    if (CodePoints(v) > 63 || v.size() >= 128) {
      return Status::InvalidArgument("resource labels are invalid: value \"" + v + "\" for key \"" +
                                     key + "\" must be at most 63 characters");
    }
    unsigned char first = static_cast<unsigned char>(key[0]);
    if (!IsLower(first) && !IsUtf8(first)) {
      return Status::InvalidArgument("resource labels are invalid: key \"" + key +
                                     "\" must start with a lowercase letter");
    }
    for (std::size_t i = 0; i < key.size(); ++i) {
      unsigned char c = key[i];
      if (!(IsLower(c) || IsDigit(c) || c == '_' || c == '-' || IsUtf8(c))) {
        return LabelPartError(field, "key", key, i, key);
      }
    }
    for (std::size_t i = 0; i < v.size(); ++i) {
      unsigned char c = v[i];
      if (!(IsLower(c) || IsDigit(c) || c == '_' || c == '-' || IsUtf8(c))) {
        return LabelPartError(field, "value", v, i, key);
      }
    }
  }
  return Status::Ok();
}

Status ValidateDescription(std::string_view description) {
  if (CodePoints(description) <= 512) return Status::Ok();
  return Status::InvalidArgument(
      "Invalid value for field 'description': at most 512 characters, got " +
      std::to_string(CodePoints(description)));
}

Status ValidateProjectId(std::string_view project) {
  bool ok = !project.empty() && project.size() <= 100;
  for (unsigned char c : project) ok = ok && c > 0x20 && c != '/' && c < 0x7f;
  if (ok) return Status::Ok();
  return Status::InvalidArgument("Invalid project id '" + std::string(project) + "'");
}

}  // namespace tpuemu::service
