// The statement plumbing every repository repeats, written once: preparing a statement and
// returning the error when that fails (TPUEMU_PREPARE_OR_RETURN), and stepping an
// INSERT ... RETURNING seq to completion (InsertReturningSeq). For db/ .cpp files only: keeping it
// out of db/store.h and db/statement.h spares the layers above a rebuild when it changes.
#pragma once

#include <cstdint>
#include <string_view>

#include "base/status.h"
#include "db/statement.h"

// Declares `Statement& name`, the statement `prepared` holds — a Result<Statement*> (e.g.
// txn.Prepare(sql)) or a Result<std::unique_ptr<Statement>> (a connection's own Prepare; the
// statement then lives until the end of the enclosing scope) — or returns its error from the
// enclosing function (which returns a Status or a Result):
//   TPUEMU_PREPARE_OR_RETURN(s, txn.Prepare("DELETE FROM nodes WHERE name = ?1"));
//   s.Bind(1, name);
#define TPUEMU_PREPARE_OR_RETURN(name, prepared)                \
  auto name##_prepared_ = (prepared);                           \
  if (!name##_prepared_.ok()) return name##_prepared_.status(); \
  ::tpuemu::db::Statement& name = **name##_prepared_

namespace tpuemu::db {

// Steps `insert`, an INSERT ... RETURNING seq with its parameters bound, to completion and returns
// the new row's seq.
// Errors: ALREADY_EXISTS "<kind> '<name>' already exists" for a taken key when `kind` is given
// (else the statement's own ALREADY_EXISTS), the statement's other errors as they are, and
// INTERNAL `no_row` when the insert returned no row.
Result<int64_t> InsertReturningSeq(Statement& insert, std::string_view kind, std::string_view name,
                                   std::string_view no_row = "insert: RETURNING produced no row");

}  // namespace tpuemu::db
