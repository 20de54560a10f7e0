// GCC 12 reports a false -Wmaybe-uninitialized inside libstdc++'s <regex> (std::function in its
// NFA) when building with -fsanitize; nothing here reads uninitialized memory.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "cli/tpuctl/filter.h"

#include <algorithm>
#include <cctype>
#include <regex>
#include <vector>

#include "cli/tpuctl/output_format.h"

namespace tpuemu::cli {

struct Filter::Node {
  enum Kind { kAnd, kOr, kNot, kTerm } kind = kTerm;
  std::vector<std::shared_ptr<const Node>> children;
  std::string key, op, value;
  std::shared_ptr<const std::regex> regex;
};

namespace {

using nlohmann::json;
using NodePtr = std::shared_ptr<const Filter::Node>;

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

class Parser {
 public:
  explicit Parser(const std::string& text) : s_(text) {}

  Result<NodePtr> Run() {
    Result<NodePtr> root = ParseOr();
    if (!root.ok()) return root;
    SkipSpace();
    if (pos_ < s_.size()) return Error("unexpected \"" + s_.substr(pos_) + "\"");
    return root;
  }

 private:
  Status Error(const std::string& what) const {
    return Status::InvalidArgument("--filter \"" + s_ + "\": " + what + " at position " +
                                   std::to_string(pos_ + 1));
  }
  void SkipSpace() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool PeekWord(const std::string& word) {
    SkipSpace();
    if (s_.compare(pos_, word.size(), word) != 0) return false;
    size_t end = pos_ + word.size();
    return end == s_.size() || std::isspace(static_cast<unsigned char>(s_[end])) || s_[end] == '(';
  }
  Result<NodePtr> Combine(Filter::Node::Kind kind, std::vector<NodePtr> children) {
    if (children.size() == 1) return children[0];
    auto node = std::make_shared<Filter::Node>();
    node->kind = kind;
    node->children = std::move(children);
    return NodePtr(node);
  }

  Result<NodePtr> ParseOr() {
    std::vector<NodePtr> children;
    while (true) {
      Result<NodePtr> conj = ParseAnd();
      if (!conj.ok()) return conj;
      children.push_back(*conj);
      if (!PeekWord("OR")) break;
      pos_ += 2;
    }
    return Combine(Filter::Node::kOr, std::move(children));
  }

  Result<NodePtr> ParseAnd() {
    std::vector<NodePtr> children;
    while (true) {
      Result<NodePtr> term = ParseUnary();
      if (!term.ok()) return term;
      children.push_back(*term);
      SkipSpace();
      if (pos_ >= s_.size() || s_[pos_] == ')' || PeekWord("OR")) break;
      if (PeekWord("AND")) pos_ += 3;
    }
    return Combine(Filter::Node::kAnd, std::move(children));
  }

  Result<NodePtr> ParseUnary() {
    SkipSpace();
    bool negate = false;
    if (PeekWord("NOT")) {
      pos_ += 3;
      negate = true;
    } else if (pos_ < s_.size() && s_[pos_] == '-') {
      ++pos_;
      negate = true;
    }
    SkipSpace();
    const bool group = pos_ < s_.size() && s_[pos_] == '(';
    if (group) ++pos_;
    Result<NodePtr> inner = group ? ParseOr() : ParseTerm();
    if (!inner.ok()) return inner;
    if (group) {
      SkipSpace();
      if (pos_ >= s_.size() || s_[pos_] != ')') return Error("missing \")\"");
      ++pos_;
    }
    if (!negate) return inner;
    auto node = std::make_shared<Filter::Node>();
    node->kind = Filter::Node::kNot;
    node->children.push_back(*inner);
    return NodePtr(node);
  }

  Result<NodePtr> ParseTerm() {
    auto node = std::make_shared<Filter::Node>();
    size_t start = pos_;
    while (pos_ < s_.size()) {
      unsigned char c = static_cast<unsigned char>(s_[pos_]);
      if (!(std::isalnum(c) || c == '_' || c == '.' || c == '-' || c == '[' || c == ']')) break;
      ++pos_;
    }
    node->key = s_.substr(start, pos_ - start);
    if (node->key.empty()) return Error("expected a key");
    SkipSpace();
    for (const char* op : {"!=", "!~", "<=", ">=", "=", ":", "~", "<", ">"}) {
      if (s_.compare(pos_, std::char_traits<char>::length(op), op) == 0) {
        node->op = op;
        break;
      }
    }
    if (node->op.empty()) {
      return Error("expected an operator (=, !=, :, ~) after \"" + node->key + "\"");
    }
    if (node->op == "<" || node->op == ">" || node->op == "<=" || node->op == ">=" ||
        node->op == "!~") {
      return Error("operator " + node->op + " is not supported (use =, !=, :, ~)");
    }
    pos_ += node->op.size();
    SkipSpace();
    if (pos_ < s_.size() && (s_[pos_] == '"' || s_[pos_] == '\'')) {
      char quote = s_[pos_++];
      size_t end = s_.find(quote, pos_);
      if (end == std::string::npos) return Error("unterminated quote");
      node->value = s_.substr(pos_, end - pos_);
      pos_ = end + 1;
    } else {
      size_t vstart = pos_;
      while (pos_ < s_.size() && !std::isspace(static_cast<unsigned char>(s_[pos_])) &&
             s_[pos_] != ')') {
        ++pos_;
      }
      node->value = s_.substr(vstart, pos_ - vstart);
      if (node->value.empty())
        return Error("expected a value after \"" + node->key + node->op + "\"");
    }
    if (node->op == "~") {
      try {
        node->regex = std::make_shared<const std::regex>(node->value);
      } catch (const std::regex_error&) {
        return Error("bad regular expression \"" + node->value + "\"");
      }
    }
    return NodePtr(node);
  }

  const std::string& s_;
  size_t pos_ = 0;
};

std::string ScalarText(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  return v.dump();
}

bool Equals(const json& v, const std::string& want) {
  std::string have = Lower(ScalarText(v));
  std::string w = Lower(want);
  if (!w.empty() && w.back() == '*') {
    return have.rfind(w.substr(0, w.size() - 1), 0) == 0;
  }
  if (have == w) return true;
  // A resource path matches its last segment: name=my-tpu.
  size_t slash = have.find_last_of('/');
  return w.find('/') == std::string::npos && slash != std::string::npos &&
         have.substr(slash + 1) == w;
}

bool Has(const json& v, const std::string& want) {
  if (want == "*") return !v.is_null() && !(v.is_string() && v.get<std::string>().empty());
  if (v.is_object()) return v.contains(want);
  std::string w = Lower(want);
  if (!w.empty() && w.back() == '*') w.pop_back();
  return Lower(ScalarText(v)).find(w) != std::string::npos;
}

bool TermMatches(const Filter::Node& t, const json& item) {
  json v = Lookup(item, t.key);
  auto any = [&v](auto pred) {
    if (v.is_array()) return std::any_of(v.begin(), v.end(), pred);
    return pred(v);
  };
  if (t.op == "!=") {
    return v.is_null() || !any([&](const json& x) { return Equals(x, t.value); });
  }
  if (v.is_null()) return false;
  if (t.op == "=") return any([&](const json& x) { return Equals(x, t.value); });
  if (t.op == ":") {
    if (t.value == "*") return Has(v, "*") && !(v.is_array() && v.empty());
    return any([&](const json& x) { return Has(x, t.value); });
  }
  return any([&](const json& x) { return std::regex_search(ScalarText(x), *t.regex); });
}

bool Eval(const Filter::Node& n, const json& item) {
  switch (n.kind) {
    case Filter::Node::kAnd:
      return std::all_of(n.children.begin(), n.children.end(),
                         [&](const NodePtr& c) { return Eval(*c, item); });
    case Filter::Node::kOr:
      return std::any_of(n.children.begin(), n.children.end(),
                         [&](const NodePtr& c) { return Eval(*c, item); });
    case Filter::Node::kNot:
      return !Eval(*n.children[0], item);
    case Filter::Node::kTerm:
      return TermMatches(n, item);
  }
  return false;
}

}  // namespace

Result<Filter> Filter::Parse(const std::string& text) {
  Filter f;
  if (text.find_first_not_of(" \t") == std::string::npos) return f;
  Result<NodePtr> root = Parser(text).Run();
  if (!root.ok()) return root.status();
  f.root_ = *root;
  return f;
}

bool Filter::Matches(const json& item) const { return root_ == nullptr || Eval(*root_, item); }

}  // namespace tpuemu::cli
