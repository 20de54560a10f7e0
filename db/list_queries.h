// The FROM/WHERE/ORDER part of every query that lists rows by a filter, shared by the
// repositories (which put their column lists in front) and tests/db/list_plans_test.cpp (which
// checks with EXPLAIN QUERY PLAN that each one walks an index in seq order: no full SCAN of its
// table, no sort). Pages are keyset pages: `seq > ?` from the page token, `LIMIT` the page size,
// so a page costs the same wherever it starts. Header-only: string literals and one list.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

// nodes (nodes_by_project, nodes_by_location, nodes_by_queued_resource, nodes_pending)
#define TPUEMU_NODES_IN_PROJECT " FROM nodes WHERE project = ?1 AND seq > ?3 ORDER BY seq LIMIT ?4"
#define TPUEMU_NODES_IN_LOCATION \
  " FROM nodes WHERE project = ?1 AND zone = ?2 AND seq > ?3 ORDER BY seq LIMIT ?4"
#define TPUEMU_NODES_OF_QUEUED_RESOURCE " FROM nodes WHERE queued_resource = ?1 ORDER BY seq"
#define TPUEMU_NODES_PENDING \
  " FROM nodes WHERE pending_operation IS NOT NULL ORDER BY pending_due_ms, seq"
// operations (operations_by_project, operations_by_location)
#define TPUEMU_OPERATIONS_IN_PROJECT \
  " FROM operations WHERE project = ?1 AND seq > ?3 ORDER BY seq LIMIT ?4"
#define TPUEMU_OPERATIONS_IN_LOCATION \
  " FROM operations WHERE project = ?1 AND zone = ?2 AND seq > ?3 ORDER BY seq LIMIT ?4"
// queued resources (queued_resources_by_project, _by_location, _by_zone, _by_reservation)
#define TPUEMU_QUEUED_RESOURCES_IN_PROJECT \
  " FROM queued_resources WHERE project = ?1 AND seq > ?3 ORDER BY seq LIMIT ?4"
#define TPUEMU_QUEUED_RESOURCES_IN_LOCATION \
  " FROM queued_resources WHERE project = ?1 AND zone = ?2 AND seq > ?3 ORDER BY seq LIMIT ?4"
#define TPUEMU_QUEUED_RESOURCES_IN_ZONE " FROM queued_resources WHERE zone = ?1 ORDER BY seq"
#define TPUEMU_QUEUED_RESOURCES_IN_RESERVATION \
  " FROM queued_resources WHERE reservation = ?1 ORDER BY seq"
// reservations (reservations_by_location)
#define TPUEMU_RESERVATIONS_IN_LOCATION \
  " FROM reservations WHERE project = ?1 AND zone = ?2 ORDER BY seq"

namespace tpuemu::db {

// The LIMIT bound for "no limit": SQLite reads LIMIT -1 so, PostgreSQL refuses a negative LIMIT.
inline constexpr int64_t kNoLimit = INT64_MAX;

// Every filtered list above (jobs build theirs from the filters set: JobRepository::ListSql).
inline constexpr std::array<std::string_view, 11> kFilteredListQueries = {
    TPUEMU_NODES_IN_PROJECT,
    TPUEMU_NODES_IN_LOCATION,
    TPUEMU_NODES_OF_QUEUED_RESOURCE,
    TPUEMU_NODES_PENDING,
    TPUEMU_OPERATIONS_IN_PROJECT,
    TPUEMU_OPERATIONS_IN_LOCATION,
    TPUEMU_QUEUED_RESOURCES_IN_PROJECT,
    TPUEMU_QUEUED_RESOURCES_IN_LOCATION,
    TPUEMU_QUEUED_RESOURCES_IN_ZONE,
    TPUEMU_QUEUED_RESOURCES_IN_RESERVATION,
    TPUEMU_RESERVATIONS_IN_LOCATION,
};

}  // namespace tpuemu::db
