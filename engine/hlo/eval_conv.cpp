// convolution on the MXU path: the input and kernel are brought to [batch, spatial..., feature]
// and [window..., in, out], every output position's window is laid out as one row (im2col), and
// each feature/batch group is one GEMM at the instruction's precision (engine/kernels/gemm.h).
#include <algorithm>

#include "engine/hlo/evaluator_internal.h"

namespace tpuemu::engine::hlo::internal {

Result<Array> Convolution(const Instruction& inst, const Array& lhs, const Array& rhs,
                          Precision precision, const ParallelContext& parallel) {
  const Attributes& a = inst.a();
  const ConvDims& cd = a.conv;
  const size_t n = cd.input_spatial.size();
  const int64_t fgc = a.feature_group_count, bgc = a.batch_group_count;
  if (fgc > 1 && bgc > 1) {
    return Status::Unimplemented(inst.Describe() +
                                 ": feature_group_count and batch_group_count both above 1");
  }
  // Canonical layouts.
  std::vector<int64_t> lperm{cd.input_batch};
  lperm.insert(lperm.end(), cd.input_spatial.begin(), cd.input_spatial.end());
  lperm.push_back(cd.input_feature);
  std::vector<int64_t> kperm(cd.kernel_spatial.begin(), cd.kernel_spatial.end());
  kperm.push_back(cd.kernel_input_feature);
  kperm.push_back(cd.kernel_output_feature);
  // Operands already in the canonical layout (a conv2d's forward pass) are read in place.
  auto identity = [](const std::vector<int64_t>& perm) {
    for (size_t i = 0; i < perm.size(); ++i) {
      if (perm[i] != static_cast<int64_t>(i)) return false;
    }
    return true;
  };
  Array x_moved;
  if (!identity(lperm)) x_moved = Transpose(lhs, lperm, parallel);
  const Array& x = identity(lperm) ? lhs : x_moved;
  // The kernel too, unless it must be moved or reversed.
  Array w_moved;
  if (!identity(kperm)) w_moved = Transpose(rhs, kperm, parallel);
  std::vector<int64_t> reversed;
  for (size_t i = 0; i < n; ++i) {
    if (a.window[i].reversal) reversed.push_back(static_cast<int64_t>(i));
  }
  if (!reversed.empty()) w_moved = Reverse(identity(kperm) ? rhs : w_moved, reversed);
  const Array& w = identity(kperm) && reversed.empty() ? rhs : w_moved;
  const int64_t batch = x.dims[0];
  const int64_t cin = x.dims[n + 1];
  const int64_t cout = w.dims[n + 1];
  std::vector<int64_t> in_sp(x.dims.begin() + 1, x.dims.begin() + 1 + static_cast<long>(n));
  std::vector<int64_t> win(w.dims.begin(), w.dims.begin() + static_cast<long>(n));
  std::vector<int64_t> out_sp(n);
  for (size_t i = 0; i < n; ++i) out_sp[i] = a.window[i].OutputSize(in_sp[i]);
  const int64_t out_batch = batch / bgc;
  const int64_t groups = std::max(fgc, bgc);
  const int64_t cin_g = cin / fgc;  // kernel input features
  const int64_t cout_g = cout / groups;
  const int64_t positions = Product(out_sp);
  const int64_t window = Product(win);
  const int64_t rows = out_batch * positions;
  const int64_t cols = window * cin_g;
  if (rows * cols > int64_t{1} << 28) {
    return Status::InvalidArgument(inst.Describe() + ": the im2col matrix (" +
                                   std::to_string(rows) + " x " + std::to_string(cols) +
                                   ") is too large to evaluate");
  }
  const std::vector<int64_t> xs = Strides(x.dims);
  // canonical output [out_batch, out_sp..., cout]
  std::vector<int64_t> canon_dims{out_batch};
  canon_dims.insert(canon_dims.end(), out_sp.begin(), out_sp.end());
  canon_dims.push_back(cout);
  Array canon = Array::Uninitialized(inst.shape.type, canon_dims);  // every group writes its own
  const bool floating = x.floating();
  // One group's float kernel is its kernel matrix already, and its f32 result the canonical
  // output itself: the GEMM reads the one and writes the other in place.
  const bool kernel_in_place = floating && groups == 1;
  const bool direct = kernel_in_place && canon.type == PrimitiveType::kF32;
  FloatStore col_f, ker_f, res_f;  // recycled buffers, every element written before it is read
  std::vector<int64_t> col_i, ker_i;
  if (floating) {
    col_f.resize(static_cast<size_t>(rows * cols));
    if (!kernel_in_place) ker_f.resize(static_cast<size_t>(cols * cout_g));
    if (!direct) res_f.resize(static_cast<size_t>(rows * cout_g));
  } else {
    col_i.assign(static_cast<size_t>(rows * cols), 0);
    ker_i.assign(static_cast<size_t>(cols * cout_g), 0);
  }
  // window_offsets[q·n + i]: how far window position q reaches into dim i (its dilated index).
  std::vector<int64_t> window_offsets;
  for (std::vector<int64_t> wpos(n, 0); window_offsets.size() < static_cast<size_t>(window) * n;
       NextIndex(wpos, win)) {
    for (size_t i = 0; i < n; ++i) window_offsets.push_back(wpos[i] * a.window[i].window_dilation);
  }
  // Without base (lhs) dilation a window position is inside when 0 <= t < size: no division.
  const bool dense_input = std::all_of(a.window.begin(), a.window.end(),
                                       [](const WindowDim& wd) { return wd.base_dilation == 1; });
  // The first input index, per dim, of the window of im2col row `row` (b, output position) into
  // `start`; returns b.
  auto window_start = [&](int64_t row, std::vector<int64_t>& start) {
    for (int64_t rest = row % positions, i = static_cast<int64_t>(n) - 1; i >= 0; --i) {
      const auto u = static_cast<size_t>(i);
      start[u] = rest % out_sp[u] * a.window[u].stride - a.window[u].pad_low;
      rest /= out_sp[u];
    }
    return row / positions;
  };
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t feat0 = fgc > 1 ? g * cin_g : 0;  // input feature offset of this group
    const int64_t batch0 = bgc > 1 ? g * out_batch : 0;
    // im2col rows: (b, output position); cols: (window position, input feature). Rows are cut
    // into chunks on the job's threads: each chunk writes its own rows.
    if (floating && dense_input && fgc == 1 && n > 0 && a.window[n - 1].window_dilation == 1) {
      // The window's last dim is contiguous in the input and in a row: one copy per row and
      // outer window position, zero-filled where it hangs over the padding.
      const size_t last = n - 1;
      const int64_t run_window = win[last];
      const int64_t outer = window / std::max<int64_t>(1, run_window);
      const int64_t run = run_window * cin;
      const bool ran = ParallelChunks(
          parallel, rows, std::max<int64_t>(1, kElementwiseGrain / cols),
          [&](int64_t row_begin, int64_t row_end) {
            std::vector<int64_t> start(n);
            for (int64_t row = row_begin; row < row_end; ++row) {
              const int64_t b = window_start(row, start);
              const int64_t t0 = start[last];
              const int64_t lo = std::clamp<int64_t>(-t0, 0, run_window);
              const int64_t hi = std::clamp<int64_t>(in_sp[last] - t0, lo, run_window);
              for (int64_t q = 0; q < outer; ++q) {
                int64_t off = (batch0 + b) * xs[0];
                bool inside = true;
                // The outer dims' offsets of the run's first window position.
                const int64_t* wq =
                    window_offsets.data() + q * run_window * static_cast<int64_t>(n);
                for (size_t i = 0; i < last && inside; ++i) {
                  const int64_t t = start[i] + wq[i];
                  inside = t >= 0 && t < in_sp[i];
                  off += t * xs[i + 1];
                }
                float* dst = col_f.data() + (row * window + q * run_window) * cin;
                if (!inside) {
                  std::fill(dst, dst + run, 0.0f);
                } else {
                  std::fill(dst, dst + lo * cin, 0.0f);
                  const float* src = x.f.data() + off + (t0 + lo) * xs[n];
                  std::copy(src, src + (hi - lo) * cin, dst + lo * cin);
                  std::fill(dst + hi * cin, dst + run, 0.0f);
                }
              }
            }
          });
      if (!ran) return CancelledIn(inst);
    } else if (!ParallelChunks(parallel, rows, std::max<int64_t>(1, kElementwiseGrain / cols),
                               [&](int64_t row_begin, int64_t row_end) {
                                 std::vector<int64_t> start(n);
                                 for (int64_t row = row_begin; row < row_end; ++row) {
                                   const int64_t b = window_start(row, start);
                                   for (int64_t q = 0; q < window; ++q) {
                                     int64_t off = (batch0 + b) * xs[0];
                                     bool inside = true;
                                     const int64_t* wq =
                                         window_offsets.data() + q * static_cast<int64_t>(n);
                                     for (size_t i = 0; i < n && inside; ++i) {
                                       const int64_t t = start[i] + wq[i];
                                       if (dense_input) {
                                         inside = t >= 0 && t < in_sp[i];
                                         off += t * xs[i + 1];
                                       } else {
                                         const int64_t d = a.window[i].base_dilation;
                                         inside = t >= 0 && t % d == 0 && t / d < in_sp[i];
                                         off += (inside ? t / d : 0) * xs[i + 1];
                                       }
                                     }
                                     const int64_t base = (row * window + q) * cin_g;
                                     for (int64_t c = 0; c < cin_g; ++c) {
                                       const auto dst = static_cast<size_t>(base + c);
                                       const auto src = static_cast<size_t>(off + feat0 + c);
                                       if (floating) {
                                         col_f[dst] = inside ? x.f[src] : 0.0f;
                                       } else {
                                         col_i[dst] = inside ? x.i[src] : 0;
                                       }
                                     }
                                   }
                                 }
                               })) {
      return CancelledIn(inst);
    }
    // kernel matrix [(window, cin_g), cout_g] for this group's output features, unless read in
    // place (a filter gradient's "kernel" is the whole output gradient: copying it was the serial
    // half of that convolution)
    const float* ker = kernel_in_place ? w.f.data() : ker_f.data();
    if (!kernel_in_place) {
      for (int64_t q = 0; q < window; ++q) {
        for (int64_t c = 0; c < cin_g; ++c) {
          for (int64_t o = 0; o < cout_g; ++o) {
            const auto src = static_cast<size_t>((q * cin_g + c) * cout + g * cout_g + o);
            const auto dst = static_cast<size_t>((q * cin_g + c) * cout_g + o);
            if (floating) {
              ker_f[dst] = w.f[src];
            } else {
              ker_i[dst] = w.i[src];
            }
          }
        }
      }
    }
    float* res = direct ? canon.f.data() : res_f.data();
    if (floating && !Gemm(col_f.data(), ker, res, rows, cout_g, cols, precision, parallel)) {
      return CancelledIn(inst);
    }
    if (direct) continue;
    if (floating && canon.floating()) {  // the float result, rounded to a narrower float type
      for (int64_t r = 0; r < rows; ++r) {
        const float* src = res_f.data() + r * cout_g;
        float* dst = canon.f.data() + r * cout + g * cout_g;
        if (canon.type == PrimitiveType::kF32) {
          std::copy(src, src + cout_g, dst);
        } else {
          for (int64_t o = 0; o < cout_g; ++o) dst[o] = RoundToType(canon.type, src[o]);
        }
      }
      continue;
    }
    for (int64_t r = 0; r < rows; ++r) {
      if (!floating && parallel.cancel.Stopped()) {
        return CancelledIn(inst);
      }
      for (int64_t o = 0; o < cout_g; ++o) {
        const int64_t dst = r * cout + g * cout_g + o;
        if (floating) {
          canon.SetDouble(dst, res_f[static_cast<size_t>(r * cout_g + o)]);
          continue;
        }
        uint64_t acc = 0;
        for (int64_t k = 0; k < cols; ++k) {
          acc += static_cast<uint64_t>(col_i[static_cast<size_t>(r * cols + k)]) *
                 static_cast<uint64_t>(ker_i[static_cast<size_t>(k * cout_g + o)]);
        }
        if (canon.floating()) {
          canon.SetDouble(dst, static_cast<double>(static_cast<int64_t>(acc)));
        } else {
          canon.i[static_cast<size_t>(dst)] = CanonicalInt(canon.type, static_cast<int64_t>(acc));
        }
      }
    }
  }
  // canonical [b, spatial..., f] -> the output's dimension order
  std::vector<int64_t> perm(n + 2);
  perm[static_cast<size_t>(cd.output_batch)] = 0;
  perm[static_cast<size_t>(cd.output_feature)] = static_cast<int64_t>(n) + 1;
  for (size_t i = 0; i < n; ++i) {
    perm[static_cast<size_t>(cd.output_spatial[i])] = static_cast<int64_t>(i) + 1;
  }
  if (identity(perm)) return canon;
  return Transpose(canon, perm, parallel);
}

}  // namespace tpuemu::engine::hlo::internal
