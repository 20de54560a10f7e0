#include "cli/tpuctl/app.h"

#include <unistd.h>

#include <cstdlib>
#include <ostream>
#include <sstream>

#include <CLI/CLI.hpp>

#include "cli/tpuctl/tpu_info.h"

namespace tpuemu::cli {

using nlohmann::json;

int Context::Fail(const Status& status) {
  *err << "ERROR: (tpuctl) " << StatusCodeName(status.code()) << ": " << status.message() << "\n";
  if (api && api->IsUnreachable(status)) return kExitUnreachable;
  return kExitApiError;
}

int Context::UsageError(const std::string& message) {
  *err << "ERROR: (tpuctl) " << message << "\n";
  return kExitUsage;
}

void Context::Note(const std::string& line) { *err << line << "\n"; }

Result<json> Context::ListAll(const std::string& path, const std::string& key, int page_size) {
  json items = json::array();
  std::string token;
  const char sep = path.find('?') == std::string::npos ? '?' : '&';
  do {
    std::string target = path;
    std::string query;
    if (page_size > 0) query += "pageSize=" + std::to_string(page_size);
    if (!token.empty()) query += (query.empty() ? "" : "&") + ("pageToken=" + UrlEncode(token));
    if (!query.empty()) target += sep + query;
    Result<json> page = api->Get(target);
    if (!page.ok()) return page.status();
    if (page->contains(key) && (*page)[key].is_array()) {
      for (const json& item : (*page)[key]) {
        if (!filter.Matches(item)) continue;
        items.push_back(item);
        if (limit > 0 && static_cast<int>(items.size()) >= limit) return items;
      }
    }
    token = page->value("nextPageToken", std::string());
  } while (!token.empty());
  return items;
}

void Context::PrintList(const json& items, const std::vector<Column>& default_columns) {
  if (format.kind == OutputFormat::kDefault && items.empty()) {
    Note("Listed 0 items.");
    return;
  }
  *out << RenderList(format, items, default_columns);
}

void Context::PrintOne(const json& item, const std::vector<Column>& default_columns) {
  *out << RenderOne(format, item, default_columns);
}

std::string Context::ZoneOrDefault(const std::string& flag) {
  std::string zone = ZoneOrEnv(flag);
  return zone.empty() ? metadata.Get().zone : zone;
}

std::string Context::NodeOrDefault(const std::string& flag) {
  return flag.empty() ? metadata.Get().node : flag;
}

std::vector<Column> DefaultColumns(const std::string& projection) {
  Result<std::vector<Column>> cols = ParseColumns(projection);
  return cols.ok() ? *cols : std::vector<Column>{};
}

std::string ZoneOrEnv(const std::string& flag) {
  if (!flag.empty()) return flag;
  const char* env = std::getenv("TPUEMU_ZONE");
  return env != nullptr ? env : "";
}

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> items;
  std::string cur;
  for (char c : text + ",") {
    if (c != ',') {
      cur.push_back(c);
    } else if (!cur.empty()) {
      items.push_back(cur);
      cur.clear();
    }
  }
  return items;
}

Result<std::map<std::string, std::string>> ParseKeyValues(const std::string& text,
                                                          const std::string& flag) {
  std::map<std::string, std::string> out;
  for (const std::string& item : SplitList(text)) {
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Status::InvalidArgument(flag + ": \"" + item + "\" is not KEY=VALUE");
    }
    out[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return out;
}

int RunTpuctl(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  Context ctx;
  ctx.out = &out;
  ctx.err = &err;
  ctx.progress = isatty(STDERR_FILENO) != 0 && isatty(STDOUT_FILENO) != 0;

  CLI::App app{"tpuctl: the gcloud-like client of tpuemud (Cloud TPU API v2 + jobs)", "tpuctl"};
  app.fallthrough();
  app.require_subcommand(1);
  app.add_option("--endpoint", ctx.endpoint,
                 "tpuemud base URL (default: inside a TPU VM its tpuemud, else " +
                     std::string(kDefaultEndpoint) + ")")
      ->envname("TPUEMU_ENDPOINT");
  app.add_option("--project", ctx.project,
                 "Project id (default: inside a TPU VM its project, else " +
                     std::string(kDefaultProject) + ")")
      ->envname("TPUEMU_PROJECT");
  app.add_option("--format", ctx.format_text, "json | yaml | table[(COLS)] | value(COLS) | none");
  app.add_option("--filter", ctx.filter_text, "gcloud filter, e.g. labels.env=dev AND state=READY");
  app.add_option("--limit", ctx.limit, "Print at most this many items of a list");
  app.add_flag("--quiet,-q", ctx.quiet, "Do not prompt");

  CLI::App* compute = app.add_subcommand("compute", "Compute resources")->require_subcommand(1);
  CLI::App* tpus = compute->add_subcommand("tpus", "Cloud TPU")->require_subcommand(1);
  CLI::App* tpu_vm = tpus->add_subcommand("tpu-vm", "TPU VMs")->require_subcommand(1);
  AddTpuVmCommands(*tpu_vm, ctx);
  AddMaintenanceCommands(*tpu_vm, ctx);
  AddQueuedResourceAndOperationCommands(*tpus, ctx);
  AddCatalogCommands(*tpus, ctx);
  AddCatalogCommands(*tpu_vm, ctx);  // gcloud has them under tpu-vm too
  AddSshCommands(*tpu_vm, *tpus->get_subcommand("queued-resources"), ctx);
  AddJobsCommands(app, ctx);
  AddTpuInfoCommand(app, ctx);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    out << app.help();
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    std::ostringstream help;
    int code = app.exit(e, help, help);
    if (code == 0) {
      out << help.str();
      return kExitOk;
    }
    err << "ERROR: (tpuctl) " << e.what() << "\n";
    return kExitUsage;
  }
  // Neither flag nor env: inside a TPU VM worker its metadata server says (asked only there).
  if (ctx.endpoint.empty()) ctx.endpoint = ctx.metadata.Get().api_endpoint;
  if (ctx.endpoint.empty()) ctx.endpoint = kDefaultEndpoint;
  if (ctx.project.empty()) ctx.project = ctx.metadata.Get().project;
  if (ctx.project.empty()) ctx.project = kDefaultProject;
  Result<Endpoint> endpoint = Endpoint::Parse(ctx.endpoint);
  if (!endpoint.ok()) return ctx.UsageError(endpoint.status().message());
  Result<OutputFormat> format = ParseFormat(ctx.format_text);
  if (!format.ok()) return ctx.UsageError(format.status().message());
  ctx.format = *format;
  Result<Filter> filter = Filter::Parse(ctx.filter_text);
  if (!filter.ok()) return ctx.UsageError(filter.status().message());
  ctx.filter = *filter;
  ctx.api = std::make_unique<ApiClient>(*endpoint);
  if (!ctx.action) return ctx.UsageError("no command given (try --help)");
  try {
    return ctx.action();
  } catch (const std::exception& e) {  // nlohmann type errors on an unexpected reply shape
    return ctx.Fail(Status::Internal(std::string("unexpected reply: ") + e.what()));
  }
}

}  // namespace tpuemu::cli
