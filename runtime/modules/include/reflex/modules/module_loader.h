// Reflex's own modules (reflex_http.so, reflex_archive.so): code whose
// libraries only some commands need, loaded on first use so that every
// other run does not pay for loading them (see http_api.h, archive_api.h).
// Below both the deployment library (HTTP: metrics, Alertmanager) and the
// command line (archives: packed bundles), so either can load them.
#pragma once

#include <string>

namespace reflex {

// The address of `entry` in `module`, found beside the binary (the build
// tree), then in LIBDIR/reflex relative to it (an installed prefix, moved or
// not), then in the configured LIBDIR/reflex; nullptr and *err when there is
// none or it does not load.
// Loaded modules stay loaded.
void* module_entry(const char* module, const char* entry, std::string* err);

}  // namespace reflex
