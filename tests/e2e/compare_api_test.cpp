// POST|GET /_emulator/compare over real HTTP, and the agreement with `tpuemu-engine compare`:
// the same request gives the same comparison from the endpoint and from the CLI (for an HLO
// module too: the "hlo" source).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/cli/child_process.h"
#include "tests/e2e/api_server.h"

namespace tpuemu::testing {
namespace {

using nlohmann::json;

class CompareApiTest : public ::testing::Test {
 protected:
  ApiServer server_;
  HttpClient client_{"127.0.0.1", server_.port()};

  ClientResponse Post(const json& body) {
    Result<ClientResponse> r = client_.Request("POST", "/_emulator/compare", body.dump());
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return *r;
  }
};

TEST_F(CompareApiTest, ModelShapesOnEveryAcceleratorType) {
  const ClientResponse r = Post({{"model", {{"preset", "llama2-7b"}, {"seqLen", 2048}}}});
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = r.Json();
  EXPECT_EQ(j["unit"], "tokens");
  EXPECT_EQ(j["rows"].size(), engine::AllAcceleratorTypes().size());
  EXPECT_EQ(j["prices"]["unit"], "USD per chip-hour");
  for (const json& row : j["rows"]) {
    EXPECT_TRUE(row.contains("acceleratorType"));
    if (row["fits"].get<bool>()) {
      EXPECT_GT(row["onDemand"]["perMillionUnits"].get<double>(), 0);
    }
  }
}

TEST_F(CompareApiTest, GetWithTheQueryIsThePost) {
  Result<ClientResponse> get = client_.Request(
      "GET", "/_emulator/compare?preset=llama3-8b&globalBatch=64&acceleratorTypes=v5p,v6e-8");
  ASSERT_TRUE(get.ok());
  ASSERT_EQ(get->status, 200) << get->body;
  const ClientResponse post = Post({{"model", {{"preset", "llama3-8b"}, {"globalBatch", 64}}},
                                    {"acceleratorTypes", {"v5p", "v6e-8"}}});
  EXPECT_EQ(get->Json(), post.Json());
  EXPECT_EQ(get->Json()["rows"].size(), 13u);  // 12 v5p sizes and v6e-8
}

TEST_F(CompareApiTest, BuiltInWorkloadsAndPrograms) {
  const ClientResponse mlp =
      Post({{"workload", {{"mlp", {{"layers", 2}, {"batch", 64}, {"hidden", 128}}}}},
            {"acceleratorTypes", {"v5litepod-4"}}});
  ASSERT_EQ(mlp.status, 200) << mlp.body;
  EXPECT_EQ(mlp.Json()["source"], "workload");
  EXPECT_EQ(mlp.Json()["unit"], "samples");
  EXPECT_EQ(mlp.Json()["globalBatch"], 64);
  EXPECT_TRUE(mlp.Json()["rows"][0]["fits"].get<bool>());
  const json program = json::parse(R"({"name": "p", "ops": [
      {"id": "x", "op": "parameter", "shape": [32, 64]},
      {"id": "w", "op": "constant", "shape": [64, 64], "fill": 0.5},
      {"id": "y", "op": "dot", "inputs": ["x", "w"]}], "outputs": ["y"]})");
  const ClientResponse p = Post({{"program", program}, {"acceleratorTypes", {"v6e"}}});
  ASSERT_EQ(p.status, 200) << p.body;
  EXPECT_EQ(p.Json()["source"], "program");
  EXPECT_EQ(p.Json()["rows"].size(), 8u);
}

// Serving: the rows carry prefill, decode, the largest batch and $ per 1M output tokens; GET
// takes the serving fields as serving.* query keys; bad serving input is Google's 400.
TEST_F(CompareApiTest, ServingRowsAndTheirErrors) {
  const json body = {{"model", {{"preset", "llama2-7b"}}},
                     {"acceleratorTypes", {"v5litepod-8", "v6e-1"}},
                     {"serving", {{"batch", 96}, {"weights", "int8"}, {"kvCache", "int8"}}}};
  const ClientResponse r = Post(body);
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = r.Json();
  EXPECT_EQ(j["serving"]["weights"], "int8");
  ASSERT_EQ(j["rows"].size(), 2u);
  const json& v5e = j["rows"][0]["serving"];
  EXPECT_TRUE(v5e["fits"].get<bool>()) << v5e.dump();
  EXPECT_EQ(v5e["batch"], 96);
  EXPECT_GE(v5e["maxBatch"].get<int64_t>(), 96);
  EXPECT_GT(v5e["outputTokensPerSecondPerChip"].get<double>(), 0);
  EXPECT_GT(v5e["decodeStepSeconds"].get<double>(), 0);
  EXPECT_GT(v5e["usdPerMillionOutputTokens"]["onDemand"].get<double>(), 0);
  Result<ClientResponse> get = client_.Request(
      "GET",
      "/_emulator/compare?preset=llama2-7b&acceleratorTypes=v5litepod-8,v6e-1&serving.batch=96&"
      "serving.weights=int8&serving.kvCache=int8");
  ASSERT_TRUE(get.ok());
  ASSERT_EQ(get->status, 200) << get->body;
  EXPECT_EQ(get->Json(), j);

  const ClientResponse bad =
      Post({{"model", {{"preset", "llama2-7b"}}}, {"serving", {{"weights", "fp4"}}}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.Json()["error"]["status"], "INVALID_ARGUMENT");
  EXPECT_EQ(bad.Json()["error"]["message"], "serving.weights must be \"bf16\" or \"int8\"");
  const json program = json::parse(R"({"name": "p", "ops": [
      {"id": "x", "op": "parameter", "shape": [32, 64]}], "outputs": ["x"]})");
  const ClientResponse not_model = Post({{"program", program}, {"serving", json::object()}});
  EXPECT_EQ(not_model.status, 400);
  EXPECT_EQ(not_model.Json()["error"]["message"], "serving applies to model shapes only");
}

// The GPU context (engine/cost/gpu_reference.h): H100 and H200 in their own "gpuReference" array,
// marked as outside the TPU model with their sources, never among the TPU "rows"; training from
// the comparison's model FLOPs, serving with the same serving.* options the TPU rows use.
TEST_F(CompareApiTest, GpuReferenceIsBesideTheRowsAndMarked) {
  Result<ClientResponse> get = client_.Request(
      "GET",
      "/_emulator/compare?preset=llama2-7b&acceleratorTypes=v5litepod-8,v6e-8&serving.engine=vllm&"
      "serving.inputLen=512&serving.outputLen=256");
  ASSERT_TRUE(get.ok());
  ASSERT_EQ(get->status, 200) << get->body;
  const json j = get->Json();
  EXPECT_EQ(j["serving"]["engine"], "vllm");
  ASSERT_EQ(j["rows"].size(), 2u);
  for (const json& row : j["rows"]) {
    EXPECT_EQ(row["acceleratorType"].get<std::string>().rfind("v", 0), 0u) << row.dump();
    EXPECT_EQ(row["serving"]["engine"], "vllm");
  }
  ASSERT_EQ(j["gpuReference"].size(), 2u);
  EXPECT_EQ(j["gpuReference"][0]["gpu"], "H100 SXM");
  EXPECT_EQ(j["gpuReference"][1]["gpu"], "H200 SXM");
  for (const json& g : j["gpuReference"]) {
    EXPECT_EQ(g["outsideTpuModel"], true);
    EXPECT_NE(g["note"].get<std::string>().find("not emulated"), std::string::npos);
    EXPECT_EQ(g["prices"]["unit"], "USD per GPU-hour");
    EXPECT_FALSE(g["prices"]["source"].get<std::string>().empty());
    EXPECT_FALSE(g["prices"]["asOf"].get<std::string>().empty());
    EXPECT_FALSE(g["assumed"]["mfuSource"].get<std::string>().empty());
    // Training at the assumed MFU of the published peak, from the reply's own FLOPs per token.
    const json& t = g["training"];
    EXPECT_DOUBLE_EQ(t["mfu"].get<double>(), g["assumed"]["trainingMfu"].get<double>());
    EXPECT_NEAR(t["unitsPerSecondPerGpu"].get<double>() * j["modelFlopsPerStep"].get<double>() /
                    j["unitsPerStep"].get<double>(),
                g["peakBf16Flops"].get<double>() * t["mfu"].get<double>(), 1e3);
    // Serving: priced, and its dollars follow from the price per GPU-hour.
    const json& s = g["serving"];
    ASSERT_TRUE(s["fits"].get<bool>()) << s.dump();
    const double per_gpu = s["outputTokensPerSecondPerGpu"].get<double>();
    EXPECT_GT(per_gpu, 0);
    EXPECT_NEAR(s["usdPerMillionOutputTokens"]["onDemand"].get<double>(),
                g["prices"]["onDemand"].get<double>() / (per_gpu * 3600) * 1e6, 1e-9);
  }
  // The same request as a POST body gives the same reply, GPU rows included.
  const ClientResponse post =
      Post({{"model", {{"preset", "llama2-7b"}}},
            {"acceleratorTypes", {"v5litepod-8", "v6e-8"}},
            {"serving", {{"engine", "vllm"}, {"inputLen", 512}, {"outputLen", 256}}}});
  EXPECT_EQ(post.Json(), j);
  // Training only: the GPU rows have no serving.
  const ClientResponse train =
      Post({{"model", {{"preset", "llama2-7b"}}}, {"acceleratorTypes", {"v6e-8"}}});
  ASSERT_EQ(train.status, 200) << train.body;
  EXPECT_TRUE(train.Json()["gpuReference"][0]["serving"].is_null());
  EXPECT_GT(train.Json()["gpuReference"][0]["training"]["stepSeconds"].get<double>(), 0);
}

TEST_F(CompareApiTest, ErrorsUseGooglesEnvelopeAndNameTheField) {
  const ClientResponse bad = Post({{"model", {{"preset", "llama2-7b"}, {"heads", -1}}}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.Json()["error"]["status"], "INVALID_ARGUMENT");
  EXPECT_EQ(bad.Json()["error"]["message"], "model.heads must be an integer in 1..1024");
  const ClientResponse unknown =
      Post({{"model", {{"preset", "llama2-7b"}}}, {"acceleratorTypes", {"v9-8"}}});
  EXPECT_EQ(unknown.status, 404) << unknown.body;
  Result<ClientResponse> query = client_.Request("GET", "/_emulator/compare?layers=x");
  ASSERT_TRUE(query.ok());
  EXPECT_EQ(query->status, 400);
  EXPECT_EQ(query->Json()["error"]["message"], "layers must be an integer, got 'x'");
}

TEST_F(CompareApiTest, TheEndpointAndTheCliAgree) {
  const json body = {{"model",
                      {{"layers", 8},
                       {"dModel", 1024},
                       {"heads", 16},
                       {"kvHeads", 4},
                       {"ffn", 4096},
                       {"vocab", 32000},
                       {"seqLen", 1024},
                       {"globalBatch", 64}}},
                     {"acceleratorTypes", {"v4", "v5litepod-8", "v6e-16"}},
                     {"prices", {{"prices", {{{"generation", "v6e"}, {"onDemand", 3.0}}}}}}};
  const ClientResponse endpoint = Post(body);
  ASSERT_EQ(endpoint.status, 200) << endpoint.body;
  char path[] = "/tmp/tpuemu_compare_request_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << body.dump();
  const ProcessResult cli =
      ChildProcess::Run({TPUEMU_ENGINE_BIN, "compare", "--request", path, "--format", "json"}, {});
  std::remove(path);
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_EQ(json::parse(cli.out), endpoint.Json());
}

// An HLO module as the source (engine/cost/program_profile.h: FiguresFromHloModule): the endpoint
// prices it on every type asked for, a syntax error is 400 naming the line and column, and
// `tpuemu-engine compare --hlo FILE` gives the same comparison.
TEST_F(CompareApiTest, AnHloModuleIsASourceLikeAProgram) {
  std::ifstream in(std::string(TPUEMU_HLO_TESTDATA) + "/mlp_train_step.hlo");
  std::stringstream text;
  text << in.rdbuf();
  const json body = {{"hlo", {{"text", text.str()}}}, {"acceleratorTypes", {"v5p-8", "v6e-8"}}};
  const ClientResponse endpoint = Post(body);
  ASSERT_EQ(endpoint.status, 200) << endpoint.body.substr(0, 2000);
  EXPECT_EQ(endpoint.Json()["source"], "hlo");
  ASSERT_EQ(endpoint.Json()["rows"].size(), 2u);
  EXPECT_GT(endpoint.Json()["rows"][0]["stepSeconds"].get<double>(), 0);

  const ProcessResult cli =
      ChildProcess::Run({TPUEMU_ENGINE_BIN, "compare", "--hlo",
                         std::string(TPUEMU_HLO_TESTDATA) + "/mlp_train_step.hlo",
                         "--accelerator-types", "v5p-8,v6e-8", "--format", "json"},
                        {});
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_EQ(json::parse(cli.out), endpoint.Json());

  const ClientResponse bad =
      Post({{"hlo", {{"text", "HloModule m\nENTRY e {\n  x = f32[2] parameter(0\n}\n"}}}});
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_EQ(bad.Json()["error"]["status"], "INVALID_ARGUMENT");
  EXPECT_EQ(bad.Json()["error"]["message"],
            "hlo: HLO text line 4, column 1: expected ')' after the parameter number, found '}'");
}

}  // namespace
}  // namespace tpuemu::testing
