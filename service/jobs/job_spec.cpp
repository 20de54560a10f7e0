#include "service/jobs/job_spec.h"

#include <string>

#include "engine/frontend/compiler.h"
#include "engine/frontend/program_json.h"

namespace tpuemu::service {
namespace {

using nlohmann::json;

Status Bad(const std::string& field, const std::string& what) {
  return Status::InvalidArgument(field + " " + what);
}

// Reads an optional integer field into *out, checking [lo, hi].
Status Int(const json& obj, const char* key, const std::string& path, int64_t lo, int64_t hi,
           int64_t* out) {
  auto it = obj.find(key);
  if (it == obj.end()) return Status::Ok();
  const std::string field = path + key;
  int64_t v = 0;
  if (it->is_number_integer()) {
    v = it->get<int64_t>();
  } else if (it->is_string()) {  // proto3 JSON renders int64 as a string
    try {
      size_t used = 0;
      v = std::stoll(it->get<std::string>(), &used);
      if (used != it->get<std::string>().size()) return Bad(field, "must be an integer");
    } catch (const std::exception&) {
      return Bad(field, "must be an integer");
    }
  } else {
    return Bad(field, "must be an integer");
  }
  if (v < lo || v > hi) {
    return Bad(field, "must be " + std::to_string(lo) + ".." + std::to_string(hi));
  }
  *out = v;
  return Status::Ok();
}

Status Number(const json& obj, const char* key, const std::string& path, double lo, double hi,
              double* out) {
  auto it = obj.find(key);
  if (it == obj.end()) return Status::Ok();
  if (!it->is_number()) return Bad(path + key, "must be a number");
  double v = it->get<double>();
  if (!(v > lo && v <= hi)) {
    return Bad(path + key, "must be in (" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  *out = v;
  return Status::Ok();
}

Status KnownKeys(const json& obj, const std::string& path,
                 std::initializer_list<const char*> keys) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool known = false;
    for (const char* k : keys) known = known || it.key() == k;
    if (!known) return Bad(path + it.key(), "is not a known field");
  }
  return Status::Ok();
}

// Checks one tensor of `elements` elements against the limit, blaming `field`.
Status Fits(const std::string& field, const std::string& tensor, int64_t elements,
            const JobLimits& limits) {
  if (elements <= limits.max_tensor_elements) return Status::Ok();
  return Bad(field, "makes " + tensor + " of " + std::to_string(elements) +
                        " elements, above the limit of " +
                        std::to_string(limits.max_tensor_elements));
}

Status ParseTransformer(const json& body, const std::string& path, const JobLimits& limits,
                        JobSpec* spec) {
  spec->kind = WorkloadKind::kTransformer;
  spec->layers = 2;
  spec->batch = 8;
  spec->learning_rate = 0.05;
  TPUEMU_RETURN_IF_ERROR(KnownKeys(
      body, path, {"layers", "dModel", "heads", "seqLen", "batch", "steps", "learningRate"}));
  TPUEMU_RETURN_IF_ERROR(Int(body, "layers", path, 1, 64, &spec->layers));
  TPUEMU_RETURN_IF_ERROR(Int(body, "dModel", path, 1, 8192, &spec->d_model));
  TPUEMU_RETURN_IF_ERROR(Int(body, "heads", path, 1, 256, &spec->heads));
  TPUEMU_RETURN_IF_ERROR(Int(body, "seqLen", path, 1, 8192, &spec->seq_len));
  TPUEMU_RETURN_IF_ERROR(Int(body, "batch", path, 1, 65536, &spec->batch));
  TPUEMU_RETURN_IF_ERROR(Int(body, "steps", path, 1, limits.max_steps, &spec->steps));
  TPUEMU_RETURN_IF_ERROR(Number(body, "learningRate", path, 0, 100, &spec->learning_rate));
  if (spec->d_model % spec->heads != 0) {
    return Bad(path + "heads", "must divide dModel (" + std::to_string(spec->d_model) + ")");
  }
  // Every factor is <= 65536, so these products stay far below INT64_MAX.
  const int64_t tokens = spec->batch * spec->seq_len;
  TPUEMU_RETURN_IF_ERROR(Fits(path + "batch", "the activations [batch*seqLen, 4*dModel]",
                              tokens * 4 * spec->d_model, limits));
  TPUEMU_RETURN_IF_ERROR(Fits(path + "dModel", "the MLP weight [dModel, 4*dModel]",
                              4 * spec->d_model * spec->d_model, limits));
  TPUEMU_RETURN_IF_ERROR(Fits(path + "seqLen", "the attention scores [batch*heads, seqLen, seqLen]",
                              tokens * spec->heads * spec->seq_len, limits));
  return Status::Ok();
}

Status ParseWorkload(const json& w, const JobLimits& limits, JobSpec* spec) {
  if (!w.is_object() || w.size() != 1) {
    return Bad("workload", "must be an object with exactly one of matmul, mlp, cnn, transformer");
  }
  const std::string name = w.begin().key();
  const json& body = w.begin().value();
  const std::string path = "workload." + name + ".";
  if (!body.is_object()) return Bad("workload." + name, "must be an object");
  if (name == "matmul") {
    spec->kind = WorkloadKind::kMatmul;
    TPUEMU_RETURN_IF_ERROR(KnownKeys(body, path, {"m", "n", "k", "dtype"}));
    TPUEMU_RETURN_IF_ERROR(Int(body, "m", path, 1, 1 << 16, &spec->m));
    TPUEMU_RETURN_IF_ERROR(Int(body, "n", path, 1, 1 << 16, &spec->n));
    TPUEMU_RETURN_IF_ERROR(Int(body, "k", path, 1, 1 << 16, &spec->k));
    if (auto it = body.find("dtype"); it != body.end()) {
      if (!it->is_string()) return Bad(path + "dtype", "must be a string");
      Result<engine::DType> dtype = engine::ParseDType(it->get<std::string>());
      if (!dtype.ok() || *dtype == engine::DType::kI32) {
        return Bad(path + "dtype", "must be one of f32, bf16");
      }
      spec->dtype = *dtype;
    }
    for (int64_t e : {spec->m * spec->k, spec->k * spec->n, spec->m * spec->n}) {
      if (e > limits.max_tensor_elements) {
        return Bad(path + "m/n/k", "give a tensor of " + std::to_string(e) +
                                       " elements, above the limit of " +
                                       std::to_string(limits.max_tensor_elements));
      }
    }
    return Status::Ok();
  }
  if (name == "mlp") {
    spec->kind = WorkloadKind::kMlp;
    TPUEMU_RETURN_IF_ERROR(
        KnownKeys(body, path, {"layers", "batch", "hidden", "steps", "learningRate"}));
    TPUEMU_RETURN_IF_ERROR(Int(body, "layers", path, 1, 64, &spec->layers));
    TPUEMU_RETURN_IF_ERROR(Int(body, "batch", path, 1, 65536, &spec->batch));
    TPUEMU_RETURN_IF_ERROR(Int(body, "hidden", path, 1, 8192, &spec->hidden));
    TPUEMU_RETURN_IF_ERROR(Int(body, "steps", path, 1, limits.max_steps, &spec->steps));
    TPUEMU_RETURN_IF_ERROR(Number(body, "learningRate", path, 0, 100, &spec->learning_rate));
    if (spec->batch * spec->hidden > limits.max_tensor_elements ||
        spec->hidden * spec->hidden > limits.max_tensor_elements) {
      return Bad(path + "hidden", "makes a tensor above the limit of " +
                                      std::to_string(limits.max_tensor_elements) + " elements");
    }
    return Status::Ok();
  }
  if (name == "cnn") {
    spec->kind = WorkloadKind::kCnn;
    spec->learning_rate = 0.1;
    spec->batch = 16;
    TPUEMU_RETURN_IF_ERROR(KnownKeys(body, path, {"batch", "channels", "steps", "learningRate"}));
    TPUEMU_RETURN_IF_ERROR(Int(body, "batch", path, 1, 4096, &spec->batch));
    TPUEMU_RETURN_IF_ERROR(Int(body, "channels", path, 1, 256, &spec->channels));
    TPUEMU_RETURN_IF_ERROR(Int(body, "steps", path, 1, limits.max_steps, &spec->steps));
    TPUEMU_RETURN_IF_ERROR(Number(body, "learningRate", path, 0, 100, &spec->learning_rate));
    // The activations: batch x 8 x 8 x channels.
    if (const int64_t e = spec->batch * 64 * spec->channels; e > limits.max_tensor_elements) {
      return Bad(path + "batch/channels", "give a tensor of " + std::to_string(e) +
                                              " elements, above the limit of " +
                                              std::to_string(limits.max_tensor_elements));
    }
    return Status::Ok();
  }
  if (name == "transformer") return ParseTransformer(body, path, limits, spec);
  return Bad("workload." + name, "is not a known workload (matmul, mlp, cnn, transformer)");
}

}  // namespace

std::string_view WorkloadKindName(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::kMatmul:
      return "matmul";
    case WorkloadKind::kMlp:
      return "mlp";
    case WorkloadKind::kCnn:
      return "cnn";
    case WorkloadKind::kTransformer:
      return "transformer";
    case WorkloadKind::kProgram:
      return "program";
    case WorkloadKind::kHlo:
      return "hlo";
  }
  return "?";
}

Result<JobSpec> ParseJobSpec(const json& body, const JobLimits& limits) {
  if (!body.is_object()) return Status::InvalidArgument("the job spec must be a JSON object");
  Status known = KnownKeys(body, "",
                           {"workload", "program", "hlo", "precision", "cores", "steps", "seed",
                            "timeoutSeconds", "priority", "labels", "requestId", "maxRetries"});
  if (!known.ok()) return known;
  JobSpec spec;
  const bool has_workload = body.contains("workload");
  const bool has_program = body.contains("program");
  const bool has_hlo = body.contains("hlo");
  if (has_workload + has_program + has_hlo != 1) {
    return Status::InvalidArgument("exactly one of workload, program and hlo must be set");
  }
  int64_t steps = spec.steps;
  Status s = Int(body, "steps", "", 1, limits.max_steps, &steps);
  if (!s.ok()) return s;
  spec.steps = steps;
  if (has_workload) {
    s = ParseWorkload(body["workload"], limits, &spec);
    if (!s.ok()) return s;
  } else if (has_program) {
    spec.kind = WorkloadKind::kProgram;
    engine::ParseOptions options;
    options.max_tensor_elements = limits.max_tensor_elements;
    Result<engine::Graph> graph = engine::ProgramFromJson(body["program"], options);
    if (!graph.ok()) return Bad("program:", graph.status().message());
    spec.program = body["program"];
    spec.graph = std::make_shared<const engine::Graph>(std::move(graph).value());
  }
  if (auto it = body.find("precision"); it != body.end()) {
    Result<engine::Precision> p = it->is_string()
                                      ? engine::ParsePrecision(it->get<std::string>())
                                      : Result<engine::Precision>(Status::InvalidArgument(""));
    if (!p.ok()) return Bad("precision", "must be one of DEFAULT, HIGH, HIGHEST, F32");
    spec.precision = *p;
  }
  int64_t cores = 1, seed = 0;
  if (!(s = Int(body, "cores", "", 1, 4096, &cores)).ok()) return s;
  if (!(s = Int(body, "seed", "", 0, INT64_MAX, &seed)).ok()) return s;
  if (!(s = Int(body, "timeoutSeconds", "", 0, limits.max_timeout_seconds, &spec.timeout_seconds))
           .ok()) {
    return s;
  }
  if (!(s = Int(body, "priority", "", -1000, 1000, &spec.priority)).ok()) return s;
  if (!(s = Int(body, "maxRetries", "", 0, kMaxJobRetries, &spec.max_retries)).ok()) return s;
  spec.cores = static_cast<int>(cores);
  spec.seed = static_cast<uint64_t>(seed);
  if (has_hlo) {
    spec.kind = WorkloadKind::kHlo;
    Result<std::shared_ptr<const HloJobSpec>> hlo =
        ParseHloJobSpec(body["hlo"], cores, body.contains("cores"),
                        {.max_text_bytes = limits.max_hlo_text_bytes,
                         .max_instructions = limits.max_hlo_instructions,
                         .max_tensor_elements = limits.max_tensor_elements});
    if (!hlo.ok()) return hlo.status();
    spec.hlo = std::move(hlo).value();
    spec.cores = static_cast<int>(spec.hlo->devices());
  }
  if ((spec.kind == WorkloadKind::kMlp || spec.kind == WorkloadKind::kCnn ||
       spec.kind == WorkloadKind::kTransformer) &&
      spec.batch % spec.cores != 0) {
    return Bad("cores", "must divide workload." + std::string(WorkloadKindName(spec.kind)) +
                            ".batch (" + std::to_string(spec.batch) + ")");
  }
  if (auto it = body.find("labels"); it != body.end()) {
    if (!it->is_object()) return Bad("labels", "must be an object of strings");
    for (auto l = it->begin(); l != it->end(); ++l) {
      if (!l->is_string() || l.key().empty() || l.key().size() > 63) {
        return Bad("labels." + l.key(), "must be a string with a 1..63 character key");
      }
      spec.labels[l.key()] = l->get<std::string>();
    }
  }
  if (auto it = body.find("requestId"); it != body.end()) {
    if (!it->is_string() || it->get<std::string>().size() > 128) {
      return Bad("requestId", "must be a string of at most 128 characters");
    }
    spec.request_id = it->get<std::string>();
  }
  return spec;
}

json JobSpecToJson(const JobSpec& spec) {
  json out;
  switch (spec.kind) {
    case WorkloadKind::kMatmul:
      out["workload"]["matmul"] = {
          {"m", spec.m}, {"n", spec.n}, {"k", spec.k}, {"dtype", engine::DTypeName(spec.dtype)}};
      break;
    case WorkloadKind::kMlp:
      out["workload"]["mlp"] = {{"layers", spec.layers},
                                {"batch", spec.batch},
                                {"hidden", spec.hidden},
                                {"steps", spec.steps},
                                {"learningRate", spec.learning_rate}};
      break;
    case WorkloadKind::kCnn:
      out["workload"]["cnn"] = {{"batch", spec.batch},
                                {"channels", spec.channels},
                                {"steps", spec.steps},
                                {"learningRate", spec.learning_rate}};
      break;
    case WorkloadKind::kTransformer:
      out["workload"]["transformer"] = {{"layers", spec.layers},
                                        {"dModel", spec.d_model},
                                        {"heads", spec.heads},
                                        {"seqLen", spec.seq_len},
                                        {"batch", spec.batch},
                                        {"steps", spec.steps},
                                        {"learningRate", spec.learning_rate}};
      break;
    case WorkloadKind::kProgram:
      out["program"] = spec.program;
      break;
    case WorkloadKind::kHlo:
      out["hlo"] = HloJobSpecToJson(*spec.hlo);
      break;
  }
  out["precision"] = engine::PrecisionName(spec.precision);
  out["cores"] = spec.cores;
  out["steps"] = spec.steps;
  out["seed"] = spec.seed;
  out["timeoutSeconds"] = spec.timeout_seconds;
  out["priority"] = spec.priority;
  out["labels"] = spec.labels;
  // Only when set: the canonical JSON (and the requestId hash) of a job without retries stays what
  // it was before the field existed.
  if (spec.max_retries > 0) out["maxRetries"] = spec.max_retries;
  return out;
}

CanonicalSpec Canonicalize(const JobSpec& spec) {
  CanonicalSpec out;
  out.json = JobSpecToJson(spec).dump();
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx",
                static_cast<unsigned long long>(engine::HashKey(out.json)));
  out.hash = buf;
  return out;
}

std::string JobSpecHash(const JobSpec& spec) { return Canonicalize(spec).hash; }

}  // namespace tpuemu::service
