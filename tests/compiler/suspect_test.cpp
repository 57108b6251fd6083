// `suspect` (docs/language.md §5): a signature that only flags lines that look
// like fault evidence; never an event, so it has no symptom or storm. Its
// optional class is only the emitter family's guess for an unclassified root.
#include <gtest/gtest.h>

#include <string>

#include "test_util.h"

namespace reflex {
namespace {

using testing::check_text;
using testing::dump;
using testing::has_code;

std::string kb(const std::string& extra) {
  return R"(reflex 1
class host_kernel "host"
signature suspect_nvrm {
  on host
  suspect
  match /NVRM: .*error/
)" + extra +
         R"(
}
signature oops { on host from kernel match /Oops: / class host_kernel }
)";
}

TEST(Suspect, LowersToAFlaggedSignature) {
  CompileResult r = check_text(kb(""));
  ASSERT_TRUE(r.kb) << dump(r);
  bool found = false;
  for (const Signature& s : r.kb->signatures)
    if (s.name == "suspect_nvrm") {
      found = true;
      EXPECT_TRUE(s.suspect);
    } else {
      EXPECT_FALSE(s.suspect);
    }
  EXPECT_TRUE(found);
}

TEST(Suspect, IsNeverARootOrASymptom) {
  for (const char* stmt : {"symptom crash", "aggregate count >= 3 within 1m", "background"}) {
    CompileResult r = check_text(kb(stmt));
    EXPECT_TRUE(has_code(r, "E025")) << stmt << "\n" << dump(r);
  }
}

// The family's class is kept for the unclassified root, and must be declared.
TEST(Suspect, MayNameItsFamilysClass) {
  CompileResult r = check_text(kb("class host_kernel"));
  ASSERT_TRUE(r.kb) << dump(r);
  const Signature* s = r.kb->find_signature("suspect_nvrm");
  ASSERT_NE(s, nullptr);
  EXPECT_TRUE(s->suspect);
  EXPECT_EQ(s->fault_class, "host_kernel");
  CompileResult bad = check_text(kb("class no_such_class"));
  EXPECT_FALSE(bad.ok()) << dump(bad);
}

TEST(Suspect, IsNotInTheCausalGraphNorAmbiguous) {
  CompileResult r = check_text(kb("example \"NVRM: Oops: some error\""));
  ASSERT_TRUE(r.kb) << dump(r);
  EXPECT_FALSE(has_code(r, "W002")) << dump(r);  // overlaps `oops` by design
  EXPECT_FALSE(has_code(r, "W003")) << dump(r);
}

}  // namespace
}  // namespace reflex
