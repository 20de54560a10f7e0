// The module, its functions, value names and the structured ops (tuples, while, conditional,
// call) of the StableHLO printer; printer_ops.cpp prints every other instruction.
#include "engine/stablehlo/printer.h"

#include "engine/stablehlo/printer_internal.h"

namespace tpuemu::engine::stablehlo {

Result<std::string> PrintStableHlo(const hlo::Module& module) {
  internal::Printer printer(module);
  return printer.Run();
}

namespace internal {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using hlo::Shape;

Result<std::string> TypeList(const std::vector<Shape>& shapes) {
  std::vector<std::string> types;
  for (const Shape& s : shapes) {
    Result<std::string> t = TypeText(s);
    if (!t.ok()) return t.status();
    types.push_back(*t);
  }
  return JoinText(types);
}

// The shapes `value` of shape `shape` is returned as: a tuple's elements when split, else itself.
std::vector<Shape> Returned(const Shape& shape, bool split) {
  if (split && shape.IsTuple()) return shape.tuple;
  return {shape};
}

}  // namespace

std::string JoinText(const std::vector<std::string>& items, const char* sep) {
  std::string s;
  for (size_t k = 0; k < items.size(); ++k) s += (k ? sep : "") + items[k];
  return s;
}

std::string SymbolName(const std::string& name) {
  std::string s;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '$';
    s += ok ? c : '_';
  }
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) s = "f_" + s;
  return s;
}

size_t ResultCount(const Instruction& inst) {
  return inst.shape.IsTuple() ? inst.shape.tuple.size() : 1;
}

Result<std::string> FunctionType(const std::vector<Shape>& operands,
                                 const std::vector<Shape>& results) {
  Result<std::string> in = TypeList(operands), out = TypeList(results);
  if (!in.ok()) return in.status();
  if (!out.ok()) return out.status();
  return "(" + *in + ") -> " + (results.size() == 1 ? *out : "(" + *out + ")");
}

void Printer::Line(Body& body, const std::string& text) const {
  body.out->append(static_cast<size_t>(body.indent), ' ');
  *body.out += text;
  *body.out += '\n';
}

Result<std::string> Printer::Whole(Body& body, int i) {
  PrintedValue& v = body.values[static_cast<size_t>(i)];
  if (!v.whole.empty()) return v.whole;
  const Instruction& inst = body.comp->instructions[static_cast<size_t>(i)];
  if (!inst.shape.IsTuple()) {
    return Status::Internal(inst.Describe() + ": used before the printer named it");
  }
  std::vector<std::string> parts;
  for (size_t k = 0; k < inst.shape.tuple.size(); ++k) {
    Result<std::string> p = Part(body, i, k);
    if (!p.ok()) return p.status();
    parts.push_back(*p);
  }
  Result<std::string> type = FunctionType(inst.shape.tuple, {inst.shape});
  if (!type.ok()) return type.status();
  const std::string name = Fresh();
  Line(body, name + " = \"stablehlo.tuple\"(" + JoinText(parts) + ") : " + *type);
  body.values[static_cast<size_t>(i)].whole = name;
  return name;
}

Result<std::string> Printer::Part(Body& body, int i, size_t k) {
  const Instruction& inst = body.comp->instructions[static_cast<size_t>(i)];
  if (!inst.shape.IsTuple() || k >= inst.shape.tuple.size()) {
    return Status::Internal(inst.Describe() + ": no tuple element " + std::to_string(k));
  }
  PrintedValue& v = body.values[static_cast<size_t>(i)];
  if (k < v.parts.size() && !v.parts[k].empty()) return v.parts[k];
  if (v.whole.empty()) return Status::Internal(inst.Describe() + ": used before it was named");
  Result<std::string> type = FunctionType({inst.shape}, {inst.shape.tuple[k]});
  if (!type.ok()) return type.status();
  const std::string name = Fresh();
  Line(body, name + " = \"stablehlo.get_tuple_element\"(" + v.whole +
                 ") <{index = " + std::to_string(k) + " : i32}> : " + *type);
  PrintedValue& after = body.values[static_cast<size_t>(i)];
  after.parts.resize(inst.shape.tuple.size());
  after.parts[k] = name;
  return name;
}

Result<std::vector<std::string>> Printer::Elements(Body& body, int i) {
  const Instruction& inst = body.comp->instructions[static_cast<size_t>(i)];
  std::vector<std::string> out;
  if (!inst.shape.IsTuple()) {
    Result<std::string> w = Whole(body, i);
    if (!w.ok()) return w.status();
    return std::vector<std::string>{*w};
  }
  for (size_t k = 0; k < inst.shape.tuple.size(); ++k) {
    Result<std::string> p = Part(body, i, k);
    if (!p.ok()) return p.status();
    out.push_back(*p);
  }
  return out;
}

std::string Printer::DefineResults(Body& body, int i, size_t n) {
  const Instruction& inst = body.comp->instructions[static_cast<size_t>(i)];
  PrintedValue& v = body.values[static_cast<size_t>(i)];
  const std::string name = Fresh();
  if (!inst.shape.IsTuple() || n == static_cast<size_t>(-1)) {
    v.whole = name;
    return name;
  }
  if (n == 0) return "";
  if (n == 1) {
    v.parts = {name};
    return name;
  }
  for (size_t k = 0; k < n; ++k) v.parts.push_back(name + "#" + std::to_string(k));
  return name + ":" + std::to_string(n);
}

std::string Printer::FunctionName(int comp) {
  if (auto it = functions_.find(comp); it != functions_.end()) return it->second;
  const std::string base = SymbolName(module_.computations[static_cast<size_t>(comp)].name);
  std::string name = base;
  for (int k = 1; symbols_.count(name); ++k) name = base + "_" + std::to_string(k);
  symbols_[name] = comp;
  functions_[comp] = name;
  function_queue_.push_back(comp);
  return name;
}

Result<PrintedValue> Printer::PrintBody(int comp, const std::vector<PrintedValue>& params,
                                        std::string* out, int indent) {
  const hlo::Computation& c = module_.computations[static_cast<size_t>(comp)];
  if (c.parameters.size() != params.size()) {
    return Status::InvalidArgument("computation " + c.name + " takes " +
                                   std::to_string(c.parameters.size()) + " parameters, given " +
                                   std::to_string(params.size()));
  }
  Body body;
  body.comp = &c;
  body.values.resize(c.instructions.size());
  body.out = out;
  body.indent = indent;
  for (size_t p = 0; p < params.size(); ++p) {
    body.values[static_cast<size_t>(c.parameters[p])] = params[p];
  }
  for (size_t i = 0; i < c.instructions.size(); ++i) {
    if (c.instructions[i].opcode == Opcode::kParameter) continue;
    TPUEMU_RETURN_IF_ERROR(PrintInstruction(body, static_cast<int>(i)));
  }
  return body.values[static_cast<size_t>(c.root)];
}

// Prints `comp` with `params` and a return of its root (split: a tuple's elements) by
// `return_op` ("func.return", "stablehlo.return"); the returned shapes.
namespace {
struct Returning {
  bool split = false;
  const char* op = "stablehlo.return";
};
}  // namespace

static Result<std::vector<Shape>> BodyAndReturn(Printer& p, int comp,
                                                const std::vector<PrintedValue>& params,
                                                std::string* out, int indent, Returning how) {
  Result<PrintedValue> root = p.PrintBody(comp, params, out, indent);
  if (!root.ok()) return root.status();
  const hlo::Computation& c = p.module_.computations[static_cast<size_t>(comp)];
  // A one-computation Body to name the root's elements or whole after the ops.
  Body tail;
  tail.comp = &c;
  tail.values.resize(c.instructions.size());
  tail.values[static_cast<size_t>(c.root)] = *root;
  tail.out = out;
  tail.indent = indent;
  const Shape& shape = c.instructions[static_cast<size_t>(c.root)].shape;
  std::vector<std::string> names;
  if (how.split && shape.IsTuple()) {
    Result<std::vector<std::string>> e = p.Elements(tail, c.root);
    if (!e.ok()) return e.status();
    names = *e;
  } else {
    Result<std::string> w = p.Whole(tail, c.root);
    if (!w.ok()) return w.status();
    names = {*w};
  }
  std::vector<Shape> shapes = Returned(shape, how.split);
  Result<std::string> types = TypeList(shapes);
  if (!types.ok()) return types.status();
  if (names.empty()) {
    p.Line(tail, "\"" + std::string(how.op) + "\"() : () -> ()");
  } else {
    p.Line(tail, std::string(how.op) + " " + JoinText(names) + " : " + *types);
  }
  return shapes;
}

Result<std::string> Printer::Arguments(const hlo::Computation& c,
                                       std::vector<PrintedValue>& params) {
  std::vector<std::string> args;
  for (int p : c.parameters) {
    PrintedValue v;
    v.whole = Fresh();
    Result<std::string> type = TypeText(c.instructions[static_cast<size_t>(p)].shape);
    if (!type.ok()) return type.status();
    args.push_back(v.whole + ": " + *type);
    params.push_back(std::move(v));
  }
  return JoinText(args);
}

Result<std::string> Printer::FlatRegion(int comp, int indent) {
  const hlo::Computation& c = module_.computations[static_cast<size_t>(comp)];
  std::string text;
  std::vector<PrintedValue> params;
  Result<std::string> args = Arguments(c, params);
  if (!args.ok()) return args.status();
  text.append(static_cast<size_t>(indent), ' ');
  text += "^bb0(" + *args + "):\n";
  Result<std::vector<Shape>> r =
      BodyAndReturn(*this, comp, params, &text, indent + 2, {true, "stablehlo.return"});
  if (!r.ok()) return r.status();
  return text;
}

Result<std::string> Printer::TupleRegion(int comp, const Shape& state, int indent) {
  std::string text;
  PrintedValue param;
  std::vector<std::string> args;
  for (const Shape& s : Returned(state, true)) {
    const std::string name = Fresh();
    Result<std::string> type = TypeText(s);
    if (!type.ok()) return type.status();
    args.push_back(name + ": " + *type);
    (state.IsTuple() ? param.parts.emplace_back() : param.whole) = name;
  }
  text.append(static_cast<size_t>(indent), ' ');
  text += "^bb0(" + JoinText(args) + "):\n";
  Result<std::vector<Shape>> r =
      BodyAndReturn(*this, comp, {param}, &text, indent + 2, {true, "stablehlo.return"});
  if (!r.ok()) return r.status();
  return text;
}

Result<std::string> Printer::BranchRegion(int comp, const PrintedValue& param, const Shape& shape,
                                          int indent) {
  std::string text;
  Result<std::vector<Shape>> r =
      BodyAndReturn(*this, comp, {param}, &text, indent + 2, {shape.IsTuple(), "stablehlo.return"});
  if (!r.ok()) return r.status();
  return text;
}

Status Printer::PrintInstruction(Body& body, int i) {
  const Instruction& inst = body.comp->instructions[static_cast<size_t>(i)];
  PrintedValue& v = body.values[static_cast<size_t>(i)];
  switch (inst.opcode) {
    case Opcode::kTuple: {
      std::vector<std::string> parts;
      for (int o : inst.operands) {
        Result<std::string> w = Whole(body, o);
        if (!w.ok()) return w.status();
        parts.push_back(*w);
      }
      body.values[static_cast<size_t>(i)].parts = std::move(parts);
      return Status::Ok();
    }
    case Opcode::kGetTupleElement: {
      Result<std::string> p = Part(body, inst.operands[0], static_cast<size_t>(inst.index));
      if (!p.ok()) return p.status();
      body.values[static_cast<size_t>(i)].whole = *p;
      return Status::Ok();
    }
    case Opcode::kAddDependency:
    case Opcode::kDomain:
      v = body.values[static_cast<size_t>(inst.operands[0])];
      return Status::Ok();
    case Opcode::kWhile:
      return PrintWhile(body, i);
    case Opcode::kConditional:
      return PrintConditional(body, i);
    case Opcode::kCall:
    case Opcode::kFusion:
      return PrintCall(body, i);
    case Opcode::kOptimizationBarrier: {
      Result<std::vector<std::string>> ops = Elements(body, inst.operands[0]);
      if (!ops.ok()) return ops.status();
      const std::vector<Shape> types = Returned(inst.shape, true);
      Result<std::string> type = FunctionType(types, types);
      if (!type.ok()) return type.status();
      const std::string lhs = DefineResults(body, i, types.size());
      Line(body, (lhs.empty() ? "" : lhs + " = ") + "\"stablehlo.optimization_barrier\"(" +
                     JoinText(*ops) + ") : " + *type);
      return Status::Ok();
    }
    default:
      return PrintOp(body, i);
  }
}

Status Printer::PrintWhile(Body& body, int i) {
  const Instruction& inst = body.comp->instructions[static_cast<size_t>(i)];
  if (inst.called.size() != 2) return Status::InvalidArgument(inst.Describe() + ": malformed");
  Result<std::vector<std::string>> init = Elements(body, inst.operands[0]);
  if (!init.ok()) return init.status();
  Result<std::string> cond = TupleRegion(inst.called[0], inst.shape, body.indent);
  if (!cond.ok()) return cond.status();
  Result<std::string> loop = TupleRegion(inst.called[1], inst.shape, body.indent);
  if (!loop.ok()) return loop.status();
  const std::vector<Shape> types = Returned(inst.shape, true);
  Result<std::string> type = FunctionType(types, types);
  if (!type.ok()) return type.status();
  const std::string lhs = DefineResults(body, i, types.size());
  const std::string close(static_cast<size_t>(body.indent), ' ');
  Line(body, (lhs.empty() ? "" : lhs + " = ") + "\"stablehlo.while\"(" + JoinText(*init) +
                 ") ({\n" + *cond + close + "}, {\n" + *loop + close + "}) : " + *type);
  return Status::Ok();
}

Status Printer::PrintConditional(Body& body, int i) {
  const Instruction& inst = body.comp->instructions[static_cast<size_t>(i)];
  if (inst.operands.size() != inst.called.size() + 1 || inst.called.empty()) {
    return Status::InvalidArgument(inst.Describe() + ": malformed");
  }
  const hlo::Computation& c = *body.comp;
  const Shape& index = c.instructions[static_cast<size_t>(inst.operands[0])].shape;
  const bool pred = index.type == hlo::PrimitiveType::kPred;
  Result<std::string> selector = Whole(body, inst.operands[0]);
  if (!selector.ok()) return selector.status();
  const std::string close(static_cast<size_t>(body.indent), ' ');
  std::string regions;
  for (size_t k = 0; k < inst.called.size(); ++k) {
    const int operand = inst.operands[k + 1];
    // An array operand the branch uses must be named here, outside the region.
    if (!c.instructions[static_cast<size_t>(operand)].shape.IsTuple()) {
      Result<std::string> w = Whole(body, operand);
      if (!w.ok()) return w.status();
    }
    Result<std::string> branch = BranchRegion(
        inst.called[k], body.values[static_cast<size_t>(operand)], inst.shape, body.indent);
    if (!branch.ok()) return branch.status();
    regions += (k ? "}, {\n" : "") + *branch + (k + 1 == inst.called.size() ? close : "");
  }
  const std::vector<Shape> types = Returned(inst.shape, true);
  Result<std::string> type = FunctionType({index}, types);
  if (!type.ok()) return type.status();
  const std::string lhs = DefineResults(body, i, types.size());
  Line(body, (lhs.empty() ? "" : lhs + " = ") + "\"stablehlo." + (pred ? "if" : "case") + "\"(" +
                 *selector + ") ({\n" + regions + "}) : " + *type);
  return Status::Ok();
}

Status Printer::PrintCall(Body& body, int i) {
  const Instruction& inst = body.comp->instructions[static_cast<size_t>(i)];
  if (inst.called.size() != 1) return Status::InvalidArgument(inst.Describe() + ": malformed");
  std::vector<std::string> args;
  std::vector<Shape> types;
  for (int o : inst.operands) {
    Result<std::string> w = Whole(body, o);
    if (!w.ok()) return w.status();
    args.push_back(*w);
    types.push_back(body.comp->instructions[static_cast<size_t>(o)].shape);
  }
  Result<std::string> type = FunctionType(types, {inst.shape});
  if (!type.ok()) return type.status();
  const std::string callee = FunctionName(inst.called[0]);
  const std::string lhs = DefineResults(body, i, static_cast<size_t>(-1));
  Line(body, lhs + " = func.call @" + callee + "(" + JoinText(args) + ") : " + *type);
  return Status::Ok();
}

Result<std::string> Printer::Run() {
  if (module_.entry < 0) return Status::InvalidArgument("module " + module_.name + " has no entry");
  symbols_["main"] = module_.entry;
  const hlo::Computation& entry = module_.entry_computation();
  std::string main_body;
  std::vector<PrintedValue> params;
  std::vector<std::string> args;
  for (size_t p = 0; p < entry.parameters.size(); ++p) {
    PrintedValue v;
    v.whole = "%arg" + std::to_string(p);
    Result<std::string> type =
        TypeText(entry.instructions[static_cast<size_t>(entry.parameters[p])].shape);
    if (!type.ok()) return type.status();
    args.push_back(v.whole + ": " + *type);
    params.push_back(std::move(v));
  }
  // A ROOT tuple's elements are main's results, as JAX writes them; a one-element tuple stays a
  // tuple (one result would lower to the element itself).
  const Shape& root = entry.instructions[static_cast<size_t>(entry.root)].shape;
  const bool split = root.IsTuple() && root.tuple.size() != 1;
  Result<std::vector<Shape>> results =
      BodyAndReturn(*this, module_.entry, params, &main_body, 4, {split, "return"});
  if (!results.ok()) return results.status();
  Result<std::string> result_types = TypeList(*results);
  if (!result_types.ok()) return result_types.status();
  std::string text =
      "module @" + SymbolName(module_.name.empty() ? "module" : module_.name) +
      " attributes {mhlo.num_partitions = " + std::to_string(module_.num_partitions) +
      " : i32, mhlo.num_replicas = " + std::to_string(module_.replica_count) +
      " : i32} {\n  func.func public @main(" + JoinText(args) + ")" +
      (results->empty() ? "" : " -> (" + *result_types + ")") + " {\n" + main_body + "  }\n";
  while (!function_queue_.empty()) {
    const int comp = function_queue_.front();
    function_queue_.pop_front();
    const hlo::Computation& c = module_.computations[static_cast<size_t>(comp)];
    std::vector<PrintedValue> fparams;
    Result<std::string> fargs = Arguments(c, fparams);
    if (!fargs.ok()) return fargs.status();
    std::string body;
    Result<std::vector<Shape>> r = BodyAndReturn(*this, comp, fparams, &body, 4, {false, "return"});
    if (!r.ok()) return r.status();
    Result<std::string> type = TypeText(r->at(0));
    if (!type.ok()) return type.status();
    text += "  func.func private @" + functions_[comp] + "(" + *fargs + ") -> " + *type + " {\n" +
            body + "  }\n";
  }
  return text + "}\n";
}

}  // namespace internal
}  // namespace tpuemu::engine::stablehlo
