// PtxParser.cpp — statement splitter and header reader for PTX.
//
//   .visible .entry k(.param .u64 k_param_0) .maxntid 64 { .reg .b32 %r<3>;
//   @%p1 bra $L__BB0_2; ld.global.v2.b32 {%r1, %r2}, [%rd1+8]; $L__BB0_2: ret; }
// becomes Function{name "k", params {"k_param_0"}, launch_bound {64,0,0}, body
//   [bra guarded by %p1, ld.global.v2.b32 with operands "{%r1, %r2}" "[%rd1+8]",
//    label $L__BB0_2, ret]}.
#include "verify/PtxParser.h"

#include <cctype>
#include <cstdlib>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace fixbits::verify {
namespace {

// Removes // and /* */ comments, keeping newlines so line numbers hold.
std::string strip_comments(absl::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '/' && i + 1 < in.size() && in[i + 1] == '/') {
      while (i < in.size() && in[i] != '\n') ++i;
      if (i < in.size()) out.push_back('\n');
    } else if (in[i] == '/' && i + 1 < in.size() && in[i + 1] == '*') {
      i += 2;
      while (i + 1 < in.size() && !(in[i] == '*' && in[i + 1] == '/')) {
        if (in[i] == '\n') out.push_back('\n');
        ++i;
      }
      ++i;
    } else if (in[i] == '"') {  // strings (in .file / .section) kept verbatim
      out.push_back(in[i++]);
      while (i < in.size() && in[i] != '"' && in[i] != '\n') out.push_back(in[i++]);
      if (i < in.size()) out.push_back(in[i]);
    } else {
      out.push_back(in[i]);
    }
  }
  return out;
}

std::string squash_ws(absl::string_view s) {
  std::string out;
  bool sp = false;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      sp = !out.empty();
    } else {
      if (sp) out.push_back(' ');
      sp = false;
      out.push_back(c);
    }
  }
  return out;
}

// Splits on commas at bracket depth zero.
absl::StatusOr<std::vector<std::string>> split_operands(absl::string_view s, int line) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : s) {
    if (c == '{' || c == '[' || c == '(') ++depth;
    if (c == '}' || c == ']' || c == ')') --depth;
    if (depth < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("PTX line ", line, ": unbalanced closing bracket in operands '", s, "'."));
    }
    if (c == ',' && depth == 0) {
      out.push_back(squash_ws(cur));
      cur.clear();
      if (out.size() > kMaxOperands) {
        return absl::InvalidArgumentError(
            absl::StrCat("PTX line ", line, ": more than ", kMaxOperands, " operands."));
      }
    } else {
      cur.push_back(c);
    }
  }
  if (depth != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("PTX line ", line, ": unbalanced bracket in operands '", s, "'."));
  }
  std::string last = squash_ws(cur);
  if (!last.empty() || !out.empty()) out.push_back(last);
  return out;
}

bool is_ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.' ||
         c == '%';
}

// Parses one instruction statement (no trailing ';').
absl::StatusOr<Instr> parse_instr(absl::string_view st, int line) {
  Instr ins;
  ins.line = line;
  ins.text = squash_ws(st);
  absl::string_view s = absl::StripAsciiWhitespace(st);
  if (!s.empty() && s[0] == '@') {
    size_t i = 1;
    if (i < s.size() && s[i] == '!') {
      ins.guard_negated = true;
      ++i;
    }
    size_t j = i;
    while (j < s.size() && is_ident_char(s[j])) ++j;
    ins.guard = std::string(s.substr(i, j - i));
    if (ins.guard.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("PTX line ", line, ": guard '@' is not followed by a predicate register."));
    }
    s = absl::StripAsciiWhitespace(s.substr(j));
  }
  size_t j = 0;
  while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
  ins.opcode = std::string(s.substr(0, j));
  if (ins.opcode.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("PTX line ", line, ": guarded statement has no opcode."));
  }
  auto ops = split_operands(s.substr(j), line);
  if (!ops.ok()) return ops.status();
  ins.operands = std::move(*ops);
  return ins;
}

int64_t parse_int_prefix(absl::string_view s) {
  return std::strtoll(std::string(s).c_str(), nullptr, 0);
}

// Reads a declaration statement (".shared .align 4 .b8 sm[128]") into a VarDecl.
bool parse_decl(absl::string_view st, VarDecl* d) {
  std::string decl = squash_ws(st);
  decl = decl.substr(0, decl.find('='));  // drop an initializer
  std::vector<std::string> toks = absl::StrSplit(decl, ' ', absl::SkipEmpty());
  if (toks.empty()) return false;
  const std::string& sp = toks[0];
  if (sp != ".shared" && sp != ".local" && sp != ".global" && sp != ".const" && sp != ".param") {
    return false;
  }
  d->space = sp.substr(1);
  std::string last = toks.back();
  size_t eq = last.find('=');
  if (eq != std::string::npos) last = last.substr(0, eq);
  size_t br = last.find('[');
  d->name = last.substr(0, br);
  int64_t elem = 1;
  for (const auto& t : toks) {
    if (t.size() > 2 && t[0] == '.' && (t[1] == 'b' || t[1] == 'u' || t[1] == 's' || t[1] == 'f') &&
        std::isdigit(static_cast<unsigned char>(t[2]))) {
      elem = std::max<int64_t>(1, parse_int_prefix(t.substr(2)) / 8);
    }
  }
  d->bytes = elem;
  if (br != std::string::npos) d->bytes = elem * std::max<int64_t>(0, parse_int_prefix(last.substr(br + 1)));
  return true;
}

// Reads a function header ".visible .entry name(.param ... a, ...) .maxntid 64, 1, 1".
absl::Status parse_header(absl::string_view hdr, int line, Function* f) {
  std::string h = squash_ws(hdr);
  size_t kw = h.find(".entry");
  f->is_entry = kw != std::string::npos;
  if (!f->is_entry) kw = h.find(".func");
  if (kw == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("PTX line ", line, ": function header has neither .entry nor .func."));
  }
  size_t p = kw + (f->is_entry ? 6 : 5);
  while (p < h.size() && h[p] == ' ') ++p;
  if (p < h.size() && h[p] == '(') {  // .func return parameter list
    int depth = 0;
    for (; p < h.size(); ++p) {
      if (h[p] == '(') ++depth;
      if (h[p] == ')' && --depth == 0) break;
    }
    if (p >= h.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("PTX line ", line, ": the return parameter list of a .func is not closed."));
    }
    ++p;
    while (p < h.size() && h[p] == ' ') ++p;
  }
  size_t n = p;
  while (n < h.size() && is_ident_char(h[n])) ++n;
  f->name = h.substr(p, n - p);
  if (f->name.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("PTX line ", line, ": function header '", h, "' has no name."));
  }
  size_t rest = n;
  while (rest < h.size() && h[rest] == ' ') ++rest;
  if (rest < h.size() && h[rest] == '(') {
    size_t close = h.find(')', rest);
    if (close == std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("PTX line ", line, ": parameter list of '", f->name, "' is not closed."));
    }
    for (absl::string_view prm : absl::StrSplit(h.substr(rest + 1, close - rest - 1), ',')) {
      std::vector<std::string> toks = absl::StrSplit(prm, ' ', absl::SkipEmpty());
      if (toks.empty()) continue;
      std::string nm = toks.back();
      nm = nm.substr(0, nm.find('['));
      f->params.push_back(nm);
      if (f->params.size() > kMaxOperands) {
        return absl::InvalidArgumentError(
            absl::StrCat("PTX line ", line, ": function '", f->name, "' has too many parameters."));
      }
    }
    rest = close + 1;
  }
  std::string tail = h.substr(rest);
  for (const char* dir : {".reqntid", ".maxntid"}) {
    size_t d = tail.find(dir);
    if (d == std::string::npos) continue;
    absl::string_view v = absl::string_view(tail).substr(d + 8);
    // Up to the next directive: `.maxntid 256 .explicitcluster .reqnctapercluster 4, 2, 1`
    // must not read the cluster shape as the block's y and z bounds.
    v = v.substr(0, v.find('.'));
    std::vector<std::string> dims = absl::StrSplit(v, ',');
    for (size_t i = 0; i < dims.size() && i < 3; ++i) {
      std::string t(absl::StripAsciiWhitespace(dims[i]));
      if (t.empty() || !std::isdigit(static_cast<unsigned char>(t[0]))) break;
      f->launch_bound[i] = parse_int_prefix(t);
    }
    f->launch_bound_exact = std::string_view(dir) == ".reqntid";
    break;  // .reqntid wins over .maxntid
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Module> parse_ptx(absl::string_view raw) {
  if (raw.size() > kMaxInputBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "PTX input is ", raw.size(), " bytes, over the limit of ", kMaxInputBytes, " bytes."));
  }
  Module m;
  m.isa = Isa::kPtx;
  const std::string t = strip_comments(raw);
  size_t i = 0;
  int line = 1;
  size_t statements = 0;
  Function* fn = nullptr;  // non-null while inside a body
  int depth = 0;           // brace depth inside a body
  std::string stmt;
  int stmt_line = 1;
  auto flush_top = [&](absl::string_view s, char term) -> absl::Status {
    std::string q = squash_ws(s);
    if (q.empty() && term == '{') {
      return absl::InvalidArgumentError(absl::StrCat(
          "PTX line ", line, ": '{' at module scope follows no function header."));
    }
    if (q.empty()) return absl::OkStatus();
    if (q.find(".entry") != std::string::npos || q.find(".func") != std::string::npos) {
      Function f;
      if (auto st = parse_header(q, stmt_line, &f); !st.ok()) return st;
      if (term == '{') {
        m.functions.push_back(std::move(f));
        fn = &m.functions.back();
        depth = 1;
      }
      return absl::OkStatus();  // a prototype (';') declares nothing we walk
    }
    if (term == '{') {
      return absl::InvalidArgumentError(absl::StrCat(
          "PTX line ", stmt_line, ": '{' at module scope follows '", q, "', not a function header."));
    }
    auto take = [&](const char* dir) -> std::string {
      size_t d = q.find(dir);
      if (d == std::string::npos) return "";
      return squash_ws(q.substr(d + absl::string_view(dir).size()));
    };
    // Line directives without ';' may be glued to the next statement; pick each out.
    if (std::string v = take(".version "); !v.empty()) m.version = v.substr(0, v.find(' '));
    if (std::string v = take(".target "); !v.empty()) m.target = v.substr(0, v.find(' '));
    if (std::string v = take(".address_size "); !v.empty()) m.address_size = static_cast<int>(parse_int_prefix(v));
    VarDecl d;
    size_t sp = q.find_first_of('.');
    for (const char* space : {".shared", ".global", ".const"}) {
      size_t at = q.find(space);
      if (at != std::string::npos && sp != std::string::npos && parse_decl(q.substr(at), &d)) {
        m.globals.push_back(d);
        break;
      }
    }
    return absl::OkStatus();
  };
  auto flush_body = [&](absl::string_view s) -> absl::Status {
    absl::string_view q = absl::StripAsciiWhitespace(s);
    if (q.empty()) return absl::OkStatus();
    if (++statements > kMaxStatements) {
      return absl::InvalidArgumentError(
          absl::StrCat("PTX input has more than ", kMaxStatements, " statements."));
    }
    if (q[0] == '.') {
      VarDecl d;
      if (parse_decl(q, &d)) fn->locals.push_back(d);
      return absl::OkStatus();  // .reg, .pragma, .loc and friends carry no dataflow
    }
    auto ins = parse_instr(q, stmt_line);
    if (!ins.ok()) return ins.status();
    fn->body.push_back(std::move(*ins));
    return absl::OkStatus();
  };
  int bracket = 0;  // depth of '[' '(' inside the current statement
  int braces = 0;   // depth of operand-vector '{' inside the current body statement
  // `stmt` never starts with whitespace, so "nothing pending" is stmt.empty(); the flags
  // below keep every step O(1) so the reader is linear in the input.
  bool eq_seen = false;   // the module-scope statement holds '=' (an initializer follows)
  bool sep_seen = false;  // the body statement holds a blank, ',', '@', '[' or '{'
  auto push = [&](char c) {
    if (stmt.empty() && std::isspace(static_cast<unsigned char>(c))) return;
    if (stmt.empty()) stmt_line = line;
    stmt.push_back(c);
    eq_seen = eq_seen || c == '=';
    sep_seen = sep_seen || c == ' ' || c == '\t' || c == ',' || c == '@' || c == '[' || c == '{';
  };
  auto clear = [&] {
    stmt.clear();
    eq_seen = false;
    sep_seen = false;
  };
  while (i < t.size()) {
    char c = t[i];
    if (c == '\n') ++line;
    if (fn == nullptr) {
      if (c == '(') ++bracket;
      if (c == ')') --bracket;
      if (c == '{' && eq_seen) ++bracket;  // initializer
      if (c == '}' && bracket > 0) {
        --bracket;
        push(c);
        ++i;
        continue;
      }
      if (stmt.empty()) stmt_line = line;
      if ((c == ';' || c == '{') && bracket <= 0) {
        bracket = 0;
        if (auto st = flush_top(stmt, c); !st.ok()) return st;
        clear();
      } else if (c == '}') {
        return absl::InvalidArgumentError(
            absl::StrCat("PTX line ", line, ": '}' at module scope closes nothing."));
      } else if (c == '\n' && bracket <= 0 &&
                 (stmt.rfind(".version", 0) == 0 || stmt.rfind(".target", 0) == 0 ||
                  stmt.rfind(".address_size", 0) == 0 || stmt.rfind(".file", 0) == 0)) {
        // Directives that end at the line.
        if (auto st = flush_top(stmt, ';'); !st.ok()) return st;
        clear();
      } else {
        push(c);
      }
      ++i;
      continue;
    }
    // Inside a body.
    if (stmt.empty()) stmt_line = line;
    if (c == '[' || c == '(') ++bracket;
    if (c == ']' || c == ')') --bracket;
    if (c == '{' && !stmt.empty()) ++braces;  // operand vector "{%r1, %r2}"
    if (c == '}' && braces > 0) {
      --braces;
      push(c);
      ++i;
      continue;
    }
    if ((c == ';' || c == '}') && bracket > 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "PTX line ", line, ": a '[' or '(' opened in statement '", squash_ws(stmt.substr(0, 120)).substr(0, 60),
          "' is never closed."));
    }
    if (bracket < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("PTX line ", line, ": unbalanced ']' or ')' in function '", fn->name, "'."));
    }
    if (c == ';' && bracket == 0 && braces == 0) {
      if (auto st = flush_body(stmt); !st.ok()) return st;
      clear();
    } else if (c == '{' && stmt.empty()) {
      ++depth;  // scope block
    } else if (c == '}' && bracket == 0) {
      if (!stmt.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "PTX line ", line, ": statement '", squash_ws(stmt.substr(0, 120)), "' is missing its ';'."));
      }
      if (--depth == 0) fn = nullptr;
    } else if (c == ':' && bracket == 0 && !stmt.empty() && !sep_seen) {
      if (++statements > kMaxStatements) {
        return absl::InvalidArgumentError(
            absl::StrCat("PTX input has more than ", kMaxStatements, " statements."));
      }
      Instr lab;
      lab.line = stmt_line;
      lab.label = std::string(absl::StripTrailingAsciiWhitespace(stmt));
      lab.text = lab.label + ":";
      fn->body.push_back(std::move(lab));
      clear();
    } else {
      push(c);
    }
    ++i;
  }
  if (fn != nullptr && (bracket > 0 || braces > 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "PTX line ", stmt_line, ": a '[', '(' or '{' opened in statement '",
        squash_ws(stmt).substr(0, 60), "' is never closed."));
  }
  if (fn != nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("PTX text ends inside the body of function '", fn->name, "' (missing '}')."));
  }
  if (!squash_ws(stmt).empty() && squash_ws(stmt).find(".entry") != std::string::npos) {
    return absl::InvalidArgumentError("PTX text ends inside a function header.");
  }
  return m;
}

}  // namespace fixbits::verify
