#include "engine/hlo/evaluator.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <set>

#include "engine/hlo/evaluator_internal.h"
#include "engine/hlo/fused_kernels.h"

namespace tpuemu::engine::hlo {

ParallelContext EvalOptions::Parallel() const {
  ParallelContext ctx;
  ctx.pool = pool;
  ctx.group = pool_group;
  ctx.max_threads = max_threads;
  ctx.cancel.flag = cancel;
  ctx.cancel.deadline = deadline;
  return ctx;
}

EvalOptions EvalOptions::On(const ParallelContext& parallel) {
  EvalOptions options;
  options.pool = parallel.pool;
  options.pool_group = parallel.group;
  options.max_threads = parallel.max_threads;
  options.cancel = parallel.cancel.flag;
  options.deadline = parallel.cancel.deadline;
  return options;
}
namespace internal {

Status CheckSize(const Instruction& inst, const Shape& shape, const Limits& limits) {
  return ValidateStatic(shape, limits.max_tensor_elements, inst.Describe());
}

// Implemented in eval_local.cpp: one instruction on one device. donors[j] (null, or ops[j]'s array
// when operand j dies here and nothing else holds it) may give the result its buffer.
Result<Value> EvalLocal(KernelContext& ctx, const Computation& comp, const Instruction& inst,
                        const std::vector<const Value*>& ops, const std::vector<Array*>& donors,
                        int device, uint64_t* counter);

namespace {
// Whether an instruction may write its result over an operand's buffer (EvalLocal).
bool ReusesOperands(Opcode op) {
  return IsElementwiseUnary(op) || IsElementwiseBinary(op) || op == Opcode::kConvert ||
         op == Opcode::kReshape || op == Opcode::kSelect;
}

using Lanes = std::vector<Value>;  // one value per running device

class Machine : public KernelContext {
 public:
  Machine(const Module& module, const EvalOptions& options)
      : module_(module),
        options_(options),
        scalars_(module.computations.size()),
        plans_(module.computations.size()) {
    executions.resize(module.computations.size());
    for (size_t c = 0; c < module.computations.size(); ++c) {
      executions[c].assign(module.computations[c].instructions.size(), 0);
    }
    if (options.profile) host_ns = executions;
  }

  const Module& module() const override { return module_; }
  const EvalOptions& options() const override { return options_; }
  ScalarComputation& Scalar(int index) override {
    auto& slot = scalars_[static_cast<size_t>(index)];
    if (!slot) {
      slot = std::make_unique<ScalarComputation>(
          module_, module_.computations[static_cast<size_t>(index)],
          [this, index](std::vector<Value> args) -> Result<Value> {
            auto out = Call(index, {0}, {std::move(args)});
            if (!out.ok()) return out.status();
            return std::move((*out)[0]);
          });
    }
    return *slot;
  }

  const Value& ElidedConstant(const Instruction& inst) override {
    auto it = elided_.find(&inst);
    if (it == elided_.end()) {
      uint64_t stream = 1469598103934665603ull;  // FNV-1a of the instruction name
      for (unsigned char c : inst.name) stream = (stream ^ c) * 1099511628211ull;
      it = elided_.emplace(&inst, Value::Of(FillDeterministic(inst.shape, options_.seed, stream)))
               .first;
    }
    return it->second;
  }

  // Runs computation `index` for `devices`; args[lane][parameter].
  Result<Lanes> Call(int index, const std::vector<int>& devices,
                     std::vector<std::vector<Value>> args);

  std::vector<std::vector<int64_t>> executions;
  std::vector<std::vector<int64_t>> host_ns;  // with options.profile

 private:
  // The loop-fusion plan and last uses of computation `index` (made on first use).
  const LoopFusionPlan& Plan(int index);
  // Runs fused group `group` of computation `comp` for every lane; sets its outputs in env.
  Status RunGroup(int comp, int group, std::vector<Lanes>& env, size_t lanes);
  Result<Lanes> Step(int comp, int index, const Instruction& inst, const std::vector<int>& devices,
                     const std::vector<Lanes>& env);
  Result<Lanes> While(const Instruction& inst, const std::vector<int>& devices, Lanes state);
  Result<Lanes> Conditional(const Instruction& inst, const std::vector<int>& devices,
                            const std::vector<std::vector<const Value*>>& ops);

  const Module& module_;
  const EvalOptions& options_;
  std::vector<std::unique_ptr<ScalarComputation>> scalars_;
  std::vector<std::unique_ptr<LoopFusionPlan>> plans_;
  std::map<const Instruction*, Value> elided_;
  uint64_t counter_ = 0;  // rng / rng-get-and-update-state calls
};

const LoopFusionPlan& Machine::Plan(int index) {
  std::unique_ptr<LoopFusionPlan>& plan = plans_[static_cast<size_t>(index)];
  if (!plan) {
    plan = std::make_unique<LoopFusionPlan>(
        PlanFusedLoops(module_.computations[static_cast<size_t>(index)], options_.loop_fusion));
  }
  return *plan;
}

Status Machine::RunGroup(int comp, int group, std::vector<Lanes>& env, size_t lanes) {
  const Computation& computation = module_.computations[static_cast<size_t>(comp)];
  const LoopFusionPlan& plan = Plan(comp);
  const LoopGroup& g = plan.groups[static_cast<size_t>(group)];
  for (int m : g.members) {
    const Instruction& inst = computation.instructions[static_cast<size_t>(m)];
    TPUEMU_RETURN_IF_ERROR(CheckSize(inst, inst.shape, options_.limits));
  }
  for (size_t lane = 0; lane < lanes; ++lane) {
    auto outs = RunFusedGroup(
        computation, plan, group,
        [&](int o) -> const Array& { return *env[static_cast<size_t>(o)][lane].array; },
        options_.Parallel());
    if (!outs.ok()) return outs.status();
    for (size_t k = 0; k < g.outputs.size(); ++k) {
      env[static_cast<size_t>(g.outputs[k])].push_back(Value::Of(std::move((*outs)[k])));
    }
  }
  return Status::Ok();
}

Result<Lanes> Machine::Call(int index, const std::vector<int>& devices,
                            std::vector<std::vector<Value>> args) {
  const Computation& comp = module_.computations[static_cast<size_t>(index)];
  const LoopFusionPlan& plan = Plan(index);
  std::vector<Lanes> env(comp.instructions.size());
  for (size_t i = 0; i < comp.instructions.size(); ++i) {
    if (options_.cancel != nullptr && options_.cancel->load(std::memory_order_relaxed)) {
      return Status::Cancelled("HLO execution cancelled before " + comp.instructions[i].Describe());
    }
    if (options_.deadline && std::chrono::steady_clock::now() >= *options_.deadline) {
      return Status::DeadlineExceeded("HLO execution deadline exceeded before " +
                                      comp.instructions[i].Describe());
    }
    const Instruction& inst = comp.instructions[i];
    const int group = plan.group_of[i];
    if (inst.opcode == Opcode::kParameter) {
      env[i].reserve(devices.size());
      for (auto& a : args) env[i].push_back(a[static_cast<size_t>(inst.index)]);
    } else if (plan.unmaterialised[i] ||
               (group >= 0 && plan.groups[static_cast<size_t>(group)].at != static_cast<int>(i))) {
      // Read only inside a fused loop, or a fused member that runs with its group's last one.
    } else {
      const auto start = options_.profile ? std::chrono::steady_clock::now()
                                          : std::chrono::steady_clock::time_point{};
      if (group >= 0) {
        TPUEMU_RETURN_IF_ERROR(RunGroup(index, group, env, devices.size()));
      } else {
        auto out = Step(index, static_cast<int>(i), inst, devices, env);
        if (!out.ok()) return out.status();
        env[i] = std::move(*out);
      }
      if (options_.profile) {
        host_ns[static_cast<size_t>(index)][i] +=
            std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                                 start)
                .count();
      }
    }
    ++executions[static_cast<size_t>(index)][i];
    for (int o : plan.released_after[i]) env[static_cast<size_t>(o)].clear();
  }
  return std::move(env[static_cast<size_t>(comp.root)]);
}

Result<Lanes> Machine::Step(int comp, int index, const Instruction& inst,
                            const std::vector<int>& devices, const std::vector<Lanes>& env) {
  std::vector<std::vector<const Value*>> ops(devices.size());
  for (size_t lane = 0; lane < devices.size(); ++lane) {
    for (int o : inst.operands) ops[lane].push_back(&env[static_cast<size_t>(o)][lane]);
  }
  auto args_of = [&](size_t lane) {
    std::vector<Value> args;
    for (const Value* v : ops[lane]) args.push_back(*v);
    return args;
  };
  if (IsCollective(inst.opcode)) return Collective(*this, inst, devices, ops);
  switch (inst.opcode) {
    case Opcode::kWhile: {
      Lanes init;
      for (size_t lane = 0; lane < devices.size(); ++lane) init.push_back(*ops[lane][0]);
      return While(inst, devices, std::move(init));
    }
    case Opcode::kConditional:
      return Conditional(inst, devices, ops);
    case Opcode::kCall:
    case Opcode::kFusion:
    case Opcode::kAsyncStart: {
      std::vector<std::vector<Value>> args;
      for (size_t lane = 0; lane < devices.size(); ++lane) args.push_back(args_of(lane));
      auto out = Call(inst.called[0], devices, args);
      if (!out.ok() || inst.opcode != Opcode::kAsyncStart) return out;
      // ((operands), result, context...)
      Lanes wrapped;
      for (size_t lane = 0; lane < devices.size(); ++lane) {
        std::vector<Value> elements{Value::Tuple(std::move(args[lane])), std::move((*out)[lane])};
        for (size_t e = 2; e < inst.shape.tuple.size(); ++e) {
          elements.push_back(ZerosLike(inst.shape.tuple[e]));
        }
        wrapped.push_back(Value::Tuple(std::move(elements)));
      }
      return wrapped;
    }
    default:
      break;
  }
  TPUEMU_RETURN_IF_ERROR(CheckSize(inst, inst.shape, options_.limits));
  // Operands that die here, once in the operand list, and held by nothing but env (not a
  // parameter the caller keeps, a constant, or an element of a live tuple) lend their buffers.
  const std::vector<int>& last = Plan(comp).last_use;
  std::vector<size_t> dying;
  if (ReusesOperands(inst.opcode)) {
    for (size_t j = 0; j < inst.operands.size(); ++j) {
      const int o = inst.operands[j];
      if (last[static_cast<size_t>(o)] == index &&
          std::count(inst.operands.begin(), inst.operands.end(), o) == 1) {
        dying.push_back(j);
      }
    }
  }
  Lanes out;
  out.reserve(devices.size());
  std::vector<Array*> donors(inst.operands.size());
  for (size_t lane = 0; lane < devices.size(); ++lane) {
    std::fill(donors.begin(), donors.end(), nullptr);
    for (size_t j : dying) {
      const Value& v = env[static_cast<size_t>(inst.operands[j])][lane];
      // Value::Of made the array non-const; with use_count 1 no one else can see the change.
      if (!v.is_tuple && v.array.use_count() == 1) donors[j] = const_cast<Array*>(v.array.get());
    }
    auto v = EvalLocal(*this, module_.computations[static_cast<size_t>(comp)], inst, ops[lane],
                       donors, devices[lane], &counter_);
    if (!v.ok()) return v.status();
    out.push_back(std::move(*v));
  }
  return out;
}

Result<Lanes> Machine::While(const Instruction& inst, const std::vector<int>& devices,
                             Lanes state) {
  std::vector<size_t> active(devices.size());
  for (size_t l = 0; l < active.size(); ++l) active[l] = l;
  for (int64_t trips = 0;; ++trips) {
    std::vector<int> running;
    std::vector<std::vector<Value>> args;
    for (size_t l : active) {
      running.push_back(devices[l]);
      args.push_back({state[l]});
    }
    auto pred = Call(inst.called[0], running, args);
    if (!pred.ok()) return pred.status();
    std::vector<size_t> next;
    std::vector<int> next_devices;
    std::vector<std::vector<Value>> body_args;
    for (size_t k = 0; k < active.size(); ++k) {
      if ((*pred)[k].array->i[0] == 0) continue;
      next.push_back(active[k]);
      next_devices.push_back(devices[active[k]]);
      body_args.push_back({std::move(args[k][0])});
    }
    if (next.empty()) return state;
    if (trips >= options_.limits.max_while_trips) {
      return Status::InvalidArgument(
          inst.Describe() + ": the loop ran more than the trip limit " +
          "max_while_trips = " + std::to_string(options_.limits.max_while_trips));
    }
    auto body = Call(inst.called[1], next_devices, std::move(body_args));
    if (!body.ok()) return body.status();
    for (size_t k = 0; k < next.size(); ++k) state[next[k]] = std::move((*body)[k]);
    active = std::move(next);
  }
}

Result<Lanes> Machine::Conditional(const Instruction& inst, const std::vector<int>& devices,
                                   const std::vector<std::vector<const Value*>>& ops) {
  const int64_t branches = static_cast<int64_t>(inst.called.size());
  std::map<int64_t, std::vector<size_t>> by_branch;
  for (size_t lane = 0; lane < devices.size(); ++lane) {
    const Array& index = *ops[lane][0]->array;
    int64_t b = index.i[0];
    if (index.type == PrimitiveType::kPred) {
      b = b != 0 ? 0 : 1;  // true_computation is branch 0
    } else if (b < 0 || b >= branches) {
      b = branches - 1;  // XLA: an out-of-range index runs the last branch
    }
    by_branch[b].push_back(lane);
  }
  Lanes out(devices.size());
  for (const auto& [b, lanes] : by_branch) {
    std::vector<int> running;
    std::vector<std::vector<Value>> args;
    for (size_t lane : lanes) {
      running.push_back(devices[lane]);
      args.push_back({*ops[lane][static_cast<size_t>(b) + 1]});
    }
    auto result = Call(inst.called[static_cast<size_t>(b)], running, std::move(args));
    if (!result.ok()) return result.status();
    for (size_t k = 0; k < lanes.size(); ++k) out[lanes[k]] = std::move((*result)[k]);
  }
  return out;
}

// A value for a parameter of `shape`: tokens are empty tuples.
bool Matches(const Value& v, const Shape& shape) {
  if (shape.type == PrimitiveType::kToken) return v.is_tuple && v.elements.empty();
  if (shape.IsTuple()) {
    if (!v.is_tuple || v.elements.size() != shape.tuple.size()) return false;
    for (size_t i = 0; i < shape.tuple.size(); ++i) {
      if (!Matches(v.elements[i], shape.tuple[i])) return false;
    }
    return true;
  }
  return !v.is_tuple && v.array && Compatible(v.array->shape(), shape);
}

void Reachable(const Module& module, int index, std::set<int>& seen) {
  if (!seen.insert(index).second) return;
  for (const Instruction& inst : module.computations[static_cast<size_t>(index)].instructions) {
    for (int c : inst.called) Reachable(module, c, seen);
  }
}

}  // namespace
}  // namespace internal

Status CheckEvaluable(const Module& module) {
  std::set<int> reachable;
  internal::Reachable(module, module.entry, reachable);
  std::vector<std::string> problems;
  for (int c : reachable) {
    for (const Instruction& inst : module.computations[static_cast<size_t>(c)].instructions) {
      std::string what = inst.Unsupported();
      if (what.empty()) {
        std::vector<const Shape*> leaves;
        CollectLeaves(inst.shape, leaves);
        for (const Shape* s : leaves) {
          if (!IsEvaluable(s->type) && s->type != PrimitiveType::kToken) {
            what = "element type " + std::string(PrimitiveTypeName(s->type)) +
                   " (supported: pred, s8-s64, u8-u64, f16, bf16, f32)";
            break;
          }
        }
      }
      if (!what.empty()) {
        problems.push_back("%" + inst.name + " (line " + std::to_string(inst.line) + "): " + what);
      }
    }
  }
  if (problems.empty()) return Status::Ok();
  std::string message = "cannot execute " + std::to_string(problems.size()) + " instruction(s): ";
  for (size_t i = 0; i < problems.size() && i < 10; ++i) {
    message += (i > 0 ? "; " : "") + problems[i];
  }
  if (problems.size() > 10) message += "; ...";
  return Status::Unimplemented(message);
}

Result<EvalResult> Evaluate(const Module& module, const std::vector<std::vector<Value>>& args,
                            const EvalOptions& options) {
  TPUEMU_RETURN_IF_ERROR(CheckEvaluable(module));
  const int64_t devices = module.devices();
  if (devices > options.limits.max_devices) {
    return Status::InvalidArgument(
        "the module runs on " + std::to_string(devices) +
        " devices, above the limit max_devices = " + std::to_string(options.limits.max_devices));
  }
  if (static_cast<int64_t>(args.size()) != devices) {
    return Status::InvalidArgument("expected arguments for " + std::to_string(devices) +
                                   " device(s), got " + std::to_string(args.size()));
  }
  const Computation& entry = module.entry_computation();
  for (size_t d = 0; d < args.size(); ++d) {
    if (args[d].size() != entry.parameters.size()) {
      return Status::InvalidArgument("the entry takes " + std::to_string(entry.parameters.size()) +
                                     " parameter(s), got " + std::to_string(args[d].size()));
    }
    for (size_t p = 0; p < args[d].size(); ++p) {
      const Instruction& param = entry.instructions[static_cast<size_t>(entry.parameters[p])];
      if (!internal::Matches(args[d][p], param.shape)) {
        return Status::InvalidArgument("parameter " + std::to_string(p) + " (%" + param.name +
                                       ") is " + param.shape.ToString() + ", got " +
                                       args[d][p].shape().ToString());
      }
    }
  }
  internal::Machine machine(module, options);
  std::vector<int> all(static_cast<size_t>(devices));
  for (int d = 0; d < devices; ++d) all[static_cast<size_t>(d)] = d;
  auto outputs = machine.Call(module.entry, all, args);
  if (!outputs.ok()) {
    // A kernel stopped by the token says "cancelled"; without a cancel it was the deadline.
    const Status& s = outputs.status();
    const bool flagged = options.cancel != nullptr && options.cancel->load();
    if (s.code() == StatusCode::kCancelled && !flagged && options.deadline) {
      std::string message = s.message();
      if (const size_t at = message.find("cancelled"); at != std::string::npos) {
        message.replace(at, 9, "deadline exceeded");
      }
      return Status::DeadlineExceeded(message);
    }
    return s;
  }
  EvalResult result;
  result.outputs = std::move(*outputs);
  result.executions = std::move(machine.executions);
  result.host_ns = std::move(machine.host_ns);
  return result;
}

}  // namespace tpuemu::engine::hlo
