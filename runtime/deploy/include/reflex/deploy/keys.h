// The keys that bind events to the host that sent them (docs/deployment.md,
// "Threat model"): one master key for the diagnosers, and per host a key
// derived from it that only that host's agent holds. `reflex key` makes them.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace reflex::deploy {

// 32 bytes, as 64 lowercase hex digits in files.
using Key = std::string;

// A new random master key (from the kernel's random source); "" on failure.
Key new_master_key(std::string* err);
// The key of `host`: HMAC-SHA256(master, "reflex host key\n" + host).
Key derive_host_key(const Key& master, std::string_view host);
// Reads a key file: 64 hex digits (surrounding whitespace allowed), a
// regular file of at most 4 KiB, not readable by others (else refused: a
// key readable by any user is no secret). nullopt + *err otherwise.
std::optional<Key> read_key_file(const std::string& path, std::string* err);
std::string key_hex(const Key& k);

}  // namespace reflex::deploy
