// Windowed ops: convolution, reduce_window, select_and_scatter (StableHLO spec: their window
// attributes; HLO's window={size stride pad lhs_dilate rhs_dilate} and dim_labels).
#include <cstdlib>

#include "engine/stablehlo/lower_internal.h"

namespace tpuemu::engine::stablehlo::internal {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using hlo::Shape;

// The window of n dimensions from the op's attributes (size from `sizes`).
Result<std::vector<hlo::WindowDim>> Window(const Op& op, const std::vector<int64_t>& sizes,
                                           const char* strides, const char* lhs, const char* rhs,
                                           const char* reversal) {
  const size_t n = sizes.size();
  Result<std::vector<int64_t>> s = SizedInts(op, strides, n, 1);
  Result<std::vector<int64_t>> l = SizedInts(op, lhs, n, 1);
  Result<std::vector<int64_t>> r = SizedInts(op, rhs, n, 1);
  Result<std::vector<int64_t>> rev = SizedInts(op, reversal, n, 0);
  Result<std::vector<int64_t>> pad = SizedInts(op, "padding", 2 * n, 0);
  for (const auto* v : {&s, &l, &r, &rev, &pad}) {
    if (!v->ok()) return v->status();
  }
  std::vector<hlo::WindowDim> w(n);
  for (size_t k = 0; k < n; ++k) {
    w[k].size = sizes[k];
    w[k].stride = (*s)[k];
    w[k].base_dilation = (*l)[k];
    w[k].window_dilation = (*r)[k];
    w[k].reversal = (*rev)[k] != 0;
    w[k].pad_low = (*pad)[2 * k];
    w[k].pad_high = (*pad)[2 * k + 1];
  }
  return w;
}

// [b, 0, 1, f]-style labels: batch/feature letters and spatial digits.
Status Labels(const Attr* list, char a, char b, int64_t& pos_a, int64_t& pos_b,
              std::vector<int64_t>& spatial) {
  if (list == nullptr) return Status::InvalidArgument("missing conv dimension labels");
  spatial.assign(list->items.size() >= 2 ? list->items.size() - 2 : 0, -1);
  for (size_t k = 0; k < list->items.size(); ++k) {
    const std::string& t = list->items[k].text;
    if (t.size() == 1 && t[0] == a) {
      pos_a = static_cast<int64_t>(k);
    } else if (t.size() == 1 && t[0] == b) {
      pos_b = static_cast<int64_t>(k);
    } else {
      const size_t d = static_cast<size_t>(std::atoi(t.c_str()));
      if (d >= spatial.size()) return Status::InvalidArgument("bad conv dimension label " + t);
      spatial[d] = static_cast<int64_t>(k);
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<int>> Lowerer::LowerWindowed(const Op& op, const std::vector<int>& operands) {
  const std::string name = op.name.substr(10);
  const size_t n_results = op.result_types.size();
  auto emit = [&](Instruction inst) -> Result<std::vector<int>> {
    inst.shape = n_results == 1 ? op.result_types[0] : Shape::Tuple(op.result_types);
    inst.mutable_attrs().has_window = true;
    Result<int> p = Emit(std::move(inst), op);
    if (!p.ok()) return p.status();
    return Unpack(*p, n_results, n_results != 1, op);
  };
  if (name == "convolution") {
    if (operands.size() != 2) return Error(op, "takes lhs and rhs");
    Instruction inst = Make(Opcode::kConvolution, operands, {});
    hlo::Attributes& a = inst.mutable_attrs();
    const Attr* dn = op.Find("dimension_numbers");
    if (dn == nullptr) return Error(op, "needs dimension_numbers");
    hlo::ConvDims& c = a.conv;
    Status ok =
        Labels(dn->Field("input"), 'b', 'f', c.input_batch, c.input_feature, c.input_spatial);
    if (ok.ok()) {
      ok = Labels(dn->Field("kernel"), 'i', 'o', c.kernel_input_feature, c.kernel_output_feature,
                  c.kernel_spatial);
    }
    if (ok.ok())
      ok =
          Labels(dn->Field("output"), 'b', 'f', c.output_batch, c.output_feature, c.output_spatial);
    if (!ok.ok()) return Error(op, ok.message());
    std::vector<int64_t> sizes;
    const Shape& kernel = ShapeOf(operands[1]);
    for (int64_t d : c.kernel_spatial) {
      if (d < 0 || d >= kernel.rank()) return Error(op, "bad kernel spatial dimension");
      sizes.push_back(kernel.dims[static_cast<size_t>(d)]);
    }
    Result<std::vector<hlo::WindowDim>> w =
        Window(op, sizes, "window_strides", "lhs_dilation", "rhs_dilation", "window_reversal");
    if (!w.ok()) return Error(op, w.status().message());
    a.window = std::move(*w);
    a.feature_group_count = IntOf(op, "feature_group_count", 1);
    a.batch_group_count = IntOf(op, "batch_group_count", 1);
    inst.precision = PrecisionOf(op);
    return emit(std::move(inst));
  }
  Result<std::vector<int64_t>> sizes = IntsOf(op, "window_dimensions");
  if (!sizes.ok()) return sizes.status();
  Result<std::vector<hlo::WindowDim>> w =
      Window(op, *sizes, "window_strides", "base_dilations", "window_dilations", "-");
  if (!w.ok()) return Error(op, w.status().message());
  if (name == "reduce_window") {
    if (op.regions.size() != 1) return Error(op, "needs a body region");
    Result<int> body = FlatRegion(op.regions[0], op, "reducer");
    if (!body.ok()) return body.status();
    Instruction inst = Make(Opcode::kReduceWindow, operands, {});
    inst.mutable_attrs().window = std::move(*w);
    inst.called = {*body};
    return emit(std::move(inst));
  }
  // select_and_scatter(operand, source, init_value) with select and scatter regions.
  if (op.regions.size() != 2) return Error(op, "needs select and scatter regions");
  Result<int> select = FlatRegion(op.regions[0], op, "select");
  if (!select.ok()) return select.status();
  Result<int> scatter = FlatRegion(op.regions[1], op, "scatter");
  if (!scatter.ok()) return scatter.status();
  Instruction inst = Make(Opcode::kSelectAndScatter, operands, {});
  inst.mutable_attrs().window = std::move(*w);
  inst.called = {*select, *scatter};
  return emit(std::move(inst));
}

}  // namespace tpuemu::engine::stablehlo::internal
