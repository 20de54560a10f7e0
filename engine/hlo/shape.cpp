#include "engine/hlo/shape.h"

#include <limits>

namespace tpuemu::engine::hlo {

Shape Shape::Array(PrimitiveType type, std::vector<int64_t> dims) {
  Shape s;
  s.type = type;
  s.dynamic.assign(dims.size(), false);
  s.dims = std::move(dims);
  return s;
}

Shape Shape::Tuple(std::vector<Shape> elements) {
  Shape s;
  s.type = PrimitiveType::kTuple;
  s.tuple = std::move(elements);
  return s;
}

int64_t Shape::ElementCount() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

int64_t Shape::ByteSize() const {
  if (IsTuple()) {
    int64_t total = 0;
    for (const Shape& e : tuple) total += e.ByteSize();
    return total;
  }
  if (!IsArray()) return 0;
  for (int64_t d : dims) {
    if (d < 0) return 0;
  }
  return hlo::ByteSize(type, ElementCount());
}

std::vector<int64_t> Shape::Layout() const {
  if (minor_to_major.size() == dims.size()) return minor_to_major;
  std::vector<int64_t> layout(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) layout[i] = static_cast<int64_t>(dims.size() - 1 - i);
  return layout;
}

std::string Shape::ToString() const {
  if (IsTuple()) {
    std::string out = "(";
    for (size_t i = 0; i < tuple.size(); ++i) {
      if (i > 0) out += ", ";
      out += tuple[i].ToString();
    }
    return out + ")";
  }
  std::string out(PrimitiveTypeName(type));
  out += "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) out += ",";
    if (dims[i] == kUnbounded) {
      out += "?";
      continue;
    }
    if (i < dynamic.size() && dynamic[i]) out += "<=";
    out += std::to_string(dims[i]);
  }
  return out + "]";
}

bool Compatible(const Shape& a, const Shape& b) {
  if (a.type != b.type) return false;
  if (a.IsTuple()) {
    if (a.tuple.size() != b.tuple.size()) return false;
    for (size_t i = 0; i < a.tuple.size(); ++i) {
      if (!Compatible(a.tuple[i], b.tuple[i])) return false;
    }
    return true;
  }
  return a.dims == b.dims;
}

Status ValidateStatic(const Shape& shape, int64_t max_elements, const std::string& what) {
  if (shape.IsTuple()) {
    for (const Shape& e : shape.tuple)
      TPUEMU_RETURN_IF_ERROR(ValidateStatic(e, max_elements, what));
    return Status::Ok();
  }
  int64_t n = 1;
  for (int64_t d : shape.dims) {
    if (d < 0) {
      return Status::InvalidArgument(what + ": unbounded dynamic dimension in " + shape.ToString() +
                                     " (only bounded '<=N' dims are supported)");
    }
    if (d > 0 && n > std::numeric_limits<int64_t>::max() / d) {
      return Status::InvalidArgument(what + ": " + shape.ToString() + " has too many elements");
    }
    n *= d;
  }
  if (n > max_elements) {
    return Status::InvalidArgument(what + ": " + shape.ToString() + " has " + std::to_string(n) +
                                   " elements, more than the limit of " +
                                   std::to_string(max_elements));
  }
  return Status::Ok();
}

void CollectLeaves(const Shape& shape, std::vector<const Shape*>& leaves) {
  if (!shape.IsTuple()) {
    leaves.push_back(&shape);
    return;
  }
  for (const Shape& e : shape.tuple) CollectLeaves(e, leaves);
}

}  // namespace tpuemu::engine::hlo
