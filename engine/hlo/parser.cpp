#include "engine/hlo/parser.h"

#include "engine/hlo/parser_internal.h"
#include "engine/hlo/verifier.h"

namespace tpuemu::engine::hlo {
namespace internal {

Status Parser::ErrorAt(int line, int column, const std::string& message) const {
  return Status::InvalidArgument("HLO text line " + std::to_string(line) + ", column " +
                                 std::to_string(column) + ": " + message);
}

Status Parser::ErrorHere(const std::string& message) const {
  return ErrorAt(lexer_.token().line, lexer_.token().column, message);
}

std::string Parser::Found() const {
  const Token& t = lexer_.token();
  switch (t.kind) {
    case Tok::kEof:
      return "end of input";
    case Tok::kError:
      return "an invalid character or unterminated string/comment";
    case Tok::kName:
    case Tok::kIdent:
    case Tok::kAttributeName:
    case Tok::kInt:
    case Tok::kDecimal:
    case Tok::kDimLabels:
    case Tok::kDxD:
    case Tok::kPad:
      return "'" + std::string(t.text.substr(0, 40)) + (t.kind == Tok::kAttributeName ? "='" : "'");
    case Tok::kString:
      return "a string";
    default:
      return TokName(t.kind);
  }
}

Status Parser::Expected(const std::string& what) const {
  return ErrorHere("expected " + what + ", found " + Found());
}

Status Parser::Expect(Tok kind, const std::string& what) {
  if (lexer_.kind() != kind) return Expected(what);
  lexer_.Lex();
  return Status::Ok();
}

bool Parser::EatIf(Tok kind) {
  if (lexer_.kind() != kind) return false;
  lexer_.Lex();
  return true;
}

bool Parser::AtIdent(std::string_view text) const {
  return lexer_.kind() == Tok::kIdent && lexer_.token().text == text;
}

Status Parser::Enter() {
  if (++depth_ > limits_.max_nesting_depth) {
    return ErrorHere("nesting deeper than the limit max_nesting_depth = " +
                     std::to_string(limits_.max_nesting_depth));
  }
  return Status::Ok();
}

Status Parser::Int(int64_t& out, const std::string& what) {
  if (lexer_.kind() != Tok::kInt) return Expected(what);
  out = lexer_.token().int_value;
  lexer_.Lex();
  return Status::Ok();
}

Status Parser::Bool(bool& out) {
  if (AtIdent("true") || AtIdent("false")) {
    out = lexer_.token().text == "true";
    lexer_.Lex();
    return Status::Ok();
  }
  return Expected("true or false");
}

Status Parser::IntList(Tok open, Tok close, Tok sep, std::vector<int64_t>& out,
                       const std::string& what) {
  TPUEMU_RETURN_IF_ERROR(Expect(open, TokName(open) + " to start " + what));
  out.clear();
  if (EatIf(close)) return Status::Ok();
  do {
    int64_t v = 0;
    TPUEMU_RETURN_IF_ERROR(Int(v, "an integer in " + what));
    out.push_back(v);
  } while (EatIf(sep));
  return Expect(close, TokName(close) + " to end " + what);
}

Status Parser::CountInstruction() {
  if (++instructions_ > limits_.max_instructions) {
    return ErrorHere("the module has more instructions than the limit max_instructions = " +
                     std::to_string(limits_.max_instructions));
  }
  return Status::Ok();
}

Result<Module> Parser::Run() {
  lexer_.Lex();
  if (AtIdent("HloModule")) {
    TPUEMU_RETURN_IF_ERROR(ParseHeader());
  }
  TPUEMU_RETURN_IF_ERROR(ParseStackFrameTables());
  if (lexer_.kind() == Tok::kEof) return Expected("a computation");
  while (lexer_.kind() != Tok::kEof) {
    int index = -1;
    TPUEMU_RETURN_IF_ERROR(ParseComputation(/*allow_entry=*/true, &index, ""));
  }
  if (module_.entry < 0) {
    module_.entry = static_cast<int>(module_.computations.size()) - 1;
    module_.computations.back().is_entry = true;
  }
  if (module_.name.empty()) module_.name = "module_" + module_.entry_computation().name;
  module_.instruction_count = instructions_;
  return std::move(module_);
}

// 'HloModule' name (',' attribute)*
Status Parser::ParseHeader() {
  lexer_.Lex();
  if (lexer_.kind() != Tok::kName && lexer_.kind() != Tok::kIdent) {
    return Expected("the module name after HloModule");
  }
  module_.name = std::string(lexer_.token().text);
  lexer_.Lex();
  while (EatIf(Tok::kComma)) {
    if (lexer_.kind() != Tok::kAttributeName) return Expected("a module attribute (name=value)");
    const std::string_view name = lexer_.token().text;
    lexer_.Lex();
    if (name == "replica_count" || name == "num_partitions") {
      int64_t v = 0;
      TPUEMU_RETURN_IF_ERROR(Int(v, std::string(name)));
      if (v < 1) return ErrorHere(std::string(name) + " must be at least 1");
      (name == "replica_count" ? module_.replica_count : module_.num_partitions) = v;
    } else if (name == "is_scheduled") {
      TPUEMU_RETURN_IF_ERROR(Bool(module_.is_scheduled));
    } else if (!lexer_.SkipValue()) {
      return ErrorHere("unterminated value of module attribute " + std::string(name));
    }
  }
  return Status::Ok();
}

// Newer dumps list FileNames, FunctionNames, FileLocations and StackFrames between the header and
// the first computation: `N "string"` or `N {sub-attributes}` rows. They only feed stack traces.
Status Parser::ParseStackFrameTables() {
  if (!AtIdent("FileNames")) return Status::Ok();
  lexer_.Lex();
  while (true) {
    if (AtIdent("FunctionNames") || AtIdent("FileLocations") || AtIdent("StackFrames")) {
      lexer_.Lex();
      continue;
    }
    if (lexer_.kind() != Tok::kInt) return Status::Ok();
    lexer_.Lex();
    if (lexer_.kind() == Tok::kString) {
      lexer_.Lex();
    } else if (lexer_.kind() == Tok::kLbrace) {
      lexer_.Lex();
      if (lexer_.kind() != Tok::kRbrace && !lexer_.SkipValue()) {
        return ErrorHere("unterminated stack frame table row");
      }
      TPUEMU_RETURN_IF_ERROR(Expect(Tok::kRbrace, "'}' to end the stack frame table row"));
    } else {
      return Expected("a string or '{' in the stack frame tables");
    }
  }
}

// ['ENTRY'] name [param_list '->' shape] '{' instruction+ '}' (',' attribute)*
// An inline computation (to_apply={...}) has neither name nor signature.
Status Parser::ParseComputation(bool allow_entry, int* index_out, const std::string& inline_name) {
  TPUEMU_RETURN_IF_ERROR(Enter());
  Computation computation;
  computation.line = lexer_.token().line;
  if (inline_name.empty()) {
    if (allow_entry && AtIdent("ENTRY")) {
      if (module_.entry >= 0) return ErrorHere("a module has only one ENTRY computation");
      computation.is_entry = true;
      lexer_.Lex();
    }
    if (lexer_.kind() != Tok::kName && lexer_.kind() != Tok::kIdent) {
      return Expected("a computation name");
    }
    computation.name = std::string(lexer_.token().text);
    if (computation_index_.count(computation.name) > 0) {
      return ErrorHere("computation %" + computation.name + " is defined twice");
    }
    lexer_.Lex();
    if (EatIf(Tok::kLparen)) {
      if (!EatIf(Tok::kRparen)) {
        do {
          if (lexer_.kind() != Tok::kName) return Expected("a parameter 'name:' in the signature");
          lexer_.Lex();
          Shape ignored;
          TPUEMU_RETURN_IF_ERROR(ParseShape(ignored));
        } while (EatIf(Tok::kComma));
        TPUEMU_RETURN_IF_ERROR(Expect(Tok::kRparen, "')' to end the parameter list"));
      }
      TPUEMU_RETURN_IF_ERROR(Expect(Tok::kArrow, "'->' before the result shape"));
      Shape ignored;
      TPUEMU_RETURN_IF_ERROR(ParseShape(ignored));
    }
  } else {
    computation.name = inline_name;
  }
  TPUEMU_RETURN_IF_ERROR(
      Expect(Tok::kLbrace, "'{' to start the instructions of %" + computation.name));
  Scope scope{&computation, {}, -1};
  do {
    TPUEMU_RETURN_IF_ERROR(ParseInstruction(scope));
  } while (lexer_.kind() != Tok::kRbrace && lexer_.kind() != Tok::kEof);
  TPUEMU_RETURN_IF_ERROR(
      Expect(Tok::kRbrace, "'}' to end the instructions of %" + computation.name));
  // computation attributes (execution_thread="..."), top-level only
  while (inline_name.empty() && lexer_.kind() == Tok::kComma) {
    lexer_.Lex();
    if (lexer_.kind() != Tok::kAttributeName) return Expected("a computation attribute");
    lexer_.Lex();
    if (!lexer_.SkipValue()) return ErrorHere("unterminated computation attribute");
  }
  computation.root =
      scope.root >= 0 ? scope.root : static_cast<int>(computation.instructions.size()) - 1;
  for (size_t i = 0; i < computation.instructions.size(); ++i) {
    const Instruction& inst = computation.instructions[i];
    if (inst.opcode != Opcode::kParameter) continue;
    const auto n = static_cast<size_t>(inst.index);
    if (n >= computation.parameters.size()) computation.parameters.resize(n + 1, -1);
    if (computation.parameters[n] >= 0) {
      return ErrorAt(
          inst.line, inst.column,
          "parameter number " + std::to_string(n) + " appears twice in %" + computation.name);
    }
    computation.parameters[n] = static_cast<int>(i);
  }
  for (size_t n = 0; n < computation.parameters.size(); ++n) {
    if (computation.parameters[n] < 0) {
      return ErrorAt(computation.line, 1,
                     "%" + computation.name + " has no parameter(" + std::to_string(n) +
                         ") but a higher-numbered one");
    }
  }
  const bool entry = computation.is_entry;
  *index_out = static_cast<int>(module_.computations.size());
  computation_index_.emplace(computation.name, *index_out);
  module_.computations.push_back(std::move(computation));
  if (entry) module_.entry = *index_out;
  --depth_;
  return Status::Ok();
}

// ['ROOT'] name '=' [shape] opcode operands (',' attribute)*
Status Parser::ParseInstruction(Scope& scope) {
  bool is_root = false;
  if (AtIdent("ROOT")) {
    is_root = true;
    lexer_.Lex();
  }
  const Token name_token = lexer_.token();
  Instruction inst;
  if (name_token.kind == Tok::kAttributeName) {  // "name=shape ..." written without spaces
    lexer_.Lex();
  } else if (name_token.kind == Tok::kName || name_token.kind == Tok::kIdent) {
    lexer_.Lex();
    TPUEMU_RETURN_IF_ERROR(Expect(Tok::kEqual, "'=' after the instruction name"));
  } else {
    return Expected(is_root ? "an instruction name after ROOT" : "an instruction or '}'");
  }
  inst.name = std::string(name_token.text);
  inst.line = name_token.line;
  inst.column = name_token.column;
  if (scope.names.count(name_token.text) > 0) {
    return ErrorAt(
        name_token.line, name_token.column,
        "instruction %" + inst.name + " is defined twice in %" + scope.computation->name);
  }
  if (is_root && scope.root >= 0) {
    return ErrorAt(name_token.line, name_token.column,
                   "a computation has only one ROOT; %" + scope.computation->name + " has two");
  }
  TPUEMU_RETURN_IF_ERROR(ParseInstructionRhs(scope, inst, /*allow_attributes=*/true));
  const int index = static_cast<int>(scope.computation->instructions.size());
  scope.names.emplace(name_token.text, index);
  if (is_root) scope.root = index;
  scope.computation->instructions.push_back(std::move(inst));
  return Status::Ok();
}

Status Parser::ParseInstructionRhs(Scope& scope, Instruction& inst, bool allow_attributes) {
  TPUEMU_RETURN_IF_ERROR(Enter());
  TPUEMU_RETURN_IF_ERROR(CountInstruction());
  if (CanBeShape()) {
    TPUEMU_RETURN_IF_ERROR(ParseShape(inst.shape));
  }
  if (lexer_.kind() != Tok::kIdent) return Expected("an opcode");
  const std::string_view op_text = lexer_.token().text;
  if (auto op = ParseOpcode(op_text)) {
    inst.opcode = *op;
  } else {
    // "<opcode>-start/-update/-done": the async wrapper of an opcode without its own start form.
    bool found = false;
    for (const auto& [suffix, async_op] :
         {std::pair<std::string_view, Opcode>{"-start", Opcode::kAsyncStart},
          {"-update", Opcode::kAsyncUpdate},
          {"-done", Opcode::kAsyncDone}}) {
      if (op_text.size() > suffix.size() && op_text.ends_with(suffix)) {
        if (auto wrapped = ParseOpcode(op_text.substr(0, op_text.size() - suffix.size()))) {
          inst.opcode = async_op;
          inst.mutable_attrs().async_wrapped = *wrapped;
          found = true;
        }
      }
    }
    if (!found) return ErrorHere("unknown opcode '" + std::string(op_text) + "'");
  }
  if (inst.name.empty()) {
    inst.name = std::string(op_text) + ".anon." + std::to_string(++anon_);
    inst.line = lexer_.token().line;
    inst.column = lexer_.token().column;
  }
  lexer_.Lex();
  if (inst.opcode == Opcode::kParameter) {
    TPUEMU_RETURN_IF_ERROR(Expect(Tok::kLparen, "'(' before the parameter number"));
    TPUEMU_RETURN_IF_ERROR(Int(inst.index, "the parameter number"));
    if (inst.index < 0 || inst.index > limits_.max_instructions) {
      return ErrorHere("parameter number out of range");
    }
    TPUEMU_RETURN_IF_ERROR(Expect(Tok::kRparen, "')' after the parameter number"));
  } else if (inst.opcode == Opcode::kConstant) {
    TPUEMU_RETURN_IF_ERROR(Expect(Tok::kLparen, "'(' before the constant's value"));
    if (inst.shape.type == PrimitiveType::kInvalid) {
      return ErrorHere("a constant needs its shape before the opcode");
    }
    TPUEMU_RETURN_IF_ERROR(ParseLiteral(inst.shape, inst.literal));
    TPUEMU_RETURN_IF_ERROR(Expect(Tok::kRparen, "')' after the constant's value"));
  } else {
    TPUEMU_RETURN_IF_ERROR(ParseOperands(scope, inst));
  }
  if (allow_attributes) {
    TPUEMU_RETURN_IF_ERROR(ParseAttributes(inst));
  }
  if (inst.opcode == Opcode::kAsyncStart && inst.a().async_wrapped) {
    TPUEMU_RETURN_IF_ERROR(WrapAsync(scope, inst));
  }
  --depth_;
  return Status::Ok();
}

// "all-to-all-start(...)": XLA wraps the op in a computation the async-start calls; so do we,
// moving the op's attributes onto the wrapped instruction.
Status Parser::WrapAsync(Scope& scope, Instruction& inst) {
  if (!inst.shape.IsTuple() || inst.shape.tuple.size() < 2) {
    return ErrorAt(inst.line, inst.column,
                   "%" + inst.name + " must return ((operands), result, ...)");
  }
  Computation comp;
  comp.name = inst.name + ".async_wrapped";
  comp.line = inst.line;
  for (size_t i = 0; i < inst.operands.size(); ++i) {
    const Instruction& operand =
        scope.computation->instructions[static_cast<size_t>(inst.operands[i])];
    if (operand.shape.type == PrimitiveType::kInvalid) {
      return ErrorAt(inst.line, inst.column,
                     "%" + inst.name + " needs the shape of operand %" + operand.name);
    }
    Instruction p;
    p.name = comp.name + ".param." + std::to_string(i);
    p.opcode = Opcode::kParameter;
    p.index = static_cast<int64_t>(i);
    p.shape = operand.shape;
    p.line = inst.line;
    p.column = inst.column;
    comp.parameters.push_back(static_cast<int>(i));
    comp.instructions.push_back(std::move(p));
  }
  Instruction wrapped;
  wrapped.name = inst.name + ".wrapped";
  wrapped.opcode = *inst.a().async_wrapped;
  wrapped.shape = inst.shape.tuple[1];
  for (size_t i = 0; i < inst.operands.size(); ++i) wrapped.operands.push_back(static_cast<int>(i));
  wrapped.called = std::move(inst.called);
  wrapped.dimensions = std::move(inst.dimensions);
  wrapped.has_dimensions = inst.has_dimensions;
  wrapped.index = inst.index;
  wrapped.precision = inst.precision;
  wrapped.line = inst.line;
  wrapped.column = inst.column;
  wrapped.op_name = inst.op_name;
  wrapped.op_type = inst.op_type;
  wrapped.attrs = std::move(inst.attrs);
  wrapped.attrs->async_wrapped.reset();
  comp.root = static_cast<int>(comp.instructions.size());
  comp.instructions.push_back(std::move(wrapped));
  const int index = static_cast<int>(module_.computations.size());
  computation_index_.emplace(comp.name, index);
  module_.computations.push_back(std::move(comp));
  inst.called = {index};
  inst.dimensions.clear();
  inst.has_dimensions = false;
  return Status::Ok();
}

// '(' [operand (',' operand)*] ')'; operand ::= [shape] name | [shape] opcode operands (nested)
Status Parser::ParseOperands(Scope& scope, Instruction& inst) {
  TPUEMU_RETURN_IF_ERROR(Expect(Tok::kLparen, "'(' to start the operands of %" + inst.name));
  if (EatIf(Tok::kRparen)) return Status::Ok();
  do {
    Shape declared;
    if (CanBeShape()) {
      TPUEMU_RETURN_IF_ERROR(ParseShape(declared));
    }
    const Token t = lexer_.token();
    if (t.kind != Tok::kName && t.kind != Tok::kIdent) {
      return Expected("an operand name");
    }
    const Tok next = lexer_.LookAhead();
    auto it = scope.names.find(t.text);
    if (it != scope.names.end() && (next == Tok::kComma || next == Tok::kRparen)) {
      const Shape& actual = scope.computation->instructions[static_cast<size_t>(it->second)].shape;
      if (declared.type != PrimitiveType::kInvalid && actual.type != PrimitiveType::kInvalid &&
          !Compatible(declared, actual)) {
        return ErrorAt(t.line, t.column,
                       "the operand shape " + declared.ToString() + " written for %" +
                           std::string(t.text) + " is not its shape " + actual.ToString());
      }
      lexer_.Lex();
      inst.operands.push_back(it->second);
      continue;
    }
    if (t.kind == Tok::kIdent && next == Tok::kLparen && ParseOpcode(t.text)) {
      Instruction nested;  // add(f32[] multiply(%x, %y), %z): an anonymous instruction
      nested.shape = declared;
      TPUEMU_RETURN_IF_ERROR(ParseInstructionRhs(scope, nested, /*allow_attributes=*/false));
      inst.operands.push_back(static_cast<int>(scope.computation->instructions.size()));
      scope.computation->instructions.push_back(std::move(nested));
      continue;
    }
    return ErrorAt(t.line, t.column,
                   "operand %" + std::string(t.text) + " of %" + inst.name +
                       " is not defined before it in %" + scope.computation->name);
  } while (EatIf(Tok::kComma));
  return Expect(Tok::kRparen, "')' or ',' in the operands of %" + inst.name);
}

}  // namespace internal

Result<Module> Parse(std::string_view text, const Limits& limits) {
  if (static_cast<int64_t>(text.size()) > limits.max_text_bytes) {
    return Status::InvalidArgument(
        "HLO text is " + std::to_string(text.size()) +
        " bytes, above the limit max_text_bytes = " + std::to_string(limits.max_text_bytes));
  }
  internal::Parser parser(text, limits);
  return parser.Run();
}

Result<Module> ParseModule(std::string_view text, const Limits& limits) {
  Result<Module> module = Parse(text, limits);
  if (!module.ok()) return module;
  TPUEMU_RETURN_IF_ERROR(Verify(*module));
  return module;
}

}  // namespace tpuemu::engine::hlo
