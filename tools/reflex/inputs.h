// What `reflex diagnose` / `reflex events` take: an incident bundle directory
// (interfaces.md §3), a bundle packed as a tar archive (.tar, .tar.gz, .tgz, ...), or
// one or more plain log files and `-` (stdin) as SREs have them. Files and
// archives are laid out as a bundle in a temporary directory that is removed
// when the InputSet goes away; evidence paths are mapped back to what the user
// named.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <string>
#include <vector>

namespace reflex::cli {

class InputSet {
 public:
  InputSet() = default;
  InputSet(const InputSet&) = delete;
  InputSet& operator=(const InputSet&) = delete;
  ~InputSet();

  // `host`: the host for lines that carry no host field (else the file's name).
  bool prepare(const std::vector<std::string>& args, const std::string& host, std::string* error);

  const std::string& bundle_dir() const { return bundle_; }
  bool is_files() const { return !evidence_.empty(); }
  // "hosts/<h>/<name>:12" -> "/var/log/kern.log:12" for files given by path.
  std::string map_evidence(const std::string& ev) const;
  // The same inside free text (notes quoting evidence).
  std::string map_text(std::string text) const;
  // Notes on what was taken and how (hosts chosen, archive unpacked).
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  bool add_file(const std::string& path, const std::string& host, std::string* error);
  bool unpack(const std::string& archive, std::string* error);
  bool make_tmp(std::string* error);

  std::string bundle_, tmp_;
  std::map<std::string, std::string> evidence_;  // bundle-relative file -> user's name
  std::vector<std::string> notes_;
};

// The INPUT... positional and --host, the same for every command that reads logs.
void add_input_options(CLI::App& app, std::string* host, std::vector<std::string>* inputs);

// Whether a path names a tar archive by its suffix.
bool is_archive_name(const std::string& path);

}  // namespace reflex::cli
