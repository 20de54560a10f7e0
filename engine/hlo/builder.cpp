#include "engine/hlo/builder.h"

#include "engine/hlo/verifier.h"

namespace tpuemu::engine::hlo {

ModuleBuilder::ModuleBuilder(std::string name) {
  module_.name = std::move(name);
  entry_.name = "main";
  entry_.is_entry = true;
}

Result<int> ModuleBuilder::Add(Instruction inst) {
  for (int o : inst.operands) {
    if (o < 0 || o >= size()) {
      return Status::InvalidArgument(inst.Describe() + ": operand " + std::to_string(o) +
                                     " is not an instruction added before it");
    }
  }
  Computation& c = current();
  TPUEMU_RETURN_IF_ERROR(CheckInstruction(module_, c.instructions, inst));
  const int position = size();
  if (inst.opcode == Opcode::kParameter) {
    const auto n = static_cast<size_t>(inst.index);
    if (inst.index < 0 || (n < c.parameters.size() && c.parameters[n] >= 0)) {
      return Status::InvalidArgument(inst.Describe() + ": parameter number " +
                                     std::to_string(inst.index) + " is taken or negative");
    }
    if (n >= c.parameters.size()) c.parameters.resize(n + 1, -1);
    c.parameters[n] = position;
  }
  c.instructions.push_back(std::move(inst));
  return position;
}

void ModuleBuilder::BeginComputation(std::string name) {
  Computation c;
  c.name = std::move(name);
  open_.push_back(std::move(c));
}

Result<int> ModuleBuilder::EndComputation(int root) {
  if (open_.empty()) return Status::InvalidArgument("EndComputation without BeginComputation");
  Computation c = std::move(open_.back());
  open_.pop_back();
  if (root < 0 || root >= static_cast<int>(c.instructions.size())) {
    return Status::InvalidArgument("computation " + c.name + ": root " + std::to_string(root) +
                                   " is not one of its instructions");
  }
  for (size_t n = 0; n < c.parameters.size(); ++n) {
    if (c.parameters[n] < 0) {
      return Status::InvalidArgument("computation " + c.name + " has no parameter " +
                                     std::to_string(n));
    }
  }
  c.root = root;
  const int position = static_cast<int>(module_.computations.size());
  module_.computations.push_back(std::move(c));
  return position;
}

int ModuleBuilder::Reducer(bool max, PrimitiveType type) {
  const auto key = std::make_pair(max, type);
  if (auto it = reducers_.find(key); it != reducers_.end()) return it->second;
  Computation c;
  c.name = std::string(max ? "max." : "add.") + std::string(PrimitiveTypeName(type));
  for (int k = 0; k < 2; ++k) {
    Instruction p;
    p.name = k == 0 ? "lhs" : "rhs";
    p.opcode = Opcode::kParameter;
    p.index = k;
    p.shape = Shape::Array(type, {});
    c.parameters.push_back(k);
    c.instructions.push_back(std::move(p));
  }
  Instruction root;
  root.opcode = max ? Opcode::kMaximum : Opcode::kAdd;
  root.name = std::string(OpcodeName(root.opcode));
  root.shape = Shape::Array(type, {});
  root.operands = {0, 1};
  c.instructions.push_back(std::move(root));
  c.root = 2;
  const int position = static_cast<int>(module_.computations.size());
  module_.computations.push_back(std::move(c));
  reducers_.emplace(key, position);
  return position;
}

Result<Module> ModuleBuilder::Finish(const std::vector<int>& outputs, std::string root_name) {
  if (!open_.empty())
    return Status::InvalidArgument("computation " + open_.back().name + " is open");
  Instruction root;
  root.name = std::move(root_name);
  root.opcode = Opcode::kTuple;
  root.operands = outputs;
  Result<int> position = Add(std::move(root));
  if (!position.ok()) return position.status();
  return FinishWithRoot(*position);
}

Result<Module> ModuleBuilder::FinishWithRoot(int root) {
  if (!open_.empty())
    return Status::InvalidArgument("computation " + open_.back().name + " is open");
  for (size_t n = 0; n < entry_.parameters.size(); ++n) {
    if (entry_.parameters[n] < 0) {
      return Status::InvalidArgument("the entry has no parameter " + std::to_string(n));
    }
  }
  if (root < 0 || root >= size()) {
    return Status::InvalidArgument("the entry's root " + std::to_string(root) +
                                   " is not one of its instructions");
  }
  Module module = std::move(module_);
  entry_.root = root;
  module.entry = static_cast<int>(module.computations.size());
  for (const Computation& c : module.computations) {
    module.instruction_count += static_cast<int64_t>(c.instructions.size());
  }
  module.instruction_count += static_cast<int64_t>(entry_.instructions.size());
  module.computations.push_back(std::move(entry_));
  TPUEMU_RETURN_IF_ERROR(Verify(module));
  return module;
}

}  // namespace tpuemu::engine::hlo
