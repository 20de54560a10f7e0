// Observability routes: Prometheus /metrics, torch_xla-style metrics reports, per-node utilization
// history and the per-project events feed. Reads answer inline (one short store read each); the
// events long-poll never blocks a thread: it registers an EventLog waiter and a Scheduler timer,
// and whichever fires first answers (the other is ignored), like the jobs :wait route.
#include <atomic>
#include <charconv>
#include <memory>
#include <string>

#include "api/api_common.h"
#include "api/google_error.h"
#include "api/resource_keys.h"
#include "api/routes.h"
#include "service/common/clock.h"

namespace tpuemu::api {
namespace {

using nlohmann::json;

constexpr int64_t kMaxEventTimeoutMs = 60000;
constexpr int64_t kMaxWindowSeconds = 30 * 86400;

HttpResponse TextResponse(const Result<std::string>& text, const char* content_type) {
  if (!text.ok()) return ErrorResponse(text.status());
  HttpResponse r;
  r.status = 200;
  r.content_type = content_type;
  r.body = *text;
  return r;
}

// "3600s", "90m", "24h", "1.5h" -> seconds; `field` names the parameter in the error.
Result<double> ParseDurationSeconds(const std::string& text, const std::string& field,
                                    double max_seconds) {
  Status bad = Status::InvalidArgument(field + " must be a duration like \"3600s\", \"90m\" or " +
                                       "\"24h\" up to " + std::to_string(int64_t(max_seconds)) +
                                       "s, got \"" + text + "\"");
  if (text.empty()) return bad;
  double scale = 1;
  std::string number = text;
  switch (text.back()) {
    case 's':
      number.pop_back();
      break;
    case 'm':
      scale = 60, number.pop_back();
      break;
    case 'h':
      scale = 3600, number.pop_back();
      break;
    case 'd':
      scale = 86400, number.pop_back();
      break;
    default:
      break;
  }
  double value = 0;
  auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (number.empty() || ec != std::errc() || end != number.data() + number.size()) return bad;
  value *= scale;
  if (!(value >= 0) || value > max_seconds) return bad;
  return value;
}

json RenderEvent(const db::EventRow& e) {
  json j = {{"seq", e.seq},           {"time", e.time}, {"kind", e.kind},
            {"resource", e.resource}, {"zone", e.zone}, {"state", e.state}};
  if (e.previous_state) j["previousState"] = *e.previous_state;
  j["message"] = e.message;
  return j;
}

HttpResponse EventsReply(const Result<service::EventPage>& page) {
  if (!page.ok()) return ErrorResponse(page.status());
  json out = {{"events", json::array()}, {"nextSince", page->next_since}};
  for (const db::EventRow& e : page->events) out["events"].push_back(RenderEvent(e));
  return JsonResponse(200, out);
}

}  // namespace

void RegisterObservabilityRoutes(Router& router, service::Observability& obs,
                                 service::NodeManager& nodes, service::Scheduler& scheduler) {
  const std::string node = "/v2/projects/{project}/locations/{location}/nodes/{node}";

  // With auth on, a caller whose token is not granted every project sees no node name here
  // (api/auth.h); a project's per-node series are under the project, behind the API's rules.
  router.Add("GET", "/metrics", [&obs](const HttpRequest& req, const PathParams&) {
    return TextResponse(obs.prometheus().Render({.per_node = req.sees_every_project}),
                        service::kPrometheusContentType);
  });
  router.Add("GET", "/v2/projects/{project}/metrics",
             [&obs](const HttpRequest&, const PathParams& p) {
               if (p.at("project") == "-") {
                 return ErrorResponse(Status::InvalidArgument(
                     "project must name one project; GET /metrics has every project's series"));
               }
               return TextResponse(
                   obs.prometheus().Render({.aggregates = false, .project = p.at("project")}),
                   service::kPrometheusContentType);
             });
  router.Add("GET", node + "/metricsReport", [&obs](const HttpRequest&, const PathParams& p) {
    return TextResponse(obs.reports().ForNode({p.at("project"), p.at("location"), p.at("node")}),
                        "text/plain; charset=utf-8");
  });
  router.Add("GET", node + "/jobs/{job}/metricsReport",
             [&obs](const HttpRequest&, const PathParams& p) {
               return TextResponse(obs.reports().ForJob(NodePath(p) + "/jobs/" + p.at("job")),
                                   "text/plain; charset=utf-8");
             });
  router.Add("GET", node + "/metrics", [&obs, &nodes](const HttpRequest& req, const PathParams& p) {
    Result<double> window =
        ParseDurationSeconds(req.Query("window").value_or("3600s"), "window", kMaxWindowSeconds);
    if (!window.ok()) return ErrorResponse(window.status());
    if (*window <= 0) {
      return ErrorResponse(Status::InvalidArgument("window must be positive, like \"3600s\""));
    }
    const std::string name = NodePath(p);
    Result<std::vector<db::UtilizationRow>> rows =
        obs.utilization().History(name, static_cast<int64_t>(*window + 0.999));
    if (!rows.ok()) return ErrorResponse(rows.status());
    if (rows->empty()) {
      // A deleted node keeps its history until the retention drops it; an unknown one is 404.
      Result<service::Node> found = nodes.Get({p.at("project"), p.at("location"), p.at("node")});
      if (!found.ok()) return ErrorResponse(found.status());
    }
    json out = {{"node", name},
                {"intervalSeconds", static_cast<double>(obs.utilization().interval_ms()) / 1000},
                {"samples", json::array()}};
    for (const db::UtilizationRow& r : *rows) {
      out["samples"].push_back({{"time", service::FormatRfc3339(service::WallTime(
                                             std::chrono::milliseconds(r.time_unix_ms)))},
                                {"dutyCycle", r.duty_cycle},
                                {"tensorcoreUtilization", r.tensorcore_utilization},
                                {"mxuUtilization", r.mxu_utilization},
                                {"hbmUsedBytes", r.hbm_used_bytes},
                                {"hbmTotalBytes", r.hbm_total_bytes}});
    }
    return JsonResponse(200, out);
  });
  router.AddAsync(
      "GET", "/v2/projects/{project}/events",
      [&obs, &scheduler](const HttpRequest& req, const PathParams& p, Responder respond) {
        int64_t since = 0;
        if (auto s = req.Query("since"); s && !s->empty()) {
          auto [end, ec] = std::from_chars(s->data(), s->data() + s->size(), since);
          if (ec != std::errc() || end != s->data() + s->size() || since < 0) {
            return respond(ErrorResponse(Status::InvalidArgument(
                "since must be a non-negative event seq (the nextSince of a previous reply)")));
          }
        }
        Result<double> timeout = ParseDurationSeconds(req.Query("timeout").value_or("0s"),
                                                      "timeout", kMaxEventTimeoutMs / 1000);
        if (!timeout.ok()) return respond(ErrorResponse(timeout.status()));
        Result<service::PageRequest> page = ParsePage(req);
        if (!page.ok()) return respond(ErrorResponse(page.status()));
        const std::string project = p.at("project");
        const int size = page->page_size;
        service::EventLog& events = obs.events();
        Result<service::EventPage> now = events.List(project, since, size);
        if (!now.ok() || !now->events.empty() || *timeout <= 0) return respond(EventsReply(now));
        auto answered = std::make_shared<std::atomic<bool>>(false);
        auto reply = [&events, project, since, size, answered, respond] {
          if (!answered->exchange(true)) respond(EventsReply(events.List(project, since, size)));
        };
        const uint64_t id = events.WaitFor(project, since, reply);
        scheduler.At(service::NowUnixMs() + static_cast<int64_t>(*timeout * 1000),
                     [&events, id, reply] {
                       events.CancelWait(id);
                       reply();
                     });
      });
}

}  // namespace tpuemu::api
