// GemmDesc: validation, canonical text form, parser and stable hash.
//
// Contract (see GemmDesc.h):
//   * validate(d) is OK exactly when every field holds a value the semantics in
//     GemmDesc.h gives a meaning to, and a field with no effect for d's family
//     holds its default (so two valid descriptors that differ always name
//     different trees, as far as the text can tell); otherwise InvalidArgument
//     naming the first bad field.
//   * to_string(d) prints every field in a fixed order, never fails (an enum
//     holding an out-of-range value prints as "?<number>", which parse rejects).
//   * parse_gemm_desc(to_string(d)) == d for every valid d; any other text gives
//     InvalidArgument naming the field and its byte position. It never crashes.
//   * hash(d) = FNV-1a 64 over the bytes of to_string(d), offset basis
//     0xcbf29ce484222325, prime 0x100000001b3 (the published FNV constants).
//
// Example:
//   gemm{family=split_k a=f16 b=f16 acc=f32 out=f16 instr=mma_sync ik=16 fast_accum=1
//        k_loop=0/last cuts=[192:chain] partial=f32 merge=f32 lane_layout=contiguous
//        lanes=32 lane_tile=8 lane_fold=[] alpha_beta=0 bias=0 act=none}
//   (one line; shown wrapped here).
#include "dsl/GemmDesc.h"

#include <algorithm>
#include <ostream>
#include <string_view>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "dsl/DescText.h"

namespace fixbits::dsl {
namespace {

using desc_text::EnumName;

constexpr EnumName<GemmFamily> kFamilyNames[] = {
    {GemmFamily::kPlain, "plain"},
    {GemmFamily::kSplitK, "split_k"},
    {GemmFamily::kChainedChunks, "chained_chunks"},
    {GemmFamily::kGemv, "gemv"},
    {GemmFamily::kDot, "dot"},
};
constexpr EnumName<Instruction> kInstructionNames[] = {
    {Instruction::kScalarFma, "scalar_fma"},
    {Instruction::kScalarMulAdd, "scalar_mul_add"},
    {Instruction::kMmaSync, "mma_sync"},
    {Instruction::kWgmma, "wgmma"},
};
constexpr EnumName<ShortTurn> kShortTurnNames[] = {
    {ShortTurn::kLast, "last"},
    {ShortTurn::kFirst, "first"},
};
constexpr EnumName<Fold> kFoldNames[] = {
    {Fold::kChain, "chain"},
    {Fold::kTreeUp, "tree_up"},
    {Fold::kTreeDown, "tree_down"},
};
constexpr EnumName<LaneLayout> kLaneLayoutNames[] = {
    {LaneLayout::kContiguous, "contiguous"},
    {LaneLayout::kStrided, "strided"},
};
constexpr EnumName<Activation> kActivationNames[] = {
    {Activation::kNone, "none"},
    {Activation::kRelu, "relu"},
};
// The seed of the text form ("seed=-0"; "+0", the default, is accepted but never printed).
constexpr EnumName<bool> kSeedNames[] = {
    {false, "+0"},
    {true, "-0"},
};

bool is_scalar(Instruction i) {
  return i == Instruction::kScalarFma || i == Instruction::kScalarMulAdd;
}

bool is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

absl::Status bad(std::string msg) { return absl::InvalidArgumentError(std::move(msg)); }

}  // namespace

bool has_split(const GemmDesc& d) {
  return d.family == GemmFamily::kSplitK || (d.family == GemmFamily::kGemv && !d.k_cuts.empty());
}

int64_t cut_parts(const KCut& c, int64_t len) {
  if (c.segments > 0) return len > 0 ? c.segments : 0;
  return (len + c.span - 1) / c.span;
}

std::pair<int64_t, int64_t> cut_part(const KCut& c, int64_t j, int64_t k0, int64_t k1) {
  if (c.segments == 0) return {k0 + j * c.span, std::min(k1, k0 + (j + 1) * c.span)};
  const int64_t tiles = (k1 - k0 + c.span - 1) / c.span;
  const int64_t base = tiles / c.segments;
  const int64_t first_long = c.segments - tiles % c.segments;  // segments before it: base
  // Tiles before segment j: j * base, plus one for each long segment before it.
  auto tiles_before = [&](int64_t s) { return s * base + std::max<int64_t>(0, s - first_long); };
  return {std::min(k1, k0 + tiles_before(j) * c.span),
          std::min(k1, k0 + tiles_before(j + 1) * c.span)};
}

int lane_slots(int lanes) {
  int slots = 1;
  while (slots < lanes && slots < (1 << 30)) slots *= 2;
  return slots;
}

int64_t gemv_tiles(const GemmDesc& d, int64_t len) { return (len + d.lane_tile - 1) / d.lane_tile; }

std::pair<int64_t, int64_t> gemv_contiguous_span(const GemmDesc& d, int64_t l, int64_t k0, int64_t k1) {
  const int64_t run = (gemv_tiles(d, k1 - k0) + d.lanes - 1) / d.lanes;  // whole tiles per lane
  return {std::min(k1, k0 + l * run * d.lane_tile), std::min(k1, k0 + (l + 1) * run * d.lane_tile)};
}

int matrix_instruction_k(DType t) {
  switch (t) {
    case DType::kF16:
    case DType::kBF16:
      return 16;
    case DType::kF8E4M3:
    case DType::kF8E5M2:
      return 32;
    case DType::kTF32:
      return 8;
    case DType::kF32:
      return 0;
  }
  return 0;
}

namespace {

absl::Status validate_dtypes(const GemmDesc& d) {
  for (auto [name, t] : {std::pair<const char*, DType>{"a_dtype", d.a_dtype},
                         {"b_dtype", d.b_dtype},
                         {"acc_dtype", d.acc_dtype},
                         {"out_dtype", d.out_dtype},
                         {"partial_dtype", d.partial_dtype},
                         {"merge_dtype", d.merge_dtype}}) {
    if (!desc_text::dtype_in_range(t)) {
      return bad(absl::StrFormat("GemmDesc.%s holds %d, which is no DType.", name,
                                 static_cast<int>(t)));
    }
  }
  if (d.acc_dtype != DType::kF32) {
    return bad(absl::StrFormat(
        "GemmDesc.acc_dtype is %s but only an f32 accumulator is supported.",
        dtype_name(d.acc_dtype)));
  }
  if (d.out_dtype == DType::kTF32) {
    return bad(
        "GemmDesc.out_dtype is tf32, which is an input format only; use f32, f16, bf16, "
        "f8e4m3 or f8e5m2.");
  }
  for (auto [name, t] : {std::pair<const char*, DType>{"partial_dtype", d.partial_dtype},
                         {"merge_dtype", d.merge_dtype}}) {
    if (t != DType::kF32 && t != DType::kF16 && t != DType::kBF16) {
      return bad(absl::StrFormat("GemmDesc.%s is %s but must be f32, f16 or bf16.", name,
                                 dtype_name(t)));
    }
  }
  return absl::OkStatus();
}

absl::Status validate_instruction(const GemmDesc& d) {
  if (!desc_text::enum_in_range(d.instruction, kInstructionNames)) {
    return bad(absl::StrFormat("GemmDesc.instruction holds %d, which is no Instruction.",
                               static_cast<int>(d.instruction)));
  }
  const std::string instr = desc_text::enum_name(d.instruction, kInstructionNames);
  if (is_scalar(d.instruction)) {
    if (d.instruction_k != 1) {
      return bad(absl::StrFormat(
          "GemmDesc.instruction_k is %d but %s folds one product per instruction; set it "
          "to 1.",
          d.instruction_k, instr));
    }
  } else {
    const int want_a = matrix_instruction_k(d.a_dtype);
    if (want_a == 0) {
      return bad(absl::StrFormat(
          "GemmDesc.a_dtype is %s but %s takes f16, bf16, tf32, f8e4m3 or f8e5m2 inputs.",
          dtype_name(d.a_dtype), instr));
    }
    const bool both_fp8 = dtype_is_fp8(d.a_dtype) && dtype_is_fp8(d.b_dtype);
    if (d.b_dtype != d.a_dtype && !both_fp8) {
      return bad(absl::StrFormat(
          "GemmDesc.b_dtype is %s but a_dtype is %s; %s takes two inputs of one dtype "
          "(only the two fp8 formats may be mixed).",
          dtype_name(d.b_dtype), dtype_name(d.a_dtype), instr));
    }
    // mma.sync also has m16n8k8 for f16/bf16 (the s1688 kernels of CUTLASS's sm75
    // path, which cuBLAS still launches on sm_90): 8 products per instruction.
    const bool half = d.a_dtype == DType::kF16 || d.a_dtype == DType::kBF16;
    const bool k8 = d.instruction == Instruction::kMmaSync && half && d.instruction_k == 8;
    if (d.instruction_k != want_a && !k8) {
      return bad(absl::StrFormat(
          "GemmDesc.instruction_k is %d but %s with %s inputs folds %d products per "
          "instruction%s.",
          d.instruction_k, instr, dtype_name(d.a_dtype), want_a,
          d.instruction == Instruction::kMmaSync && half ? " (or 8: m16n8k8)" : ""));
    }
  }
  if (!desc_text::enum_in_range(d.k_loop_step.short_turn, kShortTurnNames)) {
    return bad(absl::StrFormat(
        "GemmDesc.k_loop_step.short_turn holds %d, which is no ShortTurn.",
        static_cast<int>(d.k_loop_step.short_turn)));
  }
  if (d.k_loop_step.step < 0 || d.k_loop_step.step % d.instruction_k != 0) {
    return bad(absl::StrFormat(
        "GemmDesc.k_loop_step.step is %d but must be 0 (one instruction per turn) or a "
        "positive multiple of instruction_k (%d).",
        d.k_loop_step.step, d.instruction_k));
  }
  return absl::OkStatus();
}

// A segment split is one kernel launch's gridDim.z (at most 65535 on CUDA).
constexpr int64_t kMaxSegments = 4096;

absl::Status validate_cuts(const GemmDesc& d) {
  const std::string fam(desc_text::enum_name(d.family, kFamilyNames));
  // A split (has_split) is merged by a second kernel in part order: its fold is a chain.
  auto split_is_chain = [&](const char* which) {
    if (d.k_cuts[0].fold == Fold::kChain) return absl::OkStatus();
    return bad(absl::StrFormat(
        "GemmDesc.k_cuts[0].fold is %s but %s is merged by a second kernel in part order; "
        "it must be chain.",
        desc_text::enum_name(d.k_cuts[0].fold, kFoldNames), which));
  };
  for (size_t i = 0; i < d.k_cuts.size(); ++i) {
    const KCut& c = d.k_cuts[i];
    if (c.span <= 0) {
      return bad(absl::StrFormat("GemmDesc.k_cuts[%d].span is %d but must be positive.",
                                 i, c.span));
    }
    if (!desc_text::enum_in_range(c.fold, kFoldNames)) {
      return bad(absl::StrFormat("GemmDesc.k_cuts[%d].fold holds %d, which is no Fold.", i,
                                 static_cast<int>(c.fold)));
    }
    if (c.segments < 0 || c.segments == 1 || c.segments > kMaxSegments) {
      return bad(absl::StrFormat(
          "GemmDesc.k_cuts[%d].segments is %d but must be 0 (parts of the span) or a "
          "segment count in [2, %d].",
          i, c.segments, kMaxSegments));
    }
    if (c.segments > 0 && (i > 0 || d.family != GemmFamily::kSplitK || d.k_cuts.size() > 1)) {
      return bad(absl::StrFormat(
          "GemmDesc.k_cuts[%d].segments is %d on a %s descriptor with %d cut levels; segments "
          "are the split of family split_k (k_cuts[0]) with no inner level so far.",
          i, c.segments, desc_text::enum_name(d.family, kFamilyNames), d.k_cuts.size()));
    }
    if (i > 0 && c.span > d.k_cuts[i - 1].span) {
      return bad(absl::StrFormat(
          "GemmDesc.k_cuts[%d].span is %d but the enclosing level k_cuts[%d] has span %d; "
          "an inner part cannot be longer than the part it cuts.",
          i, c.span, i - 1, d.k_cuts[i - 1].span));
    }
  }
  switch (d.family) {
    case GemmFamily::kPlain:
      if (!d.k_cuts.empty()) {
        return bad(absl::StrFormat(
            "GemmDesc.k_cuts has %d levels but family plain walks the whole K axis "
            "uncut; use split_k or chained_chunks.",
            d.k_cuts.size()));
      }
      break;
    case GemmFamily::kSplitK:
      if (d.k_cuts.empty()) {
        return bad("GemmDesc.k_cuts is empty but family split_k needs at least one cut "
                   "(the split, outermost).");
      }
      if (absl::Status s = split_is_chain("the split of family split_k"); !s.ok()) return s;
      break;
    case GemmFamily::kChainedChunks:
      if (!is_scalar(d.instruction)) {
        return bad(absl::StrFormat(
            "GemmDesc.instruction is %s but family chained_chunks is the scalar path; use "
            "scalar_fma or scalar_mul_add.",
            desc_text::enum_name(d.instruction, kInstructionNames)));
      }
      if (d.k_cuts.empty()) {
        return bad("GemmDesc.k_cuts is empty but family chained_chunks needs at least "
                   "one cut (the chunk each thread takes).");
      }
      break;
    case GemmFamily::kGemv:
    case GemmFamily::kDot:
      if (!is_scalar(d.instruction)) {
        return bad(absl::StrFormat(
            "GemmDesc.instruction is %s but each lane of family %s folds its elements "
            "with a scalar instruction; use scalar_fma or scalar_mul_add.",
            desc_text::enum_name(d.instruction, kInstructionNames), fam));
      }
      if (d.family == GemmFamily::kGemv && d.k_cuts.size() == 1) {
        if (absl::Status s = split_is_chain("the one cut of family gemv is a split, which");
            !s.ok()) {
          return s;
        }
        break;
      }
      if (!d.k_cuts.empty()) {
        return bad(absl::StrFormat(
            "GemmDesc.k_cuts has %d levels but family %s deals K to its lanes uncut%s.",
            d.k_cuts.size(), fam,
            d.family == GemmFamily::kGemv ? " (or split by one chain cut)" : ""));
      }
      break;
  }
  if (!has_split(d)) {
    if (d.partial_dtype != DType::kF32) {
      return bad(absl::StrFormat(
          "GemmDesc.partial_dtype is %s but only a split (family split_k, or gemv with a "
          "cut) writes partials; family %s without one must leave it f32.",
          dtype_name(d.partial_dtype), fam));
    }
    if (d.merge_dtype != DType::kF32) {
      return bad(absl::StrFormat(
          "GemmDesc.merge_dtype is %s but only a split (family split_k, or gemv with a cut) "
          "runs a merge; family %s without one must leave it f32.",
          dtype_name(d.merge_dtype), fam));
    }
  }
  return absl::OkStatus();
}

absl::Status validate_lanes(const GemmDesc& d) {
  const bool dot = d.family == GemmFamily::kDot;
  if (!desc_text::enum_in_range(d.lane_layout, kLaneLayoutNames)) {
    return bad(absl::StrFormat("GemmDesc.lane_layout holds %d, which is no LaneLayout.",
                               static_cast<int>(d.lane_layout)));
  }
  // Family gemv takes any count (cuBLAS's gemvNSP deals K to 20, 24 or 26 lanes);
  // the others keep the power-of-two rule.
  if (d.family == GemmFamily::kGemv) {
    if (d.lanes < 1 || d.lanes > 64) {
      return bad(absl::StrFormat(
          "GemmDesc.lanes is %d but family gemv needs 1 to 64 lanes (one warp, two lanes "
          "per thread above 32).",
          d.lanes));
    }
  } else {
    const int max_lanes = dot ? 1024 : 64;
    if (!is_pow2(d.lanes) || d.lanes > max_lanes) {
      return bad(absl::StrFormat("GemmDesc.lanes is %d but must be a power of two in [1, %d].",
                                 d.lanes, max_lanes));
    }
  }
  if (d.lane_tile < 1) {
    return bad(absl::StrFormat("GemmDesc.lane_tile is %d but must be at least 1.",
                               d.lane_tile));
  }
  if (dot) {
    if (d.blocks < 1 || d.blocks > (int64_t{1} << 31) / d.lanes) {
      return bad(absl::StrFormat(
          "GemmDesc.blocks is %d but family dot needs 1 to 2^31 / lanes blocks.", d.blocks));
    }
    if (d.lane_layout != LaneLayout::kStrided) {
      return bad("GemmDesc.lane_layout is contiguous but family dot's threads take strided "
                 "tiles (a grid-stride loop); use strided.");
    }
  } else if (d.blocks != 0) {
    return bad(absl::StrFormat(
        "GemmDesc.blocks is %d but only family dot has blocks; leave it 0.", d.blocks));
  }
  if (d.family != GemmFamily::kGemv && !dot) {
    if (!d.lane_fold.empty()) {
      return bad(absl::StrFormat(
          "GemmDesc.lane_fold has %d rounds but only family gemv folds across lanes; "
          "leave it empty.",
          d.lane_fold.size()));
    }
    return absl::OkStatus();
  }
  if (d.family == GemmFamily::kGemv) {
    // Turns (GemmDesc.h): fast accumulation folds straight through (step 0); without
    // it the range is cut into turns of a positive step.
    if (d.use_fast_accum != (d.k_loop_step.step == 0)) {
      return bad(absl::StrFormat(
          "GemmDesc.k_loop_step.step is %d with use_fast_accum %d but family gemv takes "
          "either fast_accum=1 with step 0 (no turns) or fast_accum=0 with a positive "
          "step (lanes fold each turn from +0.0 and add it to their accumulator).",
          d.k_loop_step.step, d.use_fast_accum ? 1 : 0));
    }
    // An empty fold chains the lanes in index order.
    if (d.lane_fold.empty()) return absl::OkStatus();
  }
  // The butterfly runs over lane_slots(lanes) slots; with a power-of-two count that
  // is `lanes` itself, so the rule (and every such descriptor) is what it was.
  const int slots = lane_slots(d.lanes);
  int seen = 0;
  for (size_t i = 0; i < d.lane_fold.size(); ++i) {
    const int off = d.lane_fold[i];
    if (!is_pow2(off) || off >= slots) {
      return bad(absl::StrFormat(
          "GemmDesc.lane_fold[%d] is %d but every offset must be a power of two below "
          "%d (lanes %d rounded up to a power of two).",
          i, off, slots, d.lanes));
    }
    if (seen & off) {
      return bad(absl::StrFormat(
          "GemmDesc.lane_fold[%d] is %d, which an earlier round already used.", i, off));
    }
    seen |= off;
  }
  if (seen != slots - 1) {
    return bad(absl::StrFormat(
        "GemmDesc.lane_fold is [%s] but must use every power of two below %d (lanes %d "
        "rounded up to a power of two) exactly once, or lanes would stay unfolded.",
        absl::StrJoin(d.lane_fold, ","), slots, d.lanes));
  }
  return absl::OkStatus();
}

// Key order of the text form; parse requires exactly these keys, once each.
constexpr std::string_view kKeys[] = {
    "family", "a",       "b",     "acc",         "out",   "instr",     "ik",
    "fast_accum", "k_loop", "cuts", "partial",   "merge", "lane_layout", "lanes",
    "lane_tile",  "lane_fold", "alpha_beta", "bias", "act",
    "blocks",   // optional (family dot only)
    "seed"};    // optional (neg_zero_seed only)
constexpr size_t kRequiredKeys = std::size(kKeys) - 2;

}  // namespace

absl::Status validate(const GemmDesc& d) {
  if (!desc_text::enum_in_range(d.family, kFamilyNames)) {
    return bad(absl::StrFormat("GemmDesc.family holds %d, which is no GemmFamily.",
                               static_cast<int>(d.family)));
  }
  if (absl::Status s = validate_dtypes(d); !s.ok()) return s;
  if (absl::Status s = validate_instruction(d); !s.ok()) return s;
  if (absl::Status s = validate_cuts(d); !s.ok()) return s;
  if (absl::Status s = validate_lanes(d); !s.ok()) return s;
  if (!desc_text::enum_in_range(d.activation, kActivationNames)) {
    return bad(absl::StrFormat("GemmDesc.activation holds %d, which is no Activation.",
                               static_cast<int>(d.activation)));
  }
  if (d.neg_zero_seed &&
      (d.family != GemmFamily::kPlain || !is_scalar(d.instruction) || !d.k_cuts.empty())) {
    return bad(absl::StrFormat(
        "GemmDesc.neg_zero_seed (seed=-0) is set on a %s descriptor with instruction %s "
        "and %d cuts; only family plain with a scalar instruction and no cuts starts "
        "from -0.0 (cuBLAS's K = 1 kernel).",
        desc_text::enum_name(d.family, kFamilyNames),
        desc_text::enum_name(d.instruction, kInstructionNames), d.k_cuts.size()));
  }
  return absl::OkStatus();
}

std::string to_string(const GemmDesc& d) {
  using desc_text::enum_name;
  using desc_text::safe_dtype_name;
  std::string cuts;
  for (size_t i = 0; i < d.k_cuts.size(); ++i) {
    absl::StrAppend(&cuts, i ? "," : "", d.k_cuts[i].span,
                    d.k_cuts[i].segments > 0 ? absl::StrCat("/seg", d.k_cuts[i].segments) : "",
                    ":", enum_name(d.k_cuts[i].fold, kFoldNames));
  }
  return absl::StrCat(
      "gemm{family=", enum_name(d.family, kFamilyNames), " a=", safe_dtype_name(d.a_dtype),
      " b=", safe_dtype_name(d.b_dtype), " acc=", safe_dtype_name(d.acc_dtype),
      " out=", safe_dtype_name(d.out_dtype),
      " instr=", enum_name(d.instruction, kInstructionNames), " ik=", d.instruction_k,
      " fast_accum=", d.use_fast_accum ? 1 : 0, " k_loop=", d.k_loop_step.step, "/",
      enum_name(d.k_loop_step.short_turn, kShortTurnNames), " cuts=[", cuts, "]",
      " partial=", safe_dtype_name(d.partial_dtype),
      " merge=", safe_dtype_name(d.merge_dtype),
      " lane_layout=", enum_name(d.lane_layout, kLaneLayoutNames), " lanes=", d.lanes,
      " lane_tile=", d.lane_tile, " lane_fold=[", absl::StrJoin(d.lane_fold, ","), "]",
      " alpha_beta=", d.alpha_beta ? 1 : 0, " bias=", d.bias ? 1 : 0,
      " act=", enum_name(d.activation, kActivationNames),
      d.family == GemmFamily::kDot ? absl::StrCat(" blocks=", d.blocks) : std::string(),
      d.neg_zero_seed ? " seed=-0" : "", "}");
}

absl::StatusOr<GemmDesc> parse_gemm_desc(std::string_view text) {
  absl::StatusOr<desc_text::Fields> fields =
      desc_text::split_fields("GemmDesc", "gemm", text, kKeys, kRequiredKeys);
  if (!fields.ok()) return fields.status();
  desc_text::FieldReader r("GemmDesc", text, *fields);
  GemmDesc d;
  r.enum_field("family", kFamilyNames, &d.family);
  r.dtype_field("a", &d.a_dtype);
  r.dtype_field("b", &d.b_dtype);
  r.dtype_field("acc", &d.acc_dtype);
  r.dtype_field("out", &d.out_dtype);
  r.enum_field("instr", kInstructionNames, &d.instruction);
  r.int_field("ik", &d.instruction_k);
  r.bool_field("fast_accum", &d.use_fast_accum);
  r.pair_field("k_loop", '/', [&](std::string_view step, std::string_view turn) {
    if (!r.parse_int(step, &d.k_loop_step.step, "k_loop", "the step")) return;
    r.parse_enum(turn, kShortTurnNames, &d.k_loop_step.short_turn, "k_loop",
                 "the short turn");
  });
  r.list_field("cuts", [&](std::string_view item) {
    r.split_pair(item, ':', "cuts", [&](std::string_view span, std::string_view fold) {
      KCut c;
      // "<span>" or "<span>/seg<P>" (segments).
      if (const size_t slash = span.find('/'); slash != std::string_view::npos) {
        std::string_view seg = span.substr(slash + 1);
        span = span.substr(0, slash);
        if (seg.substr(0, 3) != "seg") {
          r.fail("cuts", seg, "a span's \"/\" is followed by seg<P>, e.g. 64/seg2");
          return;
        }
        seg.remove_prefix(3);
        if (!r.parse_int(seg, &c.segments, "cuts", "a segment count")) return;
      }
      if (!r.parse_int(span, &c.span, "cuts", "a span")) return;
      if (!r.parse_enum(fold, kFoldNames, &c.fold, "cuts", "a fold")) return;
      d.k_cuts.push_back(c);
    });
  });
  r.dtype_field("partial", &d.partial_dtype);
  r.dtype_field("merge", &d.merge_dtype);
  r.enum_field("lane_layout", kLaneLayoutNames, &d.lane_layout);
  r.int_field("lanes", &d.lanes);
  r.int_field("lane_tile", &d.lane_tile);
  r.list_field("lane_fold", [&](std::string_view item) {
    int v = 0;
    if (r.parse_int(item, &v, "lane_fold", "an offset")) d.lane_fold.push_back(v);
  });
  r.bool_field("alpha_beta", &d.alpha_beta);
  r.bool_field("bias", &d.bias);
  r.enum_field("act", kActivationNames, &d.activation);
  if (r.has("blocks")) r.int_field("blocks", &d.blocks);
  if (r.has("seed")) r.enum_field("seed", kSeedNames, &d.neg_zero_seed);
  if (!r.status().ok()) return r.status();
  if (absl::Status s = validate(d); !s.ok()) return s;
  return d;
}

std::string family_name(GemmFamily f) { return desc_text::enum_name(f, kFamilyNames); }

absl::StatusOr<GemmFamily> parse_family(std::string_view name) {
  for (const auto& n : kFamilyNames) {
    if (n.name == name) return n.value;
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "'%s' is not a GemmDesc family (plain, split_k, chained_chunks, gemv, dot).", name));
}

uint64_t hash(const GemmDesc& d) { return desc_text::fnv1a64(to_string(d)); }

std::ostream& operator<<(std::ostream& os, const GemmDesc& d) { return os << to_string(d); }

}  // namespace fixbits::dsl
