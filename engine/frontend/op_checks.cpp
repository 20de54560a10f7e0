// CheckOp (op.h): what an op means, checked before it is lowered: its arity, attributes, dtypes,
// numpy broadcasting, SAME padding, reshape's -1, the cross-entropy's labels. Shapes are not
// computed here: Graph::Add takes an op's shape from the HLO it lowers to
// (engine/frontend/op_lowering.h LoweredShape), whose instructions the verifier's shape rules check
// and shape, so the rules a dot's contraction, a transpose's permutation or a slice's bounds must
// meet are written once.
#include <algorithm>
#include <limits>
#include <set>

#include "engine/frontend/op.h"

namespace tpuemu::engine {
namespace {

std::string S(const Op& op) { return ShapeString(op.dtype, op.shape); }

std::string DimsString(const std::vector<int64_t>& v) { return Shape(v).ToString(); }

class Checker {
 public:
  Checker(Op& op, const std::vector<const Op*>& in)
      : op_(op), in_(in), where_(std::string(OpKindName(op.kind)) + " \"" + op.id + "\": ") {}

  Status Fail(const std::string& what) const { return Status::InvalidArgument(where_ + what); }

  Status Arity(size_t n) const {
    if (in_.size() == n) return Status::Ok();
    return Fail("expects " + std::to_string(n) + " input(s), got " + std::to_string(in_.size()));
  }
  Status Floating(const Op& x) const {
    if (IsFloating(x.dtype)) return Status::Ok();
    return Fail("requires a floating-point operand, got " + S(x) + " ('" + x.id + "')");
  }
  Status SameDType(const Op& a, const Op& b) const {
    if (a.dtype == b.dtype) return Status::Ok();
    return Fail("dtypes differ: " + S(a) + " vs " + S(b) + " (insert a convert)");
  }
  Status SameShape(const Op& a, const Op& b) const {
    if (a.dtype == b.dtype && a.shape == b.shape) return Status::Ok();
    return Fail("operands must have the same shape and dtype: " + S(a) + " vs " + S(b));
  }
  // Normalises a possibly negative axis against rank.
  Result<int64_t> Axis(int64_t axis, int rank) const {
    int64_t a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= rank) {
      return Fail("axis " + std::to_string(axis) + " out of range for rank " +
                  std::to_string(rank));
    }
    return a;
  }
  Status Leaf() {
    TPUEMU_RETURN_IF_ERROR(Arity(0));
    const OpAttrs& a = op_.attrs;
    TPUEMU_RETURN_IF_ERROR(CheckShape(a.shape, kMaxGraphElements, where_ + "shape"));
    const Init& init = a.init;
    if (op_.kind == OpKind::kConstant && init.kind == Init::Kind::kNone) {
      return Fail("a constant needs 'random', 'values' or 'fill'");
    }
    if (init.kind == Init::Kind::kValues &&
        static_cast<int64_t>(init.values.size()) != a.shape.NumElements()) {
      return Fail("got " + std::to_string(init.values.size()) + " values for shape " +
                  ShapeString(a.dtype, a.shape));
    }
    if (init.kind == Init::Kind::kRandom) {
      if (a.dtype == DType::kI32) return Fail("random init needs a floating dtype, got int32");
      if (!(init.scale >= 0)) return Fail("random scale must be >= 0");
    }
    return Status::Ok();
  }

  Status Dot() {
    TPUEMU_RETURN_IF_ERROR(Arity(2));
    const Op& l = *in_[0];
    const Op& r = *in_[1];
    TPUEMU_RETURN_IF_ERROR(Floating(l));
    TPUEMU_RETURN_IF_ERROR(SameDType(l, r));
    if (l.shape.rank() < 2 || r.shape.rank() < 2) {
      return Fail("operands must have rank >= 2: " + S(l) + " vs " + S(r));
    }
    // The contracting sizes and the result are the HLO dot's (LoweredShape); the batch rule is
    // jnp.matmul's: equal batch dims, or one operand of rank 2 shared across the other's.
    std::vector<int64_t> lb(l.shape.dims.begin(), l.shape.dims.end() - 2);
    std::vector<int64_t> rb(r.shape.dims.begin(), r.shape.dims.end() - 2);
    if (!lb.empty() && !rb.empty() && lb != rb) {
      return Fail("batch dims differ: " + S(l) + " vs " + S(r));
    }
    return Status::Ok();
  }

  // conv2d's ranks, strides and pads, and the shape conv2d(x, f) gives: a backprop's dy must
  // have it. The forward conv's own shape is the HLO's.
  Status ConvCommon(const Shape& x, const Shape& f, Shape* out) {
    const Conv2DParams& p = op_.attrs.conv;
    if (x.rank() != 4 || f.rank() != 4) {
      return Fail("expects NHWC input and HWIO filter of rank 4, got " + x.ToString() + " and " +
                  f.ToString());
    }
    if (p.stride_h < 1 || p.stride_w < 1) return Fail("strides must be >= 1");
    for (int64_t pad : p.pads) {
      if (pad < 0) return Fail("paddings must be >= 0");
    }
    // Channels and the result are the HLO convolution's (LoweredShape).
    ConvDim oh = ConvOutputDim(x.dim(1), f.dim(0), p.stride_h, p.padding, p.pads[0], p.pads[1]);
    ConvDim ow = ConvOutputDim(x.dim(2), f.dim(1), p.stride_w, p.padding, p.pads[2], p.pads[3]);
    if (oh.out <= 0 || ow.out <= 0) {
      return Fail("filter " + f.ToString() + " does not fit input " + x.ToString());
    }
    *out = Shape{x.dim(0), oh.out, ow.out, f.dim(3)};
    return Status::Ok();
  }

  Status Conv() {
    TPUEMU_RETURN_IF_ERROR(Arity(2));
    const Op& x = *in_[0];
    const Op& f = *in_[1];
    TPUEMU_RETURN_IF_ERROR(Floating(x));
    TPUEMU_RETURN_IF_ERROR(SameDType(x, f));
    Shape out;
    return ConvCommon(x.shape, f.shape, &out);
  }

  // backprop_input: inputs (filter, dy), attrs.shape = x; backprop_filter: (x, dy), attrs.shape =
  // filter. dy must be the shape conv2d(x, filter) would produce.
  Status ConvBackprop() {
    TPUEMU_RETURN_IF_ERROR(Arity(2));
    const bool wrt_input = op_.kind == OpKind::kConv2DBackpropInput;
    const Op& other = *in_[0];
    const Op& dy = *in_[1];
    TPUEMU_RETURN_IF_ERROR(Floating(dy));
    TPUEMU_RETURN_IF_ERROR(SameDType(other, dy));
    TPUEMU_RETURN_IF_ERROR(CheckShape(op_.attrs.shape, kMaxGraphElements, where_ + "shape"));
    const Shape& x = wrt_input ? op_.attrs.shape : other.shape;
    const Shape& f = wrt_input ? other.shape : op_.attrs.shape;
    Shape expected;
    TPUEMU_RETURN_IF_ERROR(ConvCommon(x, f, &expected));
    if (dy.shape != expected) {
      return Fail("dy " + S(dy) + " does not match the conv2d output " + expected.ToString() +
                  " of input " + x.ToString() + " and filter " + f.ToString());
    }
    return Status::Ok();
  }

  Status Binary() {
    TPUEMU_RETURN_IF_ERROR(Arity(2));
    const Op& a = *in_[0];
    const Op& b = *in_[1];
    TPUEMU_RETURN_IF_ERROR(Floating(a));
    TPUEMU_RETURN_IF_ERROR(SameDType(a, b));
    const int rank = std::max(a.shape.rank(), b.shape.rank());
    for (int i = 0; i < rank; ++i) {
      const int ia = a.shape.rank() - rank + i, ib = b.shape.rank() - rank + i;
      const int64_t da = ia >= 0 ? a.shape.dim(ia) : 1;
      const int64_t db = ib >= 0 ? b.shape.dim(ib) : 1;
      if (da != db && da != 1 && db != 1) {
        return Fail("shapes do not broadcast: " + S(a) + " vs " + S(b));
      }
    }
    return Status::Ok();
  }

  Status Unary() {
    TPUEMU_RETURN_IF_ERROR(Arity(1));
    return Floating(*in_[0]);
  }

  Status Grad() {
    TPUEMU_RETURN_IF_ERROR(Arity(2));
    TPUEMU_RETURN_IF_ERROR(Floating(*in_[0]));
    return SameShape(*in_[0], *in_[1]);
  }

  Status Softmax() {
    TPUEMU_RETURN_IF_ERROR(Arity(1));
    const Op& x = *in_[0];
    TPUEMU_RETURN_IF_ERROR(Floating(x));
    if (x.shape.rank() < 1) return Fail("needs rank >= 1, got " + S(x));
    return Axis(op_.attrs.axis, x.shape.rank()).status();
  }

  Status Reduce() {
    TPUEMU_RETURN_IF_ERROR(Arity(1));
    const Op& x = *in_[0];
    TPUEMU_RETURN_IF_ERROR(Floating(x));
    std::set<int64_t> axes;
    for (int64_t a : op_.attrs.axes) {
      auto ax = Axis(a, x.shape.rank());
      if (!ax.ok()) return ax.status();
      if (!axes.insert(*ax).second) return Fail("axis " + std::to_string(a) + " repeated");
    }
    return Status::Ok();
  }

  Status Broadcast() {
    TPUEMU_RETURN_IF_ERROR(Arity(1));
    const Op& x = *in_[0];
    const Shape& to = op_.attrs.shape;
    TPUEMU_RETURN_IF_ERROR(CheckShape(to, kMaxGraphElements, where_ + "shape"));
    const int xr = x.shape.rank(), tr = to.rank();
    std::string err = "cannot broadcast " + S(x) + " to " + to.ToString();
    if (op_.attrs.broadcast_dims) {
      const auto& bd = *op_.attrs.broadcast_dims;
      if (static_cast<int>(bd.size()) != xr) {
        return Fail(err + ": broadcast_dims " + DimsString(bd) +
                    " needs one entry per operand dim");
      }
      for (int i = 0; i < xr; ++i) {
        const int64_t d = bd[static_cast<size_t>(i)];
        if (d < 0 || d >= tr || (i > 0 && d <= bd[static_cast<size_t>(i) - 1])) {
          return Fail(err + ": broadcast_dims " + DimsString(bd) +
                      " must be increasing and < the result rank");
        }
        if (x.shape.dim(i) != 1 && x.shape.dim(i) != to.dim(static_cast<int>(d))) {
          return Fail(err + " with broadcast_dims " + DimsString(bd));
        }
      }
    } else {
      if (xr > tr) return Fail(err);
      for (int i = 0; i < xr; ++i) {
        const int64_t d = x.shape.dim(i), t = to.dim(tr - xr + i);
        if (d != 1 && d != t) return Fail(err);
      }
    }
    return Status::Ok();
  }

  // Resolves a -1 in the target into the size it stands for (the op keeps the resolved target).
  Status Reshape() {
    TPUEMU_RETURN_IF_ERROR(Arity(1));
    const Op& x = *in_[0];
    std::vector<int64_t> dims = op_.attrs.shape.dims;
    int infer = -1;
    int64_t known = 1;
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] == -1 && infer < 0) {
        infer = static_cast<int>(i);
        continue;
      }
      if (dims[i] < 0) return Fail("bad target shape " + DimsString(dims));
      if (dims[i] != 0 && known > kMaxGraphElements / dims[i]) {
        return Fail("target shape " + DimsString(dims) + " is too large");
      }
      known *= dims[i];
    }
    const int64_t n = x.shape.NumElements();
    if (infer >= 0) {
      if (known == 0 || n % known != 0) {
        return Fail("cannot reshape " + S(x) + " to " + DimsString(dims));
      }
      dims[static_cast<size_t>(infer)] = n / known;
      known = n;
    }
    if (known != n) return Fail("cannot reshape " + S(x) + " to " + DimsString(dims));
    op_.attrs.shape = Shape(std::move(dims));
    return Status::Ok();
  }

  Status Concat() {
    if (in_.empty()) return Fail("expects at least one input");
    for (const Op* x : in_) TPUEMU_RETURN_IF_ERROR(SameDType(*in_[0], *x));
    return Axis(op_.attrs.axis, in_[0]->shape.rank()).status();
  }

  // The bounds are the HLO slice's to check; start and limit come in pairs.
  Status Slice() {
    TPUEMU_RETURN_IF_ERROR(Arity(1));
    if (op_.attrs.start.size() == op_.attrs.limit.size()) return Status::Ok();
    return Fail("start " + DimsString(op_.attrs.start) + " and limit " +
                DimsString(op_.attrs.limit) + " need one entry per dim of " + S(*in_[0]));
  }

  Status CrossEntropy() {
    TPUEMU_RETURN_IF_ERROR(Arity(2));
    const Op& logits = *in_[0];
    const Op& labels = *in_[1];
    TPUEMU_RETURN_IF_ERROR(Floating(logits));
    if (logits.shape.rank() != 2 || labels.dtype != DType::kI32 || labels.shape.rank() != 1 ||
        labels.shape.dim(0) != logits.shape.dim(0)) {
      return Fail("expects logits [b,c] and int32 labels [b], got " + S(logits) + " and " +
                  S(labels));
    }
    return Status::Ok();
  }

  Status Run() {
    switch (op_.kind) {
      case OpKind::kParameter:
      case OpKind::kConstant:
        return Leaf();
      case OpKind::kDot:
        return Dot();
      case OpKind::kConv2D:
        return Conv();
      case OpKind::kConv2DBackpropInput:
      case OpKind::kConv2DBackpropFilter:
        return ConvBackprop();
      case OpKind::kReluGrad:
      case OpKind::kGeluGrad:
        return Grad();
      case OpKind::kSoftmax:
        return Softmax();
      case OpKind::kReduce:
        return Reduce();
      case OpKind::kBroadcast:
        return Broadcast();
      case OpKind::kReshape:
        return Reshape();
      case OpKind::kConcat:
        return Concat();
      case OpKind::kSlice:
        return Slice();
      case OpKind::kTranspose:  // a permutation: the HLO transpose's rule
      case OpKind::kConvert:
        return Arity(1);
      case OpKind::kSoftmaxCrossEntropy:
      case OpKind::kSoftmaxCrossEntropyGrad:
        return CrossEntropy();
      default:
        if (IsElementwiseBinary(op_.kind)) return Binary();
        if (IsElementwiseUnary(op_.kind)) return Unary();
        return Fail("unhandled op kind");
    }
  }

 private:
  Op& op_;
  const std::vector<const Op*>& in_;
  std::string where_;
};

}  // namespace

ConvDim ConvOutputDim(int64_t in, int64_t filter, int64_t stride, ConvPadding padding,
                      int64_t pad_before, int64_t pad_after) {
  ConvDim d;
  switch (padding) {
    case ConvPadding::kValid:
      d.out = in >= filter ? (in - filter) / stride + 1 : 0;
      break;
    case ConvPadding::kSame: {
      // TensorFlow's rule: out = ceil(in / stride), the extra pad goes after.
      d.out = (in + stride - 1) / stride;
      const int64_t total = std::max<int64_t>((d.out - 1) * stride + filter - in, 0);
      d.pad_before = total / 2;
      break;
    }
    case ConvPadding::kExplicit: {
      const int64_t padded = in + pad_before + pad_after;
      d.out = padded >= filter ? (padded - filter) / stride + 1 : 0;
      d.pad_before = pad_before;
      break;
    }
  }
  if (filter < 1) d.out = 0;
  return d;
}

Status CheckOp(Op& op, const std::vector<const Op*>& inputs) { return Checker(op, inputs).Run(); }

}  // namespace tpuemu::engine
