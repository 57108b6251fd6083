// The compiled knowledge base on disk (`reflexc build -o FILE`).
// Layout: the 8-byte magic "RFXKB\0\0\1", then CBOR of the whole KnowledgeBase.
// The artifact records its format version, the compiler version and a hash of
// the sources; the runtime refuses a format or engine-version mismatch.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reflex/kb.h"

namespace reflex {

bool save_artifact(const KnowledgeBase& kb, const std::string& path, std::string* error);
// What of the knowledge base a caller needs: `reflex events` reads lines and
// never walks rules; no runtime command runs the KB's tests. A part left out
// is still read past (the file is checked whole), not decoded: on the shipped
// KB the rules and the tests are half the artifact and most of its load time.
struct KbParts {
  bool rules = true;     // rules (the causal graph's edges) and latents
  bool tests = true;     // `test` blocks (reflexc test)
  bool examples = true;  // signatures' examples and near misses (reflexc check and test)
};

// nullopt + *error for a missing, foreign, truncated or mismatched file.
std::optional<KnowledgeBase> load_artifact(const std::string& path, std::string* error,
                                           KbParts parts = {});
// True when the file starts with the artifact magic (cheap sniff; no parse).
bool is_artifact_file(const std::string& path);

// Serialised form, also used to compare two knowledge bases in tests.
std::vector<uint8_t> kb_to_cbor(const KnowledgeBase& kb);
std::optional<KnowledgeBase> kb_from_cbor(const std::vector<uint8_t>& bytes, std::string* error,
                                          KbParts parts = {});

// "0.1.0" satisfies ">= 0.1.0"? Comparisons: >=, >, =, ==, <, <=; empty = any.
bool engine_version_satisfies(const std::string& engine_version, const std::string& requirement,
                              std::string* error);
const char* engine_version();

// Hex SHA-256 of a byte string (source hashes).
std::string sha256_hex(const std::string& data);

}  // namespace reflex
