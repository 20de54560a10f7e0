// The chlo special functions HLO has no opcode for, decomposed into HLO arithmetic exactly as
// StableHLO's chlo legalization writes them (openxla/stablehlo
// stablehlo/transforms/ChloLegalizeToStablehlo.cpp: materializeErfcApproximationF32,
// erfInv32, materializeLgamma, materializeDigamma, materializeBesselI1eApproximationF32,
// materializeZeta, materializePolygamma, materializeNextAfter; the coefficients are Cephes',
// Lanczos' and Johansson's as given there): the same operations in the same order, so that a module
// XLA would compile computes the same bits here. f16 and bf16 are computed in f32 and converted
// back (materializeWithUpcast); f64 takes the f32 path too (the evaluator computes no f64; the
// ops are priced as XLA's f64 decompositions would be, within a few ops).
#include <cmath>
#include <limits>

#include "engine/stablehlo/lower_internal.h"

namespace tpuemu::engine::stablehlo::internal {
namespace {

using hlo::Direction;
using hlo::Opcode;
using hlo::PrimitiveType;
using hlo::Shape;

constexpr double kPi = 3.14159265358979323846;

// Elementwise expressions over arrays of one shape: each call adds the instruction(s) and
// returns its position; the first error is kept and every later call returns -1.
class Expr {
 public:
  Expr(Lowerer& l, const Op& op, std::vector<int64_t> dims) : l_(l), op_(op), dims_(dims) {}

  Status status() const { return status_; }
  // A constant of element type `type` (the float type by default) broadcast to the shape.
  int C(double v, PrimitiveType type = PrimitiveType::kF32) {
    if (!status_.ok()) return -1;
    return Take(l_.Constant(v, type, op_),
                [&](int c) { return l_.Broadcast(c, Shape::Array(type, dims_), op_); });
  }
  int U(Opcode o, int a) { return Add(o, {a}, Type(a)); }
  int B(Opcode o, int a, int b) { return Add(o, {a, b}, Type(a)); }
  int Cmp(Direction d, int a, int b) {
    hlo::Instruction inst =
        l_.Make(Opcode::kCompare, {a, b}, Shape::Array(PrimitiveType::kPred, dims_));
    inst.mutable_attrs().direction = d;
    inst.mutable_attrs().has_direction = true;
    return Emit(std::move(inst), {a, b});
  }
  int Pred(Opcode o, int a) { return Add(o, {a}, PrimitiveType::kPred); }
  int Sel(int p, int a, int b) { return Add(Opcode::kSelect, {p, a, b}, Type(a)); }
  int Convert(int a, PrimitiveType t, Opcode o = Opcode::kConvert) { return Add(o, {a}, t); }
  // materializePolynomialApproximation: c[0], then p = p * x + c[i].
  template <typename T, size_t N>
  int Poly(int x, const T (&c)[N]) {
    int p = C(static_cast<double>(c[0]));
    for (size_t i = 1; i < N; ++i) p = B(Opcode::kAdd, B(Opcode::kMultiply, p, x), C(c[i]));
    return p;
  }
  int Add2(int a, int b) { return B(Opcode::kAdd, a, b); }
  int Sub(int a, int b) { return B(Opcode::kSubtract, a, b); }
  int Mul(int a, int b) { return B(Opcode::kMultiply, a, b); }
  int Div(int a, int b) { return B(Opcode::kDivide, a, b); }

 private:
  PrimitiveType Type(int a) const { return a < 0 ? PrimitiveType::kF32 : l_.ShapeOf(a).type; }
  int Add(Opcode o, std::vector<int> operands, PrimitiveType type) {
    return Emit(l_.Make(o, operands, Shape::Array(type, dims_)), operands);
  }
  int Emit(hlo::Instruction inst, const std::vector<int>& operands) {
    for (int o : operands) {
      if (o < 0) return -1;
    }
    if (!status_.ok()) return -1;
    return Take(l_.Emit(std::move(inst), op_), [](int p) { return Result<int>(p); });
  }
  template <typename F>
  int Take(Result<int> r, F then) {
    if (!r.ok()) {
      status_ = r.status();
      return -1;
    }
    Result<int> next = then(*r);
    if (!next.ok()) {
      status_ = next.status();
      return -1;
    }
    return *next;
  }

  Lowerer& l_;
  const Op& op_;
  std::vector<int64_t> dims_;
  Status status_;
};

// materializeErfcApproximationF32ForMagnitudeGeOne.
int ErfcGeOne(Expr& e, int x) {
  const double kMaxlog = 88.72283905206835;
  static const float kP[] = {
      +2.326819970068386E-2f, -1.387039388740657E-1f, +3.687424674597105E-1f,
      -5.824733027278666E-1f, +6.210004621745983E-1f, -4.944515323274145E-1f,
      +3.404879937665872E-1f, -2.741127028184656E-1f, +5.638259427386472E-1f,
  };
  static const float kR[] = {
      -1.047766399936249E+1f, +1.297719955372516E+1f, -7.495518717768503E+0f,
      +2.921019019210786E+0f, -1.015265279202700E+0f, +4.218463358204948E-1f,
      -2.820767439740514E-1f, +5.641895067754075E-1f,
  };
  const int x_sq = e.Mul(x, x);
  const int z = e.U(Opcode::kNegate, x_sq);
  const int abs_x = e.U(Opcode::kAbs, x);
  const int one = e.C(1.0);
  const int reciprocal_x_sq = e.Div(one, x_sq);
  const int exp_z = e.U(Opcode::kExp, z);
  const int one_div_abs_x = e.Div(one, abs_x);
  const int exp_z_div = e.Mul(exp_z, one_div_abs_x);
  const int two = e.C(2.0);
  const int lt_two = e.Cmp(Direction::kLt, abs_x, two);
  const int pol_p = e.Poly(reciprocal_x_sq, kP);
  const int pol_r = e.Poly(reciprocal_x_sq, kR);
  const int poly = e.Sel(lt_two, pol_p, pol_r);
  const int approx = e.Mul(exp_z_div, poly);
  const int underflow = e.Cmp(Direction::kLt, z, e.C(-kMaxlog));
  const int zero = e.C(0.0);
  const int clamped = e.Sel(underflow, zero, approx);
  const int negative = e.Cmp(Direction::kLt, x, zero);
  return e.Sel(negative, e.Sub(two, clamped), clamped);
}

// materializeErfcApproximationF32.
int Erfc(Expr& e, int x) {
  static const float kT[] = {
      +7.853861353153693E-5f, -8.010193625184903E-4f, +5.188327685732524E-3f,
      -2.685381193529856E-2f, +1.128358514861418E-1f, -3.761262582423300E-1f,
      +1.128379165726710E+0f,
  };
  const int erfc_approx = ErfcGeOne(e, x);
  const int one = e.C(1.0);
  const int erf_approx = e.Mul(x, e.Poly(e.Mul(x, x), kT));
  const int erf_based = e.Sub(one, erf_approx);
  const int small = e.Cmp(Direction::kLt, e.U(Opcode::kAbs, x), one);
  return e.Sel(small, erf_based, erfc_approx);
}

// erfInv32.
int ErfInv(Expr& e, int x) {
  static const float kLt5[] = {2.81022636e-08f,  3.43273939e-07f, -3.5233877e-06f,
                               -4.39150654e-06f, 0.00021858087f,  -0.00125372503f,
                               -0.00417768164f,  0.246640727f,    1.50140941f};
  static const float kGe5[] = {-0.000200214257f, 0.000100950558f, 0.00134934322f,
                               -0.00367342844f,  0.00573950773f,  -0.0076224613f,
                               0.00943887047f,   1.00167406f,     2.83297682f};
  const int minus_x_sq = e.Mul(x, e.U(Opcode::kNegate, x));
  int w = e.U(Opcode::kNegate, e.U(Opcode::kLog1p, minus_x_sq));
  const int lt = e.Cmp(Direction::kLt, w, e.C(5.0));
  auto coefficient = [&](int i) { return e.Sel(lt, e.C(kLt5[i]), e.C(kGe5[i])); };
  w = e.Sel(lt, e.Sub(w, e.C(2.5)), e.Sub(e.U(Opcode::kSqrt, w), e.C(3.0)));
  int p = coefficient(0);
  for (int i = 1; i < 9; ++i) p = e.Add2(coefficient(i), e.Mul(p, w));
  const int result = e.Mul(p, x);
  const int at_one = e.Cmp(Direction::kEq, e.U(Opcode::kAbs, x), e.C(1));
  return e.Sel(at_one, e.Mul(x, e.C(std::numeric_limits<double>::infinity())), result);
}

// Lanczos' approximation, g = 7, n = 9 (kLanczosGamma, kBaseLanczosCoeff, kLanczosCoefficients).
constexpr double kLanczosGamma = 7;
constexpr double kBaseLanczosCoeff = 0.99999999999980993227684700473478;
constexpr double kLanczosCoefficients[] = {
    676.520368121885098567009190444019, -1259.13921672240287047156078755283,
    771.3234287776530788486528258894,   -176.61502916214059906584551354,
    12.507343278686904814458936853,     -0.13857109526572011689554707,
    9.984369578019570859563e-6,         1.50563273514931155834e-7};

// materializeLgamma.
int Lgamma(Expr& e, int x) {
  const int half = e.C(0.5);
  const int reflect = e.Cmp(Direction::kLt, x, half);
  const int neg_x = e.U(Opcode::kNegate, x);
  const int one = e.C(1);
  const int z = e.Sel(reflect, neg_x, e.Sub(x, one));
  int a = e.C(kBaseLanczosCoeff);
  for (int i = 0; i < 8; ++i) {
    a = e.Add2(a, e.Div(e.C(kLanczosCoefficients[i]), e.Add2(z, e.C(i + 1))));
  }
  const int lanczos_half = e.C(kLanczosGamma + 0.5);
  const int t = e.Add2(lanczos_half, z);
  const int log_t =
      e.Add2(e.C(std::log(kLanczosGamma + 0.5)), e.U(Opcode::kLog1p, e.Div(z, lanczos_half)));
  const int sum = e.Sub(e.Add2(z, half), e.Div(t, log_t));
  const int r = e.Mul(sum, log_t);
  int lgamma = e.Add2(e.Add2(e.C((std::log(2) + std::log(kPi)) / 2), r), e.U(Opcode::kLog, a));
  const int abs = e.U(Opcode::kAbs, x);
  int abs_frac = e.Sub(abs, e.U(Opcode::kFloor, abs));
  const int reduce = e.Cmp(Direction::kLt, half, abs_frac);
  abs_frac = e.Sel(reduce, e.Sub(one, abs_frac), abs_frac);
  const int denom = e.U(Opcode::kLog, e.U(Opcode::kSin, e.Mul(e.C(kPi), abs_frac)));
  int reflection = e.Sub(e.Sub(e.C(std::log(kPi)), denom), lgamma);
  reflection = e.Sel(e.Pred(Opcode::kIsFinite, denom), reflection, e.U(Opcode::kNegate, denom));
  lgamma = e.Sel(reflect, reflection, lgamma);
  const int is_inf =
      e.Cmp(Direction::kEq, abs, e.C(std::numeric_limits<double>::infinity()));  // chlo.is_inf
  return e.Sel(is_inf, e.C(std::numeric_limits<double>::infinity()), lgamma);
}

// materializeDigamma.
int Digamma(Expr& e, int x) {
  const int half = e.C(0.5);
  const int reflect = e.Cmp(Direction::kLt, x, half);
  const int neg_x = e.U(Opcode::kNegate, x);
  const int one = e.C(1);
  const int z = e.Sel(reflect, neg_x, e.Sub(x, one));
  const int zero = e.C(0.0);
  int a = e.C(kBaseLanczosCoeff);
  int a_prime = zero;
  for (int i = 0; i < 8; ++i) {
    const int coeff = e.C(kLanczosCoefficients[i]);
    const int z_term = e.Add2(z, e.C(i + 1));
    a_prime = e.Sub(a_prime, e.Div(coeff, e.Mul(z_term, z_term)));
    a = e.Add2(a, e.Div(coeff, z_term));
  }
  const int lanczos_half = e.C(kLanczosGamma + 0.5);
  const int t = e.Add2(lanczos_half, z);
  const int log_t =
      e.Add2(e.C(std::log(kLanczosGamma + 0.5)), e.U(Opcode::kLog1p, e.Div(z, lanczos_half)));
  int digamma = e.Sub(e.Add2(log_t, e.Div(a_prime, a)), e.Div(e.C(kLanczosGamma), t));
  const int reduced_x = e.Add2(x, e.U(Opcode::kAbs, e.U(Opcode::kFloor, e.Add2(x, e.C(0.5)))));
  const int pi = e.C(kPi);
  const int pi_x = e.Mul(pi, reduced_x);
  const int reflection =
      e.Sub(digamma, e.Div(e.Mul(pi, e.U(Opcode::kCos, pi_x)), e.U(Opcode::kSin, pi_x)));
  digamma = e.Sel(reflect, reflection, digamma);
  const int is_zero = e.Cmp(Direction::kEq, x, zero);
  const int below_zero = e.Cmp(Direction::kLt, x, zero);
  const int is_int = e.Cmp(Direction::kEq, x, e.U(Opcode::kFloor, x));
  const int negative_int = e.B(Opcode::kAnd, below_zero, is_int);
  const int with_nan = e.Sel(negative_int, e.C(std::numeric_limits<double>::quiet_NaN()), digamma);
  return e.Sel(is_zero, e.C(-std::numeric_limits<double>::infinity()), with_nan);
}

// materializeChebyshevPolynomialApproximation: Clenshaw's recurrence, halved.
template <size_t N>
int Chebyshev(Expr& e, int x, const float (&c)[N]) {
  int b0 = e.C(0.0), b1 = e.C(0.0), b2 = e.C(0.0);
  for (float k : c) {
    b2 = b1;
    b1 = b0;
    b0 = e.Add2(e.Sub(e.Mul(x, b1), b2), e.C(k));
  }
  return e.Mul(e.Sub(b0, b2), e.C(0.5));
}

// materializeBesselI1eApproximation with the f32 coefficients (Cephes' i1e).
int BesselI1e(Expr& e, int x) {
  static const float kA[] = {
      9.38153738649577178388E-9f,  -4.44505912879632808065E-8f, 2.00329475355213526229E-7f,
      -8.56872026469545474066E-7f, 3.47025130813767847674E-6f,  -1.32731636560394358279E-5f,
      4.78156510755005422638E-5f,  -1.61760815825896745588E-4f, 5.12285956168575772895E-4f,
      -1.51357245063125314899E-3f, 4.15642294431288815669E-3f,  -1.05640848946261981558E-2f,
      2.47264490306265168283E-2f,  -5.29459812080949914269E-2f, 1.02643658689847095384E-1f,
      -1.76416518357834055153E-1f, 2.52587186443633654823E-1f};
  static const float kB[] = {-3.83538038596423702205E-9f, -2.63146884688951950684E-8f,
                             -2.51223623787020892529E-7f, -3.88256480887769039346E-6f,
                             -1.10588938762623716291E-4f, -9.76109749136146840777E-3f,
                             7.78576235018280120474E-1f};
  const int z = e.U(Opcode::kAbs, x);
  const int two = e.C(2.0);
  const int le8 = e.Mul(z, Chebyshev(e, e.Sub(e.Mul(e.C(0.5), z), two), kA));
  const int gt8 = e.Div(Chebyshev(e, e.Sub(e.Div(e.C(32.0), z), two), kB), e.U(Opcode::kSqrt, z));
  const int select = e.Sel(e.Cmp(Direction::kLe, z, e.C(8.0)), le8, gt8);
  return e.Mul(e.U(Opcode::kSign, x), select);
}

// materializeZeta: Hurwitz zeta(x, q) by Euler-Maclaurin (Johansson 2015, formula 5), 9 terms
// of the series and 12 of the expansion.
int Zeta(Expr& e, int x, int q) {
  static const double kCoeffs[] = {-7.1661652561756670113e18,
                                   1.8152105401943546773e17,
                                   -4.5979787224074726105e15,
                                   1.1646782814350067249e14,
                                   -2.950130727918164224e12,
                                   7.47242496e10,
                                   -1.8924375803183791606e9,
                                   47900160.0,
                                   -1209600.0,
                                   30240.0,
                                   -720.0,
                                   12.0};
  const double kNan = std::numeric_limits<double>::quiet_NaN();
  const double kInf = std::numeric_limits<double>::infinity();
  const int zero = e.C(0.0);
  const int one = e.C(1.0);
  int acc = q;
  const int neg_x = e.U(Opcode::kNegate, x);
  int power_sum = e.B(Opcode::kPower, q, neg_x);
  for (int i = 0; i < 9; ++i) {
    acc = e.Add2(acc, one);
    power_sum = e.Add2(power_sum, e.B(Opcode::kPower, acc, neg_x));
  }
  acc = e.Add2(acc, one);
  const int q_neg_power = e.B(Opcode::kPower, acc, neg_x);
  const int one_like_x = e.C(1.0);
  const int correction = e.Div(e.Mul(q_neg_power, acc), e.Sub(x, one_like_x));
  const int rsqrt_acc = e.Div(one, e.Mul(acc, acc));
  int horner_sum = zero;
  for (int i = 0; i < 11; ++i) {
    const int product = e.Mul(e.Add2(x, e.C(23 - 1 - 2 * i)), e.Add2(x, e.C(23 - 2 - 2 * i)));
    horner_sum = e.Mul(product, e.Mul(rsqrt_acc, e.Add2(horner_sum, e.C(1. / kCoeffs[i]))));
  }
  const int tail =
      e.Mul(q_neg_power,
            e.Add2(e.C(0.5), e.Mul(e.Div(x, acc), e.Add2(e.C(1. / kCoeffs[11]), horner_sum))));
  const int accurate = e.Add2(e.Add2(power_sum, correction), tail);
  int out = e.Sel(
      e.Cmp(Direction::kLt, e.U(Opcode::kAbs, q_neg_power),
            e.Mul(e.U(Opcode::kAbs, power_sum), e.C(std::numeric_limits<float>::denorm_min()))),
      power_sum, accurate);
  const int nan = e.C(kNan);
  out = e.Sel(e.Cmp(Direction::kLt, x, one_like_x), nan, out);
  const int q_le_zero = e.Cmp(Direction::kLe, q, zero);
  const int x_not_int = e.Cmp(Direction::kNe, x, e.U(Opcode::kFloor, x));
  out = e.Sel(e.B(Opcode::kAnd, q_le_zero, x_not_int), nan, out);
  const int q_is_int = e.Cmp(Direction::kEq, q, e.U(Opcode::kFloor, q));
  const int at_pole = e.B(Opcode::kAnd, q_le_zero, q_is_int);
  const int x_is_int = e.Cmp(Direction::kEq, x, e.U(Opcode::kFloor, x));
  const int x_is_even = e.Cmp(Direction::kEq, e.B(Opcode::kRemainder, x, e.C(2.0)), zero);
  const int even_int = e.B(Opcode::kAnd, x_is_int, x_is_even);
  out = e.Sel(at_pole, e.Sel(even_int, e.C(kInf), nan), out);
  return e.Sel(e.Cmp(Direction::kEq, x, one), e.C(kInf), out);
}

// materializePolygamma: (-1)^(n+1) n! zeta(n + 1, x), digamma for n = 0, NaN off the naturals.
int Polygamma(Expr& e, int n, int x) {
  const int one = e.C(1.0);
  const int two = e.C(2.0);
  const int sign = e.Sub(e.Mul(two, e.B(Opcode::kRemainder, n, two)), one);
  const int n_plus_one = e.Add2(n, one);
  const int exp_lgamma = e.U(Opcode::kExp, Lgamma(e, n_plus_one));
  const int zeta = Zeta(e, n_plus_one, x);
  int result = e.Mul(e.Mul(sign, exp_lgamma), zeta);
  const int zero = e.C(0.0);
  result = e.Sel(e.Cmp(Direction::kEq, n, zero), Digamma(e, x), result);
  const int non_natural = e.B(Opcode::kOr, e.Cmp(Direction::kNe, n, e.U(Opcode::kFloor, n)),
                              e.Cmp(Direction::kLt, n, zero));
  return e.Sel(non_natural, e.C(std::numeric_limits<double>::quiet_NaN()), result);
}

// materializeNextAfter: on the bits, as integers of the float's width.
int NextAfter(Expr& e, int x, int y, PrimitiveType type) {
  const int bits = hlo::BitWidth(type);
  const PrimitiveType it = bits == 16 ? PrimitiveType::kS16 : PrimitiveType::kS32;
  const int xi = e.Convert(x, it, Opcode::kBitcastConvert);
  const int yi = e.Convert(y, it, Opcode::kBitcastConvert);
  const int nan_input = e.B(Opcode::kOr, e.Cmp(Direction::kNe, x, x), e.Cmp(Direction::kNe, y, y));
  const int nan_bits =
      e.Convert(e.C(std::numeric_limits<double>::quiet_NaN(), type), it, Opcode::kBitcastConvert);
  const int64_t sign_mask = bits == 16 ? -0x8000 : -0x7FFFFFFF - 1;  // 1 << (bits - 1)
  const int x_abs = e.B(Opcode::kAnd, xi, e.C(static_cast<double>(~sign_mask), it));
  const int y_abs = e.B(Opcode::kAnd, yi, e.C(static_cast<double>(~sign_mask), it));
  const int equal = e.Cmp(Direction::kEq, x, y);
  const int zero = e.C(0, it);
  const int x_zero = e.Cmp(Direction::kEq, x_abs, zero);
  const int y_zero = e.Cmp(Direction::kEq, y_abs, zero);
  const int x_sign = e.B(Opcode::kAnd, xi, e.C(static_cast<double>(sign_mask), it));
  const int y_sign = e.B(Opcode::kAnd, yi, e.C(static_cast<double>(sign_mask), it));
  const int one = e.C(1, it);
  const int from_zero = e.B(Opcode::kOr, y_sign, one);
  const int smaller =
      e.B(Opcode::kOr, e.Cmp(Direction::kGt, x_abs, y_abs), e.Cmp(Direction::kNe, x_sign, y_sign));
  int result = e.Add2(xi, e.Sel(smaller, e.C(-1, it), one));
  result = e.Sel(x_zero, e.Sel(y_zero, yi, from_zero), result);
  result = e.Sel(equal, yi, result);
  result = e.Sel(nan_input, nan_bits, result);
  return e.Convert(result, type, Opcode::kBitcastConvert);
}

}  // namespace

Result<std::vector<int>> Lowerer::LowerChloMath(const Op& op, const std::string& name,
                                                const std::vector<int>& operands) {
  const size_t arity = name == "next_after" || name == "zeta" || name == "polygamma" ? 2 : 1;
  if (operands.size() != arity) {
    return Error(op, "takes " + std::to_string(arity) + " operand" + (arity > 1 ? "s" : ""));
  }
  const Shape x = ShapeOf(operands[0]);  // a copy: emitting moves the builder's instructions
  for (int o : operands) {
    if (!hlo::Compatible(ShapeOf(o), x)) return Error(op, "operands differ in shape");
  }
  Expr e(*this, op, x.dims);
  if (name == "conj") {
    if (!hlo::IsComplex(x.type)) return std::vector<int>{operands[0]};
    const PrimitiveType part =
        x.type == PrimitiveType::kC64 ? PrimitiveType::kF32 : PrimitiveType::kF64;
    const int re = e.Convert(operands[0], part, Opcode::kReal);
    const int im = e.U(Opcode::kNegate, e.Convert(operands[0], part, Opcode::kImag));
    Result<int> out = Emit(Make(Opcode::kComplex, {re, im}, x), op);
    if (!e.status().ok()) return e.status();
    if (!out.ok()) return out.status();
    return std::vector<int>{*out};
  }
  if (!hlo::IsFloating(x.type)) return Error(op, "needs a floating-point operand");
  if (name == "next_after") {
    if (x.type == PrimitiveType::kF64) return Unsupported(op, "f64 next_after");
    const int r = NextAfter(e, operands[0], operands[1], x.type);
    if (!e.status().ok()) return e.status();
    return std::vector<int>{r};
  }
  // materializeWithUpcast: below f32, in f32 and back.
  std::vector<int> in = operands;
  for (int& v : in) {
    if (x.type != PrimitiveType::kF32) v = e.Convert(v, PrimitiveType::kF32);
  }
  int r = -1;
  if (name == "erfc") r = Erfc(e, in[0]);
  if (name == "erf_inv") r = ErfInv(e, in[0]);
  if (name == "lgamma") r = Lgamma(e, in[0]);
  if (name == "digamma") r = Digamma(e, in[0]);
  if (name == "bessel_i1e") r = BesselI1e(e, in[0]);
  if (name == "zeta") r = Zeta(e, in[0], in[1]);
  if (name == "polygamma") r = Polygamma(e, in[0], in[1]);
  if (x.type != PrimitiveType::kF32) r = e.Convert(r, x.type);
  if (!e.status().ok()) return e.status();
  if (r < 0) return Unsupported(op);
  return std::vector<int>{r};
}

}  // namespace tpuemu::engine::stablehlo::internal
