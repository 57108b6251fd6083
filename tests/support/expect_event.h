// Test helper: two Events are the same, field by field (gtest EXPECTs, so a
// failure names the field). Shared by the codec round trip and the engine's
// compact event store test.
#pragma once

#include <gtest/gtest.h>

#include "reflex/event.h"

namespace reflex::testing {

inline void expect_same_event(const Event& a, const Event& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.device, b.device);
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.host, b.host);
  EXPECT_EQ(a.time.wall, b.time.wall);
  EXPECT_EQ(a.time.mono, b.time.mono);
  EXPECT_EQ(a.time.clock, b.time.clock);
  EXPECT_EQ(a.time.inherited, b.time.inherited);
  EXPECT_EQ(a.fields, b.fields);
  EXPECT_EQ(a.bindings, b.bindings);
  EXPECT_EQ(a.evidence, b.evidence);
  EXPECT_EQ(a.line, b.line);
  EXPECT_EQ(a.transport, b.transport);
  EXPECT_EQ(a.count, b.count);
  EXPECT_EQ(a.first, b.first);
  EXPECT_EQ(a.last, b.last);
  EXPECT_EQ(a.placeholder_device, b.placeholder_device);
  EXPECT_EQ(a.seq, b.seq);
}

}  // namespace reflex::testing
