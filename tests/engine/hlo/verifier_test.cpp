// Shape checks: each bad module is INVALID_ARGUMENT naming the instruction, its opcode, its line
// and what does not match.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/hlo/parser.h"

namespace tpuemu::engine::hlo {
namespace {

using ::testing::HasSubstr;

struct ShapeCase {
  const char* name;
  const char* body;  // instructions of ENTRY e, after two parameters a: f32[2,3], b: f32[4,5]
  const char* message;
};

class ShapeErrors : public ::testing::TestWithParam<ShapeCase> {};

constexpr const char* kPrelude = R"(HloModule m
add { x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y) }
ENTRY e {
  a = f32[2,3]{1,0} parameter(0)
  b = f32[4,5]{1,0} parameter(1)
  z = f32[] constant(0)
  i = s32[] constant(0)
)";

TEST_P(ShapeErrors, NameTheInstructionAndTheMismatch) {
  const ShapeCase& c = GetParam();
  Result<Module> m = ParseModule(std::string(kPrelude) + c.body + "\n}\n");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(m.status().message(), HasSubstr(c.message)) << m.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    HloVerifier, ShapeErrors,
    ::testing::Values(
        ShapeCase{"DotContracting",
                  "ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
                  "%d (dot, line 10): contracting dimension sizes differ: f32[2,3] dim 1 is 3, "
                  "f32[4,5] dim 0 is 4"},
        ShapeCase{"DotDimsOutOfRange",
                  "ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={2}, rhs_contracting_dims={0}",
                  "batch/contracting dimensions are out of range or repeated"},
        ShapeCase{"ResultShapeMismatch", "ROOT n = f32[3,2] negate(a)",
                  "%n (negate, line 10): the result shape is f32[3,2] but the operands give "
                  "f32[2,3]"},
        ShapeCase{"ElementwiseDims", "ROOT s = f32[2,3] add(a, b)",
                  "operand shapes differ: f32[2,3] and f32[4,5] (HLO needs an explicit "
                  "broadcast)"},
        ShapeCase{"BroadcastDims", "ROOT r = f32[3,2] broadcast(a), dimensions={0,1}",
                  "operand dim 0 (2) does not match output dim 0"},
        ShapeCase{"ReshapeCount", "ROOT r = f32[7] reshape(a)",
                  "cannot reshape f32[2,3] to f32[7]"},
        ShapeCase{"TransposePerm", "ROOT t = f32[3,2] transpose(a), dimensions={0,0}",
                  "dimensions={0,0} is not a permutation of f32[2,3]"},
        ShapeCase{"SliceOutOfRange", "ROOT s = f32[2,2] slice(a), slice={[0:2], [2:4]}",
                  "slice range [2:4:1] is outside dimension 1 of f32[2,3]"},
        ShapeCase{"ReduceMissingToApply", "ROOT r = f32[2] reduce(a, z), dimensions={1}",
                  "%r (reduce, line 10): missing attribute to_apply="},
        ShapeCase{"ReduceOddOperands",
                  "ROOT r = f32[2] reduce(a, z, z), dimensions={1}, to_apply=add",
                  "expected N arrays and N init values"},
        ShapeCase{"ReduceBadDims", "ROOT r = f32[2] reduce(a, z), dimensions={2}, to_apply=add",
                  "dimensions={2} are not dims of f32[2,3]"},
        ShapeCase{"GetTupleElementIndex",
                  "t = (f32[2,3], f32[4,5]) tuple(a, b)\n  ROOT g = f32[2,3] get-tuple-element(t), "
                  "index=2",
                  "index=2 is outside (f32[2,3], f32[4,5])"},
        ShapeCase{"CompareWithoutDirection", "ROOT c = pred[2,3] compare(a, a)",
                  "missing attribute direction="},
        ShapeCase{"ConcatenateMismatch", "ROOT c = f32[6,3] concatenate(a, b), dimensions={0}",
                  "cannot concatenate f32[2,3] and f32[4,5]"},
        ShapeCase{"DynamicSliceSizes",
                  "ROOT d = f32[3,3] dynamic-slice(a, i, i), dynamic_slice_sizes={3,3}",
                  "slice size 3 exceeds dimension 0 of f32[2,3]"},
        ShapeCase{"PadNeedsEveryDim", "ROOT p = f32[4,3] pad(a, z), padding=1_1",
                  "padding= needs one entry per dimension of f32[2,3]"},
        ShapeCase{"IotaDimension", "ROOT t = s32[4] iota(), iota_dimension=1",
                  "iota_dimension=1 is outside s32[4]"},
        ShapeCase{"BitcastConvertWidth", "ROOT c = s16[2,3] bitcast-convert(a)",
                  "bitcast-convert between element types of different widths"},
        ShapeCase{"WhileBody", "ROOT w = f32[] while(z), condition=add, body=add",
                  "condition %add takes 2 parameter(s), expected 1"},
        ShapeCase{"ConditionalBranches",
                  "p = pred[] constant(true)\n  ROOT c = f32[] conditional(p, z), "
                  "branch_computations={add}",
                  "1 branch computation(s) for 1 branch operand(s)"},
        ShapeCase{"CallSignature", "ROOT c = f32[] call(z), to_apply=add",
                  "called computation %add takes 2 parameter(s), expected 1"},
        ShapeCase{"ConvolutionFeatures",
                  "x = f32[1,4,4,3] parameter(2)\n  k = f32[2,2,2,8] parameter(3)\n  ROOT c = "
                  "f32[1,3,3,8] convolution(x, k), window={size=2x2}, dim_labels=b01f_01io->b01f",
                  "feature dims do not match: input features 3, kernel 2 in x 8 out"},
        ShapeCase{
            "GatherMap",
            "idx = s32[5,2] parameter(2)\n  ROOT g = f32[5,3] gather(a, idx), offset_dims={1}, "
            "collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, "
            "slice_sizes={1,3}",
            "start_index_map={0} must map the 2 index components onto dims of f32[2,3]"},
        ShapeCase{"AllGatherDims",
                  "ROOT g = f32[2,5] all-gather(a), dimensions={1}, replica_groups={}",
                  "cannot all-gather f32[2,3] into f32[2,5]"}),
    [](const ::testing::TestParamInfo<ShapeCase>& info) { return info.param.name; });

}  // namespace
}  // namespace tpuemu::engine::hlo
