// HLO shapes: an array (element type, dimensions, dynamic-dimension flags, optional layout) or a
// tuple of shapes, with the text form XLA prints ("f32[8,<=128]{1,0}", "(f32[], s32[2])").
//
// Dynamic dimensions ("<=N") keep their bound N in dims and are computed at that bound; an
// unbounded "?" dimension is kUnbounded (-1) and makes the shape unusable for evaluation and
// pricing (ValidateStatic says so). The layout (minor_to_major) only matters for bitcast, which
// reinterprets the physical buffer; tiles and memory spaces after ':' are accepted and ignored.
// Value type; thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/hlo/primitive_type.h"

namespace tpuemu::engine::hlo {

inline constexpr int64_t kUnbounded = -1;

struct Shape {
  PrimitiveType type = PrimitiveType::kInvalid;
  std::vector<int64_t> dims;
  std::vector<bool> dynamic;            // per dim: "<=N" or "?"
  std::vector<int64_t> minor_to_major;  // empty: no layout given (row-major)
  std::vector<Shape> tuple;             // type == kTuple

  static Shape Array(PrimitiveType type, std::vector<int64_t> dims);
  static Shape Tuple(std::vector<Shape> elements);

  bool IsTuple() const { return type == PrimitiveType::kTuple; }
  bool IsArray() const { return IsArrayType(type); }
  int rank() const { return static_cast<int>(dims.size()); }
  // Product of dims (1 for a scalar); arrays only, dims must be static.
  int64_t ElementCount() const;
  // HBM bytes: arrays by element type, tuples the sum of their leaves.
  int64_t ByteSize() const;
  // The layout in effect: minor_to_major, or {rank-1, ..., 0} when none was given.
  std::vector<int64_t> Layout() const;
  // "f32[8,<=128]", "(f32[], s32[2])"; no layout.
  std::string ToString() const;
};

// Same element types and dimensions (tuples element-wise); layouts and dynamic flags ignored.
bool Compatible(const Shape& a, const Shape& b);
// INVALID_ARGUMENT naming `what` when a dimension is unbounded ("?") or the element count of an
// array leaf exceeds max_elements (or overflows int64).
Status ValidateStatic(const Shape& shape, int64_t max_elements, const std::string& what);
// Leaves of a tuple tree in order (an array shape is its own single leaf).
void CollectLeaves(const Shape& shape, std::vector<const Shape*>& leaves);

}  // namespace tpuemu::engine::hlo
