// The syntax of real dumps: JAX's as_hlo_text, XLA_FLAGS before/after-optimization files,
// torch_xla and TensorFlow, including the constructs of XLA's own parser tests
// (xla/hlo/parser/hlo_parser_test.cc), restated with our own modules.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/engine/hlo/hlo_test_util.h"

namespace tpuemu::engine::hlo {
namespace {

using testing::F32;
using testing::MustParse;
using testing::MustRun;

const Instruction& Find(const Module& m, const std::string& name) {
  for (const Computation& c : m.computations) {
    for (const Instruction& i : c.instructions) {
      if (i.name == name) return i;
    }
  }
  ADD_FAILURE() << "no instruction " << name;
  static const Instruction kNone;
  return kNone;
}

TEST(HloParser, JaxStyleModuleWithHeaderAttributes) {
  const Module m = MustParse(
      R"(HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[2,4]{1,0}, f32[2,4]{1,0})->f32[2,4]{1,0}}, allow_spmd_sharding_propagation_to_output={true}, input_output_alias={ {}: (0, {}, may-alias) }, frontend_attributes={xla.sdy.meshes="{mesh = #sdy.mesh<[]>}"}, num_partitions=1, replica_count=1

ENTRY %main.4 (Arg_0.1: f32[2,4], Arg_1.2: f32[2,4]) -> f32[2,4] {
  %Arg_0.1 = f32[2,4]{1,0} parameter(0), metadata={op_name="x"}
  %Arg_1.2 = f32[2,4]{1,0} parameter(1), metadata={op_name="y"}
  ROOT %add.3 = f32[2,4]{1,0} add(f32[2,4]{1,0} %Arg_0.1, f32[2,4]{1,0} %Arg_1.2), metadata={op_name="jit(f)/jit(main)/add" source_file="/tmp/f.py" source_line=3}
}
)");
  EXPECT_EQ(m.name, "jit_f");
  EXPECT_TRUE(m.is_scheduled);
  EXPECT_EQ(m.devices(), 1);
  ASSERT_EQ(m.computations.size(), 1u);
  EXPECT_EQ(m.entry_computation().name, "main.4");
  const Instruction& add = Find(m, "add.3");
  EXPECT_EQ(add.op_name, "jit(f)/jit(main)/add");
  EXPECT_EQ(add.line, 6);
  EXPECT_EQ(add.shape.ToString(), "f32[2,4]");
}

TEST(HloParser, ShortFormWithoutSigilsOrSignatures) {
  const Module m = MustParse(R"(HloModule m
add_F32 {
  lhs = f32[] parameter(0)
  rhs = f32[] parameter(1)
  ROOT add = f32[] add(lhs, rhs)
}
ENTRY reduce_all {
  input = f32[2,3]{1,0} parameter(0)
  zero = f32[] constant(0)
  ROOT reduce = f32[] reduce(input, zero), dimensions={0,1}, to_apply=add_F32
}
)");
  EXPECT_EQ(m.computations.size(), 2u);
  const Value out = MustRun(R"(HloModule m
add_F32 {
  lhs = f32[] parameter(0)
  rhs = f32[] parameter(1)
  ROOT add = f32[] add(lhs, rhs)
}
ENTRY reduce_all {
  input = f32[2,3]{1,0} parameter(0)
  zero = f32[] constant(0)
  ROOT reduce = f32[] reduce(input, zero), dimensions={0,1}, to_apply=add_F32
}
)",
                            {F32({2, 3}, {1, 2, 3, 4, 5, 6})});
  EXPECT_EQ(testing::Floats(out), std::vector<float>{21});
}

TEST(HloParser, ModuleWithoutHeaderUsesTheLastComputationAsEntry) {
  const Module m = MustParse(R"(
%id (p: f32[]) -> f32[] {
  ROOT %p = f32[] parameter(0)
}
%main (a: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  ROOT %c = f32[] call(%a), to_apply=%id
}
)");
  EXPECT_EQ(m.entry_computation().name, "main");
  EXPECT_EQ(m.name, "module_main");
}

TEST(HloParser, LayoutsWithTilesMemorySpacesAndDynamicDims) {
  const Module m = MustParse(
      R"(HloModule layouts, entry_computation_layout={(f32[8,128]{1,0:T(8,128)}, bf16[<=16,4]{1,0})->(f32[8,128]{0,1:T(8,128)S(1)}, u32[]{:S(2)})}

ENTRY %e (a: f32[8,128], b: bf16[<=16,4]) -> (f32[8,128], u32[]) {
  %a = f32[8,128]{1,0:T(8,128)} parameter(0)
  %b = bf16[<=16,4]{1,0:T(8,128)(2,1)} parameter(1)
  %copy = f32[8,128]{0,1:T(8,128)S(1)} copy(f32[8,128]{1,0:T(8,128)} %a)
  %c = u32[]{:S(2)} constant(7)
  ROOT %t = (f32[8,128]{0,1:T(8,128)S(1)}, u32[]{:S(2)}) tuple(%copy, %c)
}
)");
  const Instruction& b = Find(m, "b");
  EXPECT_EQ(b.shape.ToString(), "bf16[<=16,4]");
  EXPECT_TRUE(b.shape.dynamic[0]);
  EXPECT_EQ(Find(m, "copy").shape.minor_to_major, (std::vector<int64_t>{0, 1}));
}

TEST(HloParser, LongTuplesWithIndexComments) {
  const Module m = MustParse(R"(HloModule tuples
ENTRY %e (v: f32[]) -> (f32[], f32[], f32[], f32[], f32[], f32[], ((), s32[2])) {
  %v = f32[] parameter(0)
  %empty = () tuple()
  %i = s32[2]{0} constant({1, 2})
  %inner = ((), s32[2]{0}) tuple(%empty, %i)
  ROOT %t = (f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[], ((), s32[2]{0})) tuple(f32[] %v, f32[] %v, f32[] %v, f32[] %v, f32[] %v, /*index=5*/f32[] %v, ((), s32[2]{0}) %inner)
}
)");
  const Instruction& t = Find(m, "t");
  ASSERT_TRUE(t.shape.IsTuple());
  EXPECT_EQ(t.shape.tuple.size(), 7u);
  EXPECT_EQ(t.shape.tuple[6].ToString(), "((), s32[2])");
}

TEST(HloParser, StackFrameTablesAreSkipped) {
  const Module m = MustParse(R"(HloModule m, entry_computation_layout={()->f32[]}

FileNames
1 "/workspace/model.py"
2 "/usr/lib/python3/site-packages/flax/linen/linear.py"

FunctionNames
1 "loss_fn"
2 "__call__"

FileLocations
1 {file_name_id=1 function_name_id=1 line=12 end_line=12 column=4 end_column=30}
2 {file_name_id=2 function_name_id=2 line=200 end_line=201 column=8 end_column=9}

StackFrames
1 {file_location_id=1 parent_frame_id=1}
2 {file_location_id=2 parent_frame_id=1}

ENTRY %main () -> f32[] {
  ROOT %c = f32[] constant(1.5), metadata={op_name="c" stack_frame_id=2}
}
)");
  EXPECT_EQ(Find(m, "c").op_name, "c");
}

TEST(HloParser, IgnoredAttributesOfEveryKind) {
  const Module m = MustParse(
      R"(HloModule ignored, entry_computation_layout={(f32[4]{0}, f32[4]{0})->f32[4]{0}}, num_partitions=2

ENTRY %e (a: f32[4], b: f32[4]) -> f32[4] {
  %a = f32[4]{0} parameter(0), sharding={devices=[2]<=[2]}, parameter_replication={false}
  %b = f32[4]{0} parameter(1), sharding={replicated}, frontend_attributes={_xla_compute_type="host",nested={a = 1 : i32, b = dense<1> : tensor<i32>}}
  %m = f32[4]{0} multiply(%a, %b), sharding={{maximal device=0}}, backend_config="{\"flag_configs\":[],\"scoped_memory_configs\":[]}", statistics={visualizing_index=1,stat-1=33}
  %n = f32[4]{0} negate(%m), backend_config={"operation_queue_id":"0","wait_on_operation_queues":[],"fusion_backend_config":{"kind":"__triton"}}, origin={{"n"}}
  ROOT %r = f32[4]{0} add(%m, %n), control-predecessors={%n}, sharding={devices=[2,1]0,1 last_tile_dim_replicate metadata={op_name="sh"}}, metadata={op_type="Add" op_name="add" source_file="f.py" source_line=1 source_end_line=1 source_column=2 source_end_column=3 profile_type={1} deduplicated_name="d" scheduling_name="s"}
}
)");
  EXPECT_EQ(m.num_partitions, 2);
  EXPECT_EQ(Find(m, "r").op_type, "Add");
  EXPECT_EQ(Find(m, "r").op_name, "add");
}

TEST(HloParser, ElidedConstantsAreFilledFromTheSeed) {
  const std::string text = R"(HloModule elided
ENTRY %e () -> f32[3,4] {
  ROOT %w = f32[3,4]{1,0} constant({...})
}
)";
  const Module m = MustParse(text);
  EXPECT_EQ(Find(m, "w").literal, nullptr);
  EvalOptions seed1, seed2;
  seed1.seed = 1;
  seed2.seed = 2;
  const std::vector<float> a = testing::Floats(MustRun(text, {}, seed1));
  const std::vector<float> b = testing::Floats(MustRun(text, {}, seed1));
  const std::vector<float> c = testing::Floats(MustRun(text, {}, seed2));
  ASSERT_EQ(a.size(), 12u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  for (float v : a) {
    EXPECT_GE(v, -1.0f);
    EXPECT_LT(v, 1.0f);
  }
}

TEST(HloParser, ConstantLiteralsOfEveryForm) {
  const Module m = MustParse(R"(HloModule constants
ENTRY %e () -> pred[] {
  %f = f32[6]{0} constant({nan, 7, -nan, -1.5e-3, inf, -inf})
  %p = pred[2,3]{1,0} constant({ { 0, 1, 0 }, { true, false, true } })
  %u = u64[] constant(18446744073709551615)
  %s = s64[] constant(-9223372036854775808)
  %b = bf16[] constant(1.00390625)
  %empty = f32[0]{0} constant({})
  %empty4 = f32[2,0,4,3]{3,2,1,0} constant({ { /*i0=0*/ }, { /*i0=1*/ } })
  %r4 = f32[2,1,1,2]{3,2,1,0} constant({ { /*i0=0*/ { /*i1=0*/ {1, 2} } }, { /*i0=1*/ { /*i1=0*/ {3, 4} } } })
  %t = (f32[2]{0}, s32[]) constant(({1, 2}, 3))
  ROOT %pr = pred[] constant(true)
}
)");
  const Array& f = *Find(m, "f").literal->array;
  EXPECT_TRUE(std::isnan(f.f[0]));
  EXPECT_TRUE(std::isnan(f.f[2]));
  EXPECT_FLOAT_EQ(f.f[3], -1.5e-3f);
  EXPECT_TRUE(std::isinf(f.f[4]) && f.f[4] > 0);
  EXPECT_TRUE(std::isinf(f.f[5]) && f.f[5] < 0);
  EXPECT_EQ(Find(m, "p").literal->array->i, (IntStore{0, 1, 0, 1, 0, 1}));
  EXPECT_EQ(static_cast<uint64_t>(Find(m, "u").literal->array->i[0]), 18446744073709551615ull);
  EXPECT_EQ(Find(m, "s").literal->array->i[0], INT64_MIN);
  EXPECT_EQ(Find(m, "b").literal->array->f[0], 1.0f);  // 1 + 2^-8 rounds to even in bf16
  EXPECT_EQ(Find(m, "r4").literal->array->f, (FloatStore{1, 2, 3, 4}));
  EXPECT_TRUE(Find(m, "t").literal->is_tuple);
}

TEST(HloParser, NestedInstructionsAsOperands) {
  const std::string text = R"(HloModule nested
ENTRY %e (x: f32[2], y: f32[2]) -> f32[2] {
  %x = f32[2]{0} parameter(0)
  %y = f32[2]{0} parameter(1)
  ROOT %r = f32[2]{0} add(f32[2]{0} multiply(%x, %y), f32[2]{0} negate(%y))
}
)";
  const Module m = MustParse(text);
  EXPECT_EQ(m.entry_computation().instructions.size(), 5u);
  EXPECT_EQ(testing::Floats(MustRun(text, {F32({2}, {2, 3}), F32({2}, {4, 5})})),
            (std::vector<float>{4, 10}));
}

TEST(HloParser, InlineComputationsAndComputationAttributes) {
  const std::string text = R"(HloModule inline
ENTRY %e (x: f32[3]) -> f32[] {
  %x = f32[3]{0} parameter(0)
  %z = f32[] constant(0)
  ROOT %r = f32[] reduce(%x, %z), dimensions={0}, to_apply={
    %a = f32[] parameter(0)
    %b = f32[] parameter(1)
    ROOT %m = f32[] maximum(%a, %b)
  }
}, execution_thread="main"
)";
  EXPECT_EQ(testing::Floats(MustRun(text, {F32({3}, {1, 7, 3})})), std::vector<float>{7});
}

TEST(HloParser, RootNeedNotBeLast) {
  const std::string text = R"(HloModule root_first
ENTRY %e (x: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  ROOT %n = f32[] negate(%x)
  %unused = f32[] add(%x, %x)
}
)";
  EXPECT_EQ(testing::Floats(MustRun(text, {F32({}, {2})})), std::vector<float>{-2});
}

TEST(HloParser, InstructionsWithoutResultShapesAreInferred) {
  const Module m = MustParse(R"(HloModule infer
ENTRY %e (a: f32[2,3], b: f32[3,4]) -> f32[2,4] {
  %a = f32[2,3]{1,0} parameter(0)
  %b = f32[3,4]{1,0} parameter(1)
  %d = dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %t = tuple(%d, %a)
  %g = get-tuple-element(%t), index=0
  ROOT %r = add(%g, %d)
}
)");
  EXPECT_EQ(Find(m, "d").shape.ToString(), "f32[2,4]");
  EXPECT_EQ(Find(m, "t").shape.ToString(), "(f32[2,4], f32[2,3])");
  EXPECT_EQ(Find(m, "r").shape.ToString(), "f32[2,4]");
}

TEST(HloParser, WindowsDimLabelsSlicesPaddingAndPrecision) {
  const Module m = MustParse(R"(HloModule attrs
ENTRY %e (x: f32[1,7,7,4], k: f32[3,3,4,8], v: f32[10]) -> f32[1,8,14,14] {
  %x = f32[1,7,7,4]{3,2,1,0} parameter(0)
  %k = f32[3,3,4,8]{3,2,1,0} parameter(1)
  %v = f32[10]{0} parameter(2)
  %s = f32[3]{0} slice(%v), slice={[1:9:3]}
  %z = f32[] constant(0)
  %p = f32[20]{0} pad(%v, %z), padding=2_-1_1
  ROOT %c = f32[1,8,14,14]{3,2,1,0} convolution(%x, %k), window={size=3x3 stride=1x1 pad=1_2x1_2 lhs_dilate=2x2 rhs_dilate=1x1 rhs_reversal=1x1}, dim_labels=b01f_01io->bf01, feature_group_count=1, operand_precision={high,highest}
}
)");
  const Attributes& c = Find(m, "c").a();
  ASSERT_EQ(c.window.size(), 2u);
  EXPECT_EQ(c.window[0].pad_high, 2);
  EXPECT_EQ(c.window[1].base_dilation, 2);
  EXPECT_TRUE(c.window[0].reversal);
  EXPECT_EQ(c.conv.output_feature, 1);
  EXPECT_EQ(Find(m, "c").precision, DotPrecision::kHighest);
  EXPECT_EQ(Find(m, "s").shape.ToString(), "f32[3]");
  EXPECT_EQ(Find(m, "p").shape.ToString(), "f32[20]");
}

TEST(HloParser, DotAlgorithmSetsThePrecision) {
  const Module m = MustParse(R"(HloModule alg
ENTRY %e (a: f32[2,2], b: f32[2,2]) -> f32[2,2] {
  %a = f32[2,2]{1,0} parameter(0)
  %b = f32[2,2]{1,0} parameter(1)
  %x3 = f32[2,2]{1,0} dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, algorithm=dot_bf16_bf16_f32_x3
  ROOT %x6 = f32[2,2]{1,0} dot(%x3, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, algorithm=dot_bf16_bf16_f32_x6
}
)");
  EXPECT_EQ(Find(m, "x3").precision, DotPrecision::kHigh);
  EXPECT_EQ(Find(m, "x6").precision, DotPrecision::kHighest);
}

TEST(HloParser, IotaReplicaGroups) {
  const Module m = MustParse(R"(HloModule iota_groups, replica_count=8
add { a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b) }
ENTRY e {
  x = f32[4]{0} parameter(0)
  r1 = f32[4]{0} all-reduce(x), replica_groups=[2,4]<=[8], to_apply=add
  ROOT r2 = f32[4]{0} all-reduce(r1), replica_groups=[4,2]<=[2,4]T(1,0), to_apply=add
}
)");
  EXPECT_EQ(Find(m, "r1").a().replica_groups,
            (std::vector<std::vector<int64_t>>{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(Find(m, "r2").a().replica_groups,
            (std::vector<std::vector<int64_t>>{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
}

TEST(HloParser, AsyncPairsAndSyntaxSugar) {
  const Module m = MustParse(R"(HloModule async, replica_count=2
add { a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b) }
ENTRY e {
  x = f32[4]{0} parameter(0)
  ars = f32[4]{0} all-reduce-start(x), replica_groups={}, to_apply=add
  ard = f32[4]{0} all-reduce-done(ars)
  a2a-start = ((f32[4]{0}), f32[4]{0}, s32[]) all-to-all-start(ard), replica_groups={{0,1}}, dimensions={0}
  a2a-done = f32[4]{0} all-to-all-done(a2a-start)
  cs = (f32[4]{0}, f32[4]{0}, u32[]) copy-start(a2a-done)
  ROOT cd = f32[4]{0} copy-done(cs)
}
)");
  const Instruction& start = Find(m, "a2a-start");
  EXPECT_EQ(start.opcode, Opcode::kAsyncStart);
  ASSERT_EQ(start.called.size(), 1u);
  const Computation& wrapped = m.computations[static_cast<size_t>(start.called[0])];
  EXPECT_EQ(wrapped.instructions[static_cast<size_t>(wrapped.root)].opcode, Opcode::kAllToAll);
  EXPECT_EQ(Find(m, "a2a-done").opcode, Opcode::kAsyncDone);
}

TEST(HloParser, XlaParserTestSnippetsParse) {
  // Constructs from xla/hlo/parser/hlo_parser_test.cc, restated: a while with a scalar state, an
  // indexed conditional, select-and-scatter on a scalar, a variadic reduce-window, dynamic-slice
  // with a vector of indices, a fusion with output_to_operand_aliasing, custom-call attributes.
  for (const char* text : {
           R"(HloModule while_s32
body (prev: s32[]) -> s32[] {
  one = s32[] constant(1)
  prev = s32[] parameter(0)
  ROOT next = s32[] add(one, prev)
}
cond (prev.1: s32[]) -> pred[] {
  five = s32[] constant(5)
  prev.1 = s32[] parameter(0)
  ROOT gt = pred[] compare(five, prev.1), direction=GT
}
ENTRY main () -> s32[] {
  zero = s32[] constant(0)
  ROOT w = s32[] while(zero), condition=cond, body=body
})",
           R"(HloModule indexed_cond
neg { x = f32[] parameter(0)
  ROOT n = f32[] negate(x) }
ident { y = f32[] parameter(0)
  ROOT c = f32[] copy(y) }
flr { z = f32[] parameter(0)
  ROOT f = f32[] floor(z) }
ENTRY main {
  i = s32[] constant(1)
  a = f32[] constant(56)
  b = f32[] constant(12)
  c = f32[] constant(13)
  ROOT r = f32[] conditional(i, a, b, c), branch_computations={neg, ident, flr}
})",
           R"(HloModule sas_scalar
ge (l: f32[], r: f32[]) -> pred[] {
  l = f32[] parameter(0)
  r = f32[] parameter(1)
  ROOT g = pred[] compare(l, r), direction=GE
}
add (l.1: f32[], r.1: f32[]) -> f32[] {
  l.1 = f32[] parameter(0)
  r.1 = f32[] parameter(1)
  ROOT a = f32[] add(l.1, r.1)
}
ENTRY main () -> f32[] {
  c0 = f32[] constant(42)
  c1 = f32[] constant(1)
  c2 = f32[] constant(2)
  ROOT s = f32[] select-and-scatter(c0, c1, c2), select=ge, scatter=add
})",
           R"(HloModule rw_variadic
pair_add (l1: f32[], l2: f32[], r1: f32[], r2: f32[]) -> (f32[], f32[]) {
  l1 = f32[] parameter(0)
  r1 = f32[] parameter(2)
  s1 = f32[] add(l1, r1)
  l2 = f32[] parameter(1)
  r2 = f32[] parameter(3)
  s2 = f32[] add(l2, r2)
  ROOT t = (f32[], f32[]) tuple(s1, s2)
}
ENTRY main () -> (f32[], f32[]) {
  c = f32[] constant(42)
  d = f32[] constant(1)
  ROOT rw = (f32[], f32[]) reduce-window(c, c, d, d), to_apply=pair_add
})",
           R"(HloModule ds_vector
ENTRY main (p: s32[2,2,258], i: s32[1]) -> s32[2,2,258] {
  p = s32[2,2,258]{2,1,0} parameter(0)
  z = s32[1]{0} constant({0})
  i = s32[1]{0} parameter(1)
  idx = s32[3]{0} concatenate(z, z, i), dimensions={0}
  ROOT ds = s32[2,2,258]{2,1,0} dynamic-slice(p, idx), dynamic_slice_sizes={2,2,258}
})",
           R"(HloModule fusion_alias
fused (p0: (f32[2,2], f32[4]), p1: f32[3]) -> (f32[3], f32[2,2]) {
  p1 = f32[3]{0} parameter(1)
  p0 = (f32[2,2]{1,0}, f32[4]{0}) parameter(0)
  e = f32[2,2]{1,0} get-tuple-element(p0), index=0
  ROOT t = (f32[3]{0}, f32[2,2]{1,0}) tuple(p1, e)
}
ENTRY main (a: (f32[2,2], f32[4]), b: f32[3]) -> (f32[3], f32[2,2]) {
  a = (f32[2,2]{1,0}, f32[4]{0}) parameter(0)
  b = f32[3]{0} parameter(1)
  ROOT f = (f32[3]{0}, f32[2,2]{1,0}) fusion(a, b), kind=kLoop, output_to_operand_aliasing={{0}: (1, {}), {1}: (0, {0})}, calls=fused
})",
           R"(HloModule cc
ENTRY main {
  c = f32[1]{0} constant({12345})
  ROOT cc = f32[1,2,3]{0,2,1} custom-call(c), custom_call_target="foo\"bar", backend_config="opaque", literal=s32[2]{0} {1, 2}, api_version=API_VERSION_STATUS_RETURNING, schedule=SCHEDULE_LATEST, operand_layout_constraints={f32[1]{0}}
})",
       }) {
    SCOPED_TRACE(text);
    Result<Module> m = ParseModule(text);
    EXPECT_TRUE(m.ok()) << m.status().ToString();
  }
}

TEST(HloParser, TorchXlaAndTensorflowStyles) {
  // torch_xla: SyncTensorsGraph.N with xla_args names; TF: %name.N names with _xla attributes.
  const std::string torch =
      R"(HloModule SyncTensorsGraph.12, entry_computation_layout={(f32[2,2]{1,0}, f32[2,2]{1,0})->(f32[2,2]{1,0})}

ENTRY %SyncTensorsGraph.12 (p0.1: f32[2,2], p1.2: f32[2,2]) -> (f32[2,2]) {
  %p1.2 = f32[2,2]{1,0} parameter(1), frontend_attributes={neff_input_names="input1"}
  %p0.1 = f32[2,2]{1,0} parameter(0)
  %dot.3 = f32[2,2]{1,0} dot(f32[2,2]{1,0} %p0.1, f32[2,2]{1,0} %p1.2), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_type="aten__mm" op_name="aten__mm" source_file="/tmp/t.py" source_line=5}
  ROOT %tuple.4 = (f32[2,2]{1,0}) tuple(f32[2,2]{1,0} %dot.3)
}
)";
  const Module t = MustParse(torch);
  EXPECT_EQ(t.entry_computation().parameters, (std::vector<int>{1, 0}));
  const std::string tf =
      R"(HloModule a_inference_f_15__.9, entry_computation_layout={(f32[3]{0})->f32[3]{0}}

ENTRY %a_inference_f_15__.9 (arg0.1: f32[3]) -> f32[3] {
  %arg0.1 = f32[3]{0} parameter(0), parameter_replication={false}, metadata={op_name="XLA_Args"}
  %reshape.2 = f32[3]{0} reshape(f32[3]{0} %arg0.1)
  %constant.3 = f32[] constant(2), metadata={op_type="Mul" op_name="mul"}
  %broadcast.4 = f32[3]{0} broadcast(f32[] %constant.3), dimensions={}, metadata={op_type="Mul" op_name="mul"}
  %multiply.5 = f32[3]{0} multiply(f32[3]{0} %reshape.2, f32[3]{0} %broadcast.4), metadata={op_type="Mul" op_name="mul"}
  %reshape.6 = f32[3]{0} reshape(f32[3]{0} %multiply.5), metadata={op_name="XLA_Retvals"}
  %tuple.7 = (f32[3]{0}) tuple(f32[3]{0} %reshape.6), metadata={op_name="XLA_Retvals"}
  ROOT %get-tuple-element.8 = f32[3]{0} get-tuple-element((f32[3]{0}) %tuple.7), index=0, metadata={op_name="XLA_Retvals"}
}
)";
  EXPECT_EQ(testing::Floats(MustRun(tf, {F32({3}, {1, 2, 3})})), (std::vector<float>{2, 4, 6}));
}

}  // namespace
}  // namespace tpuemu::engine::hlo
