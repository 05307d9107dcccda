// Asm.h — the parsed form of one assembly module, shared by the PTX and AMDGCN readers.
// Contract: a Module holds functions; a function holds its statements in program order,
// each a label or an instruction (optional guard, dotted/underscored opcode, operand texts,
// trailing modifiers). The readers never interpret semantics; the walk does.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fixbits::verify {

enum class Isa { kPtx, kGcn };

// One statement: a label (label non-empty, opcode empty) or an instruction.
struct Instr {
  int line = 0;                        // 1-based source line, for explanations
  std::string label;                   // "$L__BB0_2" for a label statement
  std::string guard;                   // "%p1" for "@%p1" / "@!%p1"; empty when unguarded
  bool guard_negated = false;
  std::string opcode;                  // "add.rn.f32", "v_add_f32_dpp", ...
  std::vector<std::string> operands;   // "%r1", "{%r1, %r2}", "[%rd1+4]", "v[0:1]", "0f3F800000"
  std::vector<std::string> modifiers;  // GCN trailing modifiers: "row_shr:1", "offset:16"
  std::string text;                    // the statement as written, whitespace-normalized
};

// A declared variable in a state space (.shared, .local, .global, LDS).
struct VarDecl {
  std::string space;  // "shared", "local", "global", "param"
  std::string name;
  int64_t bytes = 0;
};

struct Function {
  std::string name;
  bool is_entry = false;
  std::vector<std::string> params;  // parameter names in declaration order
  int64_t launch_bound[3] = {0, 0, 0};  // .reqntid/.maxntid or max_flat_workgroup_size; 0 = unknown
  bool launch_bound_exact = false;      // .reqntid: %ntid equals the bound
  std::vector<VarDecl> locals;      // .reg excluded; .shared/.local declared inside the body
  std::vector<Instr> body;
  // GCN only: SGPR index holding workgroup id x (or -1), and the kernarg pointer SGPR pair base.
  int gcn_workgroup_id_x_sgpr = -1;
  int gcn_kernarg_sgpr = 0;
};

struct Module {
  Isa isa = Isa::kPtx;
  std::string version;       // PTX .version
  std::string target;        // PTX .target / GCN .amdgcn_target
  int address_size = 64;
  std::vector<VarDecl> globals;  // module-level .shared/.global/.const variables
  std::vector<Function> functions;
};

// Limits that bound every reader loop, so a hostile input cannot exhaust memory or time.
inline constexpr size_t kMaxInputBytes = 64u << 20;
inline constexpr size_t kMaxStatements = 1u << 20;  // labels included
inline constexpr size_t kMaxOperands = 1024;

}  // namespace fixbits::verify
