// What every source of the agent (files, journal, kmsg) reads through: the
// settings its line parsers share, the ingestor the lines go to, and which
// of a source's lines still hold a storm fold open (the journal's and
// kmsg's checkpoints stay behind the first of them, so a restart re-reads
// the fold whole; files save their open folds instead, agent_files.h).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "agent_hosts.h"
#include "reflex/deploy/daemon.h"
#include "reflex/ingest.h"
#include "reflex/log_format.h"
#include "reflex/sources.h"
#include "reflex/topology.h"

namespace reflex::deploy::agent {

struct Reading {
  Reading(const Topology& t, Ingestor& i, Metrics& m) : topo(t), ing(i), metrics(m) {}
  Reading(const Reading&) = delete;  // the parsers keep a pointer to fstats
  Reading& operator=(const Reading&) = delete;

  const Topology& topo;
  Ingestor& ing;
  Metrics& metrics;
  std::string host;
  // --follow-hosts: a file under a host directory is that host's (else host's).
  const HostTree* host_tree = nullptr;
  std::optional<int> year;
  std::optional<int64_t> boot_time;
  FormatOptions fopts;  // followed files and the journal: --strict-transport as for envelopes
  SourceDeclarations sources;  // --kernel-capture / --collector (else file names decide)
  // While a line published before a restart is fed again (Pending::sent_line,
  // a saved fold opened again): a first sighting it announces was published
  // then and is not queued again.
  bool replaying = false;
  FormatStats fstats;

  // A followed file's evidence name: the path the agent read it by, made
  // absolute (not resolved through links), so a diagnosis points an operator
  // at that file on that host ("/var/log/kern.log:812"), not at a bundle
  // layout that does not exist there.
  static std::string file_evidence(const std::string& path) {
    std::error_code ec;
    std::filesystem::path p = std::filesystem::absolute(path, ec);
    return (ec ? std::filesystem::path(path) : p).lexically_normal().string();
  }

  // A parser for one source (its evidence name), begun.
  std::unique_ptr<LineParser> parser(const std::string& evidence,
                                     std::optional<int64_t> boot_time_us) {
    auto p = std::make_unique<LineParser>(topo, fopts, &fstats);
    FileContext ctx;
    ctx.host_dir = host;
    if (host_tree)
      if (auto h = host_tree->host_of(evidence)) ctx.host_dir = *h;
    ctx.own_host = true;  // the agent speaks for its host only (each host directory's)
    ctx.file = evidence;
    sources.apply(evidence, &ctx);
    ctx.year = year;
    ctx.boot_time_us = boot_time_us;
    p->begin_file(ctx);
    return p;
  }

  // The first line of an open fold in this source (evidence name), if any.
  std::optional<uint64_t> first_open_line(const std::string& evidence) const {
    std::optional<uint64_t> first;
    std::string prefix = evidence + ":";
    ing.with_open_storms([&](const OpenStorms& os) {
      os.for_each([&](const Event& ev) {
        if (ev.evidence.compare(0, prefix.size(), prefix) != 0) return;
        uint64_t n = std::strtoull(ev.evidence.c_str() + prefix.size(), nullptr, 10);
        if (!first || n < *first) first = n;
      });
    });
    return first;
  }
};

}  // namespace reflex::deploy::agent
