// Statement: one prepared SQL statement of a Store's backend (SQLite or PostgreSQL), with typed
// Bind/Column helpers.
//
// Store keeps one Statement per distinct SQL text and hands it out through Txn::Prepare, which
// resets it and clears its bindings first, so callers always start from a fresh statement. A
// Statement is not thread-safe on its own: it belongs to its Store's connection and is only used
// while that Store's connection lease is held (i.e. inside Store::Transaction / Store::Read).
//
// SQL is written once for both backends: parameters are ?1, ?2 ... (1-based; the PostgreSQL
// backend sends them as $1, $2 ...), column indexes are 0-based, and only syntax both accept is
// used (docs/architecture.md "Stores").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace tpuemu::db {

class Statement {
 public:
  Statement() = default;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  virtual ~Statement() = default;

  // Binding never fails for a valid index and a live statement; a failure is reported by Step().
  virtual Statement& Bind(int index, int64_t value) = 0;
  virtual Statement& Bind(int index, std::string_view value) = 0;  // copied
  virtual Statement& BindNull(int index) = 0;
  // REAL / DOUBLE PRECISION columns. SQLite gets decimal text with 17 significant digits (which
  // round-trips a double exactly and REAL affinity stores as a number); PostgreSQL a float8.
  virtual Statement& BindReal(int index, double value) = 0;
  Statement& Bind(int index, int value) { return Bind(index, static_cast<int64_t>(value)); }
  Statement& Bind(int index, bool value) { return Bind(index, static_cast<int64_t>(value)); }
  Statement& Bind(int index, const char* value) { return Bind(index, std::string_view(value)); }
  Statement& Bind(int index, const std::string& value) {
    return Bind(index, std::string_view(value));
  }
  template <typename T>
  Statement& Bind(int index, const std::optional<T>& value) {
    return value.has_value() ? Bind(index, *value) : BindNull(index);
  }

  // Advances: true when a row is available, false when the statement is done, or the error
  // (translated to a Status, e.g. kAlreadyExists for a duplicate primary key).
  virtual Result<bool> Step() = 0;
  // Steps a statement that returns no rows (INSERT/UPDATE/DELETE/DDL) to completion.
  Status Run();

  // Column readers for the current row (valid only after Step() returned true).
  virtual bool IsNull(int column) const = 0;
  virtual int64_t ColumnInt64(int column) const = 0;  // 0 for NULL
  virtual std::string ColumnText(int column) const = 0;
  virtual double ColumnReal(int column) const = 0;  // 0 for NULL
  std::optional<int64_t> ColumnOptionalInt64(int column) const;
  std::optional<std::string> ColumnOptionalText(int column) const;

  // Ends the current execution (releasing any read snapshot it holds) and clears bindings.
  virtual void Reset() = 0;
  // Whether the statement only reads (Store::Read refuses the others).
  virtual bool ReadOnly() const = 0;
  virtual const char* Sql() const = 0;
};

}  // namespace tpuemu::db
