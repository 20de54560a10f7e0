// `tpu-info` (tpu_info.h).
#include "cli/tpuctl/tpu_info.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>

#include <CLI/CLI.hpp>

#include "cli/tpuctl/app.h"

namespace tpuemu::cli {
namespace {

using nlohmann::json;

constexpr const char* kGoogleVendorId = "0x1ae0";
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// {device id, generation}: torch_xla's and JAX's _TPU_PCI_DEVICE_IDS.
constexpr std::pair<const char*, const char*> kTpuDeviceIds[] = {
    {"0x0027", "v2/v3"}, {"0x005e", "v4"}, {"0x0062", "v5p"}, {"0x0063", "v5e"}, {"0x006f", "v6e"}};

std::string ReadLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] != '.') names.emplace_back(e->d_name);
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// A table as the tool's README prints it: "| a | b |" rows under a "|---|" rule.
std::string Table(const std::string& title, const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(header.size());
  for (size_t c = 0; c < header.size(); ++c) {
    width[c] = header[c].size();
    for (const auto& row : rows) width[c] = std::max(width[c], row[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out = "|";
    for (size_t c = 0; c < cells.size(); ++c) {
      out += " " + cells[c] + std::string(width[c] - cells[c].size(), ' ') + " |";
    }
    return out + "\n";
  };
  std::string out = title + "\n\n" + line(header) + "|";
  for (size_t w : width) out += std::string(w + 2, '-') + "|";
  out += "\n";
  for (const auto& row : rows) out += line(row);
  return out + "\n";
}

std::string Fixed(double value, const char* format) {
  char text[64];
  snprintf(text, sizeof(text), format, value);
  return text;
}

std::string Percent(const TpuUsage& u, double ratio) {
  return u.sampled ? Fixed(ratio * 100, "%.2f%%") : "N/A";
}

std::string Hbm(const TpuUsage& u) {
  if (!u.sampled) return "N/A";
  return Fixed(static_cast<double>(u.hbm_used_bytes) / kGiB, "%.2f GiB") + " / " +
         Fixed(static_cast<double>(u.hbm_total_bytes) / kGiB, "%.2f GiB");
}

bool Wanted(const std::vector<std::string>& metrics, const std::string& name) {
  return metrics.empty() || std::find(metrics.begin(), metrics.end(), name) != metrics.end();
}

// "v4-32" -> its chips: the product of the node's topology ("2x2x4"), else nothing.
int ChipsOf(const json& node) {
  const std::string topology =
      node.value("acceleratorConfig", json::object()).value("topology", "");
  int chips = topology.empty() ? 0 : 1;
  std::stringstream in(topology);
  for (std::string dim; std::getline(in, dim, 'x');) chips *= std::max(1, std::atoi(dim.c_str()));
  return chips;
}

// Fills the report's accelerator type and usage from tpuemud: the node, its last utilization
// sample, its running job. Leaves usage unsampled when any of it cannot be read.
void FetchUsage(Context& ctx, const std::string& node_path, TpuInfoReport& report) {
  Result<json> node = ctx.api->Get(node_path);
  if (!node.ok()) return;
  report.accelerator_type = node->value("acceleratorType", "");
  const std::string type = report.accelerator_type;
  report.tensorcores_per_chip =
      type.rfind("v5litepod", 0) == 0 || type.rfind("v6e", 0) == 0 || type.rfind("v5e", 0) == 0 ? 1
                                                                                                : 2;
  const int chips = ChipsOf(*node);
  Result<json> metrics = ctx.api->Get(node_path + "/metrics?window=120s");
  if (!metrics.ok() || chips <= 0) return;
  const json samples = metrics->value("samples", json::array());
  if (samples.empty()) return;
  const json& last = samples.back();
  TpuUsage& u = report.usage;
  u.sampled = true;
  u.duty_cycle = last.value("dutyCycle", 0.0);
  u.tensorcore_utilization = last.value("tensorcoreUtilization", 0.0);
  u.hbm_used_bytes = last.value("hbmUsedBytes", int64_t{0}) / chips;
  u.hbm_total_bytes = last.value("hbmTotalBytes", int64_t{0}) / chips;
  Result<json> jobs = ctx.api->Get(node_path + "/jobs?pageSize=100");
  if (!jobs.ok()) return;
  for (const json& job : jobs->value("jobs", json::array())) {
    if (job.value("state", "") == "RUNNING") u.job = job.value("name", "");
  }
}

std::string Header(const TpuInfoReport& report) {
  const std::string type = report.accelerator_type.substr(0, report.accelerator_type.find('-'));
  return "Libtpu version: N/A (tpuemu emulates the chips; no libtpu)\nAccelerator type: " +
         (type.empty() ? std::string("N/A") : type) + "\n\n";
}

}  // namespace

std::vector<TpuChip> FindTpuChips(const std::string& sys, const std::string& dev) {
  std::vector<TpuChip> chips;
  const std::string devices = sys + "/bus/pci/devices/";
  for (const std::string& address : Entries(devices)) {
    if (ReadLine(devices + address + "/vendor") != kGoogleVendorId) continue;
    TpuChip chip{address, ReadLine(devices + address + "/device"), ""};
    if (TpuChipType(chip.device_id) == "TPU chip") continue;
    chips.push_back(chip);
  }
  for (size_t i = 0; i < chips.size(); ++i) {
    const std::string accel = dev + "/accel" + std::to_string(i);
    char group[256] = {0};
    const std::string link = devices + chips[i].address + "/iommu_group";
    const ssize_t n = readlink(link.c_str(), group, sizeof(group) - 1);
    const std::string g = n > 0 ? std::string(group, n) : "";
    const std::string vfio = dev + "/vfio/" + g.substr(g.rfind('/') + 1);
    if (Exists(accel)) {
      chips[i].device_path = "/dev/accel" + std::to_string(i);
    } else if (!g.empty() && Exists(vfio)) {
      chips[i].device_path = "/dev/vfio/" + g.substr(g.rfind('/') + 1);
    }
  }
  return chips;
}

std::string TpuChipType(const std::string& device_id) {
  for (const auto& [id, generation] : kTpuDeviceIds) {
    if (device_id == id) return std::string("TPU ") + generation + " chip";
  }
  return "TPU chip";
}

const std::vector<std::string>& TpuInfoMetrics() {
  static const std::vector<std::string> names = {"hbm_usage", "duty_cycle_percent",
                                                 "tensorcore_utilization"};
  return names;
}

std::string RenderTpuInfo(const TpuInfoReport& report, const std::vector<std::string>& metrics) {
  const TpuUsage& u = report.usage;
  std::string out = Header(report);
  if (metrics.empty()) {
    std::vector<std::vector<std::string>> rows;
    for (const TpuChip& chip : report.chips) {
      rows.push_back({chip.device_path.empty() ? chip.address : chip.device_path,
                      TpuChipType(chip.device_id), "1", u.job.empty() ? "None" : "tpuemud"});
    }
    out += Table("TPU Chips", {"Chip", "Type", "Devices", "PID"}, rows);
    if (!u.job.empty()) out += "Running job: " + u.job + " (in tpuemud, outside this VM)\n\n";
  }
  if (Wanted(metrics, "hbm_usage") || Wanted(metrics, "duty_cycle_percent")) {
    std::vector<std::vector<std::string>> rows;
    for (size_t i = 0; i < report.chips.size(); ++i) {
      std::vector<std::string> row = {std::to_string(i)};
      if (Wanted(metrics, "hbm_usage")) row.push_back(Hbm(u));
      if (Wanted(metrics, "duty_cycle_percent")) row.push_back(Percent(u, u.duty_cycle));
      rows.push_back(row);
    }
    std::vector<std::string> header = {"Chip"};
    if (Wanted(metrics, "hbm_usage")) header.push_back("HBM Usage (GiB)");
    if (Wanted(metrics, "duty_cycle_percent")) header.push_back("Duty cycle");
    const std::string title = metrics.empty()                         ? "TPU Runtime Utilization"
                              : !Wanted(metrics, "hbm_usage")         ? "TPU Duty Cycle"
                              : Wanted(metrics, "duty_cycle_percent") ? "TPU Runtime Utilization"
                                                                      : "TPU HBM Usage";
    out += Table(title, header, rows);
  }
  if (Wanted(metrics, "tensorcore_utilization")) {
    std::vector<std::vector<std::string>> rows;
    const size_t cores = report.chips.size() * static_cast<size_t>(report.tensorcores_per_chip);
    for (size_t core = 0; core < cores; ++core) {
      rows.push_back({std::to_string(core), Percent(u, u.tensorcore_utilization)});
    }
    out += Table("TensorCore Utilization", {"Core ID", "TensorCore Utilization"}, rows);
  }
  if (!u.sampled) out += "No utilization samples from tpuemud for this host's node (yet).\n";
  return out;
}

void AddTpuInfoCommand(CLI::App& app, Context& ctx) {
  struct Flags {
    bool streaming = false;
    double rate = 0;
    bool version = false;
    bool process = false;
    std::vector<std::string> metrics;
    std::string node;
    std::string zone;
  };
  auto flags = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand(
      "tpu-info", "This host's TPU chips, their HBM use and duty cycle (Google's tpu-info)");
  cmd->add_flag("--streaming", flags->streaming, "Refresh until interrupted");
  cmd->add_option("--rate", flags->rate, "Seconds between refreshes (implies --streaming)")
      ->check(CLI::Range(0.1, 3600.0));
  cmd->add_flag("--version,-v", flags->version, "Versions and the accelerator type");
  cmd->add_flag("--process,-p", flags->process, "Processes using the chips");
  cmd->add_option("--metric", flags->metrics, "Only this table (repeatable)")
      ->check(CLI::IsMember(TpuInfoMetrics()));
  cmd->add_option("--node", flags->node, "Node (default: this worker's)");
  cmd->add_option("--zone", flags->zone, "Zone (default: this worker's)");
  cmd->callback([&ctx, flags] {
    ctx.action = [&ctx, flags] {
      std::ostream& out = *ctx.out;
      const std::string zone = ctx.ZoneOrDefault(flags->zone);
      const std::string node = ctx.NodeOrDefault(flags->node);
      auto report = [&] {
        TpuInfoReport r;
        r.chips = FindTpuChips();
        if (!zone.empty() && !node.empty())
          FetchUsage(ctx, ctx.ZonePath(zone) + "/nodes/" + node, r);
        return r;
      };
      if (flags->version) {
        const TpuInfoReport r = report();
        const std::string type = r.accelerator_type.substr(0, r.accelerator_type.find('-'));
        out << "- tpu-info version: tpuemu\n- libtpu version: N/A (tpuemu emulates the chips)\n"
            << "- accelerator type: " << (type.empty() ? "N/A" : type) << "\n";
        return kExitOk;
      }
      if (flags->process) {
        const TpuInfoReport r = report();
        std::vector<std::vector<std::string>> rows;
        for (const TpuChip& chip : r.chips) {
          rows.push_back({chip.device_path, r.usage.job.empty() ? "None" : "tpuemud",
                          r.usage.job.empty() ? "None" : r.usage.job});
        }
        out << Table("TPU Process Info", {"Chip", "PID", "Process Name"}, rows);
        return kExitOk;
      }
      const bool streaming = flags->streaming || flags->rate > 0;
      const double rate = flags->rate > 0 ? flags->rate : 1.0;
      for (;;) {
        const TpuInfoReport r = report();
        if (r.chips.empty() && !streaming) {
          *ctx.err << "No TPU chips found on this host (/sys/bus/pci/devices).\n";
          return kExitApiError;
        }
        if (streaming) {
          const std::time_t now = std::time(nullptr);
          char when[32];
          std::strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&now));
          out << "\x1b[H\x1b[2J"
              << "Refresh rate: " << Fixed(rate, "%g") << "s\nLast update: " << when << "\n";
        }
        out << RenderTpuInfo(r, flags->metrics) << std::flush;
        if (!streaming) return kExitOk;
        std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int64_t>(rate * 1000)));
      }
    };
  });
}

}  // namespace tpuemu::cli
