// Events bound to their host (event_signing.h): a signature holds only for
// the host key it was made with and the entry it was made over; a valid
// signature still refuses an event that is not the signer's own.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "event_signing.h"
#include "reflex/topology.h"

namespace reflex::deploy {
namespace {

std::unique_ptr<Topology> topo() {
  TopologyError err;
  auto t = Topology::load_file(
      std::string(REFLEX_SOURCE_DIR) + "/examples/incident-pcie/topology.json", &err);
  EXPECT_TRUE(t) << err.message;
  return t;
}

Event event(const std::string& host, const std::string& device) {
  Event ev;
  ev.name = "xid79_fallen_off_bus";
  ev.host = host;
  ev.device = device;
  return ev;
}

// RFC 4231 test case 2 (HMAC-SHA256, key "Jefe"): the construction is the
// standard one, so any HMAC-SHA256 (the Python test's) computes the same.
TEST(Signing, HmacIsRfc4231) {
  EXPECT_EQ(hmac_sha256_hex("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(Signing, KeysAreDerivedPerHost) {
  std::string err;
  const Key master = new_master_key(&err);
  ASSERT_EQ(master.size(), 32u) << err;
  EXPECT_EQ(derive_host_key(master, "node-0017"), derive_host_key(master, "node-0017"));
  EXPECT_NE(derive_host_key(master, "node-0017"), derive_host_key(master, "node-0018"));
  EXPECT_NE(new_master_key(&err), master);
  EXPECT_EQ(key_hex(master).size(), 64u);
}

TEST(Signing, OnlyTheSignersOwnEventsAreTaken) {
  auto t = topo();
  std::string err;
  const Key master = new_master_key(&err);
  EntryVerifier v(master);
  const Key k17 = derive_host_key(master, "node-0017");
  const Event own = event("node-0017", "node-0017/gpu2");
  const std::string shard = "job:job-42", id = "id-1", payload = "{...}";
  const std::string sig = sign_entry(k17, "node-0017", shard, id, payload);
  EXPECT_EQ(v.check("node-0017", sig, shard, id, payload, own, *t), EntryRefusal::none);
  EXPECT_EQ(v.check("", "", shard, id, payload, own, *t), EntryRefusal::unsigned_entry);
  // The signature covers host, shard, id and payload.
  EXPECT_EQ(v.check("node-0018", sig, shard, id, payload, own, *t), EntryRefusal::bad_signature);
  EXPECT_EQ(v.check("node-0017", sig, "host:x", id, payload, own, *t), EntryRefusal::bad_signature);
  EXPECT_EQ(v.check("node-0017", sig, shard, "id-2", payload, own, *t),
            EntryRefusal::bad_signature);
  EXPECT_EQ(v.check("node-0017", sig, shard, id, payload + " ", own, *t),
            EntryRefusal::bad_signature);
  std::string flipped = sig;
  flipped.back() = flipped.back() == '0' ? '1' : '0';  // one digit changed, never the same
  EXPECT_EQ(v.check("node-0017", flipped, shard, id, payload, own, *t),
            EntryRefusal::bad_signature);
  // Signed honestly by node-0017, but about node-0018.
  EXPECT_EQ(v.check("node-0017", sig, shard, id, payload, event("node-0018", "node-0018/gpu3"), *t),
            EntryRefusal::other_host);
  EXPECT_EQ(v.check("node-0017", sig, shard, id, payload, event("node-0017", "node-0018/gpu3"), *t),
            EntryRefusal::other_device);
  // Its own event in a shard it does not belong to.
  const std::string other = sign_entry(k17, "node-0017", "host:node-0017", id, payload);
  EXPECT_EQ(v.check("node-0017", other, "host:node-0017", id, payload, own, *t),
            EntryRefusal::other_shard);
}

TEST(Signing, KeyFilesAreSecrets) {
  std::string err;
  EXPECT_FALSE(read_key_file("/nonexistent/key", &err));
  EXPECT_NE(err.find("/nonexistent/key"), std::string::npos);
  EXPECT_FALSE(read_key_file("/dev/null", &err));
}

}  // namespace
}  // namespace reflex::deploy
