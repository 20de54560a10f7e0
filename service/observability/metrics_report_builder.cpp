#include "service/observability/metrics_report_builder.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

#include <nlohmann/json.hpp>

#include "service/observability/transfer_model.h"

namespace tpuemu::service {
namespace {

using nlohmann::json;

struct Collected {
  ReportMetric compile{"CompileTime", MetricUnit::kTime, {}};
  ReportMetric execute{"ExecuteTime", MetricUnit::kTime, {}};
  ReportMetric to_device{"TransferToDeviceTime", MetricUnit::kTime, {}};
  ReportMetric from_device{"TransferFromDeviceTime", MetricUnit::kTime, {}};
  ReportMetric inbound{"InboundData", MetricUnit::kBytes, {}};
  ReportMetric outbound{"OutboundData", MetricUnit::kBytes, {}};
  int64_t cached = 0, uncached = 0, mark_step = 0;
};

int64_t SecondsToNs(double seconds) { return static_cast<int64_t>(seconds * 1e9 + 0.5); }

void SortByTime(ReportMetric& m) {
  std::stable_sort(m.samples.begin(), m.samples.end(),
                   [](const auto& a, const auto& b) { return a.timestamp_ns < b.timestamp_ns; });
}

}  // namespace

std::optional<int64_t> ParseRfc3339Ns(const std::string& text) {
  std::tm tm{};
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &consumed) != 6) {
    return std::nullopt;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  int64_t seconds = timegm(&tm);
  size_t i = static_cast<size_t>(consumed);
  int64_t frac_ns = 0;
  if (i < text.size() && text[i] == '.') {
    int64_t scale = 100000000;
    for (++i; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
      frac_ns += (text[i] - '0') * scale;
      scale /= 10;
    }
  }
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
    int hh = 0, mm = 0;
    if (std::sscanf(text.c_str() + i + 1, "%2d:%2d", &hh, &mm) != 2) return std::nullopt;
    int64_t offset = (hh * 3600 + mm * 60) * (text[i] == '+' ? 1 : -1);
    seconds -= offset;
  } else if (i >= text.size() || (text[i] != 'Z' && text[i] != 'z')) {
    return std::nullopt;
  }
  return seconds * 1000000000 + frac_ns;
}

MetricsReportBuilder::MetricsReportBuilder(db::Store& store, NodeManager& nodes)
    : nodes_(nodes), jobs_(store), programs_(store) {}

Result<std::vector<MetricsArena>> MetricsReportBuilder::Collect(
    const std::vector<db::JobRow>& jobs) const {
  Collected c;
  for (const db::JobRow& job : jobs) {
    Result<std::vector<db::JobStepRow>> steps = jobs_.Steps(job.name);
    if (!steps.ok()) return steps.status();
    Result<db::JobProgramRow> program = programs_.Get(job.name);
    if (!program.ok() && program.status().code() != StatusCode::kNotFound) {
      return program.status();
    }
    const int64_t start_ns = job.start_time ? ParseRfc3339Ns(*job.start_time).value_or(0) : 0;
    engine::Generation generation = kTransferFallback;
    if (Result<Node> node = nodes_.Get({job.project, job.zone, job.node_id}); node.ok()) {
      generation = node->type.generation;
    }
    std::optional<bool> hit;
    double compile_seconds = 0;
    int64_t compile_end_ns = start_ns;
    int64_t to_device_bytes = -1, from_device_bytes = -1;
    if (program.ok()) {
      hit = program->compile_cache_hit;
      compile_seconds = program->compile_seconds;
      compile_end_ns = program->compile_end_unix_ns;
      to_device_bytes = program->transfer_to_device_bytes_per_step;
      from_device_bytes = program->transfer_from_device_bytes_per_step;
    } else if (job.result_json) {
      // A job that ran before schema v3: its result's metrics still tell hit/miss and the time.
      json result = json::parse(*job.result_json, nullptr, false);
      if (!result.is_discarded() && result.contains("metrics") &&
          result["metrics"].contains("compileCacheHit")) {
        hit = result["metrics"].value("compileCacheHit", false);
        compile_seconds = result["metrics"].value("compileSeconds", 0.0);
        compile_end_ns = start_ns + SecondsToNs(compile_seconds);
      }
    }
    if (hit) {
      if (*hit) {
        ++c.cached;
      } else {
        ++c.uncached;
        c.compile.samples.push_back({compile_end_ns, compile_seconds * 1e9});
      }
    }
    int64_t t = compile_end_ns;
    for (const db::JobStepRow& s : *steps) {
      t += SecondsToNs(s.host_seconds);
      ++c.mark_step;
      c.execute.samples.push_back({t, s.emulated_seconds * 1e9});
      if (to_device_bytes >= 0) {
        c.to_device.samples.push_back({t, TransferSeconds(generation, to_device_bytes) * 1e9});
        c.from_device.samples.push_back({t, TransferSeconds(generation, from_device_bytes) * 1e9});
        c.inbound.samples.push_back({t, static_cast<double>(to_device_bytes)});
        c.outbound.samples.push_back({t, static_cast<double>(from_device_bytes)});
      }
    }
  }
  MetricsArena lazy;
  lazy.counters = {
      {"CachedCompile", c.cached}, {"MarkStep", c.mark_step}, {"UncachedCompile", c.uncached}};
  MetricsArena runtime;
  for (ReportMetric* m :
       {&c.compile, &c.execute, &c.to_device, &c.from_device, &c.inbound, &c.outbound}) {
    SortByTime(*m);
    runtime.metrics.push_back(std::move(*m));
  }
  runtime.counters = {{"CreateCompileHandles", c.uncached}};
  return std::vector<MetricsArena>{std::move(lazy), std::move(runtime)};
}

Result<std::string> MetricsReportBuilder::ForJob(const std::string& job_name) const {
  Result<db::JobRow> job = jobs_.Get(job_name);
  if (!job.ok()) return job.status();
  Result<std::vector<MetricsArena>> arenas = Collect({*job});
  if (!arenas.ok()) return arenas.status();
  return RenderMetricsReport(*arenas);
}

Result<std::string> MetricsReportBuilder::ForNode(const NodeKey& node) const {
  Result<std::vector<db::JobRow>> jobs =
      jobs_.List({node.project, node.zone, node.node_id, ""}, 0, 0);
  if (!jobs.ok()) return jobs.status();
  if (jobs->empty()) {
    // Jobs outlive their node; a node with neither is unknown.
    Result<Node> found = nodes_.Get(node);
    if (!found.ok()) return found.status();
  }
  Result<std::vector<MetricsArena>> arenas = Collect(*jobs);
  if (!arenas.ok()) return arenas.status();
  return RenderMetricsReport(*arenas);
}

}  // namespace tpuemu::service
