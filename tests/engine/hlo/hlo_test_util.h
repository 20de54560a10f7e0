// Helpers for the engine/hlo tests: parse-or-fail, run a module on given arguments, build and
// read arrays, load the modules in testdata/.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/hlo/evaluator.h"
#include "engine/hlo/parser.h"

namespace tpuemu::engine::hlo::testing {

inline Module MustParse(const std::string& text) {
  Result<Module> m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? std::move(*m) : Module{};
}

inline Value F32(std::vector<int64_t> dims, std::vector<float> values,
                 PrimitiveType type = PrimitiveType::kF32) {
  Array a = Array::Zeros(type, std::move(dims));
  for (size_t i = 0; i < values.size() && i < a.f.size(); ++i)
    a.f[i] = RoundToType(type, values[i]);
  return Value::Of(std::move(a));
}

inline Value Ints(PrimitiveType type, std::vector<int64_t> dims, std::vector<int64_t> values) {
  Array a = Array::Zeros(type, std::move(dims));
  for (size_t i = 0; i < values.size() && i < a.i.size(); ++i)
    a.i[i] = CanonicalInt(type, values[i]);
  return Value::Of(std::move(a));
}

inline std::vector<float> Floats(const Value& v) {
  return v.array ? std::vector<float>(v.array->f.begin(), v.array->f.end()) : std::vector<float>{};
}
inline std::vector<int64_t> Integers(const Value& v) {
  return v.array ? std::vector<int64_t>(v.array->i.begin(), v.array->i.end())
                 : std::vector<int64_t>{};
}

// Runs `text` on one device (or every device with the same args) and returns device 0's result.
inline Result<Value> Run(const std::string& text, std::vector<Value> args,
                         const EvalOptions& options = {}) {
  Result<Module> m = ParseModule(text);
  if (!m.ok()) return m.status();
  std::vector<std::vector<Value>> all(static_cast<size_t>(m->devices()), args);
  Result<EvalResult> r = Evaluate(*m, all, options);
  if (!r.ok()) return r.status();
  return r->outputs[0];
}

inline Value MustRun(const std::string& text, std::vector<Value> args,
                     const EvalOptions& options = {}) {
  Result<Value> v = Run(text, std::move(args), options);
  EXPECT_TRUE(v.ok()) << v.status().ToString();
  return v.ok() ? std::move(*v) : Value{};
}

inline std::string Testdata(const std::string& name) {
  std::ifstream in(std::string(TPUEMU_HLO_TESTDATA) + "/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace tpuemu::engine::hlo::testing
