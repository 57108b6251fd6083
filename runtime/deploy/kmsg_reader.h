// `reflex agent --kmsg`: the kernel's records straight from /dev/kmsg (one
// record per read(); EPIPE when the ring overwrote records not yet read), or
// from a file of records in the same format (tests, captures): one record a
// line, continuation lines (" KEY=VALUE") after it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace reflex::deploy {

class KmsgReader {
 public:
  ~KmsgReader();
  bool open(const std::string& path, std::string* err);
  bool is_open() const { return fd_ >= 0; }
  bool device() const { return device_; }
  const std::string& path() const { return path_; }
  // Up to max whole records (first line + continuation lines) into *out;
  // *overwritten counts EPIPE reads (the ring moved past the reader).
  void read(size_t max, std::vector<std::string>* out, uint64_t* overwritten);

 private:
  std::string path_;
  int fd_ = -1;
  bool device_ = false;
  uint64_t offset_ = 0;  // a file: the next byte to read
  std::string carry_;    // a file: bytes read, not yet a whole record
};

// This boot's start from /proc/stat's btime (seconds), in microseconds.
std::optional<int64_t> proc_boot_time_us();
// What names this boot: /proc/sys/kernel/random/boot_id for the device, else
// the boot time used (a record's SEQ counts from 0 again at each boot).
std::string boot_identity(bool device, int64_t boot_us);

}  // namespace reflex::deploy
