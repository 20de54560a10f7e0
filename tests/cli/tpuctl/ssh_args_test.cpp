// tpuctl's ssh/scp arguments (cli/tpuctl/ssh_args.h): gcloud's --worker/--node lists, scp's
// remote paths, the OpenSSH command lines and the ssh-keys metadata checks.
#include "cli/tpuctl/ssh_args.h"

#include <gtest/gtest.h>

namespace tpuemu::cli {
namespace {

using nlohmann::json;
using Strings = std::vector<std::string>;

TEST(ParseIndexListTest, AllListsAndRanges) {
  EXPECT_EQ(*ParseIndexList("all", 4, "--worker"), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(*ParseIndexList("ALL", 2, "--worker"), (std::vector<int>{0, 1}));
  EXPECT_EQ(*ParseIndexList("0", 1, "--worker"), (std::vector<int>{0}));
  EXPECT_EQ(*ParseIndexList("1,4,6", 8, "--worker"), (std::vector<int>{1, 4, 6}));
  EXPECT_EQ(*ParseIndexList("1-3", 4, "--worker"), (std::vector<int>{1, 2, 3}));
  // Mixed, repeated and empty items: sorted and distinct, as gcloud's set.
  EXPECT_EQ(*ParseIndexList("5,0-2,,1", 6, "--worker"), (std::vector<int>{0, 1, 2, 5}));
}

TEST(ParseIndexListTest, ErrorsNameTheFlagAndTheItem) {
  auto message = [](const std::string& text, int count, const std::string& flag = "--worker") {
    Result<std::vector<int>> r = ParseIndexList(text, count, flag);
    EXPECT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    return r.ok() ? std::string() : r.status().message();
  };
  EXPECT_EQ(message("x", 4),
            "Invalid value for [--worker]: unable to parse worker ID x. Please only use numbers.");
  EXPECT_NE(message("-1", 4).find("found malformed range \"-1\""), std::string::npos);
  EXPECT_NE(message("3-1", 4).find("found malformed range \"3-1\""), std::string::npos);
  EXPECT_NE(message("2-2", 4).find("malformed range"), std::string::npos);
  EXPECT_NE(message("1-2-3", 4).find("malformed range"), std::string::npos);
  EXPECT_NE(message("1-", 4).find("malformed range"), std::string::npos);
  EXPECT_EQ(message("", 4),
            "Invalid value for [--worker]: no worker specified, or none were parsed from the "
            "argument value.");
  EXPECT_EQ(message("1,4", 4),
            "Invalid value for [--worker]: worker index 4 is larger than the valid worker "
            "indexes on this TPU VM. Please only use indexes in the range [0, 3], inclusive.");
  EXPECT_NE(message("0-2", 2, "--node").find("node index 2 is larger than the valid node"),
            std::string::npos);
  EXPECT_NE(message("all", 0).find("no worker specified"), std::string::npos);
}

TEST(ScpPathTest, RemoteIsTpuColonPath) {
  ScpPath p = ParseScpPath("my-tpu:/tmp/x");
  EXPECT_TRUE(p.remote);
  EXPECT_EQ(p.tpu, "my-tpu");
  EXPECT_EQ(p.user, "");
  EXPECT_EQ(p.path, "/tmp/x");

  p = ParseScpPath("alice@my-tpu:data");
  EXPECT_TRUE(p.remote);
  EXPECT_EQ(p.user, "alice");
  EXPECT_EQ(p.tpu, "my-tpu");
  EXPECT_EQ(p.path, "data");

  p = ParseScpPath("my-tpu:");  // the remote home directory
  EXPECT_TRUE(p.remote);
  EXPECT_EQ(p.path, "");

  for (const char* local : {"file.txt", "./a:b", "/x:y", "dir/sub:z", ":odd"}) {
    p = ParseScpPath(local);
    EXPECT_FALSE(p.remote) << local;
    EXPECT_EQ(p.path, local);
  }
}

TEST(ScpPathTest, OneDirectionOneTpu) {
  Result<ScpTarget> up =
      CheckScpPaths({ParseScpPath("a"), ParseScpPath("b")}, ParseScpPath("bob@tpu:/dst"));
  ASSERT_TRUE(up.ok()) << up.status().message();
  EXPECT_TRUE(up->upload);
  EXPECT_EQ(up->tpu, "tpu");
  EXPECT_EQ(up->user, "bob");

  Result<ScpTarget> down =
      CheckScpPaths({ParseScpPath("tpu:/a"), ParseScpPath("tpu:/b")}, ParseScpPath("."));
  ASSERT_TRUE(down.ok()) << down.status().message();
  EXPECT_FALSE(down->upload);
  EXPECT_EQ(down->tpu, "tpu");

  EXPECT_FALSE(CheckScpPaths({ParseScpPath("tpu:/a")}, ParseScpPath("tpu:/b")).ok());
  EXPECT_FALSE(CheckScpPaths({ParseScpPath("a")}, ParseScpPath("b")).ok());
  EXPECT_FALSE(
      CheckScpPaths({ParseScpPath("t1:/a"), ParseScpPath("t2:/b")}, ParseScpPath(".")).ok());
  EXPECT_FALSE(
      CheckScpPaths({ParseScpPath("u@t:/a"), ParseScpPath("t:/b")}, ParseScpPath(".")).ok());
  EXPECT_FALSE(CheckScpPaths({}, ParseScpPath("t:/b")).ok());
}

TEST(SshArgvTest, PortOfAnEndpoint) {
  EXPECT_EQ(SshPortOf(json{{"ipAddress", "127.0.2.2"}, {"port", 8470}}), 0);
  EXPECT_EQ(SshPortOf(json{{"ipAddress", "127.0.2.2"}, {"port", 22}}), 0);
  EXPECT_EQ(SshPortOf(json{{"ipAddress", "127.0.2.2"}}), 0);
  EXPECT_EQ(SshPortOf(json{{"ipAddress", "127.0.2.2"}, {"port", 2222}}), 2222);
  EXPECT_EQ(SshPortOf(json{{"port", "2200"}}), 2200);
  EXPECT_EQ(SshPortOf(json{{"port", 70000}}), 0);
}

SshOptions Options() {
  SshOptions o;
  o.key_file = "/h/.ssh/google_compute_engine";
  o.known_hosts_file = "/h/.ssh/google_compute_known_hosts";
  return o;
}

const Strings kCommon = {"-i", "/h/.ssh/google_compute_engine",
                         "-o", "CheckHostIP=no",
                         "-o", "HashKnownHosts=no",
                         "-o", "HostKeyAlias=tpu.42-1",
                         "-o", "IdentitiesOnly=yes",
                         "-o", "StrictHostKeyChecking=no",
                         "-o", "UserKnownHostsFile=/h/.ssh/google_compute_known_hosts"};

Strings Concat(Strings a, const Strings& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(SshArgvTest, SshInteractiveAndWithACommand) {
  SshTarget t{"alice", "127.0.2.3", 0, "tpu.42-1"};
  SshOptions o = Options();
  o.tty = true;
  EXPECT_EQ(BuildSshArgv(o, t, std::nullopt),
            Concat(Concat({"ssh", "-t"}, kCommon), {"alice@127.0.2.3"}));

  o.tty = false;
  o.extra_flags = {"-L 8080:localhost:8080", "-v"};
  t.port = 2222;
  EXPECT_EQ(BuildSshArgv(o, t, std::string("echo hi; exit 3")),
            Concat(Concat({"ssh"}, kCommon), {"-p", "2222", "-L", "8080:localhost:8080", "-v",
                                              "alice@127.0.2.3", "--", "echo hi; exit 3"}));
}

TEST(SshArgvTest, ScpUploadAndDownload) {
  SshTarget t{"bob", "127.0.2.3", 2222, "tpu.42-1"};
  EXPECT_EQ(BuildScpArgv(Options(), t, {ParseScpPath("a.txt"), ParseScpPath("dir")},
                         ParseScpPath("tpu:/tmp/"), /*recurse=*/true),
            Concat(Concat({"scp"}, kCommon),
                   {"-P", "2222", "-r", "a.txt", "dir", "bob@127.0.2.3:/tmp/"}));
  t.port = 0;
  SshOptions o = Options();
  o.extra_flags = {"-C"};
  EXPECT_EQ(BuildScpArgv(o, t, {ParseScpPath("bob@tpu:~/out.log")}, ParseScpPath("."), false),
            Concat(Concat({"scp"}, kCommon), {"-C", "bob@127.0.2.3:~/out.log", "."}));
}

TEST(SshArgvTest, ShellJoinQuotesWhatAShellWouldSplit) {
  EXPECT_EQ(ShellJoin({"ssh", "-o", "A=b", "u@1.2.3.4", "--", "echo hi; it's"}),
            "ssh -o A=b u@1.2.3.4 -- 'echo hi; it'\"'\"'s'");
  EXPECT_EQ(ShellJoin({"a", ""}), "a ''");
}

TEST(SshKeysTest, LinesAndLookups) {
  const std::string key = "ssh-rsa AAAAB3Nza";
  EXPECT_EQ(PublicKeyOf("ssh-rsa AAAAB3Nza root@host\n"), key);
  EXPECT_EQ(PublicKeyOf("ssh-ed25519 AAAAC3 x"), "ssh-ed25519 AAAAC3");
  EXPECT_EQ(PublicKeyOf("not a key"), "");
  EXPECT_EQ(PublicKeyOf(""), "");
  EXPECT_EQ(SshKeysLine("alice", key), "alice:ssh-rsa AAAAB3Nza alice");

  const std::string keys = "bob:ssh-ed25519 AAAAC3 bob\n  alice:ssh-rsa AAAAB3Nza alice\n";
  EXPECT_TRUE(SshKeysHave(keys, "alice", key));
  EXPECT_FALSE(SshKeysHave(keys, "bob", key));                 // another user's
  EXPECT_FALSE(SshKeysHave(keys, "alice", "ssh-rsa AAAAB3"));  // a prefix of the blob
  EXPECT_TRUE(SshKeysHave("alice:ssh-rsa AAAAB3Nza", "alice", key));
  EXPECT_FALSE(SshKeysHave("", "alice", key));
}

}  // namespace
}  // namespace tpuemu::cli
