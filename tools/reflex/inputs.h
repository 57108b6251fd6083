// What `reflex diagnose` / `reflex events` take: an incident bundle directory
// (interfaces.md §3), a directory of hosts' logs (`<dir>/<host>/<files>`), a tar
// archive of either or of plain files, or one or more plain log files,
// directories and `-` (stdin) as SREs have them. Whatever is not a bundle is
// laid out as one in a temporary directory (symbolic links, stdin copied) that
// is removed when the InputSet goes away; a file's host is the one its lines
// name, else its name's; evidence paths are mapped back to what the user named.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>
#include "reflex/topology.h"

namespace reflex::cli {

// The options every command that reads logs takes about them.
struct InputOptions {
  std::string host;         // --host: the host of lines without a host field
  std::optional<int> year;  // --year: the year of year-less times (beats inference)
  std::string timezone;     // --timezone: the zone of zone-less times (hosts without their own)
  // --max-unpack: what an archive may unpack to, at most (bytes); its members'
  // declared sizes are checked against it before anything is written.
  uint64_t max_unpack = uint64_t(8) << 30;
  // --kernel-capture / --collector: files declared a kernel capture or a
  // central collector (globs, a file as given, or - for standard input),
  // added to the bundle's own sources.json.
  std::vector<std::string> kernel_captures, collectors;
  // --job NAME: the input's hosts are one job of that name (a topology
  // without jobs, or none); with a topology that declares jobs, one of them.
  std::string job;
};

class InputSet {
 public:
  InputSet() = default;
  InputSet(const InputSet&) = delete;
  InputSet& operator=(const InputSet&) = delete;
  ~InputSet();

  // `opts.host`: the host for lines that carry no host field (else the host
  // the file's lines name, else the file's name).
  bool prepare(const std::vector<std::string>& args, const InputOptions& opts, std::string* error);

  const std::string& bundle_dir() const { return bundle_; }
  // Whether evidence and notes name paths other than the bundle's own.
  bool is_files() const { return !evidence_.empty() || !prefixes_.empty() || !aliases_.empty(); }
  // "hosts/<h>/<name>:12" -> "/var/log/kern.log:12" for files given by path.
  std::string map_evidence(const std::string& ev) const;
  // The same inside free text (notes quoting evidence).
  std::string map_text(std::string text) const;
  // Notes on what was taken and how (hosts chosen, archive unpacked).
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  bool add_file(const std::string& path, const std::string& shown, std::string* error);
  bool add_host_dir(const std::string& dir, const std::string& shown, std::string* error);
  bool add_dir(const std::string& dir, const std::string& shown, std::string* error);
  bool add_any(const std::string& arg, std::string* error);
  bool unpack(const std::string& archive, std::string* error);
  bool take_unpacked(const std::string& archive, std::string* error);
  bool mirror_bundle(const std::string& dir, std::string* error);
  bool write_defaults(const std::string& root, std::string* error,
                      const std::string& declared_in = "");
  std::string declared_glob(const std::string& given) const;
  bool make_tmp(std::string* error);
  std::string place(const std::string& host, const std::string& name);

  InputOptions opts_;
  std::string bundle_, tmp_;
  std::map<std::string, std::string> evidence_;               // bundle-relative file -> user's name
  std::map<std::string, std::string> prefixes_;               // "hosts/<h>/" -> "<user's dir>/"
  std::vector<std::pair<std::string, std::string>> aliases_;  // temporary path -> user's
  std::map<std::string, std::string> host_dirs_;              // host -> the directory it came from
  std::vector<std::string> notes_;
};

// The INPUT... positional, --host, --year and --timezone, the same for every
// command that reads logs.
void add_input_options(CLI::App& app, InputOptions* opts, std::vector<std::string>* inputs);

// --job NAME on a loaded topology: without declared jobs the input's hosts
// become the one job NAME; with declared jobs NAME must be one of them (else
// false and *error). Empty NAME: nothing.
bool apply_job_option(Topology* topo, const std::string& name, std::string* error);

// Whether a path names a tar archive by its suffix.
bool is_archive_name(const std::string& path);

}  // namespace reflex::cli
