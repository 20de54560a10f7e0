// Instruction attributes: the ones the evaluator and the cost model read are parsed into the
// Instruction; every other attribute (sharding, frontend_attributes, backend_config apart from
// known_trip_count, control-predecessors, ...) is skipped as raw text.
#include <algorithm>
#include <cctype>

#include "engine/hlo/parser_internal.h"

namespace tpuemu::engine::hlo::internal {
namespace {

DotPrecision AlgorithmPrecision(std::string_view alg) {
  if (alg == "dot_bf16_bf16_f32_x3" || alg == "dot_tf32_tf32_f32") return DotPrecision::kHigh;
  if (alg == "dot_bf16_bf16_f32_x6" || alg == "dot_bf16_bf16_f32_x9" ||
      alg == "dot_tf32_tf32_f32_x3") {
    return DotPrecision::kHighest;
  }
  if (alg == "dot_f32_f32_f32") return DotPrecision::kF32;
  if (alg.starts_with("dot_bf16_bf16") || alg.starts_with("dot_f16_f16")) {
    return DotPrecision::kDefault;
  }
  return DotPrecision::kUnset;  // dot_any_*, f8 and f64 algorithms: the caller's precision
}

}  // namespace

Status Parser::SkipSubValue() {
  if (lexer_.kind() != Tok::kLbrace) {
    if (lexer_.kind() == Tok::kEof || lexer_.kind() == Tok::kError) return Expected("a value");
    lexer_.Lex();
    return Status::Ok();
  }
  int depth = 0;
  do {
    if (lexer_.kind() == Tok::kLbrace) ++depth;
    if (lexer_.kind() == Tok::kRbrace) --depth;
    if (lexer_.kind() == Tok::kEof || lexer_.kind() == Tok::kError) return Expected("'}'");
    lexer_.Lex();
  } while (depth > 0);
  return Status::Ok();
}

Status Parser::ParseAttributes(Instruction& inst) {
  std::vector<std::string_view> seen;
  while (lexer_.kind() == Tok::kComma) {
    lexer_.Lex();
    if (lexer_.kind() != Tok::kAttributeName) return Expected("an attribute (name=value)");
    const std::string_view name = lexer_.token().text;
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
      return ErrorHere("attribute " + std::string(name) + " appears twice on %" + inst.name);
    }
    seen.push_back(name);
    lexer_.Lex();
    TPUEMU_RETURN_IF_ERROR(ParseAttribute(inst, name));
  }
  return Status::Ok();
}

Status Parser::ParseAttribute(Instruction& inst, std::string_view name) {
  const std::string what = std::string(name) + "=";
  auto list = [&](std::vector<int64_t>& out) {
    return IntList(Tok::kLbrace, Tok::kRbrace, Tok::kComma, out, what);
  };
  auto integer = [&](int64_t& out) { return Int(out, "an integer after " + what); };
  if (name == "metadata") return ParseMetadata(inst);
  if (name == "dimensions") {
    inst.has_dimensions = true;
    return list(inst.dimensions);
  }
  if (name == "index" || name == "iota_dimension") return integer(inst.index);
  if (name == "to_apply" || name == "calls" || name == "condition" || name == "body" ||
      name == "select" || name == "scatter" || name == "true_computation" ||
      name == "false_computation") {
    int c = -1;
    TPUEMU_RETURN_IF_ERROR(ParseComputationRef(c));
    // Fixed slots: while {condition, body}, select-and-scatter {select, scatter},
    // pred conditional {true, false}; every other opcode has one called computation.
    size_t slot = 0;
    if (name == "body" || name == "scatter" || name == "false_computation") slot = 1;
    if (inst.called.size() <= slot) inst.called.resize(slot + 1, -1);
    inst.called[slot] = c;
    return Status::Ok();
  }
  if (name == "branch_computations" || name == "called_computations") {
    return ParseComputationList(inst.called);
  }
  Attributes& a = inst.mutable_attrs();
  if (name == "slice") return ParseSliceRanges(a);
  if (name == "dynamic_slice_sizes") return list(a.dynamic_slice_sizes);
  if (name == "padding" && inst.opcode == Opcode::kPad) return ParsePadding(a.padding);
  if (name == "window") {
    a.has_window = true;
    return ParseWindow(a.window);
  }
  if (name == "dim_labels") return ParseDimLabels(a.conv);
  if (name == "feature_group_count") return integer(a.feature_group_count);
  if (name == "batch_group_count") return integer(a.batch_group_count);
  if (name == "lhs_batch_dims") return list(a.dot.lhs_batch);
  if (name == "lhs_contracting_dims") return list(a.dot.lhs_contracting);
  if (name == "rhs_batch_dims") return list(a.dot.rhs_batch);
  if (name == "rhs_contracting_dims") return list(a.dot.rhs_contracting);
  if (name == "operand_precision") return ParsePrecisionList(inst.precision);
  if (name == "algorithm") {
    if (lexer_.kind() != Tok::kIdent) return Expected("an algorithm name");
    const std::string_view alg = lexer_.token().text;
    if (inst.opcode == Opcode::kRngBitGenerator) {
      if (alg == "rng_three_fry") {
        a.rng_algorithm = RngAlgorithm::kThreeFry;
      } else if (alg == "rng_philox") {
        a.rng_algorithm = RngAlgorithm::kPhilox;
      } else if (alg == "rng_default") {
        a.rng_algorithm = RngAlgorithm::kDefault;
      } else {
        return ErrorHere("unknown rng algorithm '" + std::string(alg) + "'");
      }
    } else {
      const DotPrecision p = AlgorithmPrecision(alg);
      if (p != DotPrecision::kUnset) inst.precision = p;
    }
    lexer_.Lex();
    return Status::Ok();
  }
  if (name == "offset_dims") return list(a.gather.offset_dims);
  if (name == "collapsed_slice_dims") return list(a.gather.collapsed_slice_dims);
  if (name == "start_index_map") return list(a.gather.start_index_map);
  if (name == "operand_batching_dims") return list(a.gather.operand_batching_dims);
  if (name == "start_indices_batching_dims") return list(a.gather.start_indices_batching_dims);
  if (name == "slice_sizes" && inst.opcode == Opcode::kGather) return list(a.gather.slice_sizes);
  if (name == "index_vector_dim") {
    TPUEMU_RETURN_IF_ERROR(integer(a.gather.index_vector_dim));
    a.scatter.index_vector_dim = a.gather.index_vector_dim;
    return Status::Ok();
  }
  if (name == "update_window_dims") return list(a.scatter.update_window_dims);
  if (name == "inserted_window_dims") return list(a.scatter.inserted_window_dims);
  if (name == "scatter_dims_to_operand_dims") return list(a.scatter.scatter_dims_to_operand_dims);
  if (name == "input_batching_dims") return list(a.scatter.input_batching_dims);
  if (name == "scatter_indices_batching_dims") {
    return list(a.scatter.scatter_indices_batching_dims);
  }
  if (name == "direction") {
    static const std::pair<std::string_view, Direction> kDirs[] = {
        {"EQ", Direction::kEq}, {"NE", Direction::kNe}, {"LT", Direction::kLt},
        {"LE", Direction::kLe}, {"GT", Direction::kGt}, {"GE", Direction::kGe}};
    for (const auto& [text, dir] : kDirs) {
      if (AtIdent(text)) {
        a.direction = dir;
        a.has_direction = true;
        lexer_.Lex();
        return Status::Ok();
      }
    }
    return Expected("a comparison direction (EQ, NE, LT, LE, GT, GE)");
  }
  if (name == "type" && inst.opcode == Opcode::kCompare) {
    static const std::pair<std::string_view, CompareType> kTypes[] = {
        {"FLOAT", CompareType::kFloat},
        {"TOTALORDER", CompareType::kTotalOrder},
        {"SIGNED", CompareType::kSigned},
        {"UNSIGNED", CompareType::kUnsigned}};
    for (const auto& [text, type] : kTypes) {
      if (AtIdent(text)) {
        a.compare_type = type;
        lexer_.Lex();
        return Status::Ok();
      }
    }
    return Expected("a comparison type (FLOAT, TOTALORDER, SIGNED, UNSIGNED)");
  }
  if (name == "exponent_bits") return integer(a.exponent_bits);
  if (name == "mantissa_bits") return integer(a.mantissa_bits);
  if (name == "replica_groups") return ParseReplicaGroups(a.replica_groups);
  if (name == "channel_id") {
    int64_t id = 0;
    TPUEMU_RETURN_IF_ERROR(integer(id));
    a.channel_id = id;
    return Status::Ok();
  }
  if (name == "use_global_device_ids") return Bool(a.use_global_device_ids);
  if (name == "is_stable") return Bool(a.is_stable);
  if (name == "largest") return Bool(a.largest);
  if (name == "source_target_pairs") {
    TPUEMU_RETURN_IF_ERROR(Expect(Tok::kLbrace, "'{' to start source_target_pairs"));
    if (!EatIf(Tok::kRbrace)) {
      do {
        std::vector<int64_t> pair;
        TPUEMU_RETURN_IF_ERROR(
            IntList(Tok::kLbrace, Tok::kRbrace, Tok::kComma, pair, "a source,target pair"));
        if (pair.size() != 2) return ErrorHere("source_target_pairs holds pairs {source,target}");
        a.source_target_pairs.emplace_back(pair[0], pair[1]);
      } while (EatIf(Tok::kComma));
      TPUEMU_RETURN_IF_ERROR(Expect(Tok::kRbrace, "'}' to end source_target_pairs"));
    }
    return Status::Ok();
  }
  if (name == "kind" && inst.opcode == Opcode::kFusion) {
    if (lexer_.kind() != Tok::kIdent) return Expected("a fusion kind (kLoop, kInput, ...)");
    a.fusion_kind = std::string(lexer_.token().text);
    lexer_.Lex();
    return Status::Ok();
  }
  if (name == "custom_call_target") {
    if (lexer_.kind() != Tok::kString) return Expected("a string after custom_call_target=");
    a.custom_call_target = Unescape(lexer_.token().text);
    lexer_.Lex();
    return Status::Ok();
  }
  if (name == "distribution") {
    if (lexer_.kind() != Tok::kIdent) return Expected("rng_uniform or rng_normal");
    a.distribution = std::string(lexer_.token().text);
    lexer_.Lex();
    return Status::Ok();
  }
  if (name == "k") return integer(a.k);
  if (name == "feature_index") return integer(a.feature_index);
  if (name == "delta") return integer(a.delta);
  if (name == "epsilon") {
    if (lexer_.kind() != Tok::kDecimal && lexer_.kind() != Tok::kInt) {
      return Expected("a number after epsilon=");
    }
    a.epsilon = static_cast<float>(lexer_.kind() == Tok::kInt ? lexer_.token().int_value
                                                              : lexer_.token().decimal_value);
    lexer_.Lex();
    return Status::Ok();
  }
  std::string_view raw;
  if (!lexer_.SkipValue(&raw)) return ErrorHere("unterminated value of attribute " + what);
  if (name == "sparsity") a.sparsity = std::string(raw);
  if (name == "backend_config") {
    // {"known_trip_count":{"n":"10"}} (possibly escaped inside a string): the first number
    // after the key is the trip count XLA proved for this while loop.
    const size_t key = raw.find("known_trip_count");
    if (key != std::string_view::npos) {
      size_t p = key + 16;
      while (p < raw.size() && !std::isdigit(static_cast<unsigned char>(raw[p])) && raw[p] != '}') {
        ++p;
      }
      int64_t n = 0;
      bool any = false;
      while (p < raw.size() && std::isdigit(static_cast<unsigned char>(raw[p])) &&
             n < (1LL << 50)) {
        n = n * 10 + (raw[p++] - '0');
        any = true;
      }
      if (any) inst.known_trip_count = n;
    }
  }
  return Status::Ok();
}

Status Parser::ParseComputationRef(int& out) {
  if (lexer_.kind() == Tok::kLbrace) {
    return ParseComputation(/*allow_entry=*/false, &out,
                            "inline_computation." + std::to_string(++anon_));
  }
  if (lexer_.kind() != Tok::kName && lexer_.kind() != Tok::kIdent) {
    return Expected("a computation name");
  }
  auto it = computation_index_.find(std::string(lexer_.token().text));
  if (it == computation_index_.end()) {
    return ErrorHere("computation %" + std::string(lexer_.token().text) +
                     " is not defined before its use");
  }
  out = it->second;
  lexer_.Lex();
  return Status::Ok();
}

Status Parser::ParseComputationList(std::vector<int>& out) {
  TPUEMU_RETURN_IF_ERROR(Expect(Tok::kLbrace, "'{' to start a computation list"));
  out.clear();
  if (EatIf(Tok::kRbrace)) return Status::Ok();
  do {
    int c = -1;
    TPUEMU_RETURN_IF_ERROR(ParseComputationRef(c));
    out.push_back(c);
  } while (EatIf(Tok::kComma));
  return Expect(Tok::kRbrace, "'}' to end the computation list");
}

// '{' (name '=' value)* '}': op_name and op_type are kept, the rest skipped.
Status Parser::ParseMetadata(Instruction& inst) {
  TPUEMU_RETURN_IF_ERROR(Expect(Tok::kLbrace, "'{' to start metadata"));
  while (!EatIf(Tok::kRbrace)) {
    EatIf(Tok::kComma);
    if (lexer_.kind() == Tok::kLbrace) {  // a metadata list (inside shardings)
      TPUEMU_RETURN_IF_ERROR(SkipSubValue());
      continue;
    }
    if (lexer_.kind() != Tok::kAttributeName) return Expected("a metadata field or '}'");
    const std::string_view field = lexer_.token().text;
    lexer_.Lex();
    if ((field == "op_name" || field == "op_type") && lexer_.kind() == Tok::kString) {
      (field == "op_name" ? inst.op_name : inst.op_type) = Unescape(lexer_.token().text);
      lexer_.Lex();
      continue;
    }
    TPUEMU_RETURN_IF_ERROR(SkipSubValue());
  }
  return Status::Ok();
}

// '{' precision (',' precision)* '}': the highest one the operands ask for.
Status Parser::ParsePrecisionList(DotPrecision& out) {
  TPUEMU_RETURN_IF_ERROR(Expect(Tok::kLbrace, "'{' to start operand_precision"));
  if (EatIf(Tok::kRbrace)) return Status::Ok();
  do {
    if (lexer_.kind() != Tok::kIdent) return Expected("default, high or highest");
    const std::string_view p = lexer_.token().text;
    DotPrecision level = DotPrecision::kDefault;
    if (p == "high") {
      level = DotPrecision::kHigh;
    } else if (p == "highest") {
      level = DotPrecision::kHighest;
    } else if (p != "default" && p != "packed_nibble") {
      return ErrorHere("unknown precision '" + std::string(p) +
                       "' (expected default, high or "
                       "highest)");
    }
    if (out == DotPrecision::kUnset || static_cast<int>(level) > static_cast<int>(out)) {
      out = level;
    }
    lexer_.Lex();
  } while (EatIf(Tok::kComma));
  return Expect(Tok::kRbrace, "'}' to end operand_precision");
}

}  // namespace tpuemu::engine::hlo::internal
