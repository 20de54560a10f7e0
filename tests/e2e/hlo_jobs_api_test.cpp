// hlo jobs through real HTTP (issue 13 item 6): an MLP train step with a while loop and a 4-device
// data-parallel step with all-reduce give the numbers the engine's own RunModule gives on the same
// seed; the per-op profile names the HLO instructions and their op_name; estimate-only prices a
// module too large to run; cancel and timeout stop a long loop; errors name the line, the
// custom-call target, the limit or the node.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "engine/hlo/cost_model.h"
#include "engine/hlo/parser.h"
#include "engine/hlo/program.h"
#include "tests/e2e/jobs_api_fixture.h"
#include "tests/engine/hlo/hlo_test_util.h"

namespace tpuemu::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

using engine::hlo::testing::Testdata;  // tests/engine/hlo/testdata/<name>

// The engine's own run of HLO text: ParseModule, then RunModule, as the job service does.
Result<engine::hlo::RunResult> RunText(const std::string& text, const std::string& type,
                                       const engine::hlo::RunOptions& options) {
  Result<engine::hlo::Module> module = engine::hlo::ParseModule(text, options.limits);
  if (!module.ok()) return module.status();
  return engine::hlo::RunModule(*module, engine::Slice::FromAcceleratorType(type).value(), options);
}

// What the engine computes for `text` on `type` with the job's seed, device 0's leaves.
engine::hlo::RunResult EngineRun(const std::string& text, const std::string& type, uint64_t seed) {
  engine::hlo::RunOptions options;
  options.inputs.seed = seed;
  Result<engine::hlo::RunResult> r = RunText(text, type, options);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : engine::hlo::RunResult{};
}

// The job's output summaries equal the engine's device-0 result leaf by leaf.
void ExpectOutputsOf(const json& outputs, const engine::hlo::RunResult& run) {
  ASSERT_FALSE(run.outputs.empty());
  std::vector<const engine::hlo::Array*> leaves;
  run.outputs[0].CollectArrays(leaves);
  ASSERT_EQ(outputs.size(), leaves.size()) << outputs.dump();
  for (size_t i = 0; i < leaves.size(); ++i) {
    const json& out = outputs["out_" + std::to_string(i)];
    double sum = 0;
    for (int64_t k = 0; k < leaves[i]->size(); ++k) sum += leaves[i]->GetDouble(k);
    EXPECT_EQ(out["shape"], json(leaves[i]->dims)) << i;
    EXPECT_DOUBLE_EQ(out["checksum"].get<double>(), sum) << i;
    for (size_t k = 0; k < out["sample"].size(); ++k) {
      EXPECT_DOUBLE_EQ(out["sample"][k].get<double>(),
                       leaves[i]->GetDouble(static_cast<int64_t>(k)));
    }
  }
}

json FindOp(const json& ops, const std::string& id) {
  for (const json& op : ops) {
    if (op["id"] == id) return op;
  }
  return json();
}

class HloJobsApiTest : public JobsApiFixture {
 protected:
  json SubmitHlo(const std::string& node, json hlo, json extra = json::object(), int status = 200,
                 const std::string& parent = kParent) {
    extra["hlo"] = std::move(hlo);
    return Submit(node, extra.dump(), status, parent);
  }
  std::string ErrorOf(const std::string& node, json hlo, json extra = json::object()) {
    json r = SubmitHlo(node, std::move(hlo), std::move(extra), 400);
    EXPECT_EQ(r["error"]["status"], "INVALID_ARGUMENT") << r.dump();
    return r["error"]["message"].get<std::string>();
  }
};

TEST_F(HloJobsApiTest, MlpTrainStepWithAWhileLoopMatchesTheEngine) {
  CreateReady("tpu-a");
  const std::string text = Testdata("mlp_train_step.hlo");
  json job = SubmitHlo("tpu-a", {{"text", text}}, {{"seed", 7}, {"steps", 2}});
  EXPECT_EQ(job["spec"]["hlo"]["text"], text);
  EXPECT_EQ(job["spec"]["cores"], 1);
  const std::string name = job["name"];
  json done = Wait(name);
  ASSERT_EQ(done["state"], "SUCCEEDED") << done.dump().substr(0, 2000);
  EXPECT_EQ(done["reason"], "completed 2 steps");
  EXPECT_FALSE(done["result"].contains("profile"));

  const engine::hlo::RunResult run = EngineRun(text, "v4-8", 7);
  ExpectOutputsOf(done["result"]["outputs"], run);
  const json& summary = done["result"]["metrics"];
  EXPECT_EQ(summary["cyclesPerStep"], run.cost.cycles);
  EXPECT_EQ(summary["hbmPeakBytesPerTensorCore"], run.cost.peak_hbm_bytes_per_tensorcore);
  EXPECT_DOUBLE_EQ(summary["mxuUtilization"].get<double>(), run.cost.mxu_utilization);
  EXPECT_DOUBLE_EQ(summary["flopsTotal"].get<double>(), 2 * run.cost.flops);
  EXPECT_EQ(summary["devices"], 1);
  EXPECT_EQ(summary["tensorcores"], 2);  // a v4 device is a chip
  EXPECT_EQ(summary["acceleratorType"], "v4-8");

  json metrics = Call("GET", "/v2/" + name + "/metrics").Json();
  ASSERT_EQ(metrics["steps"].size(), 2u);
  for (const json& step : metrics["steps"]) {
    EXPECT_EQ(step["cycles"], run.cost.cycles);
    EXPECT_DOUBLE_EQ(step["emulatedSeconds"].get<double>(), run.cost.seconds);
    EXPECT_DOUBLE_EQ(step["flops"].get<double>(), run.cost.flops);
    EXPECT_EQ(step["hbmPeakBytes"], run.cost.peak_hbm_bytes_per_tensorcore);
  }
  // The profile names the HLO instructions and their op_name; the loop body ran 3 times.
  const json dot = FindOp(metrics["ops"], "%h_dot");
  ASSERT_FALSE(dot.is_null()) << metrics["ops"].dump().substr(0, 1000);
  EXPECT_EQ(dot["op"], "dot");
  EXPECT_EQ(dot["opName"], "jit(train_step)/dense1/dot_general");
  EXPECT_EQ(dot["unit"], "mxu");
  EXPECT_EQ(dot["count"], 3);
  EXPECT_EQ(dot["passes"], 6);
  int64_t cycles = 0;
  for (const json& op : metrics["ops"]) cycles += op["cycles"].get<int64_t>();
  EXPECT_EQ(cycles, run.cost.cycles);

  json logs = Call("GET", "/v2/" + name + "/logs?offset=0").Json();
  std::string all;
  for (const json& line : logs["lines"]) all += line.get<std::string>() + "\n";
  EXPECT_THAT(all, HasSubstr("hlo: module jit_mlp_train_step, "));
  EXPECT_THAT(all, HasSubstr("on 1 device(s) of v4-8 (2 TensorCore(s) each)"));
  EXPECT_THAT(all, HasSubstr("step 1 loss=n/a"));

  // Parameters from the spec: the same values the engine gets from --value.
  json given = SubmitHlo("tpu-a", {{"text", text}, {"params", {{"2", 0.5}}}}, {{"seed", 7}});
  json given_done = Wait(given["name"]);
  ASSERT_EQ(given_done["state"], "SUCCEEDED") << given_done.dump().substr(0, 2000);
  engine::hlo::RunOptions options;
  options.inputs.seed = 7;
  options.inputs.values[2] = {0.5};
  ExpectOutputsOf(given_done["result"]["outputs"], RunText(text, "v4-8", options).value());
}

TEST_F(HloJobsApiTest, FourDeviceDataParallelStepWithAllReduce) {
  const std::string text = Testdata("data_parallel_step.hlo");
  // v4 in us-central2-b, v5p in us-east5-a (the catalog's zones): both megacore.
  const std::string v5p_parent = "/v2/projects/proj/locations/us-east5-a";
  for (const auto& [type, parent] : {std::pair<const char*, std::string>{"v4-8", kParent},
                                     std::pair<const char*, std::string>{"v5p-8", v5p_parent}}) {
    const std::string node = std::string("dp-") + type;
    CreateReady(node, parent, type);
    json job = SubmitHlo(node, {{"text", text}}, {{"seed", 3}}, 200, parent);
    EXPECT_EQ(job["spec"]["cores"], 4);  // replica_count=4
    json done = Wait(job["name"]);
    ASSERT_EQ(done["state"], "SUCCEEDED") << done.dump().substr(0, 2000);
    const engine::hlo::RunResult run = EngineRun(text, type, 3);
    ExpectOutputsOf(done["result"]["outputs"], run);
    const json& summary = done["result"]["metrics"];
    EXPECT_EQ(summary["devices"], 4);
    EXPECT_EQ(summary["tensorcores"], 8);
    EXPECT_GT(summary["allReduceCyclesPerStep"].get<int64_t>(), 0);
    EXPECT_EQ(summary["cyclesPerStep"], run.cost.cycles);
    EXPECT_DOUBLE_EQ(summary["flopsTotal"].get<double>(), 4 * run.cost.flops);
    json metrics = Call("GET", "/v2/" + done["name"].get<std::string>() + "/metrics").Json();
    const json psum = FindOp(metrics["ops"], "%sum");
    EXPECT_EQ(psum["unit"], "ici");
    EXPECT_EQ(psum["opName"], "pmap(step)/psum");
  }
  // Every device agrees after the all-reduce: the step's result is the same on each.
  const engine::hlo::RunResult run = EngineRun(text, "v4-8", 3);
  ASSERT_EQ(run.outputs.size(), 4u);
  std::vector<const engine::hlo::Array*> first, last;
  run.outputs[0].CollectArrays(first);
  run.outputs[3].CollectArrays(last);
  EXPECT_EQ(first[0]->f, last[0]->f);

  EXPECT_EQ(ErrorOf("dp-v4-8", {{"text", text}}, {{"cores", 2}}),
            "cores (2) must equal the module's replica_count x num_partitions (4), or be left out");
}

TEST_F(HloJobsApiTest, EstimateOnlyPricesAModuleTooLargeToRun) {
  CreateReady("tpu-a");
  // A 65536 x 65536 f32 matmul: 16 GiB per operand, above the tensor limit of a run and above
  // a v4 TensorCore's HBM.
  const std::string big = R"(HloModule big
ENTRY e {
  a = f32[65536,65536] parameter(0)
  b = f32[65536,65536] parameter(1)
  ROOT c = f32[65536,65536] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="jit(big)/dot_general"}
}
)";
  EXPECT_THAT(ErrorOf("tpu-a", {{"text", big}}),
              HasSubstr("more than the limit of 16777216; set hlo.estimateOnly to price the "
                        "module without running it"));
  json job = SubmitHlo("tpu-a", {{"text", big}, {"estimateOnly", true}}, {{"steps", 5}});
  json done = Wait(job["name"]);
  ASSERT_EQ(done["state"], "SUCCEEDED") << done.dump().substr(0, 2000);
  const json& e = done["result"]["estimate"];
  Result<engine::hlo::Module> module = engine::hlo::ParseModule(big);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  Result<engine::hlo::ModuleCost> want =
      engine::hlo::PriceModule(*module, engine::Slice::FromAcceleratorType("v4-8").value());
  ASSERT_TRUE(want.ok());
  EXPECT_EQ(e["cyclesPerStep"], want->cycles);
  EXPECT_DOUBLE_EQ(e["stepSeconds"].get<double>(), want->seconds);
  EXPECT_DOUBLE_EQ(e["flopsPerStep"].get<double>(), 2.0 * 65536.0 * 65536.0 * 65536.0);
  EXPECT_EQ(e["hbmPeakBytesPerTensorCore"], want->peak_hbm_bytes_per_tensorcore);
  EXPECT_EQ(e["fits"], false);
  EXPECT_THAT(done["reason"].get<std::string>(), HasSubstr("estimated without running"));
  EXPECT_THAT(done["reason"].get<std::string>(), HasSubstr("(does not fit)"));
  json metrics = Call("GET", "/v2/" + done["name"].get<std::string>() + "/metrics").Json();
  EXPECT_TRUE(metrics["steps"].empty());
  EXPECT_EQ(FindOp(metrics["ops"], "%c")["opName"], "jit(big)/dot_general");
}

// A loop of a million trips over 4096 elements: seconds of work, stopped between instructions.
constexpr const char* kLongLoop = R"(HloModule long
cond {
  s = (s32[], f32[4096]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(1000000)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[4096]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[4096] get-tuple-element(s), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  y = f32[4096] multiply(x, x)
  ROOT t = (s32[], f32[4096]) tuple(next, y)
}
ENTRY e {
  x = f32[4096] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4096]) tuple(zero, x)
  ROOT w = (s32[], f32[4096]) while(init), condition=cond, body=body
}
)";

TEST_F(HloJobsApiTest, CancelAndTimeoutStopALongLoop) {
  CreateReady("tpu-a");
  CreateReady("tpu-b");
  json running = SubmitHlo("tpu-a", {{"text", kLongLoop}});
  const std::string name = running["name"];
  ASSERT_TRUE(WaitFor([&] { return StateIs(name, "RUNNING"); }));
  ASSERT_EQ(Call("POST", "/v2/" + name + ":cancel", "{}").status, 200);
  json cancelled = Wait(name);
  EXPECT_EQ(cancelled["state"], "CANCELLED") << cancelled.dump().substr(0, 1000);
  EXPECT_EQ(cancelled["exitCode"], 130);

  json timed = Wait(SubmitHlo("tpu-b", {{"text", kLongLoop}}, {{"timeoutSeconds", 1}})["name"]);
  EXPECT_EQ(timed["state"], "TIMED_OUT") << timed.dump().substr(0, 1000);
  EXPECT_EQ(timed["exitCode"], 124);
}

TEST_F(HloJobsApiTest, ErrorsNameTheLineTheTargetAndTheNode) {
  CreateReady("tpu-a");
  EXPECT_EQ(
      ErrorOf("tpu-a", {{"text", "HloModule m\nENTRY e {\n  x = f32[2] parameter(0\n}\n"}}),
      "hlo.text: HLO text line 4, column 1: expected ')' after the parameter number, found '}'");
  const std::string custom = R"(HloModule cc
ENTRY e {
  x = f32[8] parameter(0)
  ROOT y = f32[8] custom-call(x), custom_call_target="my_fused_kernel"
}
)";
  const std::string message = ErrorOf("tpu-a", {{"text", custom}});
  EXPECT_THAT(message, HasSubstr("%y (line 4): custom-call target \"my_fused_kernel\""));
  // Estimate-only prices it at zero when asked to, with the warning in the result.
  EXPECT_THAT(ErrorOf("tpu-a", {{"text", custom}, {"estimateOnly", true}}),
              HasSubstr("my_fused_kernel"));
  json priced = Wait(SubmitHlo(
      "tpu-a", {{"text", custom}, {"estimateOnly", true}, {"allowUnsupported", true}})["name"]);
  ASSERT_EQ(priced["state"], "SUCCEEDED");
  EXPECT_THAT(priced["result"]["estimate"]["warnings"].dump(), HasSubstr("my_fused_kernel"));

  // Eight devices do not fit a v4-8's four chips.
  std::string eight = Testdata("data_parallel_step.hlo");
  eight.replace(eight.find("replica_count=4"), 15, "replica_count=8");
  EXPECT_THAT(ErrorOf("tpu-a", {{"text", eight}, {"estimateOnly", true}}),
              HasSubstr("hlo: the module runs on 8 devices (replica_count 8 x num_partitions 1); "
                        "v4-8 has 4 (2 TensorCore(s) each)"));
  EXPECT_THAT(ErrorOf("tpu-a", {{"text", Testdata("mlp_train_step.hlo")}}, {{"cores", 8}}),
              HasSubstr("the module runs on 8 devices"));
}

// Limits: a small body limit and HLO limits under it. A text over max_hlo_text_bytes is 400
// naming it; a body over the body limit never reaches the job service (413).
class HloSmallLimitsApiTest : public JobsApiFixture {
 protected:
  static service::JobLimits Limits() {
    service::JobLimits limits;
    limits.max_hlo_text_bytes = 8 << 10;
    limits.max_hlo_instructions = 20;
    return limits;
  }
  static api::HttpServerOptions Http() {
    api::HttpServerOptions http;
    http.body_limit_bytes = 16 << 10;
    return http;
  }
  HloSmallLimitsApiTest() : JobsApiFixture(Limits(), Http()) {}
};

TEST_F(HloSmallLimitsApiTest, TextAndInstructionLimitsFitInsideTheBodyLimit) {
  CreateReady("tpu-a");
  // Padded with a comment to 10 KiB: over the text limit, under the body limit.
  const std::string padded = "// " + std::string(10 << 10, 'x') + "\n" + kLongLoop;
  ClientResponse r = Call("POST", std::string(kParent) + "/nodes/tpu-a/jobs",
                          json{{"hlo", {{"text", padded}}}}.dump());
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_THAT(r.Json()["error"]["message"].get<std::string>(),
              HasSubstr(" bytes, above the limit max_hlo_text_bytes = 8192"));
  const std::string huge = "// " + std::string(20 << 10, 'x') + "\n" + kLongLoop;
  r = Call("POST", std::string(kParent) + "/nodes/tpu-a/jobs",
           json{{"hlo", {{"text", huge}}}}.dump());
  EXPECT_EQ(r.status, 413);
  // 21 instructions: one past the instruction limit.
  std::string many = "HloModule many\nENTRY e {\n  x0 = f32[] parameter(0)\n";
  for (int i = 1; i <= 20; ++i) {
    many += "  x" + std::to_string(i) + " = f32[] negate(x" + std::to_string(i - 1) + ")\n";
  }
  many += "}\n";
  r = Call("POST", std::string(kParent) + "/nodes/tpu-a/jobs",
           json{{"hlo", {{"text", many}}}}.dump());
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_THAT(r.Json()["error"]["message"].get<std::string>(),
              HasSubstr("more instructions than the limit max_instructions = 20"));
}

}  // namespace
}  // namespace tpuemu::testing
