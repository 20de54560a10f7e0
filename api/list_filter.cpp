#include "api/list_filter.h"

#include <algorithm>
#include <cctype>

namespace tpuemu::api {

struct ListFilter::Node {
  enum Kind { kAnd, kOr, kNot, kCompare } kind = kCompare;
  std::shared_ptr<const Node> left, right;  // kAnd/kOr: both; kNot: left
  std::string field, op, value;             // kCompare
};

namespace {

using nlohmann::json;
using NodePtr = std::shared_ptr<const ListFilter::Node>;

struct Token {
  std::string text;
  bool quoted = false;
};

Result<std::vector<Token>> Tokenize(const std::string& s) {
  std::vector<Token> tokens;
  std::size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '"') {
      std::size_t end = s.find('"', i + 1);
      if (end == std::string::npos) {
        return Status::InvalidArgument("Invalid filter '" + s + "': unterminated string at " +
                                       std::to_string(i));
      }
      tokens.push_back({s.substr(i + 1, end - i - 1), true});
      i = end + 1;
    } else if (c == '(' || c == ')' || c == ':') {
      tokens.push_back({std::string(1, c)});
      ++i;
    } else if (c == '!' || c == '<' || c == '>' || c == '=') {
      std::size_t len = (i + 1 < s.size() && s[i + 1] == '=') ? 2 : 1;
      tokens.push_back({s.substr(i, len)});
      i += len;
    } else {
      std::size_t start = i;
      while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i])) &&
             std::string_view("()\":!<>=").find(s[i]) == std::string_view::npos) {
        ++i;
      }
      tokens.push_back({s.substr(start, i - start)});
    }
  }
  return tokens;
}

class Parser {
 public:
  Parser(std::vector<Token> tokens, const std::string& text) : t_(std::move(tokens)), text_(text) {}

  Result<NodePtr> ParseAll() {
    Result<NodePtr> e = ParseOr();
    if (!e.ok()) return e;
    if (pos_ != t_.size()) return Error("unexpected '" + t_[pos_].text + "'");
    return e;
  }

 private:
  bool Peek(const char* word) const {
    return pos_ < t_.size() && !t_[pos_].quoted && t_[pos_].text == word;
  }
  Status Error(const std::string& what) const {
    return Status::InvalidArgument("Invalid filter '" + text_ + "': " + what);
  }

  Result<NodePtr> ParseOr() {
    Result<NodePtr> left = ParseAnd();
    while (left.ok() && Peek("OR")) {
      ++pos_;
      Result<NodePtr> right = ParseAnd();
      if (!right.ok()) return right;
      left = Combine(ListFilter::Node::kOr, *left, *right);
    }
    return left;
  }

  Result<NodePtr> ParseAnd() {
    Result<NodePtr> left = ParseUnary();
    while (left.ok() && pos_ < t_.size() && !Peek("OR") && !Peek(")")) {
      if (Peek("AND")) ++pos_;  // AIP-160: juxtaposition is an implicit AND
      Result<NodePtr> right = ParseUnary();
      if (!right.ok()) return right;
      left = Combine(ListFilter::Node::kAnd, *left, *right);
    }
    return left;
  }

  Result<NodePtr> ParseUnary() {
    if (Peek("NOT") || Peek("-")) {
      ++pos_;
      Result<NodePtr> inner = ParseUnary();
      if (!inner.ok()) return inner;
      auto n = std::make_shared<ListFilter::Node>();
      n->kind = ListFilter::Node::kNot;
      n->left = *inner;
      return NodePtr(n);
    }
    if (Peek("(")) {
      ++pos_;
      Result<NodePtr> inner = ParseOr();
      if (!inner.ok()) return inner;
      if (!Peek(")")) return Error("missing ')'");
      ++pos_;
      return inner;
    }
    if (pos_ + 3 > t_.size()) return Error("expected 'field OP value'");
    static const char* kOps[] = {"=", "!=", "<", ">", "<=", ">=", ":"};
    const Token& op = t_[pos_ + 1];
    if (op.quoted || std::find(std::begin(kOps), std::end(kOps), op.text) == std::end(kOps)) {
      return Error("unknown operator '" + op.text + "'");
    }
    auto n = std::make_shared<ListFilter::Node>();
    n->field = t_[pos_].text;
    n->op = op.text;
    n->value = t_[pos_ + 2].text;
    pos_ += 3;
    return NodePtr(n);
  }

  static NodePtr Combine(ListFilter::Node::Kind kind, NodePtr a, NodePtr b) {
    auto n = std::make_shared<ListFilter::Node>();
    n->kind = kind;
    n->left = std::move(a);
    n->right = std::move(b);
    return n;
  }

  std::vector<Token> t_;
  const std::string& text_;
  std::size_t pos_ = 0;
};

// "a.b" into nested objects; the value rendered as a string (numbers and bools too).
std::optional<std::string> FieldText(const json& item, const std::string& path) {
  const json* cur = &item;
  std::size_t start = 0;
  while (true) {
    std::size_t dot = path.find('.', start);
    std::string key =
        path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!cur->is_object() || !cur->contains(key)) return std::nullopt;
    cur = &(*cur)[key];
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (cur->is_string()) return cur->get<std::string>();
  return cur->dump();
}

bool WildcardMatch(std::string_view pattern, std::string_view text) {
  if (pattern.empty()) return text.empty();
  if (pattern[0] == '*') {
    for (std::size_t i = 0; i <= text.size(); ++i) {
      if (WildcardMatch(pattern.substr(1), text.substr(i))) return true;
    }
    return false;
  }
  return !text.empty() && pattern[0] == text[0] && WildcardMatch(pattern.substr(1), text.substr(1));
}

bool Evaluate(const ListFilter::Node& n, const json& item) {
  switch (n.kind) {
    case ListFilter::Node::kAnd:
      return Evaluate(*n.left, item) && Evaluate(*n.right, item);
    case ListFilter::Node::kOr:
      return Evaluate(*n.left, item) || Evaluate(*n.right, item);
    case ListFilter::Node::kNot:
      return !Evaluate(*n.left, item);
    case ListFilter::Node::kCompare:
      break;
  }
  std::optional<std::string> v = FieldText(item, n.field);
  if (!v) return n.op == "!=";
  if (n.op == "=") return WildcardMatch(n.value, *v);
  if (n.op == "!=") return !WildcardMatch(n.value, *v);
  if (n.op == ":") return n.value == "*" || v->find(n.value) != std::string::npos;
  if (n.op == "<") return *v < n.value;
  if (n.op == ">") return *v > n.value;
  if (n.op == "<=") return *v <= n.value;
  return *v >= n.value;
}

}  // namespace

Result<ListFilter> ListFilter::Parse(const std::string& filter) {
  ListFilter f;
  if (filter.find_first_not_of(' ') == std::string::npos) return f;
  Result<std::vector<Token>> tokens = Tokenize(filter);
  if (!tokens.ok()) return tokens.status();
  Parser parser(std::move(tokens).value(), filter);
  Result<NodePtr> root = parser.ParseAll();
  if (!root.ok()) return root.status();
  f.root_ = *root;
  return f;
}

bool ListFilter::Matches(const json& item) const { return !root_ || Evaluate(*root_, item); }

Status SortByOrder(const std::string& order_by, std::vector<json>& items) {
  struct Key {
    std::string field;
    bool desc = false;
  };
  std::vector<Key> keys;
  std::size_t start = 0;
  while (start < order_by.size()) {
    std::size_t comma = order_by.find(',', start);
    std::string clause =
        order_by.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    std::vector<std::string> words;
    std::size_t i = 0;
    while (i < clause.size()) {
      while (i < clause.size() && clause[i] == ' ') ++i;
      std::size_t j = clause.find(' ', i);
      if (i < clause.size()) words.push_back(clause.substr(i, j == std::string::npos ? j : j - i));
      i = j == std::string::npos ? clause.size() : j;
    }
    if (words.empty() || words.size() > 2 ||
        (words.size() == 2 && words[1] != "asc" && words[1] != "desc")) {
      return Status::InvalidArgument("Invalid orderBy '" + order_by +
                                     "': expected 'field [asc|desc][, field ...]'");
    }
    keys.push_back({words[0], words.size() == 2 && words[1] == "desc"});
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  std::stable_sort(items.begin(), items.end(), [&](const json& a, const json& b) {
    for (const Key& k : keys) {
      std::string va = FieldText(a, k.field).value_or(""), vb = FieldText(b, k.field).value_or("");
      if (va != vb) return k.desc ? va > vb : va < vb;
    }
    return false;
  });
  return Status::Ok();
}

}  // namespace tpuemu::api
