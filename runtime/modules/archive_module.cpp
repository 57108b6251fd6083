// reflex_archive.so: archive_api.h's functions over libarchive (see there
// why it is a module of its own).
#include <archive.h>
#include <archive_entry.h>

#include "reflex/modules/archive_api.h"

namespace {

using reflex::ArchiveApi;
using reflex::MemberType;

std::string error_of(struct archive* a) {
  const char* e = archive_error_string(a);
  return e ? e : "unknown error";
}

void* open_archive(const std::string& path, std::string* err) {
  struct archive* a = archive_read_new();
  archive_read_support_filter_all(a);
  archive_read_support_format_tar(a);
  archive_read_support_format_gnutar(a);
  if (archive_read_open_filename(a, path.c_str(), 1 << 16) != ARCHIVE_OK) {
    *err = error_of(a);
    archive_read_free(a);
    return nullptr;
  }
  return a;
}

int next_member(void* h, std::string* path, MemberType* type, int64_t* size, std::string* err) {
  auto* a = static_cast<struct archive*>(h);
  struct archive_entry* e = nullptr;
  const int r = archive_read_next_header(a, &e);
  if (r == ARCHIVE_EOF) return 0;
  if (r != ARCHIVE_OK) {
    *err = error_of(a);
    return -1;
  }
  const char* name = archive_entry_pathname(e);
  *path = name ? name : "";
  const auto ft = archive_entry_filetype(e);
  *type = ft == AE_IFREG   ? MemberType::file
          : ft == AE_IFDIR ? MemberType::directory
                           : MemberType::other;
  *size = archive_entry_size_is_set(e) ? static_cast<int64_t>(archive_entry_size(e)) : -1;
  return 1;
}

long read_data(void* h, char* buf, size_t n, std::string* err) {
  auto* a = static_cast<struct archive*>(h);
  const la_ssize_t got = archive_read_data(a, buf, n);
  if (got < 0) *err = error_of(a);
  return got < 0 ? -1 : static_cast<long>(got);
}

void close_archive(void* h) {
  archive_read_free(static_cast<struct archive*>(h));
}

constexpr ArchiveApi kApi{open_archive, next_member, read_data, close_archive};

}  // namespace

extern "C" const ArchiveApi* reflex_archive_api_v2() {
  return &kApi;
}
