#include "engine/stablehlo/lower.h"

#include <algorithm>

#include "engine/stablehlo/lower_internal.h"
#include "engine/stablehlo/sharding.h"

namespace tpuemu::engine::stablehlo {

Result<Lowered> Lower(const ModuleAst& ast, const LowerOptions& options) {
  internal::Lowerer lowerer(ast, options);
  return lowerer.Run();
}

namespace internal {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using hlo::Shape;

bool IsReturn(const Op& op) {
  return op.name == "func.return" || op.name == "return" || op.name == "stablehlo.return" ||
         op.name == "mhlo.return";
}

void AddFree(const Region& region, std::set<std::string>& defined, std::vector<std::string>& free,
             std::set<std::string>& seen) {
  for (const BlockArg& a : region.args) defined.insert(a.name);
  for (const Op& op : region.ops) {
    for (const ValueRef& r : op.operands) {
      if (!defined.count(r.key) && seen.insert(r.key).second) free.push_back(r.key);
    }
    for (const Region& nested : op.regions) {
      std::set<std::string> inner = defined;
      AddFree(nested, inner, free, seen);
    }
    for (const std::string& r : op.results) defined.insert(r);
  }
}

}  // namespace

std::vector<std::string> FreeValues(const Region& region) {
  std::set<std::string> defined, seen;
  std::vector<std::string> free;
  AddFree(region, defined, free, seen);
  return free;
}

Lowerer::Lowerer(const ModuleAst& ast, const LowerOptions& options)
    : ast_(ast), options_(options), builder_(ast.name.empty() ? "stablehlo" : ast.name) {}

Status Lowerer::Error(const Op& op, const std::string& message) const {
  return Status::InvalidArgument("StableHLO line " + std::to_string(op.line) + ", column " +
                                 std::to_string(op.column) + ": " + op.name + ": " + message);
}

Status Lowerer::Unsupported(const Op& op, const std::string& why) const {
  return Error(op, "op " + op.name + " is not supported" + (why.empty() ? "" : " (" + why + ")"));
}

std::string Lowerer::NextName(std::string_view base) {
  return std::string(base) + "." + std::to_string(++counter_);
}

Instruction Lowerer::Make(Opcode opcode, std::vector<int> operands, Shape shape) const {
  Instruction inst;
  inst.opcode = opcode;
  inst.operands = std::move(operands);
  inst.shape = std::move(shape);
  return inst;
}

Result<int> Lowerer::Emit(Instruction inst, const Op& op) {
  if (inst.name.empty()) inst.name = NextName(hlo::OpcodeName(inst.opcode));
  inst.line = op.line;
  inst.column = op.column;
  if (++instructions_ > options_.limits.max_instructions) {
    return Status::InvalidArgument("the module lowers to more than max_instructions = " +
                                   std::to_string(options_.limits.max_instructions) +
                                   " HLO instructions");
  }
  Result<int> position = builder_.Add(std::move(inst));
  if (!position.ok()) return Error(op, position.status().message());
  return position;
}

Result<int> Lowerer::Constant(double value, hlo::PrimitiveType type, const Op& op) {
  hlo::Array a = hlo::Array::Zeros(type, {});
  a.SetDouble(0, value);
  Instruction inst = Make(Opcode::kConstant, {}, Shape::Array(type, {}));
  inst.literal = std::make_shared<const hlo::Value>(hlo::Value::Of(std::move(a)));
  return Emit(std::move(inst), op);
}

Result<int> Lowerer::Broadcast(int operand, const Shape& to, const Op& op) {
  const Shape& from = ShapeOf(operand);
  if (from.dims == to.dims) return operand;
  Instruction inst = Make(Opcode::kBroadcast, {operand}, Shape::Array(from.type, to.dims));
  inst.has_dimensions = true;
  // Trailing dimensions line up (numpy's rule, as chlo's broadcasting ops use it).
  for (int k = 0; k < from.rank(); ++k) inst.dimensions.push_back(to.rank() - from.rank() + k);
  return Emit(std::move(inst), op);
}

Result<std::vector<int>> Lowerer::Unpack(int position, size_t n, bool packed, const Op& op) {
  if (!packed) return std::vector<int>{position};
  std::vector<int> out;
  for (size_t k = 0; k < n; ++k) {
    Instruction gte = Make(Opcode::kGetTupleElement, {position}, ShapeOf(position).tuple.at(k));
    gte.index = static_cast<int64_t>(k);
    Result<int> p = Emit(std::move(gte), op);
    if (!p.ok()) return p.status();
    out.push_back(*p);
  }
  return out;
}

Result<int> Lowerer::Pack(const std::vector<int>& values, const Op& op) {
  if (values.size() == 1) return values[0];
  std::vector<Shape> shapes;
  for (int v : values) shapes.push_back(ShapeOf(v));
  return Emit(Make(Opcode::kTuple, values, Shape::Tuple(std::move(shapes))), op);
}

Result<Lowered> Lowerer::Run() {
  const Func* entry = ast_.FindFunc("main");
  if (entry == nullptr) {
    for (const Func& f : ast_.funcs) {
      if (f.is_public) {
        if (entry != nullptr) {
          return Status::InvalidArgument(
              "the module has several public functions and none is @main: which is the entry?");
        }
        entry = &f;
      }
    }
  }
  if (entry == nullptr) return Status::InvalidArgument("the module has no public function");
  int64_t partitions = 1, replicas = 1;
  for (const auto& [k, v] : ast_.attrs) {
    if (k == "mhlo.num_partitions" && v.kind == Attr::Kind::kInt) partitions = v.i;
    if (k == "mhlo.num_replicas" && v.kind == Attr::Kind::kInt) replicas = v.i;
  }
  if (partitions < 1 || replicas < 1) {
    return Status::InvalidArgument("mhlo.num_partitions and mhlo.num_replicas must be at least 1");
  }
  Op at;
  at.name = "func.func @" + entry->name;
  at.line = entry->line;
  at.column = entry->column;
  in_progress_.insert(entry->name);
  Scope scope;
  for (size_t i = 0; i < entry->args.size(); ++i) {
    const FuncArg& arg = entry->args[i];
    for (const auto& [k, v] : arg.attrs) {
      if (k != "mhlo.sharding" || v.kind != Attr::Kind::kString) continue;
      Status ok = CheckSharding(v.text, arg.type, partitions * replicas);
      if (!ok.ok()) return Error(at, "argument %" + arg.name + ": " + ok.message());
    }
    Instruction p = Make(Opcode::kParameter, {}, arg.type);
    p.index = static_cast<int64_t>(i);
    p.name = NextName("Arg_" + std::to_string(i));
    Result<int> pos = Emit(std::move(p), at);
    if (!pos.ok()) return pos.status();
    scope[arg.name] = *pos;
  }
  std::vector<int> returned;
  TPUEMU_RETURN_IF_ERROR(LowerOps(entry->body, scope, &returned, options_.checks_as_outputs));
  if (returned.size() != entry->result_types.size()) {
    return Error(at, "returns " + std::to_string(returned.size()) + " values, its type says " +
                         std::to_string(entry->result_types.size()));
  }
  for (size_t k = 0; k < returned.size(); ++k) {
    if (!hlo::Compatible(ShapeOf(returned[k]), entry->result_types[k])) {
      return Error(at, "result " + std::to_string(k) + " is " + ShapeOf(returned[k]).ToString() +
                           ", its type says " + entry->result_types[k].ToString());
    }
  }
  Lowered out;
  out.results = static_cast<int>(returned.size());
  std::vector<int> outputs = returned;
  outputs.insert(outputs.end(), check_outputs_.begin(), check_outputs_.end());
  Result<hlo::Module> module =
      outputs.size() == 1 ? builder_.FinishWithRoot(outputs[0]) : builder_.Finish(outputs);
  if (!module.ok()) return module.status();
  module->num_partitions = partitions;
  module->replica_count = replicas;
  out.module = std::move(module).value();
  out.checks = std::move(checks_);
  return out;
}

Status Lowerer::LowerOps(const Region& region, Scope& scope, std::vector<int>* returned,
                         bool entry_checks) {
  for (size_t k = 0; k < region.ops.size(); ++k) {
    const Op& op = region.ops[k];
    if (IsReturn(op)) {
      if (k + 1 != region.ops.size()) return Error(op, "a return must end its region");
      for (const ValueRef& r : op.operands) {
        auto it = scope.find(r.key);
        if (it == scope.end()) return Error(op, "use of undefined value %" + r.key);
        returned->push_back(it->second);
      }
      return Status::Ok();
    }
    TPUEMU_RETURN_IF_ERROR(LowerOp(op, scope, entry_checks));
  }
  if (!region.ops.empty() || returned->empty()) {
    // A region must end with a return; an empty function body returns nothing.
    if (!region.ops.empty())
      return Error(region.ops.back(), "the region does not end with a return");
  }
  return Status::Ok();
}

Status Lowerer::LowerOp(const Op& op, Scope& scope, bool entry_checks) {
  std::vector<int> operands;
  for (const ValueRef& r : op.operands) {
    auto it = scope.find(r.key);
    if (it == scope.end()) return Error(op, "use of undefined value %" + r.key);
    operands.push_back(it->second);
  }
  std::string check;
  if (op.name.rfind("check.", 0) == 0) check = op.name.substr(6);
  if (op.name == "stablehlo.custom_call") {
    const std::string target = WordOf(op, "call_target_name");
    if (target.rfind("check.", 0) == 0) check = target.substr(6);
  }
  Result<std::vector<int>> results = std::vector<int>{};
  if (!check.empty()) {
    if (entry_checks && !operands.empty()) {
      Check c;
      c.kind =
          check.rfind("expect_", 0) == 0 ? check.substr(7) : check;  // check.eq, check.expect_eq
      c.line = op.line;
      c.tolerance = 1e-4;
      if (const Attr* t = op.Find("tolerance")) c.tolerance = t->f;
      c.max_ulp_difference = IntOf(op, "max_ulp_difference", 0);
      int expected = -1;
      if (operands.size() >= 2) {
        expected = operands[1];
      } else if (const Attr* v = op.Find("value"); v != nullptr && v->dense) {
        const Shape& type = v->type.IsArray() ? v->type : ShapeOf(operands[0]);
        Result<std::shared_ptr<const hlo::Value>> value = DenseValue(*v->dense, type);
        if (!value.ok()) return Error(op, value.status().message());
        Instruction inst = Make(Opcode::kConstant, {}, type);
        inst.literal = std::move(*value);
        Result<int> p = Emit(std::move(inst), op);
        if (!p.ok()) return p.status();
        expected = *p;
      }
      if (expected >= 0) {
        checks_.push_back(c);
        check_outputs_.push_back(operands[0]);
        check_outputs_.push_back(expected);
      }
    }
    // Ignored: any result it has is `true`.
    std::vector<int> out;
    for (const Shape& t : op.result_types) {
      Result<int> p = Constant(1, t.IsArray() ? t.type : hlo::PrimitiveType::kPred, op);
      if (!p.ok()) return p.status();
      out.push_back(*p);
    }
    results = std::move(out);
  } else if (op.name == "func.call" || op.name == "call") {
    results = LowerCall(op, WordOf(op, "callee"), operands);
  } else if (op.name == "stablehlo.composite") {
    const Attr* d = op.Find("decomposition");
    if (d == nullptr || d->kind != Attr::Kind::kSymbol)
      return Error(op, "needs a decomposition = @function");
    results = LowerCall(op, d->text, operands);
  } else if (op.name == "stablehlo.while") {
    results = LowerWhile(op, operands, scope);
  } else if (op.name == "stablehlo.case" || op.name == "stablehlo.if") {
    results = LowerCase(op, operands, scope);
  } else if (op.name.rfind("chlo.", 0) == 0) {
    results = LowerChlo(op, operands);
  } else if (op.name.rfind("stablehlo.", 0) == 0) {
    results = LowerStablehlo(op, operands, scope);
  } else {
    return Unsupported(op, "not a StableHLO, chlo, func or check op");
  }
  if (!results.ok()) return results.status();
  if (results->size() != op.results.size()) {
    return Error(op, "lowered to " + std::to_string(results->size()) + " values for " +
                         std::to_string(op.results.size()) + " results");
  }
  for (size_t k = 0; k < results->size(); ++k) {
    const int p = (*results)[k];
    if (k < op.result_types.size() && !hlo::Compatible(ShapeOf(p), op.result_types[k])) {
      return Error(op, "result " + std::to_string(k) + " is " + ShapeOf(p).ToString() +
                           " but the op's type says " + op.result_types[k].ToString());
    }
    scope[op.results[k]] = p;
  }
  return Status::Ok();
}

Result<int> Lowerer::CalleeComputation(const std::string& name, const Op& at) {
  if (auto it = funcs_.find(name); it != funcs_.end()) return it->second;
  if (in_progress_.count(name))
    return Error(at, "@" + name + " calls itself (recursion is not HLO)");
  const Func* f = ast_.FindFunc(name);
  if (f == nullptr) return Error(at, "calls @" + name + ", which the module does not define");
  in_progress_.insert(name);
  builder_.BeginComputation(NextName(name));
  Scope scope;
  for (size_t i = 0; i < f->args.size(); ++i) {
    Instruction p = Make(Opcode::kParameter, {}, f->args[i].type);
    p.index = static_cast<int64_t>(i);
    p.name = NextName("Arg_" + std::to_string(i));
    Result<int> pos = Emit(std::move(p), at);
    if (!pos.ok()) return pos.status();
    scope[f->args[i].name] = *pos;
  }
  std::vector<int> returned;
  TPUEMU_RETURN_IF_ERROR(LowerOps(f->body, scope, &returned, false));
  if (returned.size() != f->result_types.size()) {
    return Error(at, "@" + name + " returns " + std::to_string(returned.size()) +
                         " values, its type says " + std::to_string(f->result_types.size()));
  }
  if (returned.empty()) {
    Result<int> t = Emit(Make(Opcode::kTuple, {}, Shape::Tuple({})), at);
    if (!t.ok()) return t.status();
    returned.push_back(*t);
  }
  Result<int> root = Pack(returned, at);
  if (!root.ok()) return root.status();
  Result<int> comp = builder_.EndComputation(*root);
  if (!comp.ok()) return Error(at, comp.status().message());
  in_progress_.erase(name);
  funcs_[name] = *comp;
  return *comp;
}

Result<std::vector<int>> Lowerer::LowerCall(const Op& op, const std::string& callee,
                                            const std::vector<int>& operands) {
  Result<int> comp = CalleeComputation(callee, op);
  if (!comp.ok()) return comp.status();
  const size_t n = op.result_types.size();
  Instruction call =
      Make(Opcode::kCall, operands, n == 1 ? op.result_types[0] : Shape::Tuple(op.result_types));
  call.called = {*comp};
  Result<int> p = Emit(std::move(call), op);
  if (!p.ok()) return p.status();
  if (n == 0) return std::vector<int>{};
  return Unpack(*p, n, n != 1, op);
}

Result<int> Lowerer::FlatRegion(const Region& region, const Op& op, const std::string& role) {
  const std::vector<std::string> free = FreeValues(region);
  if (!free.empty()) {
    return Error(op, "its " + role + " region uses %" + free[0] +
                         " from outside it; only while, case and if regions may");
  }
  builder_.BeginComputation(NextName(role));
  Scope scope;
  for (size_t i = 0; i < region.args.size(); ++i) {
    Instruction p = Make(Opcode::kParameter, {}, region.args[i].type);
    p.index = static_cast<int64_t>(i);
    Result<int> pos = Emit(std::move(p), op);
    if (!pos.ok()) return pos.status();
    scope[region.args[i].name] = *pos;
  }
  std::vector<int> returned;
  TPUEMU_RETURN_IF_ERROR(LowerOps(region, scope, &returned, false));
  if (returned.empty()) return Error(op, "its " + role + " region returns nothing");
  Result<int> root = Pack(returned, op);
  if (!root.ok()) return root.status();
  Result<int> comp = builder_.EndComputation(*root);
  if (!comp.ok()) return Error(op, comp.status().message());
  return comp;
}

Result<int> Lowerer::TupleRegion(const Region& region, const std::vector<Shape>& arg_types,
                                 const std::vector<std::string>& captures,
                                 const std::vector<Shape>& capture_types, bool pass_captures,
                                 const std::string& role) {
  static const Op kNone;
  const Op& op = region.ops.empty() ? kNone : region.ops.front();
  if (region.args.size() != arg_types.size()) {
    return Error(op, "the " + role + " region has " + std::to_string(region.args.size()) +
                         " arguments, expected " + std::to_string(arg_types.size()));
  }
  builder_.BeginComputation(NextName(role));
  std::vector<Shape> all = arg_types;
  all.insert(all.end(), capture_types.begin(), capture_types.end());
  Instruction p = Make(Opcode::kParameter, {}, Shape::Tuple(all));
  p.index = 0;
  Result<int> param = Emit(std::move(p), op);
  if (!param.ok()) return param.status();
  Result<std::vector<int>> elements = Unpack(*param, all.size(), true, op);
  if (!elements.ok()) return elements.status();
  Scope scope;
  for (size_t k = 0; k < region.args.size(); ++k) scope[region.args[k].name] = (*elements)[k];
  for (size_t k = 0; k < captures.size(); ++k) {
    scope[captures[k]] = (*elements)[arg_types.size() + k];
  }
  std::vector<int> returned;
  TPUEMU_RETURN_IF_ERROR(LowerOps(region, scope, &returned, false));
  Result<int> root = 0;
  if (pass_captures) {
    std::vector<int> next = returned;
    for (size_t k = 0; k < captures.size(); ++k) next.push_back((*elements)[arg_types.size() + k]);
    std::vector<Shape> shapes;
    for (int v : next) shapes.push_back(ShapeOf(v));
    root = Emit(Make(Opcode::kTuple, next, Shape::Tuple(shapes)), op);
  } else if (returned.empty()) {
    root = Emit(Make(Opcode::kTuple, {}, Shape::Tuple({})), op);
  } else {
    root = Pack(returned, op);
  }
  if (!root.ok()) return root.status();
  Result<int> comp = builder_.EndComputation(*root);
  if (!comp.ok()) return Error(op, comp.status().message());
  return comp;
}

Result<std::vector<int>> Lowerer::LowerWhile(const Op& op, const std::vector<int>& operands,
                                             Scope& scope) {
  if (op.regions.size() != 2) return Error(op, "needs a cond and a body region");
  std::vector<std::string> captures;
  for (const Region& r : op.regions) {
    for (const std::string& v : FreeValues(r)) {
      if (std::find(captures.begin(), captures.end(), v) == captures.end()) captures.push_back(v);
    }
  }
  std::vector<int> init = operands;
  std::vector<Shape> types, capture_types;
  for (int o : operands) types.push_back(ShapeOf(o));
  for (const std::string& c : captures) {
    auto it = scope.find(c);
    if (it == scope.end()) return Error(op, "use of undefined value %" + c);
    init.push_back(it->second);
    capture_types.push_back(ShapeOf(it->second));
  }
  Result<int> cond = TupleRegion(op.regions[0], types, captures, capture_types, false, "cond");
  if (!cond.ok()) return cond.status();
  Result<int> body = TupleRegion(op.regions[1], types, captures, capture_types, true, "body");
  if (!body.ok()) return body.status();
  std::vector<Shape> all = types;
  all.insert(all.end(), capture_types.begin(), capture_types.end());
  Result<int> tuple = Emit(Make(Opcode::kTuple, init, Shape::Tuple(all)), op);
  if (!tuple.ok()) return tuple.status();
  Instruction w = Make(Opcode::kWhile, {*tuple}, Shape::Tuple(all));
  w.called = {*cond, *body};
  Result<int> p = Emit(std::move(w), op);
  if (!p.ok()) return p.status();
  return Unpack(*p, operands.size(), true, op);
}

Result<std::vector<int>> Lowerer::LowerCase(const Op& op, const std::vector<int>& operands,
                                            Scope& scope) {
  if (operands.size() != 1) return Error(op, "takes one operand (the index or predicate)");
  const bool is_if = op.name == "stablehlo.if";
  if (is_if && op.regions.size() != 2) return Error(op, "needs a true and a false region");
  if (op.regions.empty()) return Error(op, "needs at least one branch");
  std::vector<std::string> captures;
  for (const Region& r : op.regions) {
    for (const std::string& v : FreeValues(r)) {
      if (std::find(captures.begin(), captures.end(), v) == captures.end()) captures.push_back(v);
    }
  }
  std::vector<int> captured;
  std::vector<Shape> capture_types;
  for (const std::string& c : captures) {
    auto it = scope.find(c);
    if (it == scope.end()) return Error(op, "use of undefined value %" + c);
    captured.push_back(it->second);
    capture_types.push_back(ShapeOf(it->second));
  }
  Result<int> arg = Emit(Make(Opcode::kTuple, captured, Shape::Tuple(capture_types)), op);
  if (!arg.ok()) return arg.status();
  std::vector<int> branches;
  for (const Region& r : op.regions) {
    Result<int> b = TupleRegion(r, {}, captures, capture_types, false, "branch");
    if (!b.ok()) return b.status();
    branches.push_back(*b);
  }
  const size_t n = op.result_types.size();
  Shape shape = n == 1 ? op.result_types[0] : Shape::Tuple(op.result_types);
  std::vector<int> ops = {operands[0]};
  for (size_t k = 0; k < branches.size(); ++k) ops.push_back(*arg);
  Instruction c = Make(Opcode::kConditional, ops, shape);
  c.called = branches;
  Result<int> p = Emit(std::move(c), op);
  if (!p.ok()) return p.status();
  if (n == 0) return std::vector<int>{};
  return Unpack(*p, n, n != 1, op);
}

}  // namespace internal
}  // namespace tpuemu::engine::stablehlo
