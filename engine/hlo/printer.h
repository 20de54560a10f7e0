// PrintModule: a module as XLA's text (HloModule::ToString()), which ParseModule reads back into
// the same module: the header with its entry_computation_layout, the called computations before
// their callers, the ENTRY last; array shapes with their default layout ("f32[2,3]{1,0}"), each
// instruction's metadata op_name. It prints what a ModuleBuilder writes (builder.h): parameters,
// scalar constants, iota, elementwise maps, compare, select, convert, copy, broadcast, reshape,
// transpose, reverse, slice, concatenate, reduce, dot, convolution and tuple. Anything else is
// INVALID_ARGUMENT naming the instruction, never text that would read back differently.
// Pure function: thread-safe.
#pragma once

#include <string>

#include "base/status.h"
#include "engine/hlo/module.h"

namespace tpuemu::engine::hlo {

Result<std::string> PrintModule(const Module& module);

}  // namespace tpuemu::engine::hlo
