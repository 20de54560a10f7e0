#include "engine/frontend/program_json.h"

#include <set>

namespace tpuemu::engine {
namespace {

using nlohmann::json;

const std::set<std::string>& KnownFields() {
  static const std::set<std::string> fields = {
      "id",   "op",      "inputs",  "shape",  "dtype",         "random",       "values",
      "fill", "strides", "padding", "reduce", "axes",          "keep_dims",    "broadcast_dims",
      "perm", "axis",    "start",   "limit",  "transpose_lhs", "transpose_rhs"};
  return fields;
}

// Reads the fields of one op object; every error names the op and the field.
class OpReader {
 public:
  OpReader(const json& j, size_t index) : j_(j), index_(index) {}

  Status Fail(const std::string& field, const std::string& what) const {
    return Status::InvalidArgument("op '" + id_ + "' (#" + std::to_string(index_) + "): field '" +
                                   field + "' " + what);
  }

  void set_id(std::string id) { id_ = std::move(id); }
  bool Has(const char* field) const { return j_.contains(field); }

  Status String(const char* field, std::string* out) const {
    const auto it = j_.find(field);
    if (it == j_.end()) return Fail(field, "is required");
    if (!it->is_string()) return Fail(field, "must be a string");
    *out = it->get<std::string>();
    return Status::Ok();
  }
  Status Bool(const char* field, bool* out) const {
    const auto it = j_.find(field);
    if (it == j_.end()) return Status::Ok();
    if (!it->is_boolean()) return Fail(field, "must be a boolean");
    *out = it->get<bool>();
    return Status::Ok();
  }
  Status Int(const char* field, int64_t* out) const {
    const auto it = j_.find(field);
    if (it == j_.end()) return Status::Ok();
    if (!it->is_number_integer()) return Fail(field, "must be an integer");
    *out = it->get<int64_t>();
    return Status::Ok();
  }
  Status Ints(const char* field, std::vector<int64_t>* out, bool required = false) const {
    const auto it = j_.find(field);
    if (it == j_.end()) return required ? Fail(field, "is required") : Status::Ok();
    if (!it->is_array()) return Fail(field, "must be an array of integers");
    out->clear();
    for (const auto& v : *it) {
      if (!v.is_number_integer()) return Fail(field, "must be an array of integers");
      out->push_back(v.get<int64_t>());
    }
    return Status::Ok();
  }
  Status Strings(const char* field, std::vector<std::string>* out) const {
    const auto it = j_.find(field);
    if (it == j_.end()) return Status::Ok();
    if (!it->is_array()) return Fail(field, "must be an array of op ids");
    for (const auto& v : *it) {
      if (!v.is_string()) return Fail(field, "must be an array of op ids");
      out->push_back(v.get<std::string>());
    }
    return Status::Ok();
  }

  Status ReadInit(Init* init, int64_t max_elements) const {
    int given = Has("random") + Has("values") + Has("fill");
    if (given > 1) return Fail("random", "conflicts with 'values'/'fill': give only one");
    if (Has("random")) {
      const json& r = j_["random"];
      if (!r.is_object()) return Fail("random", "must be an object");
      *init = Init::Random(0);
      for (const auto& [key, v] : r.items()) {
        if (key == "seed") {
          if (!v.is_number_unsigned()) return Fail("random.seed", "must be an integer >= 0");
          init->seed = v.get<uint64_t>();
        } else if (key == "distribution") {
          const std::string d = v.is_string() ? v.get<std::string>() : "";
          if (d == "normal") {
            init->distribution = Init::Distribution::kNormal;
          } else if (d == "uniform") {
            init->distribution = Init::Distribution::kUniform;
          } else {
            return Fail("random.distribution", "must be \"normal\" or \"uniform\"");
          }
        } else if (key == "scale") {
          if (!v.is_number()) return Fail("random.scale", "must be a number");
          init->scale = v.get<double>();
        } else {
          return Fail("random." + key, "is unknown (expected seed, distribution, scale)");
        }
      }
    } else if (Has("values")) {
      const json& v = j_["values"];
      if (!v.is_array()) return Fail("values", "must be a flat array of numbers");
      if (static_cast<int64_t>(v.size()) > max_elements) {
        return Fail("values", "has more than " + std::to_string(max_elements) + " elements");
      }
      std::vector<double> values;
      values.reserve(v.size());
      for (const auto& x : v) {
        if (!x.is_number()) return Fail("values", "must be a flat array of numbers");
        values.push_back(x.get<double>());
      }
      *init = Init::Values(std::move(values));
    } else if (Has("fill")) {
      if (!j_["fill"].is_number()) return Fail("fill", "must be a number");
      *init = Init::Fill(j_["fill"].get<double>());
    }
    return Status::Ok();
  }

  Status ReadConv(Conv2DParams* p) const {
    std::vector<int64_t> strides;
    TPUEMU_RETURN_IF_ERROR(Ints("strides", &strides));
    if (Has("strides")) {
      if (strides.size() != 2) return Fail("strides", "must be [stride_h, stride_w]");
      p->stride_h = strides[0];
      p->stride_w = strides[1];
    }
    if (!Has("padding")) return Status::Ok();
    const json& pad = j_["padding"];
    if (pad.is_string()) {
      const std::string s = pad.get<std::string>();
      if (s == "VALID" || s == "valid") {
        p->padding = ConvPadding::kValid;
      } else if (s == "SAME" || s == "same") {
        p->padding = ConvPadding::kSame;
      } else {
        return Fail("padding", "must be \"VALID\", \"SAME\" or [top, bottom, left, right]");
      }
      return Status::Ok();
    }
    std::vector<int64_t> pads;
    TPUEMU_RETURN_IF_ERROR(Ints("padding", &pads));
    if (pads.size() != 4) {
      return Fail("padding", "must be \"VALID\", \"SAME\" or [top, bottom, left, right]");
    }
    p->padding = ConvPadding::kExplicit;
    std::copy(pads.begin(), pads.end(), p->pads.begin());
    return Status::Ok();
  }

  Result<Op> Read(const ParseOptions& options) {
    if (!j_.is_object()) {
      return Status::InvalidArgument("op #" + std::to_string(index_) + " must be an object");
    }
    Op op;
    {
      const auto it = j_.find("id");
      if (it == j_.end() || !it->is_string() || it->get<std::string>().empty()) {
        return Status::InvalidArgument("op #" + std::to_string(index_) +
                                       ": field 'id' must be a non-empty string");
      }
      op.id = it->get<std::string>();
      set_id(op.id);
    }
    for (const auto& [key, v] : j_.items()) {
      if (!KnownFields().count(key)) return Fail(key, "is unknown");
    }
    std::string kind_name;
    TPUEMU_RETURN_IF_ERROR(String("op", &kind_name));
    auto kind = ParseOpKind(kind_name);
    if (!kind.ok()) return Fail("op", "is invalid: " + kind.status().message());
    op.kind = *kind;
    TPUEMU_RETURN_IF_ERROR(Strings("inputs", &op.inputs));
    OpAttrs& a = op.attrs;
    TPUEMU_RETURN_IF_ERROR(Ints("shape", &a.shape.dims,
                                op.kind == OpKind::kParameter || op.kind == OpKind::kConstant ||
                                    op.kind == OpKind::kBroadcast || op.kind == OpKind::kReshape ||
                                    op.kind == OpKind::kConv2DBackpropInput ||
                                    op.kind == OpKind::kConv2DBackpropFilter));
    if (op.kind != OpKind::kReshape) {
      TPUEMU_RETURN_IF_ERROR(
          CheckShape(a.shape, options.max_tensor_elements, "op '" + op.id + "': field 'shape'"));
    }
    if (Has("dtype")) {
      std::string d;
      TPUEMU_RETURN_IF_ERROR(String("dtype", &d));
      auto dtype = ParseDType(d);
      if (!dtype.ok()) return Fail("dtype", "is invalid: " + dtype.status().message());
      a.dtype = *dtype;
    } else if (op.kind == OpKind::kConvert) {
      return Fail("dtype", "is required");
    }
    TPUEMU_RETURN_IF_ERROR(ReadInit(&a.init, options.max_tensor_elements));
    TPUEMU_RETURN_IF_ERROR(Bool("transpose_lhs", &a.transpose_lhs));
    TPUEMU_RETURN_IF_ERROR(Bool("transpose_rhs", &a.transpose_rhs));
    TPUEMU_RETURN_IF_ERROR(ReadConv(&a.conv));
    if (Has("reduce")) {
      std::string r;
      TPUEMU_RETURN_IF_ERROR(String("reduce", &r));
      if (r == "sum") {
        a.reduce = ReduceKind::kSum;
      } else if (r == "max") {
        a.reduce = ReduceKind::kMax;
      } else if (r == "mean") {
        a.reduce = ReduceKind::kMean;
      } else {
        return Fail("reduce", "must be \"sum\", \"max\" or \"mean\"");
      }
    }
    TPUEMU_RETURN_IF_ERROR(Ints("axes", &a.axes));
    TPUEMU_RETURN_IF_ERROR(Bool("keep_dims", &a.keep_dims));
    if (Has("broadcast_dims")) {
      std::vector<int64_t> bd;
      TPUEMU_RETURN_IF_ERROR(Ints("broadcast_dims", &bd));
      a.broadcast_dims = std::move(bd);
    }
    TPUEMU_RETURN_IF_ERROR(Ints("perm", &a.perm, op.kind == OpKind::kTranspose));
    a.axis = op.kind == OpKind::kSoftmax ? -1 : 0;
    TPUEMU_RETURN_IF_ERROR(Int("axis", &a.axis));
    TPUEMU_RETURN_IF_ERROR(Ints("start", &a.start, op.kind == OpKind::kSlice));
    TPUEMU_RETURN_IF_ERROR(Ints("limit", &a.limit, op.kind == OpKind::kSlice));
    return op;
  }

 private:
  const json& j_;
  size_t index_;
  std::string id_ = "?";
};

// Nesting depth of arrays/objects, outside strings. Checked before nlohmann parses so that a
// hostile document cannot drive its recursive destructor or our walk arbitrarily deep.
bool DepthWithin(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false, escape = false;
  for (char c : text) {
    if (in_string) {
      if (escape) {
        escape = false;
      } else if (c == '\\') {
        escape = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return false;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return true;
}

}  // namespace

Result<Graph> ParseProgram(std::string_view json_text, const ParseOptions& options) {
  if (static_cast<int64_t>(json_text.size()) > options.max_text_bytes) {
    return Status::InvalidArgument("program is larger than " +
                                   std::to_string(options.max_text_bytes) + " bytes");
  }
  if (!DepthWithin(json_text, options.max_depth)) {
    return Status::InvalidArgument("program JSON nests deeper than " +
                                   std::to_string(options.max_depth) + " levels");
  }
  json program = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (program.is_discarded()) return Status::InvalidArgument("program is not valid JSON");
  return ProgramFromJson(program, options);
}

Result<Graph> ProgramFromJson(const json& program, const ParseOptions& options) {
  try {
    if (!program.is_object()) return Status::InvalidArgument("program must be a JSON object");
    for (const auto& [key, v] : program.items()) {
      if (key != "name" && key != "ops" && key != "outputs") {
        return Status::InvalidArgument("program: field '" + key +
                                       "' is unknown (expected name, ops, outputs)");
      }
    }
    std::string name = "program";
    if (program.contains("name")) {
      if (!program["name"].is_string()) {
        return Status::InvalidArgument("program: field 'name' must be a string");
      }
      name = program["name"].get<std::string>();
    }
    if (!program.contains("ops") || !program["ops"].is_array()) {
      return Status::InvalidArgument("program: field 'ops' must be an array of ops");
    }
    const json& ops = program["ops"];
    if (static_cast<int64_t>(ops.size()) > options.max_ops) {
      return Status::InvalidArgument("program: " + std::to_string(ops.size()) +
                                     " ops exceed the limit of " + std::to_string(options.max_ops));
    }
    Graph graph(name);
    for (size_t i = 0; i < ops.size(); ++i) {
      OpReader reader(ops[i], i);
      auto op = reader.Read(options);
      if (!op.ok()) return op.status();
      TPUEMU_RETURN_IF_ERROR(graph.Add(std::move(op).value()));
      const Op& added = graph.ops().back();
      TPUEMU_RETURN_IF_ERROR(
          CheckShape(added.shape, options.max_tensor_elements, "op '" + added.id + "': result"));
    }
    if (!program.contains("outputs") || !program["outputs"].is_array() ||
        program["outputs"].empty()) {
      return Status::InvalidArgument(
          "program: field 'outputs' must be a non-empty array of op ids");
    }
    for (const auto& out : program["outputs"]) {
      if (!out.is_string()) {
        return Status::InvalidArgument("program: field 'outputs' must be an array of op ids");
      }
      TPUEMU_RETURN_IF_ERROR(graph.AddOutput(out.get<std::string>()));
    }
    return graph;
  } catch (const std::exception& e) {
    return Status::InvalidArgument(std::string("program: ") + e.what());
  }
}

json ProgramToJson(const Graph& graph) {
  json ops = json::array();
  for (const Op& op : graph.ops()) {
    json j;
    j["id"] = op.id;
    j["op"] = std::string(OpKindName(op.kind));
    if (!op.inputs.empty()) j["inputs"] = op.inputs;
    const OpAttrs& a = op.attrs;
    const OpKind k = op.kind;
    if (k == OpKind::kParameter || k == OpKind::kConstant || k == OpKind::kBroadcast ||
        k == OpKind::kReshape || k == OpKind::kConv2DBackpropInput ||
        k == OpKind::kConv2DBackpropFilter) {
      j["shape"] = a.shape.dims;
    }
    if (k == OpKind::kParameter || k == OpKind::kConstant || k == OpKind::kConvert) {
      j["dtype"] = std::string(DTypeName(a.dtype));
    }
    switch (a.init.kind) {
      case Init::Kind::kNone:
        break;
      case Init::Kind::kRandom:
        j["random"] = {{"seed", a.init.seed},
                       {"distribution",
                        a.init.distribution == Init::Distribution::kNormal ? "normal" : "uniform"},
                       {"scale", a.init.scale}};
        break;
      case Init::Kind::kValues:
        j["values"] = a.init.values;
        break;
      case Init::Kind::kFill:
        j["fill"] = a.init.fill;
        break;
    }
    if (k == OpKind::kDot) {
      j["transpose_lhs"] = a.transpose_lhs;
      j["transpose_rhs"] = a.transpose_rhs;
    }
    if (IsMatmulOp(k) && k != OpKind::kDot) {
      j["strides"] = {a.conv.stride_h, a.conv.stride_w};
      if (a.conv.padding == ConvPadding::kExplicit) {
        j["padding"] = a.conv.pads;
      } else {
        j["padding"] = a.conv.padding == ConvPadding::kSame ? "SAME" : "VALID";
      }
    }
    if (k == OpKind::kReduce) {
      j["reduce"] = std::string(ReduceKindName(a.reduce));
      j["axes"] = a.axes;
      j["keep_dims"] = a.keep_dims;
    }
    if (k == OpKind::kBroadcast && a.broadcast_dims) j["broadcast_dims"] = *a.broadcast_dims;
    if (k == OpKind::kTranspose) j["perm"] = a.perm;
    if (k == OpKind::kConcat || k == OpKind::kSoftmax) j["axis"] = a.axis;
    if (k == OpKind::kSlice) {
      j["start"] = a.start;
      j["limit"] = a.limit;
    }
    ops.push_back(std::move(j));
  }
  return json{{"name", graph.name()}, {"ops", std::move(ops)}, {"outputs", graph.outputs()}};
}

}  // namespace tpuemu::engine
