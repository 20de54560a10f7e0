#include "db/migrations.h"
#include "db/sqlite_error.h"

#include <sqlite3.h>

#include <array>
#include <string>

namespace tpuemu::db {
namespace {

// v1: TPU nodes and long-running operations.
// `seq` (insertion order; listings and page tokens) is the rowid, declared AUTOINCREMENT so SQLite
// never reuses a value, even after the newest row is deleted (the high-water mark lives in
// sqlite_sequence). `name` is the resource key: NOT NULL UNIQUE rather than a TEXT PRIMARY KEY, so
// each insert touches one table b-tree appended in seq order plus two indexes, instead of a
// separate rowid b-tree and a seq index as well (about 4 fewer page writes per create).
constexpr std::string_view kV1 = R"sql(
CREATE TABLE nodes (
  name              TEXT NOT NULL UNIQUE,  -- "projects/p/locations/z/nodes/n"
  project           TEXT NOT NULL,
  zone              TEXT NOT NULL,
  node_id           TEXT NOT NULL,
  uid               TEXT NOT NULL,
  state             TEXT NOT NULL,
  accelerator_type  TEXT NOT NULL,
  tensorcores       INTEGER NOT NULL,
  create_time       TEXT NOT NULL,
  update_time       TEXT NOT NULL,
  resource_json     TEXT NOT NULL,         -- the full Node JSON the service renders (opaque here)
  pending_operation TEXT,                  -- unfinished operation driving a transition, or NULL
  pending_due_ms    INTEGER,               -- unix ms when that transition completes, or NULL
  seq               INTEGER PRIMARY KEY AUTOINCREMENT
);
CREATE INDEX nodes_by_location ON nodes (project, zone, seq);

CREATE TABLE operations (
  name             TEXT NOT NULL UNIQUE,   -- "projects/p/locations/z/operations/operation-..."
  project          TEXT NOT NULL,
  zone             TEXT NOT NULL,
  target           TEXT NOT NULL,          -- the resource the operation acts on
  verb             TEXT NOT NULL,          -- "create", "delete", "start", "stop", ...
  create_time      TEXT NOT NULL,
  end_time         TEXT,
  done             INTEGER NOT NULL DEFAULT 0,
  cancel_requested INTEGER NOT NULL DEFAULT 0,
  error_code       INTEGER,                -- google.rpc.Code when done with an error
  error_message    TEXT,
  response_json    TEXT,                   -- the response Any's JSON when done with success
  seq              INTEGER PRIMARY KEY AUTOINCREMENT
);
CREATE INDEX operations_by_location ON operations (project, zone, seq);
)sql";

// v2: jobs submitted to nodes, their log lines and their per-step metrics. A job keeps its node's
// name as text (no foreign key): jobs outlive a deleted node so their results stay readable.
// Metrics columns are REAL; db/ binds them as decimal text, which REAL affinity stores as numbers.
constexpr std::string_view kV2 = R"sql(
CREATE TABLE jobs (
  seq          INTEGER PRIMARY KEY AUTOINCREMENT,
  name         TEXT NOT NULL UNIQUE,      -- "projects/p/locations/z/nodes/n/jobs/j"
  project      TEXT NOT NULL,
  zone         TEXT NOT NULL,
  node_id      TEXT NOT NULL,
  job_id       TEXT NOT NULL,
  state        TEXT NOT NULL,             -- QUEUED, RUNNING, SUCCEEDED, FAILED, CANCELLED, TIMED_OUT
  priority     INTEGER NOT NULL,
  labels_json  TEXT NOT NULL,
  spec_json    TEXT NOT NULL,
  request_id   TEXT,
  spec_hash    TEXT NOT NULL,
  create_time  TEXT NOT NULL,
  start_time   TEXT,
  end_time     TEXT,
  exit_code    INTEGER,
  reason       TEXT,
  result_json  TEXT,
  attempt      INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX jobs_by_node ON jobs (project, zone, node_id, seq);
CREATE INDEX jobs_by_state ON jobs (state, seq);
CREATE UNIQUE INDEX jobs_by_request ON jobs (project, zone, node_id, request_id)
  WHERE request_id IS NOT NULL;
CREATE TABLE job_logs (
  job     TEXT NOT NULL,
  line_no INTEGER NOT NULL,
  text    TEXT NOT NULL,
  PRIMARY KEY (job, line_no)
) WITHOUT ROWID;
CREATE TABLE job_steps (
  job              TEXT NOT NULL,
  step             INTEGER NOT NULL,
  loss             REAL,
  cycles           INTEGER NOT NULL,
  emulated_seconds REAL NOT NULL,
  mxu_utilization  REAL NOT NULL,
  flops            REAL NOT NULL,
  host_seconds     REAL NOT NULL,
  PRIMARY KEY (job, step)
) WITHOUT ROWID;
)sql";
// v3: observability. `job_programs` records each job's compile (cache hit, compile time, peak HBM,
// bytes moved host<->device per step) as soon as it compiles, so a running job's metrics report
// and its node's utilization do not wait for the result; a trigger drops it with its job.
// `events` is the append-only feed of node and job state changes (seq never reused, like every
// other seq); `utilization_samples` the per-node history. Both are pruned by retention.
constexpr std::string_view kV3 = R"sql(
CREATE TABLE job_programs (
  job                                 TEXT PRIMARY KEY,
  compile_cache_hit                   INTEGER NOT NULL,
  compile_seconds                     REAL NOT NULL,
  compile_end_unix_ns                 INTEGER NOT NULL,
  tensorcores                         INTEGER NOT NULL,
  hbm_peak_bytes_per_tensorcore       INTEGER NOT NULL,
  transfer_to_device_bytes_per_step   INTEGER NOT NULL,
  transfer_from_device_bytes_per_step INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TRIGGER job_programs_follow_jobs AFTER DELETE ON jobs
BEGIN
  DELETE FROM job_programs WHERE job = OLD.name;
END;
CREATE TABLE events (
  seq            INTEGER PRIMARY KEY AUTOINCREMENT,
  project        TEXT NOT NULL,
  time           TEXT NOT NULL,             -- RFC 3339
  time_unix_ms   INTEGER NOT NULL,
  kind           TEXT NOT NULL,             -- "node" | "job"
  resource       TEXT NOT NULL,             -- full resource name
  zone           TEXT NOT NULL,
  state          TEXT NOT NULL,
  previous_state TEXT,                      -- NULL for a new resource
  message        TEXT NOT NULL
);
CREATE INDEX events_by_project ON events (project, seq);
CREATE TABLE utilization_samples (
  node                   TEXT NOT NULL,     -- "projects/p/locations/z/nodes/n"
  time_unix_ms           INTEGER NOT NULL,
  duty_cycle             REAL NOT NULL,
  tensorcore_utilization REAL NOT NULL,
  mxu_utilization        REAL NOT NULL,
  hbm_used_bytes         INTEGER NOT NULL,
  hbm_total_bytes        INTEGER NOT NULL,
  PRIMARY KEY (node, time_unix_ms)
) WITHOUT ROWID;
CREATE INDEX utilization_by_time ON utilization_samples (time_unix_ms);
)sql";
// v4: queued resources and faults. A node made for a queued resource names it: the queued
// resource holds the project quota of all its nodes from its create until its delete, in every
// state (`tensorcores`), and their capacity while it provisions or runs them (`held_tensorcores`,
// taken from its reservation when it has one, else from its zone). `zone_tensorcores` is what a
// standalone node takes from its zone's general capacity (0 once preempted). `request_ids` makes
// creates and deletes that carry a requestId idempotent. `chaos_rules` and `zone_capacity` are the
// faults an operator configured at run time, so they survive a restart like everything else.
constexpr std::string_view kV4 = R"sql(
ALTER TABLE nodes ADD COLUMN queued_resource TEXT;
ALTER TABLE nodes ADD COLUMN zone_tensorcores INTEGER NOT NULL DEFAULT 0;
UPDATE nodes SET zone_tensorcores = tensorcores;
CREATE INDEX nodes_by_queued_resource ON nodes (queued_resource) WHERE queued_resource IS NOT NULL;
CREATE TABLE queued_resources (
  seq               INTEGER PRIMARY KEY AUTOINCREMENT,
  name              TEXT NOT NULL UNIQUE,  -- "projects/p/locations/z/queuedResources/q"
  project           TEXT NOT NULL,
  zone              TEXT NOT NULL,
  queued_resource_id TEXT NOT NULL,
  state             TEXT NOT NULL,         -- CREATING, ACCEPTED, ... as the service spells it
  tensorcores       INTEGER NOT NULL,      -- every node it asks for, held against the project quota
  held_tensorcores  INTEGER NOT NULL,      -- capacity it holds now (zone's, or its reservation's)
  reservation       TEXT,                  -- the reservation it provisions in, or NULL
  create_time       TEXT NOT NULL,
  update_time       TEXT NOT NULL,
  resource_json     TEXT NOT NULL,         -- the service's own form (opaque here)
  pending_operation TEXT,                  -- the create, delete or reset still running, or NULL
  due_ms            INTEGER                -- unix ms of its next timed step (validAfter, ...), or NULL
);
CREATE INDEX queued_resources_by_location ON queued_resources (project, zone, seq);
CREATE TABLE reservations (
  seq            INTEGER PRIMARY KEY AUTOINCREMENT,
  name           TEXT NOT NULL UNIQUE,     -- "projects/p/locations/z/reservations/r"
  project        TEXT NOT NULL,
  zone           TEXT NOT NULL,
  size           INTEGER NOT NULL,
  capacity_units TEXT NOT NULL,            -- CORES | CHIPS
  resource_type  TEXT NOT NULL,            -- accelerator family ("v5litepod"), or "" for any
  create_time    TEXT NOT NULL
);
CREATE INDEX reservations_by_location ON reservations (project, zone, seq);
CREATE TABLE request_ids (
  scope        TEXT NOT NULL,              -- "projects/p/locations/z"
  request_id   TEXT NOT NULL,
  verb         TEXT NOT NULL,
  target       TEXT NOT NULL,
  operation    TEXT NOT NULL,
  time_unix_ms INTEGER NOT NULL,
  PRIMARY KEY (scope, request_id)
) WITHOUT ROWID;
CREATE TABLE chaos_rules (
  seq         INTEGER PRIMARY KEY AUTOINCREMENT,
  id          TEXT NOT NULL UNIQUE,
  rule_json   TEXT NOT NULL,
  create_time TEXT NOT NULL
);
CREATE TABLE zone_capacity (
  zone        TEXT PRIMARY KEY,
  tensorcores INTEGER NOT NULL
) WITHOUT ROWID;
)sql";
// v5: retention (service/retention/). auto_vacuum = INCREMENTAL lets the pruner give the pages
// of deleted rows back (PRAGMA incremental_vacuum) instead of the file only ever growing; on a
// database created before it, it takes effect through one VACUUM. The indexes let the pruner
// find the oldest finished jobs and operations without scanning the tables.
constexpr std::string_view kV5Before = "PRAGMA auto_vacuum = INCREMENTAL; VACUUM;";
constexpr std::string_view kV5 = R"sql(
CREATE INDEX jobs_by_end_time ON jobs (end_time) WHERE end_time IS NOT NULL;
CREATE INDEX operations_by_end_time ON operations (end_time) WHERE done = 1;
)sql";

// v6: a store whose cost follows activity (docs/architecture.md, "Store at scale").
// Utilization history as runs: `utilization_ticks` holds the time of every sampler pass (one row
// per interval for all nodes), `utilization_runs` one row per stretch of identical samples of a
// node (end_unix_ms NULL while the stretch is still open), so an idle node adds no row per
// interval. A run's samples are the ticks in [start_unix_ms, end_unix_ms]. Old samples become
// one-tick runs. Counter tables kept by triggers in the same transaction as the row they count, so
// gauges and quota sums read one row instead of scanning: nodes by (state, accelerator type), jobs
// by state, TensorCores per project (standalone nodes' and queued resources' apart) and per zone
// (nodes' zone_tensorcores and the held_tensorcores of queued resources outside a reservation).
// Indexes so every list query walks an index in seq order from its page token (keyset pages).
constexpr std::string_view kV6 = R"sql(
CREATE TABLE utilization_ticks (time_unix_ms INTEGER PRIMARY KEY);
CREATE TABLE utilization_runs (
  node                   TEXT NOT NULL,
  start_unix_ms          INTEGER NOT NULL,  -- the first tick of the run
  end_unix_ms            INTEGER,           -- no tick after it belongs to the run; NULL = open
  duty_cycle             REAL NOT NULL,
  tensorcore_utilization REAL NOT NULL,
  mxu_utilization        REAL NOT NULL,
  hbm_used_bytes         INTEGER NOT NULL,
  hbm_total_bytes        INTEGER NOT NULL,
  PRIMARY KEY (node, start_unix_ms)
) WITHOUT ROWID;
CREATE INDEX utilization_runs_by_end ON utilization_runs (end_unix_ms)
  WHERE end_unix_ms IS NOT NULL;
INSERT INTO utilization_ticks SELECT DISTINCT time_unix_ms FROM utilization_samples;
INSERT INTO utilization_runs SELECT node, time_unix_ms, time_unix_ms, duty_cycle,
  tensorcore_utilization, mxu_utilization, hbm_used_bytes, hbm_total_bytes FROM utilization_samples;
DROP TABLE utilization_samples;

CREATE TABLE node_state_counts (
  state TEXT NOT NULL, accelerator_type TEXT NOT NULL, n INTEGER NOT NULL,
  PRIMARY KEY (state, accelerator_type)
) WITHOUT ROWID;
CREATE TABLE job_state_counts (state TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE project_tensorcores (
  project TEXT PRIMARY KEY,
  nodes INTEGER NOT NULL,             -- standalone nodes (queued_resource IS NULL)
  queued_resources INTEGER NOT NULL   -- every node each queued resource asks for
) WITHOUT ROWID;
CREATE TABLE zone_tensorcores (
  zone TEXT PRIMARY KEY,
  nodes INTEGER NOT NULL,             -- nodes.zone_tensorcores
  queued_resources INTEGER NOT NULL   -- held_tensorcores outside a reservation
) WITHOUT ROWID;
INSERT INTO node_state_counts SELECT state, accelerator_type, COUNT(*) FROM nodes GROUP BY 1, 2;
INSERT INTO job_state_counts SELECT state, COUNT(*) FROM jobs GROUP BY 1;
INSERT INTO project_tensorcores SELECT project,
  SUM(CASE WHEN queued_resource IS NULL THEN tensorcores ELSE 0 END), 0 FROM nodes GROUP BY 1;
INSERT INTO project_tensorcores SELECT project, 0, SUM(tensorcores) FROM queued_resources
  GROUP BY 1 ON CONFLICT (project) DO UPDATE SET queued_resources = excluded.queued_resources;
INSERT INTO zone_tensorcores SELECT zone, SUM(zone_tensorcores), 0 FROM nodes GROUP BY 1;
INSERT INTO zone_tensorcores SELECT zone, 0,
  SUM(CASE WHEN reservation IS NULL THEN held_tensorcores ELSE 0 END) FROM queued_resources
  GROUP BY 1 ON CONFLICT (zone) DO UPDATE SET queued_resources = excluded.queued_resources;

CREATE TRIGGER nodes_count_insert AFTER INSERT ON nodes BEGIN
  INSERT INTO node_state_counts VALUES (NEW.state, NEW.accelerator_type, 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
  INSERT INTO project_tensorcores VALUES (NEW.project,
    CASE WHEN NEW.queued_resource IS NULL THEN NEW.tensorcores ELSE 0 END, 0)
    ON CONFLICT DO UPDATE SET nodes = nodes + excluded.nodes;
  INSERT INTO zone_tensorcores VALUES (NEW.zone, NEW.zone_tensorcores, 0)
    ON CONFLICT DO UPDATE SET nodes = nodes + excluded.nodes;
END;
CREATE TRIGGER nodes_count_delete AFTER DELETE ON nodes BEGIN
  UPDATE node_state_counts SET n = n - 1
    WHERE state = OLD.state AND accelerator_type = OLD.accelerator_type;
  UPDATE project_tensorcores
    SET nodes = nodes - CASE WHEN OLD.queued_resource IS NULL THEN OLD.tensorcores ELSE 0 END
    WHERE project = OLD.project;
  UPDATE zone_tensorcores SET nodes = nodes - OLD.zone_tensorcores WHERE zone = OLD.zone;
END;
CREATE TRIGGER nodes_count_update AFTER UPDATE ON nodes
  WHEN OLD.state IS NOT NEW.state OR OLD.accelerator_type IS NOT NEW.accelerator_type
    OR OLD.project IS NOT NEW.project OR OLD.zone IS NOT NEW.zone
    OR OLD.tensorcores IS NOT NEW.tensorcores OR OLD.zone_tensorcores IS NOT NEW.zone_tensorcores
    OR OLD.queued_resource IS NOT NEW.queued_resource
BEGIN
  UPDATE node_state_counts SET n = n - 1
    WHERE state = OLD.state AND accelerator_type = OLD.accelerator_type;
  INSERT INTO node_state_counts VALUES (NEW.state, NEW.accelerator_type, 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
  UPDATE project_tensorcores
    SET nodes = nodes - CASE WHEN OLD.queued_resource IS NULL THEN OLD.tensorcores ELSE 0 END
    WHERE project = OLD.project;
  INSERT INTO project_tensorcores VALUES (NEW.project,
    CASE WHEN NEW.queued_resource IS NULL THEN NEW.tensorcores ELSE 0 END, 0)
    ON CONFLICT DO UPDATE SET nodes = nodes + excluded.nodes;
  UPDATE zone_tensorcores SET nodes = nodes - OLD.zone_tensorcores WHERE zone = OLD.zone;
  INSERT INTO zone_tensorcores VALUES (NEW.zone, NEW.zone_tensorcores, 0)
    ON CONFLICT DO UPDATE SET nodes = nodes + excluded.nodes;
END;

CREATE TRIGGER queued_resources_count_insert AFTER INSERT ON queued_resources BEGIN
  INSERT INTO project_tensorcores VALUES (NEW.project, 0, NEW.tensorcores)
    ON CONFLICT DO UPDATE SET queued_resources = queued_resources + excluded.queued_resources;
  INSERT INTO zone_tensorcores VALUES (NEW.zone, 0,
    CASE WHEN NEW.reservation IS NULL THEN NEW.held_tensorcores ELSE 0 END)
    ON CONFLICT DO UPDATE SET queued_resources = queued_resources + excluded.queued_resources;
END;
CREATE TRIGGER queued_resources_count_delete AFTER DELETE ON queued_resources BEGIN
  UPDATE project_tensorcores SET queued_resources = queued_resources - OLD.tensorcores
    WHERE project = OLD.project;
  UPDATE zone_tensorcores SET queued_resources = queued_resources -
    CASE WHEN OLD.reservation IS NULL THEN OLD.held_tensorcores ELSE 0 END WHERE zone = OLD.zone;
END;
CREATE TRIGGER queued_resources_count_update AFTER UPDATE ON queued_resources
  WHEN OLD.project IS NOT NEW.project OR OLD.zone IS NOT NEW.zone
    OR OLD.tensorcores IS NOT NEW.tensorcores OR OLD.held_tensorcores IS NOT NEW.held_tensorcores
    OR OLD.reservation IS NOT NEW.reservation
BEGIN
  UPDATE project_tensorcores SET queued_resources = queued_resources - OLD.tensorcores
    WHERE project = OLD.project;
  INSERT INTO project_tensorcores VALUES (NEW.project, 0, NEW.tensorcores)
    ON CONFLICT DO UPDATE SET queued_resources = queued_resources + excluded.queued_resources;
  UPDATE zone_tensorcores SET queued_resources = queued_resources -
    CASE WHEN OLD.reservation IS NULL THEN OLD.held_tensorcores ELSE 0 END WHERE zone = OLD.zone;
  INSERT INTO zone_tensorcores VALUES (NEW.zone, 0,
    CASE WHEN NEW.reservation IS NULL THEN NEW.held_tensorcores ELSE 0 END)
    ON CONFLICT DO UPDATE SET queued_resources = queued_resources + excluded.queued_resources;
END;

CREATE TRIGGER jobs_count_insert AFTER INSERT ON jobs BEGIN
  INSERT INTO job_state_counts VALUES (NEW.state, 1) ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER jobs_count_delete AFTER DELETE ON jobs BEGIN
  UPDATE job_state_counts SET n = n - 1 WHERE state = OLD.state;
END;
CREATE TRIGGER jobs_count_update AFTER UPDATE OF state ON jobs WHEN OLD.state IS NOT NEW.state
BEGIN
  UPDATE job_state_counts SET n = n - 1 WHERE state = OLD.state;
  INSERT INTO job_state_counts VALUES (NEW.state, 1) ON CONFLICT DO UPDATE SET n = n + 1;
END;

CREATE INDEX nodes_by_project ON nodes (project, seq);
CREATE INDEX nodes_pending ON nodes (pending_due_ms, seq) WHERE pending_operation IS NOT NULL;
CREATE INDEX operations_by_project ON operations (project, seq);
CREATE INDEX queued_resources_by_project ON queued_resources (project, seq);
CREATE INDEX queued_resources_by_zone ON queued_resources (zone, seq);
CREATE INDEX queued_resources_by_reservation ON queued_resources (reservation, seq)
  WHERE reservation IS NOT NULL;
CREATE INDEX jobs_by_location ON jobs (project, zone, seq);
CREATE INDEX jobs_by_project ON jobs (project, seq);
)sql";
// v7: a job's maxRetries (how often a job a fault interrupted runs again), next to its attempt.
constexpr std::string_view kV7 = R"sql(
ALTER TABLE jobs ADD COLUMN max_retries INTEGER NOT NULL DEFAULT 0;
)sql";
// v8: replicas (several tpuemud processes on one PostgreSQL database; SQLite has one): the live
// replicas with their heartbeats, the replica that drives each node's timers (nodes.owner) and
// the one that queues or runs each job (jobs.owner), and at most one RUNNING job per node, which
// the database itself enforces.
constexpr std::string_view kV8 = R"sql(
CREATE TABLE replicas (
  id           TEXT PRIMARY KEY,           -- --replica-id, default host:port
  address      TEXT NOT NULL,              -- where it serves HTTP
  started_ms   INTEGER NOT NULL,           -- unix ms, the database's clock
  heartbeat_ms INTEGER NOT NULL            -- unix ms of its last heartbeat, the database's clock
);
ALTER TABLE nodes ADD COLUMN owner TEXT;
ALTER TABLE jobs ADD COLUMN owner TEXT;
CREATE INDEX nodes_by_owner ON nodes (owner);
CREATE INDEX jobs_active_by_owner ON jobs (owner) WHERE state IN ('QUEUED', 'RUNNING');
CREATE UNIQUE INDEX jobs_one_running_per_node ON jobs (project, zone, node_id)
  WHERE state = 'RUNNING';
)sql";
// v9: Compute Engine's project-wide metadata (commonInstanceMetadata: ssh-keys, enable-oslogin,
// any key), which gcloud's ssh reads and every TPU VM worker's metadata server serves.
constexpr std::string_view kV9 = R"sql(
CREATE TABLE project_metadata (
  project     TEXT PRIMARY KEY,
  fingerprint TEXT NOT NULL,
  items_json  TEXT NOT NULL              -- [{"key", "value"}], in the order set
) WITHOUT ROWID;
)sql";
// v10: a node's next queued job (JobRepository::NextQueuedOnNode, each claim) from an index of the
// queued jobs alone; jobs_by_node made every claim walk the node's whole job history (issue 44).
constexpr std::string_view kV10 = R"sql(
CREATE INDEX jobs_queued_on_node ON jobs (project, zone, node_id, priority DESC, seq)
  WHERE state = 'QUEUED';
)sql";
constexpr std::array kMigrations = {
    Migration{1, kV1},
    Migration{2, kV2},
    Migration{3, kV3},
    Migration{4, kV4},
    Migration{5, kV5, kV5Before},
    Migration{6, kV6},
    Migration{7, kV7},
    Migration{8, kV8},
    Migration{9, kV9},
    Migration{10, kV10},
};

Result<int> UserVersion(sqlite3* db) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &stmt, nullptr);
  if (rc != SQLITE_OK) return SqliteError(db, rc, "read user_version");
  rc = sqlite3_step(stmt);
  int version = rc == SQLITE_ROW ? sqlite3_column_int(stmt, 0) : 0;
  sqlite3_finalize(stmt);
  if (rc != SQLITE_ROW) return SqliteError(db, rc, "read user_version");
  return version;
}

Status Exec(sqlite3* db, const std::string& sql, std::string_view context) {
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);
  return SqliteError(db, rc, context);
}

Status NewerSchema(int found, int latest) {
  return Status::DataLoss("database schema version " + std::to_string(found) +
                          " is newer than this tpuemud (" + std::to_string(latest) + ")");
}

// One migration and its user_version bump, atomically. The version is re-read under the write
// lock so two processes opening a fresh file at once do not both apply it.
Status ApplyOne(sqlite3* db, const Migration& m, int latest) {
  if (!m.before.empty()) {
    TPUEMU_RETURN_IF_ERROR(Exec(db, std::string(m.before),
                                "before migration to schema version " + std::to_string(m.version)));
  }
  TPUEMU_RETURN_IF_ERROR(Exec(db, "BEGIN IMMEDIATE", "begin migration"));
  const std::string context = "migration to schema version " + std::to_string(m.version);
  Status status;
  Result<int> current = UserVersion(db);
  if (!current.ok()) {
    status = current.status();
  } else if (*current > latest) {
    status = NewerSchema(*current, latest);
  } else if (*current < m.version) {
    status = Exec(db, std::string(m.sql), context);
    if (status.ok()) {
      status = Exec(db, "PRAGMA user_version = " + std::to_string(m.version), context);
    }
  }
  if (status.ok()) status = Exec(db, "COMMIT", context);
  if (!status.ok()) sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
  return status;
}

}  // namespace

std::span<const Migration> Migrations() { return kMigrations; }

int LatestSchemaVersion() { return kMigrations.back().version; }

Status Migrate(sqlite3* db, std::span<const Migration> migrations) {
  const int latest = migrations.empty() ? 0 : migrations.back().version;
  for (size_t i = 0; i < migrations.size(); ++i) {
    if (migrations[i].version != static_cast<int>(i) + 1) {
      return Status::Internal("migration list out of order at version " +
                              std::to_string(migrations[i].version));
    }
  }
  Result<int> current = UserVersion(db);
  if (!current.ok()) return current.status();
  if (*current > latest) return NewerSchema(*current, latest);
  for (const Migration& m : migrations) {
    if (m.version <= *current) continue;
    TPUEMU_RETURN_IF_ERROR(ApplyOne(db, m, latest));
  }
  return Status::Ok();
}

}  // namespace tpuemu::db
