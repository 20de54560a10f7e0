#include "db/postgres/pg_statement.h"

#include <libpq-fe.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "db/postgres/pg_connection.h"
#include "db/postgres/pg_error.h"

namespace tpuemu::db::postgres {
namespace {

// Type OIDs (PostgreSQL's pg_type.dat): parameters of these C++ types are sent typed, so that
// contexts that give no type (`?1 IS NULL`, arithmetic on two parameters) still resolve. Text is
// sent untyped, like a quoted literal, so it can fill a column of any type.
constexpr unsigned kInt8Oid = 20;
constexpr unsigned kFloat8Oid = 701;
constexpr unsigned kTextOid = 25;

// Whether `sql` only reads: its first keyword is SELECT (or VALUES), or it is a WITH query that
// never names a writing verb. Store::Read refuses the others, as sqlite3_stmt_readonly does.
bool IsReadOnly(std::string_view sql) {
  std::string upper;
  for (char c : sql) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  size_t start = upper.find_first_not_of(" \t\r\n(");
  if (start == std::string::npos) return false;
  std::string_view rest = std::string_view(upper).substr(start);
  if (rest.starts_with("SELECT") || rest.starts_with("VALUES")) return true;
  if (!rest.starts_with("WITH")) return false;
  for (const char* verb : {"INSERT", "UPDATE", "DELETE"}) {
    if (upper.find(verb) != std::string::npos) return false;
  }
  return true;
}

}  // namespace

std::vector<bool> MentionedParameters(std::string_view sql) {
  std::vector<bool> mentioned;
  const std::string server = ToPostgresParameters(sql);
  for (size_t i = server.find('$'); i != std::string::npos; i = server.find('$', i + 1)) {
    const int n = std::atoi(server.c_str() + i + 1);
    if (n < 1) continue;
    if (mentioned.size() < static_cast<size_t>(n)) mentioned.resize(n, false);
    mentioned[n - 1] = true;
  }
  return mentioned;
}

std::string ToPostgresParameters(std::string_view sql) {
  std::string out;
  out.reserve(sql.size());
  char quote = 0;  // the quote character we are inside, or 0
  for (size_t i = 0; i < sql.size(); ++i) {
    const char c = sql[i];
    if (quote != 0) {
      if (c == quote) quote = 0;  // a doubled quote closes and reopens: same result
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '?' && i + 1 < sql.size() &&
               std::isdigit(static_cast<unsigned char>(sql[i + 1]))) {
      out += '$';
      continue;
    }
    out += c;
  }
  return out;
}

PgStatement::PgStatement(PgConnection& connection, std::string_view sql, std::string name)
    : connection_(connection),
      sql_(sql),
      server_sql_(ToPostgresParameters(sql)),
      name_(std::move(name)),
      read_only_(IsReadOnly(sql)),
      mentioned_(MentionedParameters(sql)) {}

PgStatement::~PgStatement() { PQclear(result_); }

Statement& PgStatement::Set(int index, std::optional<std::string> text, unsigned type) {
  if (index < 1) return *this;  // reported by the server: a parameter it expects stays unbound
  if (parameters_.size() < static_cast<size_t>(index)) parameters_.resize(index);
  parameters_[index - 1] = {std::move(text), type};
  return *this;
}

Statement& PgStatement::Bind(int index, int64_t value) {
  return Set(index, std::to_string(value), kInt8Oid);
}

Statement& PgStatement::Bind(int index, std::string_view value) {
  // libpq takes NUL-terminated text parameters; an embedded NUL cannot be sent (PostgreSQL's text
  // cannot hold one either) and would silently truncate, so it is refused at Step().
  return Set(index, std::string(value), 0);
}

Statement& PgStatement::BindNull(int index) { return Set(index, std::nullopt, 0); }

Statement& PgStatement::BindReal(int index, double value) {
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", value);
  return Set(index, std::string(text), kFloat8Oid);
}

Status PgStatement::PrepareOnServer() {
  // As in SQLite, a parameter never bound is NULL.
  if (parameters_.size() < mentioned_.size()) parameters_.resize(mentioned_.size());
  std::vector<unsigned> types;
  for (size_t i = 0; i < parameters_.size(); ++i) {
    // A number the SQL skips (a list query without its zone filter binds ?1, ?3, ?4) gets a type,
    // since the server cannot infer one; any type will do for a value nobody reads.
    const bool mentioned = i < mentioned_.size() && mentioned_[i];
    types.push_back(!mentioned                        ? kTextOid
                    : parameters_[i].text.has_value() ? parameters_[i].type
                                                      : 0);
  }
  PGresult* prepared = PQprepare(connection_.raw(), name_.c_str(), server_sql_.c_str(),
                                 static_cast<int>(types.size()), types.data());
  Status status = PQresultStatus(prepared) == PGRES_COMMAND_OK
                      ? Status::Ok()
                      : PgError(connection_.raw(), prepared, "prepare '" + sql_ + "'");
  PQclear(prepared);
  if (status.ok()) prepared_generation_ = connection_.generation();
  return status;
}

Result<bool> PgStatement::Execute() {
  if (prepared_generation_ != connection_.generation()) {
    TPUEMU_RETURN_IF_ERROR(PrepareOnServer());
  }
  if (parameters_.size() < mentioned_.size()) parameters_.resize(mentioned_.size());
  std::vector<const char*> values;
  for (const Parameter& p : parameters_) {
    if (p.text.has_value() && p.text->find('\0') != std::string::npos) {
      return Status::InvalidArgument("a text value with a NUL character for '" + sql_ + "'");
    }
    values.push_back(p.text.has_value() ? p.text->c_str() : nullptr);
  }
  result_ = PQexecPrepared(connection_.raw(), name_.c_str(), static_cast<int>(values.size()),
                           values.data(), nullptr, nullptr, /*resultFormat=*/0);
  switch (PQresultStatus(result_)) {
    case PGRES_TUPLES_OK:
      rows_ = PQntuples(result_);
      connection_.set_changes(std::atoll(PQcmdTuples(result_)));  // INSERT ... RETURNING
      return true;
    case PGRES_COMMAND_OK:
      rows_ = 0;
      connection_.set_changes(std::atoll(PQcmdTuples(result_)));
      return true;
    default: {
      Status status = PgError(connection_.raw(), result_, "step '" + sql_ + "'");
      PQclear(result_);
      result_ = nullptr;
      return status;
    }
  }
}

Result<bool> PgStatement::Step() {
  if (result_ == nullptr) {
    Result<bool> executed = Execute();
    if (!executed.ok()) return executed.status();
  }
  if (row_ + 1 >= rows_) {
    row_ = rows_;
    return false;
  }
  ++row_;
  return true;
}

const char* PgStatement::Value(int column) const {
  if (result_ == nullptr || row_ < 0 || row_ >= rows_ || PQgetisnull(result_, row_, column)) {
    return nullptr;
  }
  return PQgetvalue(result_, row_, column);
}

bool PgStatement::IsNull(int column) const { return Value(column) == nullptr; }

int64_t PgStatement::ColumnInt64(int column) const {
  const char* value = Value(column);
  if (value == nullptr) return 0;
  // Booleans (a comparison selected as a column) come back as t/f.
  if (value[0] == 't' && value[1] == '\0') return 1;
  if (value[0] == 'f' && value[1] == '\0') return 0;
  return std::strtoll(value, nullptr, 10);
}

std::string PgStatement::ColumnText(int column) const {
  const char* value = Value(column);
  if (value == nullptr) return {};
  return std::string(value, static_cast<size_t>(PQgetlength(result_, row_, column)));
}

double PgStatement::ColumnReal(int column) const {
  const char* value = Value(column);
  return value == nullptr ? 0 : std::strtod(value, nullptr);
}

void PgStatement::Reset() {
  PQclear(result_);
  result_ = nullptr;
  rows_ = 0;
  row_ = -1;
  parameters_.clear();
}

}  // namespace tpuemu::db::postgres
