#include "engine/hlo/inputs.h"

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "engine/hlo/evaluator_internal.h"
#include "engine/hlo/npy.h"

namespace tpuemu::engine::hlo {
namespace {

Result<std::string> ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot open " + path.string());
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// The npy file for one leaf, if the directory has one.
Result<std::optional<Array>> FromNpy(const InputOptions& options, int64_t param, int64_t leaf,
                                     bool tuple, int64_t device, const Shape& shape) {
  if (options.npy_dir.empty()) return std::optional<Array>();
  const std::string base = std::to_string(param) + (tuple ? "." + std::to_string(leaf) : "");
  for (const std::string& name :
       {base + ".device" + std::to_string(device) + ".npy", base + ".npy"}) {
    const std::filesystem::path path = std::filesystem::path(options.npy_dir) / name;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) continue;
    auto bytes = ReadFile(path);
    if (!bytes.ok()) return bytes.status();
    auto array =
        ReadNpy(*bytes, shape, "parameter " + std::to_string(param) + " (" + path.string() + ")");
    if (!array.ok()) return array.status();
    return std::optional<Array>(std::move(*array));
  }
  return std::optional<Array>();
}

}  // namespace

Result<std::vector<std::vector<Value>>> MakeArguments(const Module& module,
                                                      const InputOptions& options,
                                                      const Limits& limits) {
  const Computation& entry = module.entry_computation();
  for (const auto& [n, v] : options.values) {
    if (n < 0 || n >= static_cast<int64_t>(entry.parameters.size())) {
      return Status::InvalidArgument("values given for parameter " + std::to_string(n) +
                                     ", but the entry has " +
                                     std::to_string(entry.parameters.size()) + " parameter(s)");
    }
  }
  std::vector<std::vector<Value>> args(static_cast<size_t>(module.devices()));
  for (int64_t d = 0; d < module.devices(); ++d) {
    for (size_t p = 0; p < entry.parameters.size(); ++p) {
      const Instruction& param = entry.instructions[static_cast<size_t>(entry.parameters[p])];
      const std::string what = "parameter " + std::to_string(p) + " (%" + param.name + ")";
      TPUEMU_RETURN_IF_ERROR(ValidateStatic(param.shape, limits.max_tensor_elements, what));
      auto given = options.values.find(static_cast<int64_t>(p));
      if (given != options.values.end()) {
        if (!param.shape.IsArray()) {
          return Status::InvalidArgument(what + " is a tuple; feed it with .npy files");
        }
        Array a = Array::Zeros(param.shape.type, param.shape.dims);
        const std::vector<double>& v = given->second;
        if (v.size() != 1 && static_cast<int64_t>(v.size()) != a.size()) {
          return Status::InvalidArgument(what + " has " + std::to_string(a.size()) +
                                         " elements, got " + std::to_string(v.size()) + " values");
        }
        for (int64_t k = 0; k < a.size(); ++k)
          a.SetDouble(k, v[v.size() == 1 ? 0 : static_cast<size_t>(k)]);
        args[static_cast<size_t>(d)].push_back(Value::Of(std::move(a)));
        continue;
      }
      std::vector<const Shape*> leaves;
      CollectLeaves(param.shape, leaves);
      std::vector<Value> leaf_values;
      for (size_t l = 0; l < leaves.size(); ++l) {
        const Shape& leaf = *leaves[l];
        auto npy = FromNpy(options, static_cast<int64_t>(p), static_cast<int64_t>(l),
                           param.shape.IsTuple(), d, leaf);
        if (!npy.ok()) return npy.status();
        if (*npy) {
          leaf_values.push_back(Value::Of(std::move(**npy)));
        } else if (leaf.type == PrimitiveType::kToken || !IsEvaluable(leaf.type)) {
          leaf_values.push_back(internal::ZerosLike(leaf));
        } else {
          uint64_t stream = 0x5eed0000ull + 4096ull * p + l;
          if (options.distinct_per_device) stream += static_cast<uint64_t>(d) << 40;
          leaf_values.push_back(Value::Of(internal::FillDeterministic(leaf, options.seed, stream)));
        }
      }
      // Rebuild the tuple tree from the flattened leaves.
      size_t next = 0;
      std::function<Value(const Shape&)> build = [&](const Shape& s) -> Value {
        if (!s.IsTuple()) return std::move(leaf_values[next++]);
        std::vector<Value> elements;
        for (const Shape& e : s.tuple) elements.push_back(build(e));
        return Value::Tuple(std::move(elements));
      };
      args[static_cast<size_t>(d)].push_back(build(param.shape));
    }
  }
  return args;
}

}  // namespace tpuemu::engine::hlo
