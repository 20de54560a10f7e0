// `tpuctl jobs submit|list|describe|cancel|logs|wait|delete`: jobs on a TPU VM (the jobs REST
// API under .../nodes/N/jobs). `submit --wait`, `wait` and `logs --follow` stream the job's log
// (GET /logs?offset=K, then :wait?timeout=2s, until the job is terminal and the log drained) and
// `submit --wait` / `wait` exit with the job's code: 0 SUCCEEDED, 1 FAILED, 124 TIMED_OUT,
// 130 CANCELLED (cli/tpuctl/api_client.h has the codes for usage, API and connection errors).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include <CLI/CLI.hpp>

#include "cli/tpuctl/app.h"

namespace tpuemu::cli {
namespace {

using nlohmann::json;

const char* kJobColumns =
    "jobId:label=JOB_ID,node.basename():label=NODE,state:label=STATE,exitCode:label=EXIT_CODE,"
    "priority:label=PRIORITY,createTime:label=CREATE_TIME";

constexpr const char* kWaitSlice = "2s";

struct JobRef {
  std::string job;
  std::string node;
  std::string zone;
};

Result<std::string> JobName(Context& ctx, const JobRef& ref) {
  if (ref.job.find('/') != std::string::npos) return ref.job;
  std::string zone = ctx.ZoneOrDefault(ref.zone);
  std::string node = ctx.NodeOrDefault(ref.node);
  if (node.empty() || zone.empty()) {
    return Status::InvalidArgument("--node and --zone are required (or give the job's full name)");
  }
  return "projects/" + ctx.project + "/locations/" + zone + "/nodes/" + node + "/jobs/" + ref.job;
}

bool IsTerminal(const json& job) {
  std::string s = job.value("state", std::string());
  return s == "SUCCEEDED" || s == "FAILED" || s == "CANCELLED" || s == "TIMED_OUT";
}

int ExitCodeForState(const std::string& state) {
  if (state == "SUCCEEDED") return kExitOk;
  if (state == "TIMED_OUT") return kExitJobTimedOut;
  if (state == "CANCELLED") return kExitJobCancelled;
  return kExitJobFailed;
}

// Prints the log from `*offset` on; advances it.
Status DrainLogs(Context& ctx, const std::string& name, int64_t* offset) {
  Result<json> page = ctx.api->Get("/v2/" + name + "/logs?offset=" + std::to_string(*offset));
  if (!page.ok()) return page.status();
  for (const json& line : page->value("lines", json::array())) {
    *ctx.out << (line.is_string() ? line.get<std::string>() : line.dump()) << "\n";
  }
  *offset = page->value("nextOffset", *offset);
  ctx.out->flush();
  return Status::Ok();
}

// Follows the job until it is terminal; with `stream`, prints its log as it grows.
Result<json> Follow(Context& ctx, const std::string& name, json job, bool stream) {
  int64_t offset = 0;
  while (true) {
    if (stream) {
      Status s = DrainLogs(ctx, name, &offset);
      if (!s.ok()) return s;
    }
    if (IsTerminal(job)) return job;  // the drain above ran after the terminal state was seen
    Result<json> next =
        ctx.api->Get("/v2/" + name + ":wait?timeout=" + kWaitSlice, std::chrono::seconds(60));
    if (!next.ok()) return next.status();
    job = *next;
  }
}

// The exit code of a terminal job, with gcloud-like lines on stderr.
int Report(Context& ctx, const json& job) {
  std::string state = job.value("state", std::string());
  std::string id = job.value("jobId", job.value("name", std::string()));
  int code = ExitCodeForState(state);
  if (code == kExitOk) {
    ctx.Note("Job [" + id + "] SUCCEEDED.");
  } else {
    *ctx.err << "ERROR: (tpuctl) job [" << id << "] " << state << " (exit " << code << ")";
    if (job.contains("reason")) *ctx.err << ": " << job["reason"].get<std::string>();
    *ctx.err << "\n";
  }
  return code;
}

Result<std::string> ReadTextFile(const std::string& path, const std::string& flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::InvalidArgument(flag + ": cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return std::move(text).str();
}

Result<json> ReadJsonFile(const std::string& path, const std::string& flag) {
  Result<std::string> text = ReadTextFile(path, flag);
  if (!text.ok()) return text.status();
  json j = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::InvalidArgument(flag + ": " + path + " is not a JSON object");
  }
  return j;
}

// "300s", "5m", "1h", "90" -> seconds (rounded up).
Result<int64_t> ParseDurationSeconds(const std::string& text) {
  double scale = 1;
  std::string digits = text;
  if (!digits.empty()) {
    char unit = digits.back();
    if (unit == 's' || unit == 'm' || unit == 'h') {
      scale = unit == 'm' ? 60 : unit == 'h' ? 3600 : 1;
      digits.pop_back();
    }
  }
  try {
    size_t used = 0;
    double value = std::stod(digits, &used);
    if (used == digits.size() && value >= 0) return static_cast<int64_t>(std::ceil(value * scale));
  } catch (const std::exception&) {
  }
  return Status::InvalidArgument("--timeout \"" + text + "\" is not a duration like 300s, 5m, 1h");
}

struct SubmitFlags {
  std::string node, zone, workload, program, spec, hlo, precision, labels, request_id, job_id;
  std::string timeout, dtype;
  int64_t steps = 0, batch = 0, layers = 0, hidden = 0, channels = 0, m = 0, n = 0, k = 0;
  int64_t cores = 0, priority = 0, seed = 0, max_retries = 0;
  double learning_rate = 0;
  bool wait = false, estimate_only = false, allow_unsupported = false;
  std::map<std::string, CLI::Option*> options;  // flag -> option, to know what was given
  bool Given(const std::string& flag) const { return options.at(flag)->count() > 0; }
};

Result<json> BuildSpec(const SubmitFlags& f) {
  int sources = !f.workload.empty() + !f.program.empty() + !f.spec.empty() + !f.hlo.empty();
  if (sources != 1) {
    return Status::InvalidArgument("give exactly one of --workload, --program, --spec, --hlo");
  }
  if ((f.estimate_only || f.allow_unsupported) && f.hlo.empty()) {
    return Status::InvalidArgument("--estimate-only and --allow-unsupported apply to --hlo only");
  }
  json body = json::object();
  if (!f.spec.empty()) {
    Result<json> spec = ReadJsonFile(f.spec, "--spec");
    if (!spec.ok()) return spec.status();
    body = *spec;
  }
  if (!f.program.empty()) {
    Result<json> program = ReadJsonFile(f.program, "--program");
    if (!program.ok()) return program.status();
    body["program"] = *program;
  }
  if (!f.hlo.empty()) {
    Result<std::string> text = ReadTextFile(f.hlo, "--hlo");
    if (!text.ok()) return text.status();
    body["hlo"] = {{"text", *std::move(text)}};
    if (f.estimate_only) body["hlo"]["estimateOnly"] = true;
    if (f.allow_unsupported) body["hlo"]["allowUnsupported"] = true;
  }
  // Workload flags go inside workload.<kind>; only the ones given (the service has defaults).
  static const std::map<std::string, std::vector<std::string>> kFields = {
      {"matmul", {"--m", "--n", "--k", "--dtype"}},
      {"mlp", {"--layers", "--batch", "--hidden", "--steps", "--learning-rate"}},
      {"cnn", {"--batch", "--channels", "--steps", "--learning-rate"}},
      {"transformer", {"--layers", "--batch", "--hidden", "--steps", "--learning-rate"}},
  };
  const std::map<std::string, std::pair<std::string, json>> values = {
      {"--m", {"m", f.m}},
      {"--n", {"n", f.n}},
      {"--k", {"k", f.k}},
      {"--dtype", {"dtype", f.dtype}},
      {"--layers", {"layers", f.layers}},
      {"--batch", {"batch", f.batch}},
      {"--hidden", {"hidden", f.hidden}},
      {"--channels", {"channels", f.channels}},
      {"--steps", {"steps", f.steps}},
      {"--learning-rate", {"learningRate", f.learning_rate}},
  };
  std::vector<std::string> allowed;
  if (!f.workload.empty()) {
    auto kind = kFields.find(f.workload);
    if (kind == kFields.end()) {
      return Status::InvalidArgument("--workload must be one of matmul, mlp, cnn, transformer");
    }
    allowed = kind->second;
    json w = json::object();
    for (const std::string& flag : allowed) {
      if (f.Given(flag)) w[values.at(flag).first] = values.at(flag).second;
    }
    body["workload"] = {{f.workload, w}};
  }
  for (const auto& [flag, value] : values) {
    if (!f.Given(flag) || std::find(allowed.begin(), allowed.end(), flag) != allowed.end()) {
      continue;
    }
    // --steps applies to any job (top-level "steps"); the shape flags only to their workload.
    if (flag == "--steps") {
      body["steps"] = f.steps;
      continue;
    }
    return Status::InvalidArgument(
        flag + " does not apply to " +
        (f.workload.empty() ? std::string("--program/--spec/--hlo") : "--workload " + f.workload));
  }
  if (f.Given("--precision")) {
    std::string p = f.precision;
    for (char& c : p) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    body["precision"] = p;
  }
  if (f.Given("--cores")) body["cores"] = f.cores;
  if (f.Given("--priority")) body["priority"] = f.priority;
  if (f.Given("--max-retries")) body["maxRetries"] = f.max_retries;
  if (f.Given("--seed")) body["seed"] = f.seed;
  if (f.Given("--request-id")) body["requestId"] = f.request_id;
  if (f.Given("--labels")) {
    auto labels = ParseKeyValues(f.labels, "--labels");
    if (!labels.ok()) return labels.status();
    body["labels"] = *labels;
  }
  if (f.Given("--timeout")) {
    Result<int64_t> seconds = ParseDurationSeconds(f.timeout);
    if (!seconds.ok()) return seconds.status();
    body["timeoutSeconds"] = *seconds;
  }
  return body;
}

int Submit(Context& ctx, const SubmitFlags& f) {
  Result<json> body = BuildSpec(f);
  if (!body.ok()) return ctx.UsageError(body.status().message());
  std::string zone = ctx.ZoneOrDefault(f.zone);
  if (zone.empty()) return ctx.UsageError("--zone is required (or set TPUEMU_ZONE)");
  // Inside a TPU VM worker the node defaults to the worker's own.
  std::string node = ctx.NodeOrDefault(f.node);
  if (node.empty()) return ctx.UsageError("--node is required");
  std::string path = ctx.ZonePath(zone) + "/nodes/" + UrlEncode(node) + "/jobs";
  if (!f.job_id.empty()) path += "?jobId=" + UrlEncode(f.job_id);
  Result<json> job = ctx.api->Call("POST", path, *body);
  if (!job.ok()) return ctx.Fail(job.status());
  const std::string name = job->value("name", std::string());
  ctx.Note("Submitted job [" + name + "].");
  if (!f.wait) {
    if (ctx.format_given()) ctx.PrintOne(*job, DefaultColumns(kJobColumns));
    return kExitOk;
  }
  Result<json> done = Follow(ctx, name, *job, /*stream=*/!ctx.format_given());
  if (!done.ok()) return ctx.Fail(done.status());
  if (ctx.format_given()) ctx.PrintOne(*done, DefaultColumns(kJobColumns));
  return Report(ctx, *done);
}

CLI::App* AddJobCommand(CLI::App& jobs, const std::string& verb, const std::string& help,
                        JobRef& ref) {
  CLI::App* cmd = jobs.add_subcommand(verb, help);
  cmd->add_option("JOB", ref.job, "Job id (or its full resource name)")->required();
  cmd->add_option("--node", ref.node, "TPU VM the job runs on");
  cmd->add_option("--zone", ref.zone, "Zone (default: TPUEMU_ZONE)");
  return cmd;
}

}  // namespace

void AddJobsCommands(CLI::App& app, Context& ctx) {
  CLI::App* jobs = app.add_subcommand("jobs", "Jobs on TPU VMs")->require_subcommand(1);

  auto f = std::make_shared<SubmitFlags>();
  CLI::App* s = jobs->add_subcommand("submit", "Submit a job to a TPU VM");
  s->add_option("--node", f->node, "TPU VM id (default: inside a TPU VM, its own)");
  s->add_option("--zone", f->zone, "Zone (default: TPUEMU_ZONE)");
  s->add_option("--workload", f->workload, "matmul | mlp | cnn | transformer");
  s->add_option("--program", f->program, "File with a program (engine IR as JSON)");
  s->add_option("--spec", f->spec, "File with the whole job spec (JSON)");
  s->add_option("--hlo", f->hlo, "File with an XLA HLO module (text, as JAX or XLA dumps it)");
  s->add_flag("--estimate-only", f->estimate_only,
              "With --hlo: price the module without running it (any size)");
  s->add_flag("--allow-unsupported", f->allow_unsupported,
              "With --hlo --estimate-only: price unsupported instructions at zero");
  auto opt = [&](const std::string& flag, auto& value, const std::string& help) {
    f->options[flag] = s->add_option(flag, value, help);
  };
  opt("--steps", f->steps, "Training steps (mlp, cnn) or repetitions");
  opt("--batch", f->batch, "Batch size (mlp, cnn)");
  opt("--layers", f->layers, "Hidden layers (mlp)");
  opt("--hidden", f->hidden, "Hidden width (mlp)");
  opt("--channels", f->channels, "Convolution channels (cnn)");
  opt("--learning-rate", f->learning_rate, "SGD learning rate (mlp, cnn)");
  opt("--m", f->m, "Rows of A (matmul)");
  opt("--n", f->n, "Columns of B (matmul)");
  opt("--k", f->k, "Inner dimension (matmul)");
  opt("--dtype", f->dtype, "bf16 | f32 (matmul)");
  opt("--precision", f->precision, "default | high | highest | f32");
  opt("--cores", f->cores, "TensorCores to use (--hlo: devices, unless the module gives them)");
  opt("--priority", f->priority, "Higher runs first (-1000..1000)");
  opt("--max-retries", f->max_retries,
      "Runs again after a fault interrupts it, up to N times (0..10; host maintenance)");
  opt("--seed", f->seed, "Random seed");
  opt("--labels", f->labels, "KEY=VALUE,...");
  opt("--request-id", f->request_id, "Idempotency key: resubmitting returns the same job");
  opt("--timeout", f->timeout, "Job time limit, e.g. 300s (TIMED_OUT past it)");
  s->add_option("--job-id", f->job_id, "Job id (default: generated)");
  s->add_flag("--wait", f->wait, "Stream the log and exit with the job's code");
  s->callback([&ctx, f] { ctx.action = [&ctx, f] { return Submit(ctx, *f); }; });

  struct ListFlags {
    std::string node, zone, state;
  };
  auto lf = std::make_shared<ListFlags>();
  CLI::App* l = jobs->add_subcommand("list", "List jobs of a zone or of one TPU VM");
  l->add_option("--node", lf->node, "Only this TPU VM's jobs");
  l->add_option("--zone", lf->zone, "Zone, or - for every zone (default: TPUEMU_ZONE)");
  l->add_option("--state", lf->state, "QUEUED | RUNNING | SUCCEEDED | FAILED | ...");
  l->callback([&ctx, lf] {
    ctx.action = [&ctx, lf] {
      std::string zone = ctx.ZoneOrDefault(lf->zone);
      if (zone.empty()) return ctx.UsageError("--zone is required (or set TPUEMU_ZONE)");
      std::string path =
          ctx.ZonePath(zone) + (lf->node.empty() ? "" : "/nodes/" + UrlEncode(lf->node)) + "/jobs";
      if (!lf->state.empty()) path += "?state=" + UrlEncode(lf->state);
      Result<json> items = ctx.ListAll(path, "jobs");
      if (!items.ok()) return ctx.Fail(items.status());
      ctx.PrintList(*items, DefaultColumns(kJobColumns));
      return kExitOk;
    };
  });

  auto describe = std::make_shared<JobRef>();
  AddJobCommand(*jobs, "describe", "Describe a job", *describe)->callback([&ctx, describe] {
    ctx.action = [&ctx, describe] {
      Result<std::string> name = JobName(ctx, *describe);
      if (!name.ok()) return ctx.UsageError(name.status().message());
      Result<json> job = ctx.api->Get("/v2/" + *name);
      if (!job.ok()) return ctx.Fail(job.status());
      ctx.PrintOne(*job, DefaultColumns(kJobColumns));
      return kExitOk;
    };
  });

  auto cancel = std::make_shared<JobRef>();
  AddJobCommand(*jobs, "cancel", "Cancel a queued or running job", *cancel)
      ->callback([&ctx, cancel] {
        ctx.action = [&ctx, cancel] {
          Result<std::string> name = JobName(ctx, *cancel);
          if (!name.ok()) return ctx.UsageError(name.status().message());
          Result<json> job = ctx.api->Call("POST", "/v2/" + *name + ":cancel", json::object());
          if (!job.ok()) return ctx.Fail(job.status());
          ctx.Note("Cancel requested for job [" + job->value("jobId", *name) + "] (" +
                   job->value("state", std::string()) + ").");
          if (ctx.format_given()) ctx.PrintOne(*job, DefaultColumns(kJobColumns));
          return kExitOk;
        };
      });

  auto logs = std::make_shared<JobRef>();
  auto follow = std::make_shared<bool>(false);
  CLI::App* lg = AddJobCommand(*jobs, "logs", "Print a job's log", *logs);
  lg->add_flag("--follow,-f", *follow, "Keep printing until the job ends");
  lg->callback([&ctx, logs, follow] {
    ctx.action = [&ctx, logs, follow] {
      Result<std::string> name = JobName(ctx, *logs);
      if (!name.ok()) return ctx.UsageError(name.status().message());
      if (!*follow) {
        int64_t offset = 0;
        Status s = DrainLogs(ctx, *name, &offset);
        return s.ok() ? kExitOk : ctx.Fail(s);
      }
      Result<json> job = ctx.api->Get("/v2/" + *name);
      if (!job.ok()) return ctx.Fail(job.status());
      Result<json> done = Follow(ctx, *name, *job, /*stream=*/true);
      return done.ok() ? kExitOk : ctx.Fail(done.status());
    };
  });

  auto wait = std::make_shared<JobRef>();
  AddJobCommand(*jobs, "wait", "Wait until a job ends; exit with its code", *wait)
      ->callback([&ctx, wait] {
        ctx.action = [&ctx, wait] {
          Result<std::string> name = JobName(ctx, *wait);
          if (!name.ok()) return ctx.UsageError(name.status().message());
          Result<json> job = ctx.api->Get("/v2/" + *name);
          if (!job.ok()) return ctx.Fail(job.status());
          Result<json> done = Follow(ctx, *name, *job, /*stream=*/false);
          if (!done.ok()) return ctx.Fail(done.status());
          if (ctx.format_given()) ctx.PrintOne(*done, DefaultColumns(kJobColumns));
          return Report(ctx, *done);
        };
      });

  auto del = std::make_shared<JobRef>();
  AddJobCommand(*jobs, "delete", "Delete a finished job", *del)->callback([&ctx, del] {
    ctx.action = [&ctx, del] {
      Result<std::string> name = JobName(ctx, *del);
      if (!name.ok()) return ctx.UsageError(name.status().message());
      Result<json> reply = ctx.api->Call("DELETE", "/v2/" + *name);
      if (!reply.ok()) return ctx.Fail(reply.status());
      ctx.Note("Deleted job [" + del->job + "].");
      return kExitOk;
    };
  });
}

}  // namespace tpuemu::cli
