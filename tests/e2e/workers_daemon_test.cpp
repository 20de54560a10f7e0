// TPU VM workers you can log into (service/workers/, sandbox/): the real tpuemud as root, the
// OpenSSH client, and Python reading the metadata server the way JAX and torch_xla do.
#include <ctime>
#include <future>
#include <set>

#include "tests/e2e/workers_fixture.h"

namespace tpuemu::testing {
namespace {

using nlohmann::json;

#define SKIP_UNLESS_SANDBOXED(node)                                           \
  if (!(node).value("workerSandbox", json::object()).value("enabled", false)) \
  GTEST_SKIP() << "tpuemud runs no worker sandboxes here: " << (node).dump()

TEST_F(WorkersTest, AV4_32HasFourWorkersAnsweringSshEachItsOwnMachine) {
  json node = CreateReady(
      "pod", {{"acceleratorType", "v4-32"},
              {"metadata",
               {{"ssh-keys", PublicKeyLine("tester")},
                {"startup-script", "#!/bin/bash\necho booted on $(hostname) as $(id -un)\n"}}}});
  SKIP_UNLESS_SANDBOXED(node);
  ASSERT_EQ(node["networkEndpoints"].size(), 4u);
  std::set<std::string> ips;
  for (int w = 0; w < 4; ++w) {
    EXPECT_EQ(Ip(node, w).rfind("127.", 0), 0u) << node.dump();
    ips.insert(Ip(node, w));
  }
  EXPECT_EQ(ips.size(), 4u);

  // --worker=all: the same command on every worker at once.
  std::vector<std::future<ProcessResult>> runs;
  for (int w = 0; w < 4; ++w) {
    runs.push_back(std::async(std::launch::async, [&, w] {
      return Ssh(node, w, "hostname; echo $TPU_WORKER_ID; sudo -n id -u");
    }));
  }
  json workers = Get(Base() + "/nodes/pod/workers");
  for (int w = 0; w < 4; ++w) {
    ProcessResult r = runs[w].get();
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::string hostname = workers["workers"][w]["hostname"];
    EXPECT_TRUE(hostname.starts_with("t1v-n-") && hostname.ends_with("-w-" + std::to_string(w)));
    EXPECT_EQ(r.out, hostname + "\n" + std::to_string(w) + "\n0\n");
    EXPECT_EQ(workers["workers"][w]["state"], "RUNNING") << workers.dump();
  }

  // Each worker's files are its own: home, /etc and /tmp.
  ASSERT_EQ(Ssh(node, 0, "echo w0 > ~/mine; sudo sh -c 'echo w0 > /etc/w0-marker; echo t > /tmp/t'")
                .exit_code,
            0);
  EXPECT_EQ(Ssh(node, 0, "cat ~/mine /etc/w0-marker").out, "w0\nw0\n");
  EXPECT_EQ(Ssh(node, 1, "ls ~/mine /etc/w0-marker /tmp/t 2>/dev/null | wc -l").out, "0\n");
  EXPECT_FALSE(std::filesystem::exists("/etc/w0-marker")) << "a worker wrote the host's /etc";
  // Only its own processes.
  ProcessResult ps = Ssh(node, 2, "ps -e -o comm= | sort -u");
  EXPECT_EQ(ps.out.find("tpuemud"), std::string::npos) << ps.out;

  // scp both ways.
  std::string local = (dir_ / "up.txt").string();
  ChildProcess::Run({"/bin/sh", "-c", "echo payload-42 > " + local}, {});
  std::vector<std::string> scp = {Which("scp"),
                                  "-i",
                                  key_,
                                  "-P",
                                  Port(node, 3),
                                  "-o",
                                  "StrictHostKeyChecking=no",
                                  "-o",
                                  "UserKnownHostsFile=/dev/null",
                                  "-o",
                                  "BatchMode=yes",
                                  "-o",
                                  "LogLevel=ERROR"};
  std::vector<std::string> up = scp;
  up.insert(up.end(), {local, "tester@" + Ip(node, 3) + ":/tmp/up.txt"});
  ProcessResult put = ChildProcess::Run(up, {});
  ASSERT_EQ(put.exit_code, 0) << put.err;
  std::vector<std::string> down = scp;
  down.insert(down.end(), {"tester@" + Ip(node, 3) + ":/tmp/up.txt", (dir_ / "down.txt").string()});
  ProcessResult get = ChildProcess::Run(down, {});
  ASSERT_EQ(get.exit_code, 0) << get.err;
  EXPECT_EQ(ChildProcess::Run({"/bin/cat", (dir_ / "down.txt").string()}, {}).out, "payload-42\n");

  // The startup script ran as root on every worker; its output is served.
  std::string output;
  ASSERT_TRUE(WaitFor(
      [&] {
        Result<ClientResponse> r =
            client_->Request("GET", Base() + "/nodes/pod/workers/2/startupScriptOutput");
        output = r.ok() ? r->body : "";
        return !output.empty();
      },
      std::chrono::seconds(20)));
  EXPECT_EQ(output,
            "booted on " + workers["workers"][2]["hostname"].get<std::string>() + " as root\n");
  EXPECT_TRUE(HasEvent("RUNNING", "worker 3 of pod: booted"));
  EXPECT_TRUE(HasEvent("STARTUP_SCRIPT_EXITED", "exited with 0"));
}

// JAX's jax/_src/clusters/cloud_tpu_cluster.py and torch_xla's torch_xla/_internal/tpu.py, the
// parts that read the metadata server, run on worker 2.
constexpr char kMetadataReaders[] = R"py(
import json, os, re, urllib.request, urllib.error, yaml
def md(path, header=True):
    req = urllib.request.Request('http://metadata.google.internal/computeMetadata/v1/' + path)
    if header: req.add_header('Metadata-Flavor', 'Google')
    with urllib.request.urlopen(req, timeout=5) as r:
        assert r.headers['Metadata-Flavor'] == 'Google'
        return r.read().decode()
# JAX: process id, worker addresses (third field), coordinator on worker 0 port 8482.
process_id = int(md('instance/attributes/agent-worker-number'))
workers = md('instance/attributes/worker-network-endpoints').split(',')
jax_ips = [w.split(':')[2] for w in workers]
coordinator = jax_ips[0] + ':8482'
# torch_xla: tpu-env as YAML, WORKER_ID, ACCELERATOR_TYPE's version.
env = yaml.safe_load(md('instance/attributes/tpu-env'))
m = re.match(r'^(?:v|tpu)(\d)([A-Za-z]?){7}-(\d+)$', env['ACCELERATOR_TYPE'])
try:
    md('instance/id', header=False); forbidden = False
except urllib.error.HTTPError as e:
    forbidden = e.code == 403
token = json.loads(md('instance/service-accounts/default/token'))
print(json.dumps({'process_id': process_id, 'ips': jax_ips, 'coordinator': coordinator,
                  'worker_id': int(env['WORKER_ID']), 'version': int(m.group(1)),
                  'chips_per_host': env['CHIPS_PER_HOST_BOUNDS'], 'zone': md('instance/zone'),
                  'project': md('project/project-id'), 'hostname': md('instance/hostname'),
                  'forbidden_without_header': forbidden, 'token_type': token['token_type'],
                  'gce_metadata_host': os.environ.get('GCE_METADATA_HOST')}))
)py";

TEST_F(WorkersTest, TheMetadataServerAnswersJaxAndTorchXla) {
  json node =
      CreateReady("md", {{"acceleratorType", "v4-32"},
                         {"metadata", {{"ssh-keys", PublicKeyLine("tester")}, {"team", "ml"}}}});
  SKIP_UNLESS_SANDBOXED(node);
  std::string script = (dir_ / "readers.py").string();
  ChildProcess writer;
  ASSERT_TRUE(
      writer.Start({"/bin/sh", "-c",
                    "cat > " + script + " <<'EOF'\n" + std::string(kMetadataReaders) + "\nEOF\n"},
                   {}));
  ASSERT_EQ(writer.Finish().exit_code, 0);
  // Through sh only to feed the script to ssh's standard input.
  std::string cmd;
  for (const std::string& a : SshArgs(node, 2, "tester", "python3 -")) cmd += "'" + a + "' ";
  ProcessResult r = ChildProcess::Run({"/bin/sh", "-c", cmd + "< " + script}, {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json seen = json::parse(r.out);
  EXPECT_EQ(seen["process_id"], 2);
  EXPECT_EQ(seen["worker_id"], 2);
  EXPECT_EQ(seen["version"], 4);
  EXPECT_EQ(seen["chips_per_host"], "2,2,1");
  // The workers know each other by their internal addresses, on their slice's network.
  auto internal = [&](int w) {
    return node["networkEndpoints"][w]["ipAddress"].get<std::string>();
  };
  for (int w = 0; w < 4; ++w) EXPECT_EQ(seen["ips"][w], internal(w));
  EXPECT_EQ(seen["coordinator"], internal(0) + ":8482");
  EXPECT_TRUE(seen["zone"].get<std::string>().ends_with("/zones/us-central2-b"));
  EXPECT_EQ(seen["project"], "proj");
  EXPECT_TRUE(seen["forbidden_without_header"]);
  EXPECT_EQ(seen["token_type"], "Bearer");
  EXPECT_EQ(seen["gce_metadata_host"], "169.254.169.254");

  // wait_for_change: a long-poll on an attribute returns when a patch changes it. It waits for
  // a value other than the one whose ETag it names, so the order of the poll and the patch does
  // not matter.
  const std::string url =
      "'http://metadata.google.internal/computeMetadata/v1/instance/attributes/team";
  ProcessResult head = Ssh(node, 1,
                           "curl -s -o /dev/null -D - -H Metadata-Flavor:Google " + url +
                               "' | sed -n 's/^ETag: //Ip' | tr -d '\\r'");
  ASSERT_EQ(head.exit_code, 0) << head.err;
  std::string etag = head.out.substr(0, head.out.find('\n'));
  ASSERT_EQ(etag.size(), 16u) << head.out;
  ChildProcess waiter;
  ASSERT_TRUE(
      waiter.Start(SshArgs(node, 1, "tester",
                           "curl -s -H Metadata-Flavor:Google " + url +
                               "?wait_for_change=true&timeout_sec=30&last_etag=" + etag + "'"),
                   {}));
  json patch = {{"metadata", {{"ssh-keys", PublicKeyLine("tester")}, {"team", "ml-infra"}}}};
  Result<ClientResponse> patched = Send("PATCH", Base() + "/nodes/md?updateMask=metadata", patch);
  ASSERT_TRUE(patched.ok() && patched->status == 200);
  ProcessResult changed = waiter.Finish();
  EXPECT_EQ(changed.out, "ml-infra");
}

TEST_F(WorkersTest, StopKeepsFilesStartBootsAgainPreemptionSendsSigtermDeleteWipes) {
  json node = CreateReady(
      "spot", {{"acceleratorType", "v4-8"},
               {"schedulingConfig", {{"spot", true}}},
               {"metadata",
                {{"ssh-keys", PublicKeyLine("tester")},
                 {"startup-script", "date +%s%N >> /root/boots; wc -l < /root/boots"}}}});
  SKIP_UNLESS_SANDBOXED(node);
  ASSERT_EQ(Ssh(node, 0, "echo kept > ~/kept").exit_code, 0);

  ASSERT_TRUE(Send("POST", Base() + "/nodes/spot:stop", json::object()).ok());
  ASSERT_TRUE(WaitFor([&] { return Get(Base() + "/nodes/spot")["state"] == "STOPPED"; },
                      std::chrono::seconds(30)));
  EXPECT_EQ(Ssh(node, 0, "true").exit_code, 255) << "a stopped worker answers no SSH";
  ASSERT_TRUE(Send("POST", Base() + "/nodes/spot:start", json::object()).ok());
  ASSERT_TRUE(WaitFor([&] { return Get(Base() + "/nodes/spot")["state"] == "READY"; },
                      std::chrono::seconds(30)));
  EXPECT_EQ(Ssh(node, 0, "cat ~/kept").out, "kept\n");
  std::string boots;
  ASSERT_TRUE(WaitFor(
      [&] {
        boots = Ssh(node, 0, "sudo cat /root/boots | wc -l").out;
        return boots == "2\n";
      },
      std::chrono::seconds(20)))
      << "the startup script runs at every boot: " << boots;

  // A training script that checkpoints on SIGTERM, reading the metadata server's verdict.
  ProcessResult started =
      Ssh(node, 0,
          "sudo sh -c 'nohup sh -c \"trap \\\"curl -s -H Metadata-Flavor:Google "
          "http://metadata.google.internal/computeMetadata/v1/instance/preempted > /root/ckpt; "
          "exit 0\\\" TERM; echo 1 > /root/armed1; while true; do sleep 0.1; done\" "
          ">/dev/null 2>&1 &'; "
          "sudo sh -c 'nohup sh -c \"trap \\\"\\\" TERM; echo 1 > /root/armed2; "
          "while true; do sleep 0.1; done\" >/dev/null 2>&1 &'");
  ASSERT_EQ(started.exit_code, 0) << started.err;
  // Both traps are set before the preemption (on a loaded machine the background shells may not
  // have run their first line yet when ssh returns).
  ASSERT_TRUE(
      WaitFor([&] { return Ssh(node, 0, "sudo cat /root/armed1 /root/armed2").out == "1\n1\n"; },
              std::chrono::seconds(20)));
  Result<ClientResponse> preempted = Send(
      "POST",
      std::string("/_emulator/projects/proj/locations/") + kWorkersZone + "/nodes/spot:preempt",
      {{"reason", "test"}});
  ASSERT_TRUE(preempted.ok() && preempted->status == 200)
      << (preempted.ok() ? preempted->body : "");
  ASSERT_TRUE(
      WaitFor([&] { return HasEvent("KILLED", "worker 0 of spot: the node was preempted"); },
              std::chrono::seconds(20)))
      << "the process ignoring SIGTERM is killed after the grace";
  // The disk image is whole once the worker's mount namespace is gone (a moment after the kill).
  std::string ckpt;
  EXPECT_TRUE(WaitFor([&] { return (ckpt = ReadStoppedWorkersRootFile("ckpt")) == "TRUE"; },
                      std::chrono::seconds(10)))
      << "SIGTERM reached the process, which saw preempted: " << ckpt;

  std::filesystem::path files = dir_ / "data" / "workers";
  // Every worker's files, besides the base tree all workers share (docs/sandbox.md).
  auto workers_files = [&] {
    int n = 0;
    for (const auto& entry : std::filesystem::directory_iterator(files)) {
      n += entry.path().filename() != ".base";
    }
    return n;
  };
  ASSERT_GT(workers_files(), 0);
  ASSERT_TRUE(Send("DELETE", Base() + "/nodes/spot", json::object()).ok());
  EXPECT_TRUE(WaitFor([&] { return workers_files() == 0; }, std::chrono::seconds(30)))
      << "delete wipes the workers' files, their boot disks included";
}

TEST_F(WorkersTest, UsersFollowTheSshKeysMetadataAndBadLinesAreReported) {
  json node = CreateReady(
      "keys", {{"acceleratorType", "v4-8"}, {"metadata", {{"ssh-keys", PublicKeyLine("tester")}}}});
  SKIP_UNLESS_SANDBOXED(node);
  EXPECT_EQ(Ssh(node, 0, "true", "alice").exit_code, 255) << "no such user yet";
  json patch = {{"metadata",
                 {{"ssh-keys", PublicKeyLine("tester") + "\n" + PublicKeyLine("alice") +
                                   "\nbroken line without a key\n"}}}};
  ASSERT_TRUE(Send("PATCH", Base() + "/nodes/keys?updateMask=metadata", patch).ok());
  ProcessResult alice;
  EXPECT_TRUE(WaitFor(
      [&] {
        alice = Ssh(node, 0, "id -un; sudo -n true && echo sudo-ok", "alice");
        return alice.exit_code == 0;
      },
      std::chrono::seconds(10)))
      << alice.err;
  EXPECT_EQ(alice.out, "alice\nsudo-ok\n");
  EXPECT_TRUE(WaitFor([&] { return HasEvent("SSH_KEY_REJECTED", "broken line"); },
                      std::chrono::seconds(10)));
  // Removing the key removes the login.
  patch["metadata"]["ssh-keys"] = PublicKeyLine("tester");
  ASSERT_TRUE(Send("PATCH", Base() + "/nodes/keys?updateMask=metadata", patch).ok());
  EXPECT_TRUE(WaitFor([&] { return Ssh(node, 0, "true", "alice").exit_code == 255; },
                      std::chrono::seconds(10)));
  EXPECT_TRUE(WaitFor([&] { return HasEvent("LOGIN_FAILED", "alice"); }, std::chrono::seconds(10)));
  EXPECT_EQ(Ssh(node, 0, "whoami").out, "tester\n");
  // The guest attributes carry the worker's real host key.
  Result<ClientResponse> attrs =
      Send("POST", Base() + "/nodes/keys:getGuestAttributes", {{"queryPath", "hostkeys/"}});
  ASSERT_TRUE(attrs.ok());
  std::string published =
      attrs->Json()["guestAttributes"][0]["queryValue"]["items"][0]["value"].get<std::string>();
  ProcessResult scanned = ChildProcess::Run(
      {Which("ssh-keyscan"), "-t", "ed25519", "-p", Port(node, 0), Ip(node, 0)}, {});
  EXPECT_NE(scanned.out.find(published), std::string::npos) << scanned.out << " vs " << published;
}

// `line` ("user:type base64 comment", PublicKeyLine's) with the comment replaced by gcloud's
// google-ssh one, expiring `seconds` from now.
std::string Expiring(const std::string& line, int seconds) {
  const std::string user = line.substr(0, line.find(':'));
  const std::time_t at = std::time(nullptr) + seconds;
  std::tm tm{};
  gmtime_r(&at, &tm);
  char expire_on[32];
  std::strftime(expire_on, sizeof expire_on, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return line.substr(0, line.rfind(' ')) + " google-ssh {\"userName\":\"" + user +
         "@example.com\",\"expireOn\":\"" + expire_on + "\"}";
}

TEST_F(WorkersTest, RootSystemAccountsAndUnreadableExpiriesAreRefusedWithAnEvent) {
  const std::string garbage = PublicKeyLine("gina");
  json node = CreateReady(
      "guarded",
      {{"acceleratorType", "v4-8"},
       {"metadata",
        {{"ssh-keys", PublicKeyLine("tester") + "\n" + PublicKeyLine("root") + "\n" +
                          PublicKeyLine("daemon") + "\n" + garbage.substr(0, garbage.rfind(' ')) +
                          " google-ssh {\"userName\":\"gina@x\",\"expireOn\":\"garbage\"}"}}}});
  SKIP_UNLESS_SANDBOXED(node);
  EXPECT_TRUE(WaitFor([&] { return HasEvent("SSH_KEY_REJECTED", "user 'root' never gets keys"); },
                      std::chrono::seconds(10)));
  EXPECT_TRUE(WaitFor(
      [&] { return HasEvent("SSH_KEY_REJECTED", "ssh-keys of user 'daemon': an existing system"); },
      std::chrono::seconds(10)));
  EXPECT_TRUE(WaitFor([&] { return HasEvent("SSH_KEY_REJECTED", "expireOn 'garbage'"); },
                      std::chrono::seconds(10)));
  EXPECT_EQ(Ssh(node, 0, "true", "root").exit_code, 255);
  EXPECT_EQ(Ssh(node, 0, "true", "daemon").exit_code, 255);
  EXPECT_EQ(Ssh(node, 0, "true", "gina").exit_code, 255);
  EXPECT_EQ(Ssh(node, 0, "id -nG daemon; getent passwd gina || echo no-gina").out,
            "daemon\nno-gina\n");
}

TEST_F(WorkersTest, ProjectKeysApplyWhenTheProjectChangesAndLeaveWhenTheyExpire) {
  json node = CreateReady("projkeys", {{"acceleratorType", "v4-8"},
                                       {"metadata", {{"ssh-keys", PublicKeyLine("tester")}}}});
  SKIP_UNLESS_SANDBOXED(node);
  EXPECT_EQ(Ssh(node, 0, "true", "hana").exit_code, 255) << "no such user yet";
  json items = json::array({{{"key", "ssh-keys"}, {"value", Expiring(PublicKeyLine("hana"), 8)}}});
  Result<ClientResponse> set =
      Send("POST", "/compute/v1/projects/proj/setCommonInstanceMetadata", {{"items", items}});
  ASSERT_TRUE(set.ok() && set->status == 200) << (set.ok() ? set->body : "");
  ProcessResult hana;
  EXPECT_TRUE(WaitFor(
      [&] {
        hana = Ssh(node, 0, "id -un", "hana");
        return hana.exit_code == 0;
      },
      std::chrono::seconds(6)))
      << hana.err;
  EXPECT_EQ(hana.out, "hana\n");
  // At its expireOn (a timer, no poll), the key is taken away.
  EXPECT_TRUE(WaitFor([&] { return Ssh(node, 0, "true", "hana").exit_code == 255; },
                      std::chrono::seconds(20)));
  EXPECT_EQ(Ssh(node, 0, "whoami").out, "tester\n");
}

TEST_F(WorkersTest, AWorkerKilledFromOutsideIsReportedFailed) {
  json node = CreateReady("killed", {{"acceleratorType", "v4-8"},
                                     {"metadata", {{"ssh-keys", PublicKeyLine("tester")}}}});
  SKIP_UNLESS_SANDBOXED(node);
  // [-]: the pattern does not match the shell that runs pkill.
  const std::string kill =
      "pkill -KILL -f -- '[-]-dir " + (dir_ / "data" / "workers").string() + "'";
  ASSERT_EQ(ChildProcess::Run({"/bin/sh", "-c", kill}, {}).exit_code, 0);
  EXPECT_TRUE(WaitFor([&] { return HasEvent("FAILED", "init exited unexpectedly"); },
                      std::chrono::seconds(10)));
}

TEST_F(WorkersTest, FilesSurviveAKill9OfTpuemudWhoseWorkersDieWithIt) {
  json node = CreateReady("durable", {{"acceleratorType", "v4-16"},
                                      {"metadata", {{"ssh-keys", PublicKeyLine("tester")}}}});
  SKIP_UNLESS_SANDBOXED(node);
  ASSERT_EQ(Ssh(node, 1, "echo survived > ~/f; nohup sleep 1000 >/dev/null 2>&1 &").exit_code, 0);
  // [-]: the pattern does not match the shell that runs pgrep.
  const std::string mine = "pgrep -f -- '[-]-dir " + (dir_ / "data" / "workers").string() + "'";
  ASSERT_EQ(ChildProcess::Run({"/bin/sh", "-c", mine}, {}).exit_code, 0) << "workers run";
  daemon_.Kill(SIGKILL);
  EXPECT_TRUE(WaitFor(
      [&] {
        return ChildProcess::Run({"/bin/sh", "-c", mine}, {}).exit_code == 1;
      },
      std::chrono::seconds(10)))
      << "no process of a worker outlives tpuemud";
  ASSERT_TRUE(daemon_.Start(
      TestDaemonArgs({"--data-dir", (dir_ / "data").string()}, {"--worker-sandboxes", "auto"})));
  client_ = std::make_unique<HttpClient>("127.0.0.1", daemon_.port());
  json again = Get(Base() + "/nodes/durable");
  EXPECT_EQ(again["networkEndpoints"], node["networkEndpoints"]);
  ProcessResult r;
  EXPECT_TRUE(WaitFor(
      [&] {
        r = Ssh(again, 1, "cat ~/f");
        return r.exit_code == 0;
      },
      std::chrono::seconds(30)))
      << r.err;
  EXPECT_EQ(r.out, "survived\n");
  EXPECT_EQ(Ssh(again, 0, "cat ~/f 2>/dev/null").out, "");
}

}  // namespace
}  // namespace tpuemu::testing
