// Reading a tar archive (any compression libarchive knows), in a module of
// its own loaded on first use: libarchive and what it links (libxml2, ICU,
// nettle, lzma, zstd, ...) took ~1.1 ms to load in every `reflex` run, most
// of which never reads an archive. What to unpack, where, and within which
// bounds stays with the caller (the command line's inputs); this is only the
// reader.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace reflex {

enum class MemberType { file, directory, other };

struct ArchiveApi {
  // An open archive, or nullptr and *err.
  void* (*open)(const std::string& path, std::string* err);
  // The next member's path, type and size as its header declares it (-1 when
  // it declares none): 1; 0 at the end; -1 when damaged (*err). The size lets
  // the caller refuse a member before writing any of it.
  int (*next)(void* archive, std::string* path, MemberType* type, int64_t* size, std::string* err);
  // Up to n bytes of the current member's data: their number, 0 at its end,
  // -1 on an error (*err).
  long (*read)(void* archive, char* buf, size_t n, std::string* err);
  void (*close)(void* archive);
};

// reflex_archive.so's functions (module_loader.h), loaded once; nullptr and
// *err when it cannot be.
const ArchiveApi* archive_api(std::string* err);

}  // namespace reflex

// The module's one exported symbol.
extern "C" const reflex::ArchiveApi* reflex_archive_api_v2();
