// Control flow (while with a run-time condition and the trip limit, conditional, call, fusion,
// async wrappers), and the evaluator's error paths: unsupported instructions and types,
// arguments, limits, cancellation.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>

#include "tests/engine/hlo/hlo_test_util.h"
#include "tests/support/sanitizers.h"
#include "tests/support/wait_for.h"

namespace tpuemu::engine::hlo {
namespace {

using testing::F32;
using testing::Floats;
using ::testing::HasSubstr;
using testing::Ints;
using testing::MustRun;

constexpr const char* kDoubling = R"(HloModule m
cond { x = f32[] parameter(0)
  limit = f32[] constant(100)
  ROOT lt = pred[] compare(x, limit), direction=LT }
body { x = f32[] parameter(0)
  two = f32[] constant(2)
  ROOT y = f32[] multiply(x, two) }
ENTRY e {
  x = f32[] parameter(0)
  ROOT w = f32[] while(x), condition=cond, body=body
})";

TEST(HloEvalBuffers, ADyingOperandLendsItsBufferAndNothingLiveIsOverwritten) {
  // s dies in m (its buffer may become m's), but x is a parameter the caller keeps, c is a
  // constant, d is used twice by one instruction and again later, and r is a reshape of a dying
  // value: every result must be what fresh arrays give, and the arguments must be unchanged.
  const std::string text = R"(HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  c = f32[4] constant({1, 2, 3, 4})
  s = f32[4] add(x, c)
  m = f32[4] multiply(s, c)
  d = f32[4] subtract(m, x)
  dd = f32[4] multiply(d, d)
  e = f32[4] add(dd, d)
  p = pred[4] compare(e, c), direction=GT
  sel = f32[4] select(p, e, x)
  r = f32[2,2] reshape(sel)
  n = f32[2,2] negate(r)
  ROOT t = (f32[4], f32[2,2], f32[4]) tuple(x, n, c)
})";
  const Value x = F32({4}, {0.5f, -1, 2, 10});
  const Value out = MustRun(text, {x});
  // s = x + c, m = s·c, d = m - x, e = d² + d; sel = e > c ? e : x; n = -sel.
  std::vector<float> want;
  const std::vector<float> xs{0.5f, -1, 2, 10}, cs{1, 2, 3, 4};
  for (size_t i = 0; i < 4; ++i) {
    const float s = xs[i] + cs[i], m = s * cs[i], d = m - xs[i], e = d * d + d;
    want.push_back(-(e > cs[i] ? e : xs[i]));
  }
  ASSERT_EQ(out.elements.size(), 3u);
  EXPECT_EQ(Floats(out.elements[0]), xs);
  EXPECT_EQ(Floats(out.elements[1]), want);
  EXPECT_EQ(Floats(out.elements[2]), cs);
  EXPECT_EQ(Floats(x), xs);
  // Run twice: the constant's literal was not written through either.
  EXPECT_EQ(Floats(MustRun(text, {x}).elements[1]), want);
}

TEST(HloEvalControl, WhileRunsUntilItsConditionIsFalse) {
  EXPECT_EQ(Floats(MustRun(kDoubling, {F32({}, {3})})), std::vector<float>{192});
  EXPECT_EQ(Floats(MustRun(kDoubling, {F32({}, {500})})), std::vector<float>{500});
  Result<Module> m = ParseModule(kDoubling);
  ASSERT_TRUE(m.ok());
  Result<EvalResult> r = Evaluate(*m, {{F32({}, {3})}});
  ASSERT_TRUE(r.ok());
  // 3 -> 6 -> ... -> 192: six body runs, seven condition runs.
  const int body = m->FindComputation("body");
  const int cond = m->FindComputation("cond");
  EXPECT_EQ(r->executions[static_cast<size_t>(body)][2], 6);
  EXPECT_EQ(r->executions[static_cast<size_t>(cond)][2], 7);
}

TEST(HloEvalControl, WhileTripLimit) {
  EvalOptions options;
  options.limits.max_while_trips = 4;
  Result<Value> v = testing::Run(kDoubling, {F32({}, {3})}, options);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(v.status().message(),
              HasSubstr("%w (while, line 10): the loop ran more than the trip limit "
                        "max_while_trips = 4"));
}

TEST(HloEvalControl, ConditionalByPredAndByIndex) {
  const std::string text = R"(HloModule m
neg { x = f32[] parameter(0)
  ROOT n = f32[] negate(x) }
twice { y = f32[] parameter(0)
  ROOT t = f32[] add(y, y) }
flr { z = f32[] parameter(0)
  ROOT f = f32[] floor(z) }
ENTRY e {
  i = s32[] parameter(0)
  a = f32[] constant(1.5)
  ROOT r = f32[] conditional(i, a, a, a), branch_computations={neg, twice, flr}
})";
  auto run = [&](int64_t i) {
    return Floats(MustRun(text, {Ints(PrimitiveType::kS32, {}, {i})}))[0];
  };
  EXPECT_EQ(run(0), -1.5f);
  EXPECT_EQ(run(1), 3.0f);
  EXPECT_EQ(run(2), 1.0f);
  EXPECT_EQ(run(7), 1.0f);  // out of range: the last branch
  EXPECT_EQ(run(-1), 1.0f);
  const std::string pred = R"(HloModule m
neg { x = f32[] parameter(0)
  ROOT n = f32[] negate(x) }
id { y = f32[] parameter(0)
  ROOT c = f32[] copy(y) }
ENTRY e {
  p = pred[] parameter(0)
  a = f32[] constant(2)
  ROOT r = f32[] conditional(p, a, a), true_computation=neg, false_computation=id
})";
  EXPECT_EQ(Floats(MustRun(pred, {Ints(PrimitiveType::kPred, {}, {1})}))[0], -2.0f);
  EXPECT_EQ(Floats(MustRun(pred, {Ints(PrimitiveType::kPred, {}, {0})}))[0], 2.0f);
}

TEST(HloEvalControl, CallFusionAndAsyncWrappers) {
  const std::string text = R"(HloModule m
fused { p0 = f32[3] parameter(0)
  p1 = f32[3] parameter(1)
  m = f32[3] multiply(p0, p1)
  ROOT e = f32[3] exponential(m) }
sq { x = f32[3] parameter(0)
  ROOT s = f32[3] multiply(x, x) }
ENTRY e {
  a = f32[3] parameter(0)
  z = f32[3] broadcast(f32[] constant(0.5)), dimensions={}
  f = f32[3] fusion(a, z), kind=kLoop, calls=fused
  c = f32[3] call(f), to_apply=sq
  s = ((f32[3]), f32[3], s32[]) async-start(c), calls=sq
  ROOT d = f32[3] async-done(s)
})";
  // exp(a/2), squared by the call, squared again by the async computation: exp(2a).
  const std::vector<float> out = Floats(MustRun(text, {F32({3}, {1, 2, 3})}));
  ASSERT_EQ(out.size(), 3u);
  for (int i = 0; i < 3; ++i)
    EXPECT_NEAR(out[static_cast<size_t>(i)], std::exp(2.0f * (i + 1)),
                1e-3 * std::exp(2.0f * (i + 1)));
}

TEST(HloEvalControl, UnsupportedInstructionsAreNamedWithTheirLines) {
  const std::string text = R"(HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  a = f32[4] custom-call(x), custom_call_target="__cublas$gemm"
  b = c64[4] fft(c64[4] constant({...})), fft_type=FFT, fft_length={4}
  ROOT t = (f32[4], c64[4]) tuple(a, b)
})";
  Result<Module> m = ParseModule(text);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const Status s = CheckEvaluable(*m);
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_THAT(s.message(), HasSubstr("%a (line 4): custom-call target \"__cublas$gemm\""));
  EXPECT_THAT(s.message(), HasSubstr("(line 5): opcode fft"));
  Result<Value> v = testing::Run(text, {F32({4}, {1, 2, 3, 4})});
  EXPECT_EQ(v.status().code(), StatusCode::kUnimplemented);
}

TEST(HloEvalControl, F64AndComplexAreAClearError) {
  const std::string text = R"(HloModule m
ENTRY e {
  x = f32[2] parameter(0)
  ROOT d = f64[2] convert(x)
})";
  Result<Value> v = testing::Run(text, {F32({2}, {1, 2})});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), StatusCode::kUnimplemented);
  EXPECT_THAT(v.status().message(),
              HasSubstr("%d (line 4): element type f64 (supported: pred, s8-s64, u8-u64, f16, "
                        "bf16, f32)"));
}

TEST(HloEvalControl, ShardingAnnotationsAndTokensPassThrough) {
  // JAX's before-optimizations SPMD dumps annotate values with Sharding custom-calls; TF modules
  // thread tokens.
  const std::string text = R"(HloModule m
ENTRY e {
  x = f32[2] parameter(0), sharding={replicated}
  tok = token[] parameter(1)
  s = f32[2] custom-call(x), custom_call_target="Sharding", sharding={devices=[2]<=[2]}
  t = token[] after-all(tok)
  ROOT r = f32[2] add(s, s)
})";
  EXPECT_EQ(Floats(MustRun(text, {F32({2}, {1, 2}), Value::Tuple({})})),
            (std::vector<float>{2, 4}));
  Result<Value> bad = testing::Run(R"(HloModule m
ENTRY e {
  x = f32[2] parameter(0)
  ROOT s = f32[3] custom-call(x), custom_call_target="Sharding"
})",
                                   {F32({2}, {1, 2})});
  EXPECT_THAT(bad.status().message(),
              HasSubstr("a Sharding custom-call must return its operand's shape f32[2]"));
}

TEST(HloEvalControl, ArgumentsMustMatchTheEntry) {
  Result<Module> m = ParseModule("HloModule m\nENTRY e {\n ROOT x = f32[2] parameter(0)\n}");
  ASSERT_TRUE(m.ok());
  EXPECT_THAT(Evaluate(*m, {{}}).status().message(),
              HasSubstr("the entry takes 1 parameter(s), got 0"));
  EXPECT_THAT(Evaluate(*m, {{F32({3}, {1, 2, 3})}}).status().message(),
              HasSubstr("parameter 0 (%x) is f32[2], got f32[3]"));
  EXPECT_THAT(Evaluate(*m, {}).status().message(),
              HasSubstr("expected arguments for 1 device(s), got 0"));
}

TEST(HloEvalControl, TensorSizeLimit) {
  EvalOptions options;
  options.limits.max_tensor_elements = 100;
  Result<Value> v = testing::Run(
      "HloModule m\nENTRY e {\n ROOT i = s32[20,20] iota(), iota_dimension=0\n}", {}, options);
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(v.status().message(),
              HasSubstr("s32[20,20] has 400 elements, more than the limit of 100"));
}

TEST(HloEvalControl, CancellationStopsBetweenInstructions) {
  std::atomic<bool> cancel{true};
  EvalOptions options;
  options.cancel = &cancel;
  Result<Value> v = testing::Run(kDoubling, {F32({}, {3})}, options);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), StatusCode::kCancelled);
}

// One 4096³ HIGHEST dot (six GEMM passes, seconds on one thread): a flag set while it runs stops
// it between GEMM tiles, not at its end. The 2 s bound proves that the GEMM polls, not how fast
// this machine is; the test prints what it measured.
TEST(HloEvalControl, ADeadlineStopsARunWithDeadlineExceeded) {
  // A 2048³ HIGHEST dot (six passes: seconds here) and a deadline 150 ms away: the GEMM's tiles
  // stop it; a deadline already past stops it before the first instruction.
  const std::string text = R"(HloModule m
ENTRY e {
  a = f32[2048,2048] parameter(0)
  b = f32[2048,2048] parameter(1)
  ROOT c = f32[2048,2048] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={highest,highest}
})";
  const std::vector<Value> args = {F32({2048, 2048}, {1}), F32({2048, 2048}, {2})};
  EvalOptions options;
  options.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(150);
  Result<Value> inside = testing::Run(text, args, options);
  ASSERT_FALSE(inside.ok());
  EXPECT_EQ(inside.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_THAT(inside.status().message(), HasSubstr("deadline exceeded"));
  options.deadline = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  Result<Value> before = testing::Run(text, args, options);
  ASSERT_FALSE(before.ok());
  EXPECT_EQ(before.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_THAT(before.status().message(), HasSubstr("deadline exceeded before"));
}

TEST(HloEvalControl, CancellationStopsInsideALargeDot) {
  using Clock = std::chrono::steady_clock;
  const std::string text = R"(HloModule m
ENTRY e {
  a = f32[4096,4096] parameter(0)
  b = f32[4096,4096] parameter(1)
  ROOT c = f32[4096,4096] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={highest,highest}
})";
  std::atomic<bool> cancel{false};
  EvalOptions options;
  options.cancel = &cancel;
  Result<Value> v = Value{};
  std::atomic<bool> returned{false};
  Clock::time_point returned_at;
  // The operands are made here, outside the timed wait (under TSan filling them takes seconds).
  std::vector<Value> args = {F32({4096, 4096}, {1}), F32({4096, 4096}, {2})};
  std::thread runner([&] {
    v = testing::Run(text, std::move(args), options);
    returned_at = Clock::now();
    returned = true;
  });
  // Past the operands' transposed copies, inside the passes (sanitized builds copy 5-20x slower).
  const auto kPastTheCopies =
      std::chrono::milliseconds(::tpuemu::testing::kSanitizedBuild ? 4000 : 800);
  const Clock::time_point began = Clock::now();
  ::tpuemu::testing::WaitFor([&] { return returned || Clock::now() - began > kPastTheCopies; },
                             std::chrono::seconds(60));
  EXPECT_FALSE(returned) << "the dot finished before the flag was set";
  const Clock::time_point flagged = Clock::now();
  cancel = true;
  runner.join();
  const double latency_ms =
      std::chrono::duration<double, std::milli>(returned_at - flagged).count();
  std::printf("cancel latency, 4096^3 HIGHEST hlo dot on 1 thread: %.1f ms\n", latency_ms);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), StatusCode::kCancelled);
  // Inside the dot; a sanitized build may still be short of it when the flag is set.
  EXPECT_THAT(v.status().message(),
              HasSubstr(::tpuemu::testing::kSanitizedBuild ? "cancelled" : "cancelled in %c"))
      << v.status().ToString();
  EXPECT_LT(latency_ms, 2000);
}

}  // namespace
}  // namespace tpuemu::engine::hlo
