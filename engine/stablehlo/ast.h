// The parsed form of a StableHLO module (parser.h makes it, lower.h turns it into HLO): functions
// of operations with their operands, attributes, regions and result types, the pretty and the
// generic syntax of an op giving the same Op. Attribute names are the generic ones
// (`broadcast_dimensions`, not the pretty `dims`). Types are HLO shapes: tensor<2x3xf32> is
// f32[2,3], i1 is pred, signless iN is sN, tuple<...> a tuple, !stablehlo.token a token.
// Value types; thread-compatible.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/hlo/shape.h"

namespace tpuemu::engine::stablehlo {

// A dense<...> literal as written: a hex blob, or its scalars in row-major order.
struct DenseLiteral {
  struct Element {
    bool is_float = false;  // written with a '.' or exponent
    bool is_hex = false;    // 0x...: the element's bits
    bool is_bool = false;
    bool negative = false;
    uint64_t bits = 0;  // integer magnitude (two's complement when negative), hex bits, 0/1
    double value = 0;   // as a double (floats; integers too)
    std::string_view text;
  };
  std::string hex_blob;  // dense<"0x...">: the raw little-endian bytes
  bool is_blob = false;
  bool complex = false;           // elements come in (real, imag) pairs
  std::vector<Element> elements;  // a splat has one (or one pair)
  std::vector<int64_t> nested;    // the nesting the list was written with ([] levels' sizes)
};

struct AttrField;  // a named attribute: {first: name, second: value}

struct Attr {
  enum class Kind {
    kUnit,  // a name with no value (use_global_device_ids)
    kBool,
    kInt,
    kFloat,
    kString,
    kSymbol,  // @name
    kEnum,    // DEFAULT, #stablehlo<precision DEFAULT>, #stablehlo<comparison_direction LT>
    kArray,   // [a, b], array<i64: 1, 2> (items kInt)
    kDict,    // {a = 1, b}, #stablehlo.gather<...> (text: "stablehlo.gather")
    kDense,   // dense<...> : type
    kType,    // a type written as an attribute value
  };
  Kind kind = Kind::kUnit;
  int64_t i = 0;
  double f = 0;
  std::string text;  // string, symbol, enum word, dict's struct name
  std::vector<Attr> items;
  std::vector<AttrField> fields;
  std::shared_ptr<const DenseLiteral> dense;
  hlo::Shape type;  // `: type` after a value (dense, typed ints), or a kType's type

  const Attr* Field(std::string_view name) const;
};

// A named attribute. A struct of its own rather than std::pair<std::string, Attr>: Attr holds a
// list of them, and a pair of an incomplete Attr does not compile with clang's libstdc++ checks.
struct AttrField {
  AttrField() = default;
  AttrField(std::string name, Attr value) : first(std::move(name)), second(std::move(value)) {}
  std::string first;
  Attr second;
};

// A use of a value: "x" for %x, "x#1" for %x#1 (the names Op::results holds).
struct ValueRef {
  std::string key;
  int line = 0, column = 0;
};

struct Op;

struct BlockArg {
  std::string name;
  hlo::Shape type;
};

// A region's single block (StableHLO regions have one).
struct Region {
  std::vector<BlockArg> args;
  std::vector<Op> ops;
};

struct Op {
  std::string name;                  // "stablehlo.add", "func.call", "check.expect_eq", "chlo.erf"
  std::vector<std::string> results;  // one name per result (%0:2 gives "0#0", "0#1")
  std::vector<ValueRef> operands;
  std::vector<AttrField> attrs;
  std::vector<Region> regions;
  std::vector<hlo::Shape> operand_types;  // when the text gave them
  std::vector<hlo::Shape> result_types;
  int line = 0, column = 0;

  const Attr* Find(std::string_view attr) const;
  std::string Describe() const;  // "stablehlo.add at line 4, column 10"
};

struct FuncArg {
  std::string name;
  hlo::Shape type;
  std::vector<AttrField> attrs;  // mhlo.sharding, mhlo.layout_mode, ...
};

struct Func {
  std::string name;
  bool is_public = true;
  std::vector<FuncArg> args;
  std::vector<hlo::Shape> result_types;
  std::vector<std::vector<AttrField>> result_attrs;  // jax.result_info, ...
  Region body;
  int line = 0, column = 0;
};

struct ModuleAst {
  std::string name;              // module @jit_f; empty when unnamed
  std::vector<AttrField> attrs;  // mhlo.num_partitions, ...
  std::vector<Func> funcs;

  const Func* FindFunc(std::string_view name) const;
};

}  // namespace tpuemu::engine::stablehlo
