// reduce, reduce-window, select-and-scatter and batch-norm-*. Reductions visit the reduced
// elements in row-major order, folding result = to_apply(result, element) from the init value,
// as XLA's evaluator does; window positions in padding or dilation holes are skipped.
#include <algorithm>
#include <cmath>

#include "engine/hlo/evaluator_internal.h"

namespace tpuemu::engine::hlo::internal {
namespace {

Value Pack(std::vector<Array> outs) {
  if (outs.size() == 1) return Value::Of(std::move(outs[0]));
  std::vector<Value> elements;
  for (Array& a : outs) elements.push_back(Value::Of(std::move(a)));
  return Value::Tuple(std::move(elements));
}

std::vector<PrimitiveType> ResultTypes(const Instruction& inst) {
  std::vector<PrimitiveType> types;
  if (inst.shape.IsTuple()) {
    for (const Shape& s : inst.shape.tuple) types.push_back(s.type);
  } else {
    types.push_back(inst.shape.type);
  }
  return types;
}

// The offsets of every index of `dims` (row-major order) under `strides`, generated on the fly
// so a reduction over a huge array needs no offset table.
class Offsets {
 public:
  Offsets(std::vector<int64_t> dims, std::vector<int64_t> strides)
      : dims_(std::move(dims)), strides_(std::move(strides)), count_(Product(dims_)) {}

  class Iterator {
   public:
    Iterator(const Offsets* o, int64_t k) : o_(o), k_(k), index_(o->dims_.size(), 0) {}
    int64_t operator*() const { return offset_; }
    bool operator!=(const Iterator& other) const { return k_ != other.k_; }
    Iterator& operator++() {
      ++k_;
      for (int d = static_cast<int>(index_.size()) - 1; d >= 0; --d) {
        const auto u = static_cast<size_t>(d);
        offset_ += o_->strides_[u];
        if (++index_[u] < o_->dims_[u]) break;
        offset_ -= o_->strides_[u] * o_->dims_[u];
        index_[u] = 0;
      }
      return *this;
    }

   private:
    const Offsets* o_;
    int64_t k_;
    int64_t offset_ = 0;
    std::vector<int64_t> index_;
  };
  Iterator begin() const { return Iterator(this, 0); }
  Iterator end() const { return Iterator(this, count_); }

 private:
  std::vector<int64_t> dims_, strides_;
  int64_t count_;
};

// Folds the elements at `offsets` (relative to `base`) of every operand into the accumulators.
class Folder {
 public:
  Folder(ScalarComputation& fn, const std::vector<const Array*>& operands, size_t n)
      : fn_(fn), operands_(operands), n_(n), args_(2 * n), results_(n) {}

  // acc holds the init values on entry and the result on exit. `offsets`: any range of int64.
  template <typename Range>
  Status Fold(std::vector<Scalar>& acc, int64_t base, const Range& offsets) {
    const auto op = fn_.simple_binary();
    if (op && n_ == 1 && operands_[0]->type == acc[0].type && operands_[0]->floating()) {
      const ElementwiseOp eop{*op, acc[0].type};
      const FloatStore& data = operands_[0]->f;
      float v = acc[0].f;
      const bool f32 = acc[0].type == PrimitiveType::kF32;
      for (int64_t off : offsets) {
        const float e = data[static_cast<size_t>(base + off)];
        if (f32 && *op == Opcode::kAdd) {
          v += e;
        } else {
          v = ApplyBinary(eop, Scalar{acc[0].type, v, 0}, Scalar{acc[0].type, e, 0}).f;
        }
      }
      acc[0].f = v;
      return Status::Ok();
    }
    for (int64_t off : offsets) {
      for (size_t j = 0; j < n_; ++j) {
        args_[j] = acc[j];
        args_[n_ + j] = GetScalar(*operands_[j], base + off);
      }
      TPUEMU_RETURN_IF_ERROR(fn_.Apply(args_.data(), results_.data()));
      for (size_t j = 0; j < n_; ++j) acc[j] = results_[j];
    }
    return Status::Ok();
  }

 private:
  ScalarComputation& fn_;
  const std::vector<const Array*>& operands_;
  size_t n_;
  std::vector<Scalar> args_, results_;
};

// An f32 reduction under add/multiply/maximum/minimum whose reduced dims all come after its kept
// dims (each output folds one contiguous run: a softmax's row sums) or all before them (each
// row of the kept block folds into every output at once: a bias gradient's column sums). Each
// output folds its elements in row-major order, as Folder does, so the bits are the same;
// outputs are split into chunks on the job's threads. False when the reduction is neither.
bool ReduceF32Runs(const ParallelContext& parallel, Opcode op, const Array& x, float init,
                   const std::vector<int64_t>& reduced_dims, Array& out, bool* done) {
  if (x.type != PrimitiveType::kF32 || out.type != PrimitiveType::kF32) return false;
  if (!FoldRowsF32(op, nullptr, 0, 0, init, nullptr)) return false;  // an opcode it lacks
  const int64_t rank = x.rank();
  const int64_t r = static_cast<int64_t>(reduced_dims.size());
  bool suffix = true, prefix = true;
  for (int64_t d : reduced_dims) {
    suffix = suffix && d >= rank - r;
    prefix = prefix && d < r;
  }
  const int64_t outputs = out.size();
  const int64_t run = outputs > 0 ? x.size() / outputs : 0;  // elements per output
  const float* in = x.f.data();
  float* o = out.f.data();
  if (suffix) {
    *done = ParallelChunks(parallel, outputs,
                           std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(1, run)),
                           [&](int64_t begin, int64_t end) {
                             FoldRowsF32(op, in + begin * run, end - begin, run, init, o + begin);
                           });
    return true;
  }
  if (!prefix) return false;
  *done = ParallelChunks(parallel, outputs,
                         std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(1, run)),
                         [&](int64_t begin, int64_t end) {
                           std::fill(o + begin, o + end, init);
                           for (int64_t row = 0; row < run; ++row) {
                             AccumulateF32(op, o + begin, in + row * outputs + begin, end - begin);
                           }
                         });
  return true;
}

}  // namespace

Result<Value> Reduce(KernelContext& ctx, const Instruction& inst,
                     const std::vector<const Array*>& operands) {
  const size_t n = operands.size() / 2;
  const Array& x = *operands[0];
  const std::vector<int64_t> strides = Strides(x.dims);
  std::vector<int64_t> kept, kept_strides, reduced, reduced_strides;
  for (int64_t d = 0; d < x.rank(); ++d) {
    const auto u = static_cast<size_t>(d);
    const bool r =
        std::find(inst.dimensions.begin(), inst.dimensions.end(), d) != inst.dimensions.end();
    (r ? reduced : kept).push_back(x.dims[u]);
    (r ? reduced_strides : kept_strides).push_back(strides[u]);
  }
  // The reduced positions, in row-major order of the reduced dims.
  const Offsets offsets(reduced, reduced_strides);
  const std::vector<PrimitiveType> types = ResultTypes(inst);
  std::vector<Array> outs;
  for (PrimitiveType t : types) outs.push_back(Array::Zeros(t, kept));
  ScalarComputation& fn = ctx.Scalar(inst.called[0]);
  const int64_t total = Product(kept);
  if (n == 1 && fn.simple_binary() && operands[1]->type == x.type && x.floating()) {
    bool done = true;
    if (ReduceF32Runs(ctx.options().Parallel(), *fn.simple_binary(), x, operands[1]->f[0],
                      inst.dimensions, outs[0], &done)) {
      if (!done) return CancelledIn(inst);
      return Pack(std::move(outs));
    }
  }
  if (n == 1 && fn.simple_binary() && x.floating() && x.type == operands[1]->type) {
    // One float operand under add/max/...: Folder's fast path, which touches no shared state, so
    // the outputs are cut into chunks on the job's threads. Each output folds its own elements
    // in the same order whichever thread takes it: the threads change no bit.
    const Scalar init = GetScalar(*operands[1], 0);
    const int64_t per_output = std::max<int64_t>(1, Product(reduced));
    const bool done = ParallelChunks(
        ctx.options().Parallel(), total, std::max<int64_t>(1, kElementwiseGrain / per_output),
        [&](int64_t begin, int64_t end) {
          Folder chunk_folder(fn, operands, 1);
          std::vector<Scalar> acc(1);
          std::vector<int64_t> idx(kept.size(), 0);
          for (int64_t d = static_cast<int64_t>(kept.size()) - 1, rest = begin; d >= 0; --d) {
            const auto u = static_cast<size_t>(d);
            idx[u] = rest % kept[u];
            rest /= kept[u];
          }
          for (int64_t k = begin; k < end; ++k) {
            int64_t base = 0;
            for (size_t i = 0; i < idx.size(); ++i) base += idx[i] * kept_strides[i];
            acc[0] = init;
            (void)chunk_folder.Fold(acc, base, offsets);  // the fast path cannot fail
            SetScalar(outs[0], k, acc[0]);
            NextIndex(idx, kept);
          }
        });
    if (!done) return CancelledIn(inst);
    return Pack(std::move(outs));
  }
  Folder folder(fn, operands, n);
  std::vector<Scalar> acc(n);
  std::vector<int64_t> idx(kept.size(), 0);
  for (int64_t k = 0; k < total; ++k) {
    int64_t base = 0;
    for (size_t i = 0; i < idx.size(); ++i) base += idx[i] * kept_strides[i];
    for (size_t j = 0; j < n; ++j) acc[j] = GetScalar(*operands[n + j], 0);
    TPUEMU_RETURN_IF_ERROR(folder.Fold(acc, base, offsets));
    for (size_t j = 0; j < n; ++j) SetScalar(outs[j], k, acc[j]);
    NextIndex(idx, kept);
  }
  return Pack(std::move(outs));
}

namespace {

// The input positions of one window of output position `out`, as offsets (padding skipped).
void WindowOffsets(const std::vector<WindowDim>& window, const std::vector<int64_t>& in_dims,
                   const std::vector<int64_t>& strides, const std::vector<int64_t>& out,
                   std::vector<int64_t>& offsets) {
  offsets.clear();
  std::vector<int64_t> sizes;
  for (const WindowDim& w : window) sizes.push_back(w.size);
  std::vector<int64_t> wpos(window.size(), 0);
  for (int64_t k = 0, total = Product(sizes); k < total; ++k) {
    int64_t off = 0;
    bool inside = true;
    for (size_t i = 0; i < window.size() && inside; ++i) {
      const WindowDim& w = window[i];
      const int64_t t = out[i] * w.stride + wpos[i] * w.window_dilation - w.pad_low;
      inside = t >= 0 && t % w.base_dilation == 0 && t / w.base_dilation < in_dims[i];
      off += (inside ? t / w.base_dilation : 0) * strides[i];
    }
    if (inside) offsets.push_back(off);
    NextIndex(wpos, sizes);
  }
}

std::vector<int64_t> WindowOutDims(const std::vector<WindowDim>& window,
                                   const std::vector<int64_t>& in) {
  std::vector<int64_t> dims;
  for (size_t i = 0; i < window.size(); ++i) dims.push_back(window[i].OutputSize(in[i]));
  return dims;
}

}  // namespace

Result<Value> ReduceWindow(KernelContext& ctx, const Instruction& inst,
                           const std::vector<const Array*>& operands) {
  const size_t n = operands.size() / 2;
  const Array& x = *operands[0];
  const std::vector<WindowDim>& window = inst.a().window;
  const std::vector<int64_t> out_dims = WindowOutDims(window, x.dims);
  const std::vector<int64_t> strides = Strides(x.dims);
  std::vector<Array> outs;
  for (PrimitiveType t : ResultTypes(inst)) outs.push_back(Array::Zeros(t, out_dims));
  Folder folder(ctx.Scalar(inst.called[0]), operands, n);
  std::vector<Scalar> acc(n);
  std::vector<int64_t> idx(out_dims.size(), 0), offsets;
  for (int64_t k = 0, total = Product(out_dims); k < total; ++k) {
    WindowOffsets(window, x.dims, strides, idx, offsets);
    for (size_t j = 0; j < n; ++j) acc[j] = GetScalar(*operands[n + j], 0);
    TPUEMU_RETURN_IF_ERROR(folder.Fold(acc, 0, offsets));
    for (size_t j = 0; j < n; ++j) SetScalar(outs[j], k, acc[j]);
    NextIndex(idx, out_dims);
  }
  return Pack(std::move(outs));
}

Result<Array> SelectAndScatter(KernelContext& ctx, const Instruction& inst, const Array& operand,
                               const Array& source, const Array& init) {
  const std::vector<WindowDim>& window = inst.a().window;
  Array out = Array::Zeros(operand.type, operand.dims);
  const Scalar init_value = GetScalar(init, 0);
  for (int64_t k = 0, n = out.size(); k < n; ++k) SetScalar(out, k, init_value);
  ScalarComputation& select = ctx.Scalar(inst.called[0]);
  ScalarComputation& scatter = ctx.Scalar(inst.called[1]);
  const std::vector<int64_t> strides = Strides(operand.dims);
  std::vector<int64_t> idx(source.dims.size(), 0), offsets;
  Scalar args[2], result[1];
  for (int64_t k = 0, total = source.size(); k < total; ++k) {
    WindowOffsets(window, operand.dims, strides, idx, offsets);
    NextIndex(idx, source.dims);
    if (offsets.empty()) continue;
    // The first element the select computation prefers over every later one.
    int64_t chosen = offsets[0];
    for (size_t w = 1; w < offsets.size(); ++w) {
      args[0] = GetScalar(operand, chosen);
      args[1] = GetScalar(operand, offsets[w]);
      TPUEMU_RETURN_IF_ERROR(select.Apply(args, result));
      if (result[0].i == 0) chosen = offsets[w];
    }
    args[0] = GetScalar(out, chosen);
    args[1] = GetScalar(source, k);
    TPUEMU_RETURN_IF_ERROR(scatter.Apply(args, result));
    SetScalar(out, chosen, result[0]);
  }
  return out;
}

Result<Value> BatchNorm(const Instruction& inst, const std::vector<const Array*>& operands) {
  const Array& x = *operands[0];
  const Attributes& a = inst.a();
  const auto f = static_cast<size_t>(a.feature_index);
  const int64_t features = x.dims[f];
  const int64_t inner =
      Product(std::vector<int64_t>(x.dims.begin() + static_cast<long>(f) + 1, x.dims.end()));
  const int64_t per_feature = features == 0 ? 0 : x.size() / features;
  auto feature_of = [&](int64_t k) { return (k / inner) % features; };
  const float eps = a.epsilon;
  std::vector<float> mean(static_cast<size_t>(features), 0.0f), var(mean);
  const bool training = inst.opcode == Opcode::kBatchNormTraining;
  if (training) {
    for (int64_t k = 0; k < x.size(); ++k)
      mean[static_cast<size_t>(feature_of(k))] += x.f[static_cast<size_t>(k)];
    for (float& m : mean) m /= static_cast<float>(per_feature);
    for (int64_t k = 0; k < x.size(); ++k) {
      const float d = x.f[static_cast<size_t>(k)] - mean[static_cast<size_t>(feature_of(k))];
      var[static_cast<size_t>(feature_of(k))] += d * d;
    }
    for (float& v : var) v /= static_cast<float>(per_feature);
  } else {
    const Array& m = *operands[inst.opcode == Opcode::kBatchNormInference ? 3 : 2];
    const Array& v = *operands[inst.opcode == Opcode::kBatchNormInference ? 4 : 3];
    mean.assign(m.f.begin(), m.f.end());
    var.assign(v.f.begin(), v.f.end());
  }
  const Array& scale = *operands[1];
  Array y = Array::Zeros(x.type, x.dims);
  Array out_a = Array::Zeros(x.type, {features}), out_b = out_a;
  if (inst.opcode == Opcode::kBatchNormGrad) {
    const Array& dy = *operands[4];
    std::vector<float> sum_dy(static_cast<size_t>(features), 0.0f), sum_dy_xmu(sum_dy);
    for (int64_t k = 0; k < x.size(); ++k) {
      const auto c = static_cast<size_t>(feature_of(k));
      sum_dy[c] += dy.f[static_cast<size_t>(k)];
      sum_dy_xmu[c] += dy.f[static_cast<size_t>(k)] * (x.f[static_cast<size_t>(k)] - mean[c]);
    }
    for (int64_t k = 0; k < x.size(); ++k) {
      const auto c = static_cast<size_t>(feature_of(k));
      const float inv = 1.0f / std::sqrt(var[c] + eps);
      const float n = static_cast<float>(per_feature);
      const float xmu = x.f[static_cast<size_t>(k)] - mean[c];
      y.SetDouble(k, scale.f[c] * inv *
                         (dy.f[static_cast<size_t>(k)] - sum_dy[c] / n -
                          xmu * sum_dy_xmu[c] / n / (var[c] + eps)));
    }
    for (int64_t c = 0; c < features; ++c) {
      const auto u = static_cast<size_t>(c);
      out_a.SetDouble(c, sum_dy_xmu[u] / std::sqrt(var[u] + eps));
      out_b.SetDouble(c, sum_dy[u]);
    }
    return Value::Tuple(
        {Value::Of(std::move(y)), Value::Of(std::move(out_a)), Value::Of(std::move(out_b))});
  }
  const Array& offset = *operands[2];
  for (int64_t k = 0; k < x.size(); ++k) {
    const auto c = static_cast<size_t>(feature_of(k));
    y.SetDouble(k, (x.f[static_cast<size_t>(k)] - mean[c]) / std::sqrt(var[c] + eps) * scale.f[c] +
                       offset.f[c]);
  }
  if (!training) return Value::Of(std::move(y));
  for (int64_t c = 0; c < features; ++c) {
    out_a.SetDouble(c, mean[static_cast<size_t>(c)]);
    out_b.SetDouble(c, var[static_cast<size_t>(c)]);
  }
  return Value::Tuple(
      {Value::Of(std::move(y)), Value::Of(std::move(out_a)), Value::Of(std::move(out_b))});
}

}  // namespace tpuemu::engine::hlo::internal
