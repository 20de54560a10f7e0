// engine/stablehlo/printer.h: every module the HLO and StableHLO tests use (their raw-string
// modules and testdata files) printed as StableHLO parses back into a module that evaluates to
// the same bits on the same seeded inputs; literals, control flow and refusals one by one.
#include "engine/stablehlo/printer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/hlo/evaluator.h"
#include "engine/hlo/inputs.h"
#include "engine/hlo/parser.h"
#include "engine/stablehlo/import.h"
#include "engine/stablehlo/lower.h"
#include "engine/stablehlo/parser.h"

namespace tpuemu::engine::stablehlo {
namespace {

namespace fs = std::filesystem;

std::string Read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Source {
  std::string where;  // file:line
  std::string text;
};

// The raw string literals R"delim(...)delim" of a C++ file that hold a module.
void RawStrings(const fs::path& file, std::vector<Source>& out) {
  const std::string code = Read(file);
  size_t at = 0;
  while ((at = code.find("R\"", at)) != std::string::npos) {
    const size_t open = code.find('(', at + 2);
    if (open == std::string::npos || open - at > 20) {
      at += 2;
      continue;
    }
    const std::string close = ")" + code.substr(at + 2, open - at - 2) + "\"";
    const size_t end = code.find(close, open);
    if (end == std::string::npos) break;
    std::string text = code.substr(open + 1, end - open - 1);
    const size_t first = text.find_first_not_of(" \n\t");
    if (first != std::string::npos &&
        (text.compare(first, 9, "HloModule") == 0 || IsStableHloText(text))) {
      const auto line = 1 + std::count(code.begin(), code.begin() + static_cast<long>(at), '\n');
      out.push_back({file.filename().string() + ":" + std::to_string(line), std::move(text)});
    }
    at = end + close.size();
  }
}

std::vector<Source> TestModules() {
  const fs::path root = fs::path(TPUEMU_SOURCE_DIR) / "tests/engine";
  std::vector<Source> out;
  for (const char* dir : {"hlo", "stablehlo"}) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(root / dir)) files.push_back(e.path());
    for (const auto& e : fs::directory_iterator(root / dir / "testdata")) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
      if (f.filename() == "printer_test.cpp") continue;
      const std::string ext = f.extension().string();
      if (ext == ".cpp") RawStrings(f, out);
      if (ext == ".hlo" || ext == ".mlir") out.push_back({f.filename().string(), Read(f)});
    }
  }
  return out;
}

// The module a text gives; StableHLO with its checks as outputs, so that they are compared too.
Result<hlo::Module> Load(const std::string& text) {
  if (!IsStableHloText(text)) return hlo::ParseModule(text);
  Result<ModuleAst> ast = ParseText(text);
  if (!ast.ok()) return ast.status();
  LowerOptions options;
  options.checks_as_outputs = true;
  Result<Lowered> lowered = Lower(*ast, options);
  if (!lowered.ok()) return lowered.status();
  return std::move(lowered->module);
}

// "" when a and b hold the same shapes and bits, else where they differ.
std::string Diff(const hlo::Value& a, const hlo::Value& b, const std::string& at) {
  if (a.is_tuple != b.is_tuple) return at + ": tuple vs array";
  if (a.is_tuple) {
    if (a.elements.size() != b.elements.size()) return at + ": tuple sizes differ";
    for (size_t k = 0; k < a.elements.size(); ++k) {
      std::string d = Diff(a.elements[k], b.elements[k], at + "." + std::to_string(k));
      if (!d.empty()) return d;
    }
    return "";
  }
  const hlo::Array& x = *a.array;
  const hlo::Array& y = *b.array;
  if (x.type != y.type || x.dims != y.dims) {
    return at + ": " + x.shape().ToString() + " vs " + y.shape().ToString();
  }
  for (size_t k = 0; k < x.f.size(); ++k) {
    if (std::memcmp(&x.f[k], &y.f[k], sizeof(float)) != 0) {
      return at + ": element " + std::to_string(k) + " is " + std::to_string(x.f[k]) + " vs " +
             std::to_string(y.f[k]);
    }
  }
  for (size_t k = 0; k < x.i.size(); ++k) {
    if (x.i[k] != y.i[k]) return at + ": element " + std::to_string(k) + " differs";
  }
  return "";
}

Result<hlo::EvalResult> RunSeeded(const hlo::Module& m) {
  hlo::InputOptions inputs;
  inputs.seed = 7;
  Result<std::vector<std::vector<hlo::Value>>> args = hlo::MakeArguments(m, inputs);
  if (!args.ok()) return args.status();
  hlo::EvalOptions options;
  options.seed = 7;
  return hlo::Evaluate(m, *args, options);
}

TEST(StablehloPrinter, EveryTestModuleRoundTrips) {
  const std::vector<Source> sources = TestModules();
  int parsed = 0, printed = 0, evaluated = 0;
  std::vector<std::string> refused;
  for (const Source& s : sources) {
    Result<hlo::Module> m = Load(s.text);
    if (!m.ok()) continue;  // a module a test feeds in to see it refused
    ++parsed;
    Result<std::string> text = PrintStableHlo(*m);
    if (!text.ok()) {
      refused.push_back(s.where + ": " + text.status().message());
      continue;
    }
    ++printed;
    Result<hlo::Module> back = ParseStableHlo(*text);
    if (!back.ok()) {
      ADD_FAILURE() << s.where << ": " << back.status().message() << "\n" << *text;
      continue;
    }
    EXPECT_EQ(back->devices(), m->devices()) << s.where;
    // Printing the module read back gives a module that reads back too.
    Result<std::string> again = PrintStableHlo(*back);
    if (!again.ok()) {
      ADD_FAILURE() << s.where << ": " << again.status().message();
      continue;
    }
    EXPECT_TRUE(ParseStableHlo(*again).ok()) << s.where;
    if (!hlo::CheckEvaluable(*m).ok()) continue;
    Result<hlo::EvalResult> want = RunSeeded(*m);
    if (!want.ok()) continue;  // a module whose run is the test's error case
    Result<hlo::EvalResult> got = RunSeeded(*back);
    if (!got.ok() || got->outputs.size() != want->outputs.size()) {
      ADD_FAILURE() << s.where << ": " << (got.ok() ? "output count" : got.status().message())
                    << "\n"
                    << *text;
      continue;
    }
    for (size_t d = 0; d < want->outputs.size(); ++d) {
      const std::string diff = Diff(want->outputs[d], got->outputs[d], "output");
      EXPECT_EQ(diff, "") << s.where << " device " << d << "\n" << *text;
    }
    ++evaluated;
  }
  for (const std::string& r : refused) std::cout << "not printed: " << r << "\n";
  std::cout << sources.size() << " modules in the tests, " << parsed << " parse, " << printed
            << " printed and read back, " << evaluated << " evaluated identically\n";
  EXPECT_GE(parsed, 120);
  // What has no StableHLO form (elided constants, async ops, fft, ...) stays a small share.
  EXPECT_LE(refused.size() * 10, static_cast<size_t>(parsed));
  EXPECT_GE(evaluated, 100);
}

Result<std::string> PrintHlo(const std::string& hlo) {
  Result<hlo::Module> m = hlo::ParseModule(hlo);
  if (!m.ok()) return m.status();
  return PrintStableHlo(*m);
}

TEST(StablehloPrinter, JaxShape) {
  Result<std::string> text = PrintHlo(R"(
HloModule jit_f, replica_count=1, num_partitions=2
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[2,3]{1,0} parameter(0)
  e = f32[2,3]{1,0} exponential(x)
  zero = f32[] constant(0)
  r = f32[2]{0} reduce(e, zero), dimensions={1}, to_apply=add
  ROOT t = (f32[2]{0}, f32[2,3]{1,0}) tuple(r, e)
}
)");
  ASSERT_TRUE(text.ok()) << text.status().message();
  const std::string want_head =
      "module @jit_f attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {\n"
      "  func.func public @main(%arg0: tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2x3xf32>) {\n"
      "    %0 = stablehlo.exponential %arg0 : tensor<2x3xf32>\n"
      "    %1 = stablehlo.constant dense<0.0> : tensor<f32>\n";
  EXPECT_EQ(text->substr(0, want_head.size()), want_head) << *text;
  EXPECT_NE(text->find("\"stablehlo.reduce\"(%0, %1) <{dimensions = array<i64: 1>}> ({\n"
                       "    ^bb0(%2: tensor<f32>, %3: tensor<f32>):\n"
                       "      %4 = stablehlo.add %2, %3 : tensor<f32>\n"
                       "      stablehlo.return %4 : tensor<f32>\n"),
            std::string::npos)
      << *text;
  EXPECT_NE(text->find("return %5, %0 : tensor<2xf32>, tensor<2x3xf32>"), std::string::npos)
      << *text;
}

TEST(StablehloPrinter, LiteralsReadBackBitForBit) {
  const std::string hlo = R"(
HloModule literals
ENTRY main {
  f = f32[6]{0} constant({0.1, -0.0, inf, -inf, nan, 3.40282347e+38})
  b = bf16[3]{0} constant({1.5, -inf, 0.00390625})
  h = f16[2]{0} constant({65504, nan})
  u = u64[2]{0} constant({18446744073709551615, 1})
  s = s8[3]{0} constant({-128, 127, 0})
  p = pred[2,2]{1,0} constant({{true, false}, {false, true}})
  splat = f32[2,2]{1,0} constant({{2.5, 2.5}, {2.5, 2.5}})
  big = s32[300]{0} iota(), iota_dimension=0
  two = s32[] constant(2)
  twos = s32[300]{0} broadcast(two), dimensions={}
  bigc = s32[300]{0} multiply(big, twos)
  ROOT t = (f32[6]{0}, bf16[3]{0}, f16[2]{0}, u64[2]{0}, s8[3]{0}, pred[2,2]{1,0}, f32[2,2]{1,0}, s32[300]{0}) tuple(f, b, h, u, s, p, splat, bigc)
}
)";
  Result<hlo::Module> m = hlo::ParseModule(hlo);
  ASSERT_TRUE(m.ok()) << m.status().message();
  Result<std::string> text = PrintStableHlo(*m);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_NE(text->find("dense<[0.1, -0.0, 0x7F800000, 0xFF800000, 0x7FC00000, 3.4028235e+38]>"),
            std::string::npos)
      << *text;
  EXPECT_NE(text->find("dense<[18446744073709551615, 1]> : tensor<2xui64>"), std::string::npos);
  EXPECT_NE(text->find("dense<[[true, false], [false, true]]> : tensor<2x2xi1>"),
            std::string::npos);
  EXPECT_NE(text->find("dense<2.5> : tensor<2x2xf32>"), std::string::npos);
  Result<hlo::Module> back = ParseStableHlo(*text);
  ASSERT_TRUE(back.ok()) << back.status().message() << "\n" << *text;
  Result<hlo::EvalResult> want = RunSeeded(*m), got = RunSeeded(*back);
  ASSERT_TRUE(want.ok() && got.ok());
  EXPECT_EQ(Diff(want->outputs[0], got->outputs[0], "output"), "");
  // A constant above 256 elements is a hex blob of its little-endian bytes.
  Result<hlo::Module> folded = hlo::ParseModule(R"(
HloModule blob
ENTRY main {
  ROOT c = s16[300]{0} constant({)" + [] {
    std::string s;
    for (int k = 0; k < 300; ++k) s += (k ? "," : "") + std::to_string(k - 150);
    return s;
  }() + R"(})
})");
  ASSERT_TRUE(folded.ok()) << folded.status().message();
  Result<std::string> blob = PrintStableHlo(*folded);
  ASSERT_TRUE(blob.ok());
  EXPECT_NE(blob->find("dense<\"0x6AFF6BFF"), std::string::npos) << blob->substr(0, 300);
  Result<hlo::Module> blob_back = ParseStableHlo(*blob);
  ASSERT_TRUE(blob_back.ok()) << blob_back.status().message();
  Result<hlo::EvalResult> bw = RunSeeded(*folded), bg = RunSeeded(*blob_back);
  ASSERT_TRUE(bw.ok() && bg.ok());
  EXPECT_EQ(Diff(bw->outputs[0], bg->outputs[0], "output"), "");
}

TEST(StablehloPrinter, ControlFlowAndCalls) {
  const std::string hlo = R"(
HloModule control
cond {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[4] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  x2 = f32[4] multiply(x, x)
  ROOT t = (s32[], f32[4]) tuple(i2, x2)
}
neg {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}
same {
  p = f32[4] parameter(0)
  ROOT c = f32[4] copy(p)
}
helper {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ROOT pair = (f32[4], f32[4]) tuple(a, b)
}
ENTRY main {
  x = f32[4] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4]) tuple(zero, x)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  y = f32[4] get-tuple-element(w), index=1
  k = s32[] get-tuple-element(w), index=0
  b = s32[] constant(1)
  c = f32[4] conditional(b, y, x), branch_computations={neg, same}
  p = pred[] constant(false)
  d = f32[4] conditional(p, y, c), true_computation=neg, false_computation=same
  call = (f32[4], f32[4]) call(c, d), to_apply=helper
  ROOT r = (s32[], (f32[4], f32[4]), (s32[], f32[4])) tuple(k, call, w)
}
)";
  Result<hlo::Module> m = hlo::ParseModule(hlo);
  ASSERT_TRUE(m.ok()) << m.status().message();
  Result<std::string> text = PrintStableHlo(*m);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_NE(text->find("\"stablehlo.while\"(%0, %arg0) ({"), std::string::npos) << *text;
  EXPECT_NE(text->find("\"stablehlo.case\"("), std::string::npos);
  EXPECT_NE(text->find("\"stablehlo.if\"("), std::string::npos);
  EXPECT_NE(text->find("func.call @helper("), std::string::npos);
  EXPECT_NE(text->find("func.func private @helper("), std::string::npos);
  Result<hlo::Module> back = ParseStableHlo(*text);
  ASSERT_TRUE(back.ok()) << back.status().message() << "\n" << *text;
  Result<hlo::EvalResult> want = RunSeeded(*m), got = RunSeeded(*back);
  ASSERT_TRUE(want.ok()) << want.status().message();
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(Diff(want->outputs[0], got->outputs[0], "output"), "") << *text;
}

TEST(StablehloPrinter, RefusesWhatItCannotSayNamingTheInstruction) {
  Result<hlo::Module> elided = hlo::ParseModule(R"(
HloModule e
ENTRY main {
  ROOT c = f32[4] constant({...})
}
)");
  ASSERT_TRUE(elided.ok()) << elided.status().message();
  Result<std::string> text = PrintStableHlo(*elided);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(text.status().message().find("%c"), std::string::npos) << text.status().message();
  EXPECT_NE(text.status().message().find("elided"), std::string::npos);
  Result<hlo::Module> fft = hlo::ParseModule(R"(
HloModule f
ENTRY main {
  x = c64[8] parameter(0)
  ROOT f = c64[8] fft(x), fft_type=FFT, fft_length={8}
}
)");
  ASSERT_TRUE(fft.ok()) << fft.status().message();
  text = PrintStableHlo(*fft);
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.status().message().find("fft"), std::string::npos) << text.status().message();
}

}  // namespace
}  // namespace tpuemu::engine::stablehlo
