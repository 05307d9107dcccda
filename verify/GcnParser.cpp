// GcnParser.cpp — line reader for AMDGCN assembly.
//
//   k:                         -> Function "k"
//   v_mov_b32_dpp v4, v2 row_shr:1 row_mask:0xf bank_mask:0xf
//                              -> opcode v_mov_b32_dpp, operands {v4, v2},
//                                 modifiers {row_shr:1, row_mask:0xf, bank_mask:0xf}
#include "verify/GcnParser.h"

#include <cctype>
#include <cstdlib>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace fixbits::verify {
namespace {

struct KernelDesc {
  int user_sgpr_count = -1;
  bool wg_id_x = false;
  int private_buffer = 0, dispatch_ptr = 0, queue_ptr = 0;
};

absl::string_view strip_comment(absl::string_view l) {
  size_t p = l.find(';');
  size_t q = l.find("//");
  size_t c = std::min(p, q);
  if (c != absl::string_view::npos) l = l.substr(0, c);
  return absl::StripAsciiWhitespace(l);
}

int64_t int_after(absl::string_view l, absl::string_view key) {
  size_t p = l.find(key);
  if (p == absl::string_view::npos) return -1;
  std::string rest(absl::StripAsciiWhitespace(l.substr(p + key.size())));
  if (!rest.empty() && rest[0] == ':') rest = std::string(absl::StripAsciiWhitespace(rest.substr(1)));
  return std::strtoll(rest.c_str(), nullptr, 0);
}

absl::StatusOr<Instr> parse_line(absl::string_view s, int line) {
  Instr ins;
  ins.line = line;
  size_t j = 0;
  while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
  ins.opcode = std::string(s.substr(0, j));
  absl::string_view rest = absl::StripAsciiWhitespace(s.substr(j));
  std::string cur;
  int depth = 0;
  std::vector<std::string> ops;
  for (char c : rest) {
    if (c == '[' || c == '(') ++depth;
    if (c == ']' || c == ')') --depth;
    if (depth < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("AMDGCN line ", line, ": unbalanced ']' or ')' in '", s, "'."));
    }
    if (c == ',' && depth == 0) {
      ops.push_back(std::string(absl::StripAsciiWhitespace(cur)));
      cur.clear();
      if (ops.size() > kMaxOperands) {
        return absl::InvalidArgumentError(absl::StrCat("AMDGCN line ", line, ": too many operands."));
      }
    } else {
      cur.push_back(c);
    }
  }
  if (depth != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("AMDGCN line ", line, ": unbalanced '[' or '(' in '", s, "'."));
  }
  // The last operand carries the space-separated modifiers; a modifier-only instruction
  // (s_waitcnt vmcnt(0)) keeps its words as operands.
  std::vector<std::string> words = absl::StrSplit(std::string(absl::StripAsciiWhitespace(cur)), ' ', absl::SkipEmpty());
  // "|v1|" and "-v1" stay joined; "neg_lo:[0,1]" is a modifier.
  if (!words.empty()) {
    ops.push_back(words[0]);
    for (size_t i = 1; i < words.size() && i < kMaxOperands; ++i) ins.modifiers.push_back(words[i]);
  }
  ins.operands = std::move(ops);
  ins.text = std::string(s);
  return ins;
}

}  // namespace

absl::StatusOr<Module> parse_gcn(absl::string_view text) {
  if (text.size() > kMaxInputBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "AMDGCN input is ", text.size(), " bytes, over the limit of ", kMaxInputBytes, " bytes."));
  }
  Module m;
  m.isa = Isa::kGcn;
  absl::flat_hash_set<std::string> fn_names;
  absl::flat_hash_map<std::string, KernelDesc> descs;
  absl::flat_hash_map<std::string, int64_t> bounds;
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  if (lines.size() > kMaxStatements) {
    return absl::InvalidArgumentError(absl::StrCat("AMDGCN input has more than ", kMaxStatements, " lines."));
  }
  // Pass 1: function names, kernel descriptors, launch bounds.
  std::string in_desc;
  int desc_line = 0;
  int64_t pending_bound = -1;
  size_t pending_indent = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    absl::string_view raw = lines[i];
    absl::string_view l = strip_comment(raw);
    if (l.rfind(".type", 0) == 0 && l.find("@function") != absl::string_view::npos) {
      absl::string_view nm = absl::StripAsciiWhitespace(l.substr(5));
      fn_names.insert(std::string(absl::StripAsciiWhitespace(nm.substr(0, nm.find(',')))));
    } else if (l.rfind(".amdgcn_target", 0) == 0) {
      m.target = std::string(absl::StripAsciiWhitespace(l.substr(14)));
    } else if (l.rfind(".amdhsa_kernel ", 0) == 0) {
      in_desc = std::string(absl::StripAsciiWhitespace(l.substr(15)));
      desc_line = static_cast<int>(i + 1);
      descs[in_desc];
    } else if (l.rfind(".end_amdhsa_kernel", 0) == 0) {
      in_desc.clear();
    } else if (!in_desc.empty()) {
      KernelDesc& d = descs[in_desc];
      if (l.rfind(".amdhsa_user_sgpr_count", 0) == 0) d.user_sgpr_count = static_cast<int>(int_after(l, "count"));
      if (l.rfind(".amdhsa_system_sgpr_workgroup_id_x", 0) == 0) d.wg_id_x = int_after(l, "id_x") == 1;
      if (l.rfind(".amdhsa_user_sgpr_private_segment_buffer", 0) == 0) d.private_buffer = int_after(l, "buffer") == 1;
      if (l.rfind(".amdhsa_user_sgpr_dispatch_ptr", 0) == 0) d.dispatch_ptr = int_after(l, "ptr") == 1;
      if (l.rfind(".amdhsa_user_sgpr_queue_ptr", 0) == 0) d.queue_ptr = int_after(l, "ptr") == 1;
    }
    // Metadata (YAML, after .amdgpu_metadata): kernel-level keys share one indentation.
    absl::string_view t = absl::StripLeadingAsciiWhitespace(raw);
    size_t indent = raw.size() - t.size();
    if (t.rfind(".max_flat_workgroup_size:", 0) == 0) {
      pending_bound = int_after(t, "size");
      pending_indent = indent;
    } else if (t.rfind(".name:", 0) == 0 && pending_bound > 0 && indent == pending_indent) {
      bounds[std::string(absl::StripAsciiWhitespace(t.substr(6)))] = pending_bound;
      pending_bound = -1;
    }
  }
  if (!in_desc.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "AMDGCN line ", desc_line, ": .amdhsa_kernel ", in_desc, " is never closed by .end_amdhsa_kernel."));
  }
  // Pass 2: bodies.
  Function* fn = nullptr;
  for (size_t i = 0; i < lines.size(); ++i) {
    absl::string_view l = strip_comment(lines[i]);
    if (l.empty()) continue;
    const int line = static_cast<int>(i + 1);
    if (l.back() == ':' && l.find(' ') == absl::string_view::npos) {
      std::string name(l.substr(0, l.size() - 1));
      if (fn_names.contains(name)) {
        Function f;
        f.name = name;
        f.is_entry = descs.contains(name);
        m.functions.push_back(std::move(f));
        fn = &m.functions.back();
        continue;
      }
      if (name.rfind(".Lfunc_end", 0) == 0) {
        fn = nullptr;
        continue;
      }
      if (fn != nullptr) {
        Instr lab;
        lab.line = line;
        lab.label = name;
        lab.text = std::string(l);
        fn->body.push_back(std::move(lab));
      }
      continue;
    }
    if (fn == nullptr || l[0] == '.') continue;
    auto ins = parse_line(l, line);
    if (!ins.ok()) return ins.status();
    fn->body.push_back(std::move(*ins));
  }
  for (auto& [name, d] : descs) {
    if (!fn_names.contains(name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "AMDGCN kernel descriptor '", name, "' names no function in the text."));
    }
  }
  for (Function& f : m.functions) {
    auto it = descs.find(f.name);
    if (it == descs.end()) continue;
    const KernelDesc& d = it->second;
    f.gcn_kernarg_sgpr = 4 * d.private_buffer + 2 * d.dispatch_ptr + 2 * d.queue_ptr;
    if (d.wg_id_x && d.user_sgpr_count >= 0) f.gcn_workgroup_id_x_sgpr = d.user_sgpr_count;
    if (auto b = bounds.find(f.name); b != bounds.end()) f.launch_bound[0] = b->second;
  }
  return m;
}

}  // namespace fixbits::verify
