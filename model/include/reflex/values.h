// Normalisation of typed values found in log lines (field types of the
// language: int, hex, float, bdf, ip, string). Pure functions, no allocation
// beyond the result.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "reflex/kb.h"

namespace reflex {

// A PCI address: lower case, "0000:" domain added when missing, ".0" function
// added when missing; accepts "PCI:0000:18:00", "18:00.0", "0000:18:00" and
// Fabric Manager's 8-digit domain "00000000:86:00.0". nullopt if not a BDF.
std::optional<std::string> normalize_bdf(std::string_view s);
// IPv4 dotted quad or IPv6 (lower case, as written). nullopt if neither.
std::optional<std::string> normalize_ip(std::string_view s);
// "0x1F" / "1f" -> "0x1f". nullopt if not hex.
std::optional<std::string> normalize_hex(std::string_view s);
std::optional<int64_t> parse_int(std::string_view s);  // decimal, optional sign
std::optional<double> parse_float(std::string_view s);
// Normalises `raw` per `type`; nullopt when it is not a value of that type.
std::optional<std::string> normalize_value(FieldType type, std::string_view raw);

// Durations of the language and of the CLIs: "500ms", "30s", "10m", "2h", "1d".
std::optional<double> parse_duration_s(std::string_view s);

}  // namespace reflex
