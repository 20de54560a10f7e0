// The payloads of the change feed's notifications (db/change_feed.h), typed: one struct and one
// parse function per channel, beside the PostgreSQL triggers that write them
// (db/postgres/migrations.cpp, v8), so the format is known in one place and consumers dispatch on
// fields instead of splitting text. Each payload is words separated by single spaces; its last
// word may be empty (a NULL owner, a write that named no replica) and runs to the payload's end.
//
// Errors: INVALID_ARGUMENT naming the channel for a payload that lacks a field the trigger always
// writes (or, for events, whose seq is not an integer).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace tpuemu::db {

// The channels the triggers notify on (plain lowercase identifiers, as OpenChangeFeed requires).
inline constexpr char kEventsChannel[] = "tpuemu_events";
inline constexpr char kJobsChannel[] = "tpuemu_jobs";
inline constexpr char kNodesChannel[] = "tpuemu_nodes";
inline constexpr char kSettingsChannel[] = "tpuemu_settings";

// tpuemu_events, "<project> <seq>": an event row was inserted.
struct EventChange {
  std::string project;
  int64_t seq = 0;
};

// tpuemu_jobs, "<name> <state> <owner>": a job was inserted, or its state or owner changed.
struct JobChange {
  std::string name;
  std::string state;  // as stored (JOB state names)
  std::string owner;  // the replica that drives the job; empty for none
};

// tpuemu_nodes, "<name> <state> <owner>": a node was inserted or updated, or (state "DELETED")
// deleted.
inline constexpr char kDeletedNodeState[] = "DELETED";
struct NodeChange {
  std::string name;   // "projects/P/locations/Z/nodes/N"
  std::string state;  // as stored, or kDeletedNodeState
  std::string owner;  // the replica that drives the node; empty for none
  // The parts of `name` when it has that form (the API's node resource name); all empty otherwise.
  std::string project;
  std::string zone;
  std::string node_id;

  bool deleted() const { return state == kDeletedNodeState; }
  bool has_key() const { return !node_id.empty(); }
};

// tpuemu_settings: "<table> <replica>" when a statement changed chaos_rules or zone_capacity
// (replica: the writer's tpuemu.replica setting, may be empty), or "reset <replica>" when a
// replica wiped the store (POST /_emulator/reset; SettingsResetPayload).
struct SettingsChange {
  bool reset = false;
  std::string table;    // empty for a reset
  std::string replica;  // the replica that wrote it
};

Result<EventChange> ParseEventChange(std::string_view payload);
Result<JobChange> ParseJobChange(std::string_view payload);
Result<NodeChange> ParseNodeChange(std::string_view payload);
Result<SettingsChange> ParseSettingsChange(std::string_view payload);

// What a replica sends on kSettingsChannel after it wiped the store.
std::string SettingsResetPayload(std::string_view replica);

}  // namespace tpuemu::db
