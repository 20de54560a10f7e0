// PgStatement: a Statement (db/statement.h) on a PostgreSQL connection: the SQL with its ?N
// parameters rewritten to $N, prepared on the server under a name of its own on first use, run
// with text parameters, its rows read from the whole result.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "db/statement.h"

struct pg_result;

namespace tpuemu::db::postgres {

class PgConnection;

// `sql` with each ?N outside quotes as $N (PostgreSQL's parameter syntax).
std::string ToPostgresParameters(std::string_view sql);
// Which parameter numbers `sql` names: element N-1 is true when ?N occurs.
std::vector<bool> MentionedParameters(std::string_view sql);

class PgStatement final : public Statement {
 public:
  // `connection` outlives the statement (Store drops its statements before closing it).
  PgStatement(PgConnection& connection, std::string_view sql, std::string name);
  ~PgStatement() override;

  Statement& Bind(int index, int64_t value) override;
  Statement& Bind(int index, std::string_view value) override;
  Statement& BindNull(int index) override;
  Statement& BindReal(int index, double value) override;
  using Statement::Bind;

  // The first call runs the statement (preparing it on the server if this connection has not yet);
  // later calls walk the result's rows.
  Result<bool> Step() override;

  bool IsNull(int column) const override;
  int64_t ColumnInt64(int column) const override;
  std::string ColumnText(int column) const override;
  double ColumnReal(int column) const override;

  void Reset() override;
  bool ReadOnly() const override { return read_only_; }
  const char* Sql() const override { return sql_.c_str(); }

 private:
  struct Parameter {
    std::optional<std::string> text;  // nullopt: SQL NULL
    unsigned type = 0;                // a type OID, or 0 to let the server infer it
  };
  Statement& Set(int index, std::optional<std::string> text, unsigned type);
  Status PrepareOnServer();
  Result<bool> Execute();
  const char* Value(int column) const;

  PgConnection& connection_;
  const std::string sql_;         // as written (?N)
  const std::string server_sql_;  // as sent ($N)
  const std::string name_;        // the server-side prepared statement's name
  const bool read_only_;
  const std::vector<bool> mentioned_;  // MentionedParameters(sql_); unbound ones are sent as NULL
  uint64_t prepared_generation_ = 0;   // the connection generation it was prepared in; 0: never
  std::vector<Parameter> parameters_;
  pg_result* result_ = nullptr;  // owned; the executed statement's rows
  int rows_ = 0;
  int row_ = -1;  // the current row; -1 before the first
};

}  // namespace tpuemu::db::postgres
