// Expression condition form, a recursive-descent parser:
//
//   or      := and (('||' | 'or') and)*
//   and     := unary (('&&' | 'and') unary)*
//   unary   := ('!' | 'not') unary | cmp
//   cmp     := primary ( ('==' | '!=' | '>' | '>=' | '<' | '<=' | 'in' | 'not' 'in') primary
//                      | BINARY_WORD primary      // contains, matches, between, ... (any op)
//                      | UNARY_WORD )?            // exists, empty, is_true, ...
//   primary := '(' or ')' | literal | path
//   literal := number | "..." | '...' | true | false | null | '[' (literal (',' literal)*)? ']'
//
// The word operators make all 22 operators available in this form too; they are
// reserved only in operator position and as path roots.
#include "expr/condition_ast.h"
#include "expr/path.h"

#include <algorithm>
#include <cstdint>

namespace baton::expr {
namespace {

enum class Tok {
  kEnd,
  kLParen,
  kRParen,
  kLBracket,
  kRBracket,
  kComma,
  kAnd,
  kOr,
  kNot,
  kCmp,      // text: == != > >= < <=
  kWord,     // a path, or an operator name (text)
  kLiteral,  // value: number, string, true, false, null
};

struct Token {
  Tok kind = Tok::kEnd;
  std::string text;  // as written (strings: the source including quotes)
  Json value;        // kLiteral
  size_t pos = 0;    // byte offset in the source
};

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    *out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    *out += static_cast<char>(0xC0 | (cp >> 6));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    *out += static_cast<char>(0xE0 | (cp >> 12));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    *out += static_cast<char>(0xF0 | (cp >> 18));
    *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

class Parser {
 public:
  Parser(std::string_view src, std::vector<Path>* refs) : src_(src), refs_(refs) {}

  Result<NodePtr> Parse() {
    Status st = Lex();
    if (!st.ok()) return st;
    Result<NodePtr> root = ParseOr();
    if (!root.ok()) return root;
    if (Peek().kind != Tok::kEnd) return Unexpected();
    return root;
  }

 private:
  // ---- errors ----
  Status ErrorAt(size_t pos, const std::string& what) const {
    return Status(errc::kValidation, what + " at column " + std::to_string(pos + 1) + " in '" +
                                         std::string(src_) + "'");
  }
  Status Expected(const std::string& what) const { return ErrorAt(Peek().pos, "expected " + what); }
  Status Unexpected() const {
    const Token& t = Peek();
    if (t.kind == Tok::kEnd) return ErrorAt(t.pos, "unexpected end of expression");
    return ErrorAt(t.pos, "unexpected '" + t.text + "'");
  }

  // ---- lexer ----
  Status Lex() {
    size_t i = 0;
    while (true) {
      while (i < src_.size() &&
             (src_[i] == ' ' || src_[i] == '\t' || src_[i] == '\n' || src_[i] == '\r')) {
        ++i;
      }
      if (i >= src_.size()) break;
      Token t;
      t.pos = i;
      char c = src_[i];
      char next = i + 1 < src_.size() ? src_[i + 1] : '\0';
      auto simple = [&](Tok kind, size_t len) {
        t.kind = kind;
        t.text = std::string(src_.substr(i, len));
        i += len;
      };
      if (c == '(') {
        simple(Tok::kLParen, 1);
      } else if (c == ')') {
        simple(Tok::kRParen, 1);
      } else if (c == '[') {
        simple(Tok::kLBracket, 1);
      } else if (c == ']') {
        simple(Tok::kRBracket, 1);
      } else if (c == ',') {
        simple(Tok::kComma, 1);
      } else if (c == '&' && next == '&') {
        simple(Tok::kAnd, 2);
      } else if (c == '|' && next == '|') {
        simple(Tok::kOr, 2);
      } else if ((c == '=' || c == '!') && next == '=') {
        simple(Tok::kCmp, 2);
      } else if (c == '!') {
        simple(Tok::kNot, 1);
      } else if (c == '<' || c == '>') {
        simple(Tok::kCmp, next == '=' ? 2 : 1);
      } else if (c == '=' || c == '&' || c == '|') {
        return ErrorAt(i, std::string("expected '") + c + c + "'");
      } else if (c == '"' || c == '\'') {
        Status st = LexString(&i, &t);
        if (!st.ok()) return st;
      } else if (IsDigit(c) || (c == '-' && IsDigit(next))) {
        Status st = LexNumber(&i, &t);
        if (!st.ok()) return st;
      } else if (IsNameStart(c)) {
        LexWord(&i, &t);
      } else {
        return ErrorAt(i, std::string("unexpected '") + c + "'");
      }
      tokens_.push_back(std::move(t));
    }
    Token end;
    end.pos = src_.size();
    tokens_.push_back(end);
    return Status::Ok();
  }

  Status LexString(size_t* pos, Token* t) {
    size_t i = *pos;
    const char quote = src_[i++];
    std::string value;
    while (true) {
      if (i >= src_.size()) return ErrorAt(*pos, "unterminated string");
      char c = src_[i];
      if (c == quote) break;
      if (c != '\\') {
        value += c;
        ++i;
        continue;
      }
      if (i + 1 >= src_.size()) return ErrorAt(*pos, "unterminated string");
      char e = src_[i + 1];
      i += 2;
      switch (e) {
        case 'n':
          value += '\n';
          break;
        case 't':
          value += '\t';
          break;
        case 'r':
          value += '\r';
          break;
        case 'b':
          value += '\b';
          break;
        case 'f':
          value += '\f';
          break;
        case '0':
          value += '\0';
          break;
        case '\\':
        case '"':
        case '\'':
        case '/':
          value += e;
          break;
        case 'u': {
          uint32_t cp = 0;
          if (!ReadHex4(&i, &cp)) return ErrorAt(i - 2, "expected 4 hex digits after '\\u'");
          // A high surrogate must be followed by \u and a low one (JSON's convention).
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            uint32_t lo = 0;
            size_t j = i + 2;
            if (i + 1 < src_.size() && src_[i] == '\\' && src_[i + 1] == 'u' && ReadHex4(&j, &lo) &&
                lo >= 0xDC00 && lo <= 0xDFFF) {
              cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
              i = j;
            } else {
              return ErrorAt(i - 6, "unpaired surrogate in '\\u' escape");
            }
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return ErrorAt(i - 6, "unpaired surrogate in '\\u' escape");
          }
          AppendUtf8(cp, &value);
          break;
        }
        default:
          return ErrorAt(i - 2, std::string("invalid escape '\\") + e + "'");
      }
    }
    ++i;  // closing quote
    t->kind = Tok::kLiteral;
    t->text = std::string(src_.substr(*pos, i - *pos));
    t->value = std::move(value);
    *pos = i;
    return Status::Ok();
  }

  // Reads 4 hex digits at *i into *cp, advancing *i on success.
  bool ReadHex4(size_t* i, uint32_t* cp) const {
    if (*i + 4 > src_.size()) return false;
    uint32_t v = 0;
    for (size_t k = 0; k < 4; ++k) {
      char h = src_[*i + k];
      int d = IsDigit(h)               ? h - '0'
              : (h >= 'a' && h <= 'f') ? h - 'a' + 10
              : (h >= 'A' && h <= 'F') ? h - 'A' + 10
                                       : -1;
      if (d < 0) return false;
      v = v * 16 + static_cast<uint32_t>(d);
    }
    *i += 4;
    *cp = v;
    return true;
  }

  Status LexNumber(size_t* pos, Token* t) {
    size_t i = *pos;
    if (src_[i] == '-') ++i;
    auto digits = [&] {
      size_t start = i;
      while (i < src_.size() && IsDigit(src_[i])) ++i;
      return i > start;
    };
    digits();
    if (i + 1 < src_.size() && src_[i] == '.' && IsDigit(src_[i + 1])) {
      ++i;
      digits();
    }
    if (i < src_.size() && (src_[i] == 'e' || src_[i] == 'E')) {
      size_t save = i++;
      if (i < src_.size() && (src_[i] == '+' || src_[i] == '-')) ++i;
      if (!digits()) i = save;
    }
    t->text = std::string(src_.substr(*pos, i - *pos));
    // JSON's number grammar is ours; reuse its parser for exact int64/uint64/double typing.
    Json v = Json::parse(t->text, nullptr, /*allow_exceptions=*/false);
    if (v.is_discarded() || !v.is_number()) {
      return ErrorAt(*pos, "invalid number '" + t->text + "'");
    }
    t->kind = Tok::kLiteral;
    t->value = std::move(v);
    *pos = i;
    return Status::Ok();
  }

  void LexWord(size_t* pos, Token* t) {
    size_t i = *pos;
    while (i < src_.size() && IsNameChar(src_[i])) ++i;
    std::string word(src_.substr(*pos, i - *pos));
    t->kind = Tok::kWord;
    if (word == "and") {
      t->kind = Tok::kAnd;
    } else if (word == "or") {
      t->kind = Tok::kOr;
    } else if (word == "not") {
      t->kind = Tok::kNot;
    } else if (word == "true" || word == "false" || word == "null") {
      t->kind = Tok::kLiteral;
      t->value = word == "null" ? Json() : Json(word == "true");
    } else if (!OpFromName(word)) {
      // A path: take its '.name' and '[index]' continuations; ParsePath validates. Not
      // after an operator word, so that `x in[1, 2]` lexes as a list.
      while (i < src_.size()) {
        if (src_[i] == '.') {
          ++i;
          while (i < src_.size() && IsNameChar(src_[i])) ++i;
        } else if (src_[i] == '[') {
          while (i < src_.size() && src_[i] != ']' && src_[i] != ' ') ++i;
          if (i < src_.size() && src_[i] == ']') ++i;
        } else {
          break;
        }
      }
      word = std::string(src_.substr(*pos, i - *pos));
    }
    t->text = std::move(word);
    *pos = i;
  }

  // ---- parser ----
  const Token& Peek(size_t ahead = 0) const {
    return tokens_[std::min(next_ + ahead, tokens_.size() - 1)];
  }
  const Token& Advance() { return tokens_[next_ < tokens_.size() - 1 ? next_++ : next_]; }

  // Guards every recursive production so that "((((..." cannot exhaust the stack.
  struct DepthGuard {
    explicit DepthGuard(int* d) : depth(d) { ++*depth; }
    ~DepthGuard() { --*depth; }
    int* depth;
  };
  Status CheckDepth() const {
    if (depth_ > kMaxConditionDepth) return ErrorAt(Peek().pos, "expression nested too deeply");
    return Status::Ok();
  }

  Result<NodePtr> ParseChain(Tok separator, ConditionNode::Kind kind, bool is_or) {
    std::vector<NodePtr> items;
    while (true) {
      Result<NodePtr> item =
          is_or ? ParseChain(Tok::kAnd, ConditionNode::Kind::kAll, false) : ParseUnary();
      if (!item.ok()) return item;
      items.push_back(std::move(item).value());
      if (Peek().kind != separator) break;
      Advance();
    }
    if (items.size() == 1) return items.front();
    return MakeGroup(kind, std::move(items));
  }

  Result<NodePtr> ParseOr() {
    DepthGuard guard(&depth_);
    Status st = CheckDepth();
    if (!st.ok()) return st;
    return ParseChain(Tok::kOr, ConditionNode::Kind::kAny, true);
  }

  Result<NodePtr> ParseUnary() {
    if (Peek().kind != Tok::kNot) return ParseCmp();
    DepthGuard guard(&depth_);
    Status st = CheckDepth();
    if (!st.ok()) return st;
    Advance();
    Result<NodePtr> child = ParseUnary();
    if (!child.ok()) return child;
    return MakeGroup(ConditionNode::Kind::kNot, {std::move(child).value()});
  }

  Result<NodePtr> ParseCmp() {
    Result<Operand> lhs = ParsePrimary();
    if (!lhs.ok()) return lhs.status();
    const Token& t = Peek();
    std::optional<Op> op;
    if (t.kind == Tok::kCmp) {
      static const std::pair<const char*, Op> kSymbols[] = {{"==", Op::kEq}, {"!=", Op::kNeq},
                                                            {">", Op::kGt},  {">=", Op::kGte},
                                                            {"<", Op::kLt},  {"<=", Op::kLte}};
      for (const auto& [sym, o] : kSymbols) {
        if (t.text == sym) op = o;
      }
    } else if (t.kind == Tok::kWord) {
      op = OpFromName(t.text);
      if (!op) return Unexpected();
    } else if (t.kind == Tok::kNot && Peek(1).kind == Tok::kWord && Peek(1).text == "in") {
      Advance();  // 'not' of 'not in'
      op = Op::kNotIn;
    }
    if (!op) {
      // No operator: a parenthesised condition stands for itself, anything else is truthy.
      if (lhs->kind == Operand::Kind::kCondition) return lhs->condition;
      return MakeTruthy(std::move(lhs).value());
    }
    const size_t op_pos = Advance().pos;
    std::optional<Operand> rhs;
    if (OpTakesValue(*op)) {
      Result<Operand> r = ParsePrimary();
      if (!r.ok()) return r.status();
      rhs = std::move(r).value();
    }
    Result<NodePtr> node = MakeCompare(*op, std::move(lhs).value(), std::move(rhs));
    if (!node.ok()) {
      return Status(node.status().code(), node.status().message() + " at column " +
                                              std::to_string(op_pos + 1) + " in '" +
                                              std::string(src_) + "'");
    }
    return node;
  }

  Result<Operand> ParsePrimary() {
    const Token& t = Peek();
    switch (t.kind) {
      case Tok::kLParen: {
        Advance();
        Result<NodePtr> inner = ParseOr();
        if (!inner.ok()) return inner.status();
        if (Peek().kind != Tok::kRParen) return Expected("')'");
        Advance();
        return Operand{Operand::Kind::kCondition, {}, {}, std::move(inner).value()};
      }
      case Tok::kLiteral:
      case Tok::kLBracket: {
        Result<Json> v = ParseLiteral(0);
        if (!v.ok()) return v.status();
        return Operand{Operand::Kind::kLiteral, {}, std::move(v).value(), nullptr};
      }
      case Tok::kWord: {
        if (OpFromName(t.text)) return Expected("a value");
        Result<Path> path = ParsePath(t.text);
        if (!path.ok()) return ErrorAt(t.pos, path.status().message());
        Advance();
        refs_->push_back(path.value());
        return Operand{Operand::Kind::kPath, std::move(path).value(), {}, nullptr};
      }
      default:
        return Expected("a value");
    }
  }

  Result<Json> ParseLiteral(int depth) {
    if (depth > kMaxConditionDepth) return ErrorAt(Peek().pos, "list nested too deeply");
    const Token& t = Peek();
    if (t.kind == Tok::kLiteral) return Advance().value;
    if (t.kind != Tok::kLBracket) return Expected("a literal");
    Advance();
    Json list = Json::array();
    if (Peek().kind == Tok::kRBracket) {
      Advance();
      return list;
    }
    while (true) {
      Result<Json> item = ParseLiteral(depth + 1);
      if (!item.ok()) return item;
      list.push_back(std::move(item).value());
      if (Peek().kind == Tok::kRBracket) break;
      if (Peek().kind != Tok::kComma) return Expected("',' or ']'");
      Advance();
    }
    Advance();  // ']'
    return list;
  }

  std::string_view src_;
  std::vector<Path>* refs_;
  std::vector<Token> tokens_;
  size_t next_ = 0;
  int depth_ = 0;
};

}  // namespace

Result<NodePtr> ParseExpression(std::string_view text, std::vector<Path>* refs) {
  return Parser(text, refs).Parse();
}

}  // namespace baton::expr
