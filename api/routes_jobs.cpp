// jobs.* (an emulator extension under a node): submit, list, get, cancel, wait, logs, metrics,
// hlo (the job's step as an HLO module, service/jobs/job_hlo.h; `?dialect=stablehlo` as
// StableHLO), delete. Submissions and cancels write a transaction, so they run on `writers`;
// reads answer inline. `:wait` never blocks a thread: it registers a JobManager terminal
// callback and a Scheduler timer, and whichever fires first answers (the other is ignored).
#include <memory>
#include <mutex>
#include <string>

#include "api/api_common.h"
#include "api/google_error.h"
#include "api/job_codec.h"
#include "api/resource_keys.h"
#include "api/routes.h"
#include "engine/stablehlo/import.h"
#include "engine/stablehlo/printer.h"
#include "service/common/clock.h"
#include "service/jobs/job_hlo.h"
#include "service/jobs/job_json.h"
#include "service/jobs/job_spec.h"

namespace tpuemu::api {
namespace {

using nlohmann::json;

constexpr int64_t kMaxWaitSeconds = 600;

std::string JobName(const PathParams& p) { return NodePath(p) + "/jobs/" + p.at("job"); }

// The module behind job `name`, from its stored spec: as it was given or lowered (`dialect` hlo),
// or printed as StableHLO (`dialect` stablehlo: engine/stablehlo/printer.h), which a job takes
// back as its hlo.text.
Result<json> StoredJobHlo(const service::JobManager& jobs, const std::string& name,
                          const std::string& dialect) {
  if (dialect != "hlo" && dialect != "stablehlo") {
    return Status::InvalidArgument("dialect must be hlo or stablehlo, not '" + dialect + "'");
  }
  Result<service::Job> job = jobs.Get(name);
  if (!job.ok()) return job.status();
  Result<service::JobSpec> spec = service::ParseJobSpec(
      json::parse(job->spec_json, nullptr, /*allow_exceptions=*/false), jobs.limits());
  if (!spec.ok()) return spec.status();
  Result<json> hlo = service::JobHlo(*spec);
  if (!hlo.ok() || dialect == "hlo") return hlo;
  json& text = (*hlo)["job"]["hlo"]["text"];
  if (!text.is_string()) return Status::Internal("the job's hlo has no text");
  Result<engine::hlo::Module> module = engine::stablehlo::ParseAnyModule(text.get<std::string>());
  if (!module.ok()) return module.status();
  Result<std::string> printed = engine::stablehlo::PrintStableHlo(*module);
  if (!printed.ok()) {
    return Status::FailedPrecondition("the job's module has no StableHLO form: " +
                                      printed.status().message());
  }
  text = std::move(*printed);
  (*hlo)["note"] = (*hlo)["note"].get<std::string>() + "; printed as StableHLO";
  return hlo;
}

HttpResponse ListResponse(const HttpRequest& req, service::JobListRequest list,
                          service::JobManager& jobs) {
  Result<service::PageRequest> page = ParsePage(req);
  if (!page.ok()) return ErrorResponse(page.status());
  list.page = *page;
  if (auto state = req.Query("state"); state && !state->empty()) {
    // An unknown state is not an error: no job is in it, as with any filter that matches nothing.
    Result<service::JobState> parsed = service::ParseJobState(*state);
    if (parsed.ok()) {
      list.state = *parsed;
    } else {
      list.unknown_state = true;
    }
  }
  // label=key=value, repeatable; every pair must match.
  for (auto [it, end] = req.query.equal_range("label"); it != end; ++it) {
    size_t eq = it->second.find('=');
    if (eq == std::string::npos || eq == 0) {
      return ErrorResponse(Status::InvalidArgument("label must be key=value"));
    }
    list.labels[it->second.substr(0, eq)] = it->second.substr(eq + 1);
  }
  Result<service::JobPage> result = jobs.List(list);
  if (!result.ok()) return ErrorResponse(result.status());
  // {"jobs":[...],"nextPageToken":"..."}, written as nlohmann would dump it (keys in order).
  std::string out = R"({"jobs":[)";
  for (size_t i = 0; i < result->jobs.size(); ++i) {
    if (i > 0) out += ',';
    service::AppendJobJson(result->jobs[i], out);
  }
  out += ']';
  if (!result->next_page_token.empty()) {
    out += R"(,"nextPageToken":)";
    out += json(result->next_page_token).dump();
  }
  out += '}';
  return JsonResponse(200, std::move(out));
}

// A long-poll's Responder, handed out once to whichever callback answers first and dropped then:
// a Responder keeps its connection's session alive, so one left in a pending timer would hold
// the session (and HttpServer::Stop's drain) until the timer fires.
class OnceResponder {
 public:
  explicit OnceResponder(Responder respond) : respond_(std::move(respond)) {}
  Responder Take() {
    std::lock_guard lock(mu_);
    Responder r;
    r.swap(respond_);
    return r;
  }

 private:
  std::mutex mu_;
  Responder respond_;  // guarded by mu_; empty once taken
};

HttpResponse JobReply(const Result<service::Job>& job) {
  if (!job.ok()) return ErrorResponse(job.status());
  return JsonResponse(200, service::RenderJob(*job));
}

// "60s", "1.5s" or "60" (seconds); INVALID_ARGUMENT otherwise or outside 0..kMaxWaitSeconds.
Result<int64_t> ParseTimeoutMs(const std::string& text) {
  std::string digits = text;
  if (!digits.empty() && digits.back() == 's') digits.pop_back();
  try {
    size_t used = 0;
    double seconds = std::stod(digits, &used);
    if (used == digits.size() && seconds >= 0 && seconds <= kMaxWaitSeconds) {
      return static_cast<int64_t>(seconds * 1000);
    }
  } catch (const std::exception&) {
  }
  return Status::InvalidArgument("timeout must be a duration like \"60s\" between 0s and " +
                                 std::to_string(kMaxWaitSeconds) + "s");
}

}  // namespace

void RegisterJobRoutes(Router& router, service::JobManager& jobs, service::Scheduler& scheduler,
                       WorkerThreads& writers) {
  const std::string node_jobs = "/v2/projects/{project}/locations/{location}/nodes/{node}/jobs";
  const std::string job = node_jobs + "/{job}";

  router.AddAsync("POST", node_jobs,
                  writers.Offload([&jobs](const HttpRequest& req, const PathParams& p) {
                    Result<json> body = ParseBody(req.body);
                    if (!body.ok()) return ErrorResponse(body.status());
                    // Decoded here, on the writer thread: an hlo module's text parses in
                    // milliseconds.
                    Result<service::JobSubmission> submission =
                        DecodeJobSubmission({p.at("project"), p.at("location"), p.at("node")},
                                            *body, req.Query("jobId").value_or(""), jobs.limits());
                    if (!submission.ok()) return ErrorResponse(submission.status());
                    return JobReply(jobs.Submit(std::move(submission).value()));
                  }));
  router.Add("GET", node_jobs, [&jobs](const HttpRequest& req, const PathParams& p) {
    return ListResponse(
        req, {.project = p.at("project"), .zone = p.at("location"), .node_id = p.at("node")}, jobs);
  });
  router.Add("GET", "/v2/projects/{project}/locations/{location}/jobs",
             [&jobs](const HttpRequest& req, const PathParams& p) {
               return ListResponse(req, {.project = p.at("project"), .zone = p.at("location")},
                                   jobs);
             });
  router.Add("GET", job, [&jobs](const HttpRequest&, const PathParams& p) {
    return JobReply(jobs.Get(JobName(p)));
  });
  router.AddAsync("POST", job + ":cancel",
                  writers.Offload([&jobs](const HttpRequest&, const PathParams& p) {
                    return JobReply(jobs.Cancel(JobName(p)));
                  }));
  router.AddAsync("DELETE", job, writers.Offload([&jobs](const HttpRequest&, const PathParams& p) {
    return ReplyStatus(jobs.Delete(JobName(p)));
  }));
  router.Add("GET", job + "/logs", [&jobs](const HttpRequest& req, const PathParams& p) {
    int64_t offset = 0;
    if (auto o = req.Query("offset")) {
      try {
        size_t used = 0;
        offset = std::stoll(*o, &used);
        if (used != o->size() || offset < 0) throw std::invalid_argument("offset");
      } catch (const std::exception&) {
        return ErrorResponse(Status::InvalidArgument("offset must be a non-negative integer"));
      }
    }
    Result<std::vector<std::string>> lines = jobs.Logs(JobName(p), offset);
    if (!lines.ok()) return ErrorResponse(lines.status());
    return JsonResponse(
        200, json{{"lines", *lines}, {"nextOffset", offset + static_cast<int64_t>(lines->size())}});
  });
  router.Add("GET", job + "/metrics", [&jobs](const HttpRequest&, const PathParams& p) {
    return Reply(jobs.Metrics(JobName(p)));
  });
  router.Add("GET", job + "/hlo", [&jobs](const HttpRequest& req, const PathParams& p) {
    return Reply(StoredJobHlo(jobs, JobName(p), req.Query("dialect").value_or("hlo")));
  });
  router.AddAsync(
      "GET", job + ":wait",
      [&jobs, &scheduler](const HttpRequest& req, const PathParams& p, Responder respond) {
        Result<int64_t> timeout_ms = ParseTimeoutMs(req.Query("timeout").value_or("60s"));
        if (!timeout_ms.ok()) return respond(ErrorResponse(timeout_ms.status()));
        const std::string name = JobName(p);
        auto once = std::make_shared<OnceResponder>(std::move(respond));
        scheduler.At(service::NowUnixMs() + *timeout_ms, [&jobs, name, once] {
          // Not terminal in time: the job as it is now (the client checks `state`).
          if (Responder r = once->Take()) r(JobReply(jobs.Get(name)));
        });
        jobs.OnTerminal(name, [once](Result<service::Job> job) {
          if (Responder r = once->Take()) r(JobReply(job));
        });
      });
}

}  // namespace tpuemu::api
