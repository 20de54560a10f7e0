// cli/output_format: --format parsing, projections, and the json/yaml/table/value renderers.
#include "cli/tpuctl/output_format.h"

#include <gtest/gtest.h>

namespace tpuemu::cli {
namespace {

using nlohmann::json;

const json kNode = json::parse(R"({
  "name": "projects/p/locations/us-central2-b/nodes/my-tpu",
  "acceleratorType": "v4-8",
  "acceleratorConfig": {"type": "V4", "topology": "2x2x1"},
  "state": "READY", "id": "0123", "createTime": "2024-04-01T12:34:56Z",
  "labels": {"env": "dev", "team": "ml"}, "tags": ["a", "b"],
  "networkEndpoints": [{"ipAddress": "10.0.0.2", "port": 8470}],
  "schedulingConfig": {}, "shielded": false, "description": "it's: here"})");

TEST(OutputFormatTest, ParsesEveryKind) {
  EXPECT_EQ(ParseFormat("")->kind, OutputFormat::kDefault);
  EXPECT_EQ(ParseFormat("json")->kind, OutputFormat::kJson);
  EXPECT_EQ(ParseFormat("yaml")->kind, OutputFormat::kYaml);
  EXPECT_EQ(ParseFormat("none")->kind, OutputFormat::kNone);
  EXPECT_EQ(ParseFormat("table")->kind, OutputFormat::kTable);
  Result<OutputFormat> value = ParseFormat("value(name.basename(), state)");
  ASSERT_TRUE(value.ok()) << value.status().ToString();
  EXPECT_EQ(value->kind, OutputFormat::kValue);
  ASSERT_EQ(value->columns.size(), 2u);
  EXPECT_EQ(value->columns[0].path, "name");
  EXPECT_EQ(value->columns[0].label, "NAME");
  EXPECT_EQ(value->columns[1].path, "state");
  Result<OutputFormat> table = ParseFormat("table(name.segment(-3):label=ZONE,acceleratorType)");
  ASSERT_TRUE(table.ok());
  EXPECT_EQ(table->columns[0].label, "ZONE");
  EXPECT_EQ(table->columns[1].label, "ACCELERATOR_TYPE");
}

TEST(OutputFormatTest, RejectsBadFormatsNamingThePart) {
  for (const char* bad : {"xml", "value", "value()", "table(name", "json(name)",
                          "value(name.nope())", "value(name.segment(x))", "table(a:color=red)"}) {
    Result<OutputFormat> f = ParseFormat(bad);
    EXPECT_FALSE(f.ok()) << bad;
    if (!f.ok()) {
      EXPECT_EQ(f.status().code(), StatusCode::kInvalidArgument);
      EXPECT_NE(f.status().message().find("--format"), std::string::npos) << bad;
    }
  }
}

TEST(OutputFormatTest, CellsApplyProjections) {
  auto cell = [](const std::string& projection) {
    return Cell(kNode, ParseColumns(projection)->at(0));
  };
  EXPECT_EQ(cell("name.basename()"), "my-tpu");
  EXPECT_EQ(cell("name.segment(-3)"), "us-central2-b");
  EXPECT_EQ(cell("name.segment(1)"), "p");
  EXPECT_EQ(cell("name.segment(40)"), "");
  EXPECT_EQ(cell("acceleratorConfig.topology"), "2x2x1");
  EXPECT_EQ(cell("labels.team"), "ml");
  EXPECT_EQ(cell("labels"), "env=dev;team=ml");
  EXPECT_EQ(cell("tags"), "a;b");
  EXPECT_EQ(cell("networkEndpoints[0].port"), "8470");
  EXPECT_EQ(cell("networkEndpoints[-1].ipAddress"), "10.0.0.2");
  EXPECT_EQ(cell("networkEndpoints[3].ipAddress"), "");
  EXPECT_EQ(cell("shielded"), "False");
  EXPECT_EQ(cell("missing.field"), "");
}

TEST(OutputFormatTest, TableAlignsColumnsUnderHeadings) {
  json items =
      json::array({kNode, {{"name", "projects/p/locations/z/nodes/b"}, {"state", "CREATING"}}});
  std::string out =
      RenderList(*ParseFormat(""), items,
                 ParseColumns("name.basename():label=NAME,state:label=STATUS").value());
  EXPECT_EQ(out,
            "NAME    STATUS\n"
            "my-tpu  READY\n"
            "b       CREATING\n");
  EXPECT_EQ(RenderList(*ParseFormat("table"), json::array(), ParseColumns("name").value()), "");
}

TEST(OutputFormatTest, ValueIsTabSeparatedWithoutHeading) {
  json items = json::array({kNode, kNode});
  EXPECT_EQ(RenderList(*ParseFormat("value(name.basename(),state,labels.env)"), items, {}),
            "my-tpu\tREADY\tdev\nmy-tpu\tREADY\tdev\n");
}

TEST(OutputFormatTest, JsonRoundTrips) {
  std::string out = RenderOne(*ParseFormat("json"), kNode, {});
  EXPECT_EQ(json::parse(out), kNode);
  std::string list = RenderList(*ParseFormat("json"), json::array({kNode}), {});
  EXPECT_EQ(json::parse(list), json::array({kNode}));
}

TEST(OutputFormatTest, YamlIsGcloudStyleAndQuotesAmbiguousStrings) {
  std::string y = ToYaml(kNode);
  EXPECT_NE(y.find("acceleratorConfig:\n  topology: 2x2x1\n  type: V4\n"), std::string::npos) << y;
  EXPECT_NE(y.find("id: '0123'\n"), std::string::npos) << y;  // numeric string
  EXPECT_NE(y.find("createTime: '2024-04-01T12:34:56Z'\n"), std::string::npos) << y;  // date
  EXPECT_NE(y.find("description: 'it''s: here'\n"), std::string::npos) << y;
  EXPECT_NE(y.find("networkEndpoints:\n- ipAddress: 10.0.0.2\n  port: 8470\n"), std::string::npos)
      << y;
  EXPECT_NE(y.find("schedulingConfig: {}\n"), std::string::npos) << y;
  EXPECT_NE(y.find("shielded: false\n"), std::string::npos) << y;
  EXPECT_NE(y.find("tags:\n- a\n- b\n"), std::string::npos) << y;
  EXPECT_EQ(ToYaml(json::object()), "{}\n");
  // A list prints one document per item.
  std::string docs = RenderList(*ParseFormat("yaml"), json::array({{{"a", 1}}, {{"a", 2}}}), {});
  EXPECT_EQ(docs, "a: 1\n---\na: 2\n");
  EXPECT_EQ(ToYaml(json{{"m", {{"k", {1, 2}}}}}), "m:\n  k:\n  - 1\n  - 2\n");
}

TEST(OutputFormatTest, NoneAndDefaults) {
  EXPECT_EQ(RenderOne(*ParseFormat("none"), kNode, {}), "");
  EXPECT_EQ(RenderOne(*ParseFormat(""), kNode, {}), ToYaml(kNode));  // describe: yaml
  EXPECT_EQ(RenderOne(*ParseFormat("value(state)"), kNode, {}), "READY\n");
}

}  // namespace
}  // namespace tpuemu::cli
