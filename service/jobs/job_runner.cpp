// JobManager::Run: one job's execution on a pool task — compile (through the cache), execute the
// steps (every shard of a data-parallel step, then the gradient all-reduce cost), persist each
// step, and write the terminal state. Split from job_manager.cpp, which owns queues and the API.
#include <chrono>
#include <cstdio>

#include "db/job_program_repository.h"
#include "engine/executor.h"
#include "engine/timing.h"
#include "service/common/clock.h"
#include "service/jobs/job_manager.h"
#include "service/observability/transfer_model.h"
#include "service/workloads/workloads.h"

namespace tpuemu::service {
namespace {

using nlohmann::json;

json Summarize(const engine::Tensor& t) {
  json out;
  out["dtype"] = engine::DTypeName(t.dtype());
  out["shape"] = t.shape().dims;
  double sum = 0;
  json sample = json::array();
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    double v = t.dtype() == engine::DType::kI32 ? t.i32()[i] : t.f32()[i];
    sum += v;
    if (i < 4) sample.push_back(v);
  }
  out["checksum"] = sum;
  out["sample"] = sample;
  return out;
}

// The per-op profile of one step of `program`: every op that does work (parameters and constants
// are already in HBM), with its unit and its planned cost. Served by .../metrics as "ops".
json OpsProfile(const engine::CompiledProgram& program) {
  json ops = json::array();
  for (const engine::OpPlan& p : program.plans) {
    if (p.kind == engine::OpKind::kParameter || p.kind == engine::OpKind::kConstant) continue;
    ops.push_back({{"id", p.id},
                   {"op", engine::OpKindName(p.kind)},
                   {"unit", p.on_mxu ? "mxu" : "vpu"},
                   {"cycles", p.cost.cycles},
                   {"emulatedSeconds", p.cost.seconds},
                   {"flops", p.cost.flops},
                   {"mxuUtilization", p.cost.mxu_utilization},
                   {"hbmBytes", p.cost.hbm_bytes}});
  }
  return ops;
}

std::string Reason(const Status& s) {
  return std::string(StatusCodeName(s.code())) + ": " + s.message();
}

double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

void JobManager::Run(const std::string& name) {
  std::shared_ptr<Active> active;
  {
    std::lock_guard lock(mu_);
    if (auto it = active_.find(name); it != active_.end()) active = it->second;
  }
  std::string node_name;
  // Marks the node free and starts its next job; the last thing this task does.
  auto release = [&] {
    std::lock_guard lock(mu_);
    if (!node_name.empty()) {
      queues_[node_name].running.clear();
      PumpLocked(node_name);
    }
    if (--running_tasks_ == 0) idle_.notify_all();
  };
  // Shutdown cancels without a reason: the job is interrupted, not cancelled.
  auto stopped_by_shutdown = [&] {
    std::lock_guard lock(mu_);  // mu_ before Active::mu, as in CancelLocked
    std::lock_guard alock(active->mu);
    return stopping_ && active->cancel_state.empty();
  };
  auto cancel_outcome = [&](std::string* state, std::string* reason) {
    std::lock_guard alock(active->mu);
    *state = active->cancel_state.empty() ? "CANCELLED" : active->cancel_state;
    *reason = active->cancel_reason.empty() ? "cancelled" : active->cancel_reason;
  };

  db::JobRow row;
  bool began = false;
  Status started = store_.Transaction([&](db::Txn& txn) -> Status {
    Result<db::JobRow> r = jobs_.Get(txn, name);
    if (!r.ok()) return r.status();
    row = *r;
    if (row.state != "QUEUED") return Status::Ok();
    began = true;
    row.state = "RUNNING";
    row.start_time = NowRfc3339();
    TPUEMU_RETURN_IF_ERROR(jobs_.Update(txn, row));
    return jobs_.AppendLog(txn, name, "running (attempt " + std::to_string(row.attempt) + ")");
  });
  node_name = "projects/" + row.project + "/locations/" + row.zone + "/nodes/" + row.node_id;
  if (started.ok() && began) NotifyTransition(row, "QUEUED");
  if (!started.ok() || !active || row.state != "RUNNING") {
    if (active)
      Finish(name, "FAILED", kExitFailed, "could not start: " + started.message(), json());
    release();
    return;
  }
  // A failure that follows a cancel request (e.g. the node vanished because it is being deleted)
  // reports the cancel and its reason.
  auto fail = [&](const std::string& state, int code, const std::string& reason) {
    if (active->cancel && !stopped_by_shutdown()) {
      std::string cancel_state, cancel_reason;
      cancel_outcome(&cancel_state, &cancel_reason);
      Finish(name, cancel_state, cancel_state == "TIMED_OUT" ? kExitTimedOut : kExitCancelled,
             cancel_reason, json());
    } else {
      Finish(name, state, code, reason, json());
    }
    release();
  };

  Result<JobSpec> spec = ParseJobSpec(json::parse(row.spec_json, nullptr, false), limits_);
  Result<Node> node = nodes_.Get(NodeKey{row.project, row.zone, row.node_id});
  if (!spec.ok()) return fail("FAILED", kExitFailed, "stored spec: " + Reason(spec.status()));
  if (!node.ok()) return fail("FAILED", kExitFailed, Reason(node.status()));
  // The job's own timeoutSeconds, or the server's cap when that is tighter (or the job has none).
  int64_t timeout_seconds = spec->timeout_seconds;
  std::string timeout_reason = "the job exceeded timeoutSeconds=" + std::to_string(timeout_seconds);
  if (limits_.max_job_seconds > 0 &&
      (timeout_seconds == 0 || timeout_seconds > limits_.max_job_seconds)) {
    timeout_seconds = limits_.max_job_seconds;
    timeout_reason = "the job exceeded the server's maximum job duration of " +
                     std::to_string(timeout_seconds) + "s (--max-job-seconds)";
  }
  if (timeout_seconds > 0) {
    std::weak_ptr<Active> weak = active;
    scheduler_.At(NowUnixMs() + timeout_seconds * 1000, [weak, timeout_reason] {
      std::shared_ptr<Active> a = weak.lock();
      if (!a) return;
      {
        std::lock_guard alock(a->mu);
        if (a->cancel_state.empty()) {
          a->cancel_state = "TIMED_OUT";
          a->cancel_reason = timeout_reason;
        }
      }
      a->cancel = true;
    });
  }
  const engine::Slice slice(node->type);
  Result<Workload> workload = Workload::Build(*spec);
  if (!workload.ok()) return fail("FAILED", kExitFailed, Reason(workload.status()));
  engine::CompileOptions options;
  options.precision = spec->precision;
  options.tensorcores = workload->shards() > 1 ? 1 : spec->cores;
  Result<engine::CompileCache::Lookup> compiled =
      cache_.GetOrCompile(workload->graph(), slice, options);
  if (!compiled.ok()) return fail("FAILED", kExitFailed, Reason(compiled.status()));
  const engine::CompiledProgram& program = *compiled->program;
  // Stored with the job from now on (result.profile, hidden from the job's JSON), so .../metrics
  // shows the profile while the job runs, after it fails and after a restart.
  json profile = {{"ops", OpsProfile(program)},
                  {"hbmPeakBytesPerTensorCore", program.peak_hbm_bytes_per_tensorcore}};
  {
    char line[256];
    std::snprintf(line, sizeof line,
                  "compile: %s (%.3f ms), %zu ops on %s x%d TensorCore(s), peak HBM %lld bytes "
                  "per TensorCore",
                  compiled->hit ? "cache hit" : "cache miss", compiled->compile_seconds * 1e3,
                  program.plans.size(), slice.type().name.c_str(), spec->cores,
                  static_cast<long long>(program.peak_hbm_bytes_per_tensorcore));
    // What the metrics report and utilization read while the job runs
    // (db/job_program_repository.h).
    const StepTransferBytes transfer = TransferBytesPerStep(workload->graph(), workload->shards());
    const db::JobProgramRow record{
        .job = name,
        .compile_cache_hit = compiled->hit,
        .compile_seconds = compiled->compile_seconds,
        .compile_end_unix_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count(),
        .tensorcores = workload->shards() > 1 ? workload->shards() : spec->cores,
        .hbm_peak_bytes_per_tensorcore = program.peak_hbm_bytes_per_tensorcore,
        .transfer_to_device_bytes_per_step = transfer.to_device,
        .transfer_from_device_bytes_per_step = transfer.from_device};
    (void)store_.Transaction([&](db::Txn& txn) -> Status {
      TPUEMU_RETURN_IF_ERROR(db::JobProgramRepository(store_).Put(txn, record));
      Result<db::JobRow> current = jobs_.Get(txn, name);
      if (!current.ok()) return current.status();
      current->result_json = json{{"profile", profile}}.dump();
      TPUEMU_RETURN_IF_ERROR(jobs_.Update(txn, *current));
      return jobs_.AppendLog(txn, name, line);
    });
  }

  const int64_t allreduce_cycles =
      workload->shards() > 1
          ? engine::AllReduceCycles(slice.spec(), workload->GradientBytes(), workload->shards())
          : 0;
  const double clock_hz = slice.spec().clock_hz;
  const double peak_flops_per_tc_cycle = slice.spec().PeakBf16FlopsPerTensorCore() / clock_hz;
  engine::ExecuteOptions exec;
  exec.cancel = &active->cancel;
  exec.pool = &pool_;
  exec.pool_group = name;
  json outputs = json::object();
  std::optional<double> final_loss;
  double total_seconds = 0, total_flops = 0, host_total = 0;
  int64_t total_cycles = 0;
  for (int64_t step = 0; step < spec->steps; ++step) {
    if (active->cancel) break;
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<engine::ExecutionResult> results;
    Status failed;
    for (int shard = 0; shard < workload->shards() && failed.ok(); ++shard) {
      Result<engine::ExecutionResult> r =
          engine::Execute(program, workload->graph(), workload->Feeds(shard), exec);
      if (r.ok()) {
        results.push_back(std::move(r).value());
      } else {
        failed = r.status();
      }
    }
    if (!failed.ok()) {
      if (failed.code() == StatusCode::kCancelled) break;
      return fail("FAILED", kExitFailed, Reason(failed));
    }
    workload->ApplySgd(results);
    db::JobStepRow m;
    m.step = step;
    m.cycles = program.totals.cycles + allreduce_cycles;
    m.emulated_seconds = static_cast<double>(m.cycles) / clock_hz;
    m.flops = program.totals.flops * static_cast<double>(results.size());
    const int cores_used = workload->shards() > 1 ? workload->shards() : spec->cores;
    m.mxu_utilization =
        m.cycles > 0
            ? m.flops / (static_cast<double>(m.cycles) * cores_used * peak_flops_per_tc_cycle)
            : 0;
    if (workload->loss_id()) {
      double loss = 0;
      for (const auto& r : results) loss += r.outputs.at(*workload->loss_id()).f32()[0];
      m.loss = loss / static_cast<double>(results.size());
      final_loss = m.loss;
    }
    m.host_seconds = Since(t0);
    total_cycles += m.cycles;
    total_seconds += m.emulated_seconds;
    total_flops += m.flops;
    host_total += m.host_seconds;
    char line[256];
    std::snprintf(line, sizeof line,
                  "step %lld loss=%s step_time=%.3e s cycles=%lld mxu_util=%.3f host=%.3f ms",
                  static_cast<long long>(step), m.loss ? std::to_string(*m.loss).c_str() : "n/a",
                  m.emulated_seconds, static_cast<long long>(m.cycles), m.mxu_utilization,
                  m.host_seconds * 1e3);
    Status s = store_.Transaction([&](db::Txn& txn) -> Status {
      TPUEMU_RETURN_IF_ERROR(jobs_.AppendStep(txn, name, m));
      return jobs_.AppendLog(txn, name, line);
    });
    if (!s.ok()) return fail("FAILED", kExitFailed, "storing step metrics: " + s.message());
    if (step + 1 == spec->steps) {
      for (const auto& [id, t] : results[0].outputs) outputs[id] = Summarize(t);
    }
  }
  if (active->cancel) {
    std::string state, reason;
    cancel_outcome(&state, &reason);
    if (stopped_by_shutdown()) {
      release();  // stays RUNNING in the store: Recover() re-queues it after the restart
      return;
    }
    return fail(state, state == "TIMED_OUT" ? kExitTimedOut : kExitCancelled, reason);
  }
  json result;
  result["profile"] = profile;
  result["outputs"] = outputs;
  if (final_loss) result["finalLoss"] = *final_loss;
  json& metrics = result["metrics"];
  metrics["steps"] = spec->steps;
  metrics["compileCacheHit"] = compiled->hit;
  metrics["compileSeconds"] = compiled->compile_seconds;
  metrics["cyclesPerStep"] = spec->steps > 0 ? total_cycles / spec->steps : 0;
  metrics["emulatedSecondsTotal"] = total_seconds;
  metrics["flopsTotal"] = total_flops;
  metrics["emulatedTflops"] = total_seconds > 0 ? total_flops / total_seconds / 1e12 : 0;
  metrics["mxuUtilization"] = program.totals.mxu_utilization;
  metrics["hbmPeakBytesPerTensorCore"] = program.peak_hbm_bytes_per_tensorcore;
  metrics["hbmCapacityBytesPerTensorCore"] = program.hbm_capacity_bytes_per_tensorcore;
  metrics["allReduceCyclesPerStep"] = allreduce_cycles;
  metrics["hostSecondsTotal"] = host_total;
  metrics["acceleratorType"] = slice.type().name;
  Finish(name, "SUCCEEDED", kExitSucceeded, "completed " + std::to_string(spec->steps) + " steps",
         result);
  release();
}

}  // namespace tpuemu::service
