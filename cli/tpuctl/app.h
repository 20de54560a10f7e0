// tpuctl: the gcloud-like client of tpuemud (README "tpuctl"). RunTpuctl is the whole program:
// it builds the command tree (CLI11), runs the chosen command against the REST API, prints to
// `out`/`err` and returns the exit code (cli/tpuctl/api_client.h: 0 ok, 1 job FAILED, 2 usage,
// 3 API error, 4 tpuemud unreachable, 124 job TIMED_OUT, 130 job CANCELLED). Never throws.
//
// Context is what every command shares: the global flags, the API client (from --endpoint /
// TPUEMU_ENDPOINT, or inside a TPU VM worker its metadata server's tpuemu-api-endpoint) and the
// output helpers. Commands register themselves with
// Add*Commands and set `action`, which RunTpuctl runs after parsing. One Context per run; not
// thread-safe.
#pragma once

#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "cli/tpuctl/api_client.h"
#include "cli/tpuctl/filter.h"
#include "cli/tpuctl/metadata_defaults.h"
#include "cli/tpuctl/output_format.h"

namespace CLI {
class App;
}

namespace tpuemu::cli {

inline constexpr const char* kDefaultEndpoint = "http://127.0.0.1:8470";
inline constexpr const char* kDefaultProject = "my-proj";

struct Context {
  // Global flags.
  std::string endpoint;
  std::string project;
  std::string format_text;
  std::string filter_text;
  int limit = 0;  // 0 = no limit
  bool quiet = false;

  std::ostream* out = nullptr;
  std::ostream* err = nullptr;
  bool progress = false;  // stderr is a terminal: show progress lines

  std::function<int()> action;  // set by the chosen leaf command

  // Set up by RunTpuctl after parsing.
  OutputFormat format;
  Filter filter;
  std::unique_ptr<ApiClient> api;
  // Inside a TPU VM worker: its metadata server's project, zone and node (metadata_defaults.h).
  MetadataLookup metadata;

  bool format_given() const { return !format_text.empty(); }
  // --zone, else TPUEMU_ZONE, else (inside a worker) the worker's zone; "" when none.
  std::string ZoneOrDefault(const std::string& flag);
  // --node, else (inside a worker) the worker's node (tpu-env NODE_ID); "" when none.
  std::string NodeOrDefault(const std::string& flag);
  std::string ProjectPath() const { return "/v2/projects/" + project; }
  std::string ZonePath(const std::string& zone) const {
    return ProjectPath() + "/locations/" + zone;
  }
  // Prints "ERROR: (tpuctl) CODE: message" and returns the exit code for `status`.
  int Fail(const Status& status);
  // Prints a usage error ("ERROR: (tpuctl) message") and returns kExitUsage.
  int UsageError(const std::string& message);
  // A status line on stderr (gcloud's "Created tpu [x].").
  void Note(const std::string& line);
  // Fetches every page of a list (`key` is the array in each page), applies --filter and --limit.
  Result<nlohmann::json> ListAll(const std::string& path, const std::string& key,
                                 int page_size = 0);
  void PrintList(const nlohmann::json& items, const std::vector<Column>& default_columns);
  void PrintOne(const nlohmann::json& item, const std::vector<Column>& default_columns);
};

// Columns from a projection list known to be valid (the commands' defaults).
std::vector<Column> DefaultColumns(const std::string& projection);

// --zone, falling back to TPUEMU_ZONE; "" when neither is set (Context::ZoneOrDefault goes on to
// the metadata server).
std::string ZoneOrEnv(const std::string& flag);
// "a,b,c" -> {a, b, c} (empty items dropped).
std::vector<std::string> SplitList(const std::string& text);
// "k=v,k2=v2" -> map; INVALID_ARGUMENT naming `flag` when an item has no "=" or an empty key.
Result<std::map<std::string, std::string>> ParseKeyValues(const std::string& text,
                                                          const std::string& flag);

void AddTpuVmCommands(CLI::App& tpus, Context& ctx);
void AddCatalogCommands(CLI::App& parent, Context& ctx);
void AddJobsCommands(CLI::App& app, Context& ctx);
// queued-resources and operations under `compute tpus`.
void AddQueuedResourceAndOperationCommands(CLI::App& tpus, Context& ctx);
// simulate-maintenance-event and perform-maintenance under `compute tpus tpu-vm` (v2alpha1).
void AddMaintenanceCommands(CLI::App& tpu_vm, Context& ctx);
// `tpu-vm ssh|scp` under tpu-vm and `queued-resources ssh` under queued-resources.
void AddSshCommands(CLI::App& tpu_vm, CLI::App& queued_resources, Context& ctx);

int RunTpuctl(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace tpuemu::cli
