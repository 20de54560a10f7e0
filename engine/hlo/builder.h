// ModuleBuilder: an HLO module written instruction by instruction, each one checked and shaped by
// the verifier's rules (verifier.h, XLA's shape inference) as it is added, so that a front end
// (from_graph.h: the engine graphs every built-in and program job runs) writes its HLO with the
// one set of shape rules the parsed modules get, and learns of a mistake at the instruction that
// made it.
//
// The module has one entry computation, built by Add, and the computations its instructions
// call: the scalar ones its reduces apply (Reducer), and any other a front end writes between
// BeginComputation and EndComputation (a StableHLO function or region: engine/stablehlo/),
// all defined before it. Finish closes the entry with a ROOT tuple and returns the
// module verified, as ParseModule would; PrintModule (printer.h) gives its text. The builder is
// spent after Finish.
//
// Errors: INVALID_ARGUMENT "%name (opcode): <what is wrong>", the verifier's words; the builder
// is unchanged then. Not thread-safe; one builder per module.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "engine/hlo/module.h"

namespace tpuemu::engine::hlo {

class ModuleBuilder {
 public:
  explicit ModuleBuilder(std::string name);

  // Appends `inst` to the entry and returns its position. inst.operands are positions Add
  // returned before; inst.shape may be left unset (kInvalid) where the operands and attributes
  // determine it, and must be written where they do not (parameter, constant, iota, broadcast,
  // reshape, convert), as in the text. A parameter's number is inst.index.
  Result<int> Add(Instruction inst);
  const Instruction& at(int position) const {
    return current().instructions[static_cast<size_t>(position)];
  }
  // Names must be unique in the module; the caller picks them (and may rename one it added).
  void Rename(int position, std::string name) {
    current().instructions[static_cast<size_t>(position)].name = std::move(name);
  }
  int size() const { return static_cast<int>(current().instructions.size()); }

  // Opens a computation named `name` that Add, at, Rename and size then work on, until
  // EndComputation closes it with `root` as its ROOT and returns its position in
  // Module::computations (for Instruction::called). Computations nest: a computation opened
  // while another is open is closed first and defined before it. Errors: INVALID_ARGUMENT when
  // none is open, `root` is out of range or a parameter number is missing.
  void BeginComputation(std::string name);
  Result<int> EndComputation(int root);

  // The computation "<add|max>.<type>" taking two `type` scalars and returning their sum or
  // maximum: a reduce's to_apply, made once per kind and type. Its position in
  // Module::computations, for Instruction::called.
  int Reducer(bool max, PrimitiveType type);

  // Appends ROOT tuple(outputs) named `root_name` and returns the verified module: the reducers,
  // then the entry, named "main".
  Result<Module> Finish(const std::vector<int>& outputs, std::string root_name = "tuple");
  // The same with the entry's ROOT `root` itself (an array result needs no tuple).
  Result<Module> FinishWithRoot(int root);

 private:
  Computation& current() { return open_.empty() ? entry_ : open_.back(); }
  const Computation& current() const { return open_.empty() ? entry_ : open_.back(); }

  Module module_;  // the reducers so far; the entry joins them in Finish
  Computation entry_;
  std::vector<Computation> open_;  // BeginComputation's, innermost last
  std::map<std::pair<bool, PrimitiveType>, int> reducers_;
};

}  // namespace tpuemu::engine::hlo
