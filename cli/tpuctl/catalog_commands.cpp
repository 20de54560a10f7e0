// `tpuctl compute tpus [tpu-vm] accelerator-types|versions list|describe` and
// `tpuctl compute tpus locations list|describe`: the read-only catalog (acceleratorTypes.*,
// runtimeVersions.*, locations.*).
#include <CLI/CLI.hpp>

#include "cli/tpuctl/app.h"

namespace tpuemu::cli {
namespace {

using nlohmann::json;

struct CatalogKind {
  const char* command;     // "accelerator-types"
  const char* collection;  // "acceleratorTypes"
  const char* noun;        // "accelerator type"
  const char* columns;
};

constexpr CatalogKind kKinds[] = {
    {"accelerator-types", "acceleratorTypes", "accelerator type",
     "type:label=ACCELERATOR_TYPE,acceleratorConfigs[0].type:label=TYPE,"
     "acceleratorConfigs[0].topology:label=TOPOLOGY"},
    {"versions", "runtimeVersions", "runtime version", "version:label=VERSION"},
};

void AddKind(CLI::App& parent, Context& ctx, const CatalogKind& kind) {
  CLI::App* group = parent.add_subcommand(kind.command, std::string("TPU ") + kind.noun + "s")
                        ->require_subcommand(1);
  auto zone = std::make_shared<std::string>();
  CLI::App* list = group->add_subcommand("list", std::string("List ") + kind.noun + "s");
  list->add_option("--zone", *zone, "Zone (default: TPUEMU_ZONE)");
  list->callback([&ctx, kind, zone] {
    ctx.action = [&ctx, kind, zone] {
      std::string z = ctx.ZoneOrDefault(*zone);
      if (z.empty()) return ctx.UsageError("--zone is required (or set TPUEMU_ZONE)");
      Result<json> items = ctx.ListAll(ctx.ZonePath(z) + "/" + kind.collection, kind.collection);
      if (!items.ok()) return ctx.Fail(items.status());
      ctx.PrintList(*items, DefaultColumns(kind.columns));
      return kExitOk;
    };
  });
  auto id = std::make_shared<std::string>();
  auto dzone = std::make_shared<std::string>();
  CLI::App* describe = group->add_subcommand("describe", std::string("Describe a ") + kind.noun);
  describe->add_option("NAME", *id, std::string("The ") + kind.noun)->required();
  describe->add_option("--zone", *dzone, "Zone (default: TPUEMU_ZONE)");
  describe->callback([&ctx, kind, id, dzone] {
    ctx.action = [&ctx, kind, id, dzone] {
      std::string z = ctx.ZoneOrDefault(*dzone);
      if (z.empty()) return ctx.UsageError("--zone is required (or set TPUEMU_ZONE)");
      Result<json> item =
          ctx.api->Get(ctx.ZonePath(z) + "/" + kind.collection + "/" + UrlEncode(*id));
      if (!item.ok()) return ctx.Fail(item.status());
      ctx.PrintOne(*item, DefaultColumns(kind.columns));
      return kExitOk;
    };
  });
}

void AddLocations(CLI::App& parent, Context& ctx) {
  const char* columns = "locationId:label=NAME";
  CLI::App* group =
      parent.add_subcommand("locations", "Zones that offer TPUs")->require_subcommand(1);
  group->add_subcommand("list", "List zones")->callback([&ctx, columns] {
    ctx.action = [&ctx, columns] {
      Result<json> items = ctx.ListAll(ctx.ProjectPath() + "/locations", "locations");
      if (!items.ok()) return ctx.Fail(items.status());
      ctx.PrintList(*items, DefaultColumns(columns));
      return kExitOk;
    };
  });
  auto zone = std::make_shared<std::string>();
  CLI::App* describe = group->add_subcommand("describe", "Describe a zone");
  describe->add_option("ZONE", *zone, "Zone id")->required();
  describe->callback([&ctx, zone, columns] {
    ctx.action = [&ctx, zone, columns] {
      Result<json> item = ctx.api->Get(ctx.ZonePath(UrlEncode(*zone)));
      if (!item.ok()) return ctx.Fail(item.status());
      ctx.PrintOne(*item, DefaultColumns(columns));
      return kExitOk;
    };
  });
}

}  // namespace

void AddCatalogCommands(CLI::App& parent, Context& ctx) {
  for (const CatalogKind& kind : kKinds) AddKind(parent, ctx, kind);
  if (parent.get_name() == "tpus") AddLocations(parent, ctx);
}

}  // namespace tpuemu::cli
