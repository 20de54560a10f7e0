// The tpuctl binary against a live tpuemud: the TPU VM lifecycle in every --format, --filter,
// the catalog, and errors (API message + exit 3, usage exit 2, unreachable exit 4).
#include <pty.h>

#include "tests/cli/tpuctl/tpuctl_fixture.h"

namespace tpuemu::testing {
namespace {

using nlohmann::json;

TEST_F(TpuctlTest, LifecycleInEveryFormat) {
  ProcessResult created = Tpuctl(TpuVm({"create", "my-tpu", "--zone", kZone, "--accelerator-type",
                                        "v4-8", "--version", "tpu-ubuntu2204-base", "--labels",
                                        "env=dev", "--description", "first", "--format", "json"}));
  ASSERT_EQ(created.exit_code, 0) << Describe(created);
  json node = json::parse(created.out);
  EXPECT_EQ(node["state"], "READY");  // waited on the Operation
  EXPECT_EQ(node["name"], "projects/my-proj/locations/us-central2-b/nodes/my-tpu");
  EXPECT_EQ(node["labels"]["env"], "dev");
  EXPECT_FALSE(node.contains("@type"));
  EXPECT_NE(created.err.find("Created tpu [my-tpu]."), std::string::npos) << created.err;
  // Not a terminal: no progress line.
  EXPECT_EQ(created.err.find("Waiting for operation"), std::string::npos) << created.err;

  ProcessResult table = Tpuctl(TpuVm({"list", "--zone", kZone}));
  ASSERT_EQ(table.exit_code, 0) << Describe(table);
  EXPECT_EQ(table.out,
            "NAME    ZONE           ACCELERATOR_TYPE  TYPE  TOPOLOGY  NETWORK  RANGE        "
            "STATUS\n"
            "my-tpu  us-central2-b  v4-8              V4    2x2x1     default  " +
                node["cidrBlock"].get<std::string>() + "  READY\n");

  json list = TpuctlJson(TpuVm({"list", "--zone", kZone, "--format", "json"}));
  ASSERT_TRUE(list.is_array());
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["name"], node["name"]);

  ProcessResult yaml = Tpuctl(TpuVm({"list", "--zone", kZone, "--format", "yaml"}));
  EXPECT_NE(yaml.out.find("name: projects/my-proj/locations/us-central2-b/nodes/my-tpu\n"),
            std::string::npos)
      << yaml.out;

  ProcessResult value =
      Tpuctl(TpuVm({"list", "--zone", kZone, "--format", "value(name.basename(),state)"}));
  EXPECT_EQ(value.out, "my-tpu\tREADY\n");

  ProcessResult custom = Tpuctl(
      TpuVm({"list", "--zone", kZone, "--format", "table(name.basename(),labels.env:label=ENV)"}));
  EXPECT_EQ(custom.out, "NAME    ENV\nmy-tpu  dev\n");

  ProcessResult describe = Tpuctl(TpuVm({"describe", "my-tpu", "--zone", kZone}));
  ASSERT_EQ(describe.exit_code, 0) << Describe(describe);
  EXPECT_NE(describe.out.find("state: READY\n"), std::string::npos) << describe.out;
  EXPECT_NE(describe.out.find("acceleratorConfig:\n  topology: 2x2x1\n  type: V4\n"),
            std::string::npos)
      << describe.out;

  ProcessResult updated =
      Tpuctl(TpuVm({"update", "my-tpu", "--zone", kZone, "--update-labels", "team=ml,env=prod",
                    "--description", "second", "--add-tags", "a,b"}));
  ASSERT_EQ(updated.exit_code, 0) << Describe(updated);
  EXPECT_EQ(updated.out, "");  // no --format: nothing on stdout
  json after = TpuctlJson(TpuVm({"describe", "my-tpu", "--zone", kZone, "--format", "json"}));
  EXPECT_EQ(after["labels"], json({{"env", "prod"}, {"team", "ml"}}));
  EXPECT_EQ(after["description"], "second");
  EXPECT_EQ(after["tags"], json({"a", "b"}));

  ASSERT_EQ(Tpuctl(TpuVm({"update", "my-tpu", "--zone", kZone, "--remove-labels", "team",
                          "--remove-tags", "a"}))
                .exit_code,
            0);
  after = TpuctlJson(TpuVm({"describe", "my-tpu", "--zone", kZone, "--format", "json"}));
  EXPECT_EQ(after["labels"], json({{"env", "prod"}}));
  EXPECT_EQ(after["tags"], json({"b"}));
  ASSERT_EQ(Tpuctl(TpuVm({"update", "my-tpu", "--zone", kZone, "--clear-labels"})).exit_code, 0);
  after = TpuctlJson(TpuVm({"describe", "my-tpu", "--zone", kZone, "--format", "json"}));
  EXPECT_TRUE(!after.contains("labels") || after["labels"].empty()) << after.dump();

  ProcessResult stopped =
      Tpuctl(TpuVm({"stop", "my-tpu", "--zone", kZone, "--format", "value(state)"}));
  ASSERT_EQ(stopped.exit_code, 0) << Describe(stopped);
  EXPECT_EQ(stopped.out, "STOPPED\n");
  ProcessResult started =
      Tpuctl(TpuVm({"start", "my-tpu", "--zone", kZone, "--format", "value(state)"}));
  ASSERT_EQ(started.exit_code, 0) << Describe(started);
  EXPECT_EQ(started.out, "READY\n");

  ProcessResult deleted = Tpuctl(TpuVm({"delete", "my-tpu", "--zone", kZone, "--quiet"}));
  ASSERT_EQ(deleted.exit_code, 0) << Describe(deleted);
  EXPECT_NE(deleted.err.find("Deleted tpu [my-tpu]."), std::string::npos) << deleted.err;
  ProcessResult empty = Tpuctl(TpuVm({"list", "--zone", kZone}));
  EXPECT_EQ(empty.exit_code, 0);
  EXPECT_EQ(empty.out, "");
  EXPECT_NE(empty.err.find("Listed 0 items."), std::string::npos);
  EXPECT_EQ(TpuctlJson(TpuVm({"list", "--zone", kZone, "--format", "json"})), json::array());
}

// Runs tpuctl with stdin, stdout and stderr on a pseudo-terminal; returns what the terminal saw.
ProcessResult RunInTerminal(const std::vector<std::string>& args, const std::string& endpoint) {
  std::vector<std::string> argv = {TPUCTL_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  int master = -1;
  pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
  if (pid == 0) {
    setenv("TPUEMU_ENDPOINT", endpoint.c_str(), 1);
    unsetenv("TPUEMU_ZONE");
    unsetenv("TPUEMU_PROJECT");
    std::vector<char*> cargv;
    for (std::string& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  ProcessResult result;
  if (pid < 0) return result;
  char buf[4096];
  ssize_t n;
  while ((n = read(master, buf, sizeof(buf))) > 0) result.out.append(buf, static_cast<size_t>(n));
  close(master);  // read() fails with EIO once the child closed the terminal
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  return result;
}

TEST_F(TpuctlTest, ProgressLineOnlyOnATerminal) {
  ProcessResult tty = RunInTerminal(TpuVm({"create", "term", "--zone", kZone, "--accelerator-type",
                                           "v4-8", "--version", "tpu-ubuntu2204-base"}),
                                    endpoint_);
  ASSERT_EQ(tty.exit_code, 0) << tty.out;
  EXPECT_NE(tty.out.find("Waiting for operation [projects/my-proj/locations/us-central2-b/"
                         "operations/operation-"),
            std::string::npos)
      << tty.out;
  EXPECT_NE(tty.out.find("done."), std::string::npos) << tty.out;
  EXPECT_NE(tty.out.find("Created tpu [term]."), std::string::npos) << tty.out;
  // The same command with pipes (the other tests) prints no progress: see LifecycleInEveryFormat.
  ProcessResult piped = Tpuctl(TpuVm({"stop", "term", "--zone", kZone}));
  EXPECT_EQ(piped.exit_code, 0);
  EXPECT_EQ(piped.err, "Stopped tpu [term].\n");
}

TEST_F(TpuctlTest, AsyncReturnsTheOperation) {
  ProcessResult r =
      Tpuctl(TpuVm({"create", "fast", "--zone", kZone, "--type", "v4", "--topology", "2x2x2",
                    "--version", "tpu-ubuntu2204-base", "--async", "--format", "json"}));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  json op = json::parse(r.out);
  EXPECT_NE(op["name"].get<std::string>().find("/operations/operation-"), std::string::npos);
  EXPECT_NE(r.err.find("Create request issued for: [fast]"), std::string::npos) << r.err;
  // --type/--topology become acceleratorConfig; the service derives the type.
  ASSERT_TRUE(WaitFor([&] {
    return Tpuctl(TpuVm({"describe", "fast", "--zone", kZone, "--format", "value(state)"})).out ==
           "READY\n";
  }));
  ProcessResult type =
      Tpuctl(TpuVm({"describe", "fast", "--zone", kZone, "--format", "value(acceleratorType)"}));
  EXPECT_EQ(type.out, "v4-16\n");
}

TEST_F(TpuctlTest, FilterAndLimitSelectNodes) {
  ASSERT_EQ(CreateNode("alpha", "env=dev,team=ml").exit_code, 0);
  ASSERT_EQ(CreateNode("beta", "env=prod").exit_code, 0);
  ASSERT_EQ(CreateNode("gamma", "env=dev").exit_code, 0);
  auto names = [&](const std::string& filter) {
    ProcessResult r = Tpuctl(
        TpuVm({"list", "--zone", kZone, "--filter", filter, "--format", "value(name.basename())"}));
    EXPECT_EQ(r.exit_code, 0) << Describe(r);
    return r.out;
  };
  EXPECT_EQ(names("labels.env=dev"), "alpha\ngamma\n");
  EXPECT_EQ(names("labels.env=dev AND labels.team=ml"), "alpha\n");
  EXPECT_EQ(names("labels.env=prod OR name:gam"), "beta\ngamma\n");
  EXPECT_EQ(names("NOT labels.env=dev"), "beta\n");
  EXPECT_EQ(names("name=beta"), "beta\n");
  EXPECT_EQ(names("state=READY acceleratorType=v4-8"), "alpha\nbeta\ngamma\n");
  EXPECT_EQ(names("labels.env=none"), "");
  ProcessResult limited = Tpuctl(TpuVm({"list", "--zone", kZone, "--limit", "2", "--page-size", "1",
                                        "--format", "value(name.basename())"}));
  EXPECT_EQ(limited.out, "alpha\nbeta\n");  // pages of 1 followed across nextPageToken
  ProcessResult bad_op = Tpuctl(TpuVm({"list", "--zone", kZone, "--filter", "state<READY"}));
  EXPECT_EQ(bad_op.exit_code, 2) << Describe(bad_op);
  EXPECT_NE(bad_op.err.find("--filter"), std::string::npos);
}

TEST_F(TpuctlTest, CatalogCommands) {
  ProcessResult types = Tpuctl({"compute", "tpus", "accelerator-types", "list", "--zone", kZone,
                                "--filter", "type=v4-8 OR type=v4-16"});
  ASSERT_EQ(types.exit_code, 0) << Describe(types);
  EXPECT_EQ(types.out,
            "ACCELERATOR_TYPE  TYPE  TOPOLOGY\n"
            "v4-8              V4    2x2x1\n"
            "v4-16             V4    2x2x2\n");
  ProcessResult type = Tpuctl({"compute", "tpus", "tpu-vm", "accelerator-types", "describe", "v4-8",
                               "--zone", kZone, "--format", "value(type)"});
  EXPECT_EQ(type.out, "v4-8\n") << Describe(type);
  ProcessResult versions =
      Tpuctl({"compute", "tpus", "versions", "list", "--zone", kZone, "--format", "value(version)",
              "--filter", "version=tpu-ubuntu2204-base"});
  EXPECT_EQ(versions.out, "tpu-ubuntu2204-base\n") << Describe(versions);
  ProcessResult version = Tpuctl({"compute", "tpus", "versions", "describe", "v2-alpha-tpuv5",
                                  "--zone", kZone, "--format", "json"});
  EXPECT_EQ(json::parse(version.out)["version"], "v2-alpha-tpuv5") << Describe(version);
  ProcessResult locations = Tpuctl({"compute", "tpus", "locations", "list"});
  ASSERT_EQ(locations.exit_code, 0) << Describe(locations);
  EXPECT_EQ(locations.out.rfind("NAME\n", 0), 0u) << locations.out;
  EXPECT_NE(locations.out.find("\nus-central2-b\n"), std::string::npos) << locations.out;
  ProcessResult missing =
      Tpuctl({"compute", "tpus", "accelerator-types", "describe", "v9-8", "--zone", kZone});
  EXPECT_EQ(missing.exit_code, 3);
  EXPECT_NE(missing.err.find("ERROR: (tpuctl) NOT_FOUND: "), std::string::npos) << missing.err;
}

TEST_F(TpuctlTest, ApiErrorsPrintTheServiceMessageAndExit3) {
  ProcessResult missing = Tpuctl(TpuVm({"describe", "nope", "--zone", kZone}));
  EXPECT_EQ(missing.exit_code, 3);
  EXPECT_EQ(missing.out, "");
  EXPECT_EQ(missing.err,
            "ERROR: (tpuctl) NOT_FOUND: Resource "
            "'projects/my-proj/locations/us-central2-b/nodes/nope' was not found\n");

  ProcessResult bad_type = Tpuctl(TpuVm({"create", "x", "--zone", kZone, "--accelerator-type",
                                         "v9-8", "--version", "tpu-ubuntu2204-base"}));
  EXPECT_EQ(bad_type.exit_code, 3);
  EXPECT_NE(bad_type.err.find("ERROR: (tpuctl) INVALID_ARGUMENT: "), std::string::npos);
  EXPECT_NE(bad_type.err.find("acceleratorType"), std::string::npos) << bad_type.err;

  ASSERT_EQ(CreateNode("dup").exit_code, 0);
  ProcessResult dup = CreateNode("dup");
  EXPECT_EQ(dup.exit_code, 3);
  EXPECT_NE(dup.err.find("ERROR: (tpuctl) ALREADY_EXISTS: "), std::string::npos) << dup.err;

  ProcessResult start_ready = Tpuctl(TpuVm({"start", "dup", "--zone", kZone}));
  EXPECT_EQ(start_ready.exit_code, 3);
  EXPECT_NE(start_ready.err.find("ERROR: (tpuctl) FAILED_PRECONDITION: "), std::string::npos)
      << start_ready.err;

  // --project reaches the API: the node is not in another project.
  ProcessResult other = Tpuctl(
      {"--project", "other", "compute", "tpus", "tpu-vm", "describe", "dup", "--zone", kZone});
  EXPECT_EQ(other.exit_code, 3);
  EXPECT_NE(other.err.find("projects/other/"), std::string::npos) << other.err;
}

TEST_F(TpuctlTest, FailedOperationIsAnErrorWithItsMessage) {
  ASSERT_TRUE(StartDaemon({"--zone-capacity-tensorcores", "8"}));
  ASSERT_EQ(CreateNode("first").exit_code, 0);
  ProcessResult full = CreateNode("second");
  EXPECT_EQ(full.exit_code, 3) << Describe(full);
  EXPECT_NE(full.err.find("ERROR: (tpuctl) RESOURCE_EXHAUSTED: There is no more capacity in the "
                          "zone \"us-central2-b\""),
            std::string::npos)
      << full.err;
}

TEST_F(TpuctlTest, UsageErrorsExit2) {
  ProcessResult no_version = Tpuctl(TpuVm({"create", "x", "--zone", kZone}));
  EXPECT_EQ(no_version.exit_code, 2);
  EXPECT_NE(no_version.err.find("--version"), std::string::npos) << no_version.err;
  ProcessResult no_zone = Tpuctl(TpuVm({"list"}));
  EXPECT_EQ(no_zone.exit_code, 2);
  EXPECT_NE(no_zone.err.find("--zone is required"), std::string::npos) << no_zone.err;
  ProcessResult format = Tpuctl(TpuVm({"list", "--zone", kZone, "--format", "xml"}));
  EXPECT_EQ(format.exit_code, 2);
  EXPECT_NE(format.err.find("--format"), std::string::npos) << format.err;
  ProcessResult nothing = Tpuctl(TpuVm({"update", "x", "--zone", kZone}));
  EXPECT_EQ(nothing.exit_code, 3);  // the node is read first: NOT_FOUND
  ProcessResult unknown = Tpuctl({"compute", "tpus", "tpu-vm", "frobnicate"});
  EXPECT_EQ(unknown.exit_code, 2);
  ProcessResult endpoint = Tpuctl({"--endpoint", "https://x", "jobs", "list", "--zone", kZone});
  EXPECT_EQ(endpoint.exit_code, 2);
  EXPECT_NE(endpoint.err.find("https"), std::string::npos) << endpoint.err;
  ProcessResult help = Tpuctl({"compute", "tpus", "tpu-vm", "create", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--accelerator-type"), std::string::npos) << help.out;
}

TEST_F(TpuctlTest, TpuemuZoneAndEnvironmentDefaults) {
  ASSERT_EQ(CreateNode("envy").exit_code, 0);
  std::map<std::string, std::string> env = Env();
  env["TPUEMU_ZONE"] = kZone;
  ProcessResult r = ChildProcess::Run(
      {TPUCTL_BIN, "compute", "tpus", "tpu-vm", "list", "--format", "value(name.basename())"}, env);
  EXPECT_EQ(r.out, "envy\n") << Describe(r);
}

TEST_F(TpuctlTest, UnreachableServiceSaysWhereItTriedAndExits4) {
  std::string endpoint = endpoint_;
  daemon_.Kill(SIGTERM);  // nothing listens on that port any more
  ProcessResult r = Tpuctl({"compute", "tpus", "tpu-vm", "list", "--zone", kZone});
  EXPECT_EQ(r.exit_code, 4) << Describe(r);
  EXPECT_NE(r.err.find("ERROR: (tpuctl) UNAVAILABLE: cannot reach tpuemud at " + endpoint),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace tpuemu::testing
