// NumPy .npy files (format versions 1.0, 2.0 and 3.0: the magic "\x93NUMPY", a header dict
// {'descr': ..., 'fortran_order': ..., 'shape': (...)}, then the raw little-endian data) as the
// way to feed HLO parameters and save results (docs/hlo.md, "Parameters").
//
// ReadNpy accepts C-order arrays whose descr is one of |b1 |i1 <i2 <i4 <i8 |u1 <u2 <u4 <u8
// <f2 <f4 <f8, and <V2 / |V2 (ml_dtypes.bfloat16's raw bits); a one-byte type may say '|', '<'
// or '='. It converts to the `want` element type: same kind required (a float array for a
// float parameter, rounded to nearest even; an integer or bool array for an integer/pred
// parameter, every value in range; V2 only for bf16). Errors: INVALID_ARGUMENT naming `what`
// and the problem (bad magic, big-endian or Fortran-order data, dtype, shape or size mismatch).
// WriteNpy writes f16/f32 as <f2/<f4, bf16 as <f4 (NumPy has no bf16; the values are exact),
// integers and pred in their own type. Pure functions.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "engine/hlo/array.h"

namespace tpuemu::engine::hlo {

Result<Array> ReadNpy(std::string_view bytes, const Shape& want, const std::string& what);
std::string WriteNpy(const Array& array);

}  // namespace tpuemu::engine::hlo
