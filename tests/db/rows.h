// Row builders shared by the db tests.
#pragma once

#include <string>

#include "db/node_repository.h"
#include "db/operation_repository.h"

namespace tpuemu::db::testing {

inline NodeRow MakeNode(const std::string& project, const std::string& zone, const std::string& id,
                        int64_t tensorcores = 8) {
  NodeRow row;
  row.name = "projects/" + project + "/locations/" + zone + "/nodes/" + id;
  row.project = project;
  row.zone = zone;
  row.node_id = id;
  row.uid = "uid-" + id;
  row.state = "CREATING";
  row.accelerator_type = "v4-8";
  row.tensorcores = tensorcores;
  row.zone_tensorcores = tensorcores;  // a standalone node holds its zone capacity
  row.create_time = "2025-01-01T00:00:00Z";
  row.update_time = "2025-01-01T00:00:00Z";
  row.resource_json = R"({"name":")" + row.name + R"("})";
  return row;
}

inline OperationRow MakeOperation(const std::string& project, const std::string& zone,
                                  const std::string& id, const std::string& target = "t") {
  OperationRow row;
  row.name = "projects/" + project + "/locations/" + zone + "/operations/" + id;
  row.project = project;
  row.zone = zone;
  row.target = target;
  row.verb = "create";
  row.create_time = "2025-01-01T00:00:00Z";
  return row;
}

}  // namespace tpuemu::db::testing
