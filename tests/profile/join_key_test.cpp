// profile/JoinKey on the CPU: a key the table holds stays; a key one class contains
// joins it; a key no class contains makes a class of its own (later keys of the same
// fields join that one); join_answer_at gives the shape's probe point, keeps it as a seen
// point through the table's text, and probe_classes then probes the new class there
// (fixbits-cublas-scan --probe-at of an answer the map's GPU never gave).
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "profile/CublasScan.h"
#include "profile/CublasTable.h"
#include "profile/JoinKey.h"

namespace fixbits::profile {
namespace {

using runtime::AlgoConfig;
using runtime::GemmShape;

AlgoConfig nvjet(uint32_t tile) {
  AlgoConfig a;
  a.id = 66;
  a.tile_id = tile;
  a.stages_id = 13;
  return a;
}

// A table scanned over a small grid with every answer nvjet tile 10: one variant, one
// class (given a descriptor, as a finished table has).
CublasTable one_class_table(ScanState* state) {
  CublasTable t;
  t.arch = "sm_90";
  t.library = "130100";
  const ScanGrid grid{.ms = {1, 8}, .ns = {1, 8}, .ks = {16, 256}};
  EXPECT_TRUE(scan_heuristic(t, *state, GemmShape{}, grid,
                             [](const GemmShape&) -> absl::StatusOr<AlgoConfig> { return nvjet(10); })
                  .ok());
  t.classes[0].desc = dsl::GemmDesc{};
  t.classes[0].probes = {ProbePoint{.variant = 0, .m = 8, .n = 8, .k = 256}};
  return t;
}

TEST(JoinKey, HeldGainedAndNewClassKeys) {
  ScanState state;
  CublasTable t = one_class_table(&state);
  const std::string fam = family_of(GemmShape{});
  ASSERT_EQ(t.variants.size(), 1u);

  JoinedKey j = join_key(t, state, fam, answer_of(nvjet(10)).key, "unused");
  EXPECT_EQ(j.how, JoinedKey::How::kHeld);
  EXPECT_EQ(j.variant, 0);
  EXPECT_EQ(t.variants.size(), 1u);

  // Another tile: nvjet's class does not fix it, so the class gains the key.
  j = join_key(t, state, fam, answer_of(nvjet(20)).key, "unused");
  EXPECT_EQ(j.how, JoinedKey::How::kGained);
  EXPECT_EQ(j.cls, 0);
  EXPECT_EQ(j.variant, 1);
  EXPECT_EQ(t.variants[1].cls, 0);
  EXPECT_TRUE(t.classes[0].desc.has_value()) << "a gained class keeps its descriptor";
  EXPECT_EQ(state.shapes.size(), t.variants.size());

  // Another custom option (a coarse field): a class of its own, no descriptor, the note.
  AlgoConfig custom = nvjet(10);
  custom.custom_option = 13;
  j = join_key(t, state, fam, answer_of(custom).key, "met at --probe-at");
  EXPECT_EQ(j.how, JoinedKey::How::kNewClass);
  ASSERT_EQ(j.cls, 1);
  EXPECT_FALSE(t.classes[1].desc.has_value());
  EXPECT_EQ(t.classes[1].note, "met at --probe-at");
  EXPECT_TRUE(contains(t.classes[1].cls, answer_of(custom).key));
  EXPECT_FALSE(contains(t.classes[1].cls, t.variants[0].key));
  // A later key of the same class fields joins that class.
  custom.tile_id = 30;
  j = join_key(t, state, fam, answer_of(custom).key, "unused");
  EXPECT_EQ(j.how, JoinedKey::How::kGained);
  EXPECT_EQ(j.cls, 1);
  EXPECT_EQ(t.classes.size(), 2u);
  for (const TableVariant& v : t.variants) EXPECT_TRUE(contains(t.classes[v.cls].cls, v.key));
}

TEST(JoinKey, AnAnswerTheMapNeverMetIsProbedAtItsShape) {
  ScanState state;
  CublasTable t = one_class_table(&state);
  AlgoConfig answer = nvjet(10);
  answer.custom_option = 13;
  const GemmShape s{.m = 14497, .n = 1, .k = 364};
  // point_of_shape alone cannot place it.
  EXPECT_EQ(point_of_shape(t, s, answer, nullptr).status().code(), absl::StatusCode::kNotFound);
  JoinedKey j;
  absl::StatusOr<ProbePoint> pt = join_answer_at(t, state, s, answer, "met at 14497x1x364", &j);
  ASSERT_TRUE(pt.ok()) << pt.status();
  EXPECT_EQ(j.how, JoinedKey::How::kNewClass);
  EXPECT_EQ(*pt, (ProbePoint{.variant = j.variant, .m = 14497, .n = 1, .k = 364, .splitk = 1}));
  EXPECT_EQ(t.variants[j.variant].seen, std::vector<ProbePoint>{*pt});
  // Joining again at the same shape adds nothing.
  JoinedKey again;
  ASSERT_TRUE(join_answer_at(t, state, s, answer, "unused", &again).ok());
  EXPECT_EQ(again.how, JoinedKey::How::kHeld);
  EXPECT_EQ(t.variants[j.variant].seen.size(), 1u);

  // The text keeps the shape; a resumed table probes the new class there.
  absl::StatusOr<CublasTable> back = parse_table(write_table(t));
  ASSERT_TRUE(back.ok()) << back.status();
  ScanState resumed;
  ASSERT_TRUE(rebuild_shapes(*back, resumed, 2).ok());
  std::vector<GemmShape> probed;
  const ProbeFn probe = [&](const GemmShape& at, const CublasKey&,
                            const std::vector<dsl::GemmDesc>&) -> absl::StatusOr<dsl::GemmDesc> {
    probed.push_back(at);
    return dsl::GemmDesc{};
  };
  ProbeOptions o;
  o.extra_points[j.cls] = {*pt};
  absl::StatusOr<ProbeStats> stats = probe_classes(*back, resumed, probe, o);
  ASSERT_TRUE(stats.ok()) << stats.status();
  ASSERT_FALSE(probed.empty());
  EXPECT_EQ(std::tie(probed[0].m, probed[0].n, probed[0].k), std::tie(s.m, s.n, s.k));
  EXPECT_TRUE(back->classes[j.cls].desc.has_value()) << back->classes[j.cls].note;
}

}  // namespace
}  // namespace fixbits::profile
