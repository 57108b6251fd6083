// LineParser: one line in, one record out. This file frames the work that is
// the same for every format (byte checks, the record's defaults, pasted
// prompts and bug-report sections, the inherited time and its plausibility)
// and asks the registered formats (format_registry.cpp, one family per
// fmt_*.cpp) to recognise the line. What a message means is the knowledge
// base's business. Formats, time and host rules: docs/formats.md.
#include <cstring>
#include <optional>
#include <string>

#include "civil_time.h"
#include "format_kit.h"
#include "format_registry.h"
#include "line_parser_impl.h"
#include "reflex/log_format.h"

namespace reflex {

using namespace formats;

namespace formats {

// Valid UTF-8 and NUL check. The common case (ASCII, no NUL) runs 8 bytes at a
// time; anything else falls back to a byte-wise validation.
void scan_bytes(std::string_view s, bool* nul, bool* bad_utf8) {
  *nul = false;
  *bad_utf8 = false;
  const unsigned char* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size(), i = 0;
  constexpr uint64_t kHigh = 0x8080808080808080ULL, kOnes = 0x0101010101010101ULL;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    if ((w & kHigh) || ((w - kOnes) & ~w & kHigh)) break;
  }
  while (i < n) {
    unsigned char c = p[i];
    if (c == 0) {
      *nul = true;
      ++i;
      continue;
    }
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 0;
    if (len == 0 || i + len > n) {
      *bad_utf8 = true;
      ++i;
      continue;
    }
    bool ok = true;
    for (size_t k = 1; k < len; ++k) ok = ok && (p[i + k] & 0xC0) == 0x80;
    if (ok && len == 3 && c == 0xE0 && p[i + 1] < 0xA0) ok = false;   // overlong
    if (ok && len == 3 && c == 0xED && p[i + 1] >= 0xA0) ok = false;  // surrogates
    if (ok && len == 4 && c == 0xF0 && p[i + 1] < 0x90) ok = false;
    if (ok && len == 4 && c == 0xF4 && p[i + 1] >= 0x90) ok = false;
    if (!ok) {
      *bad_utf8 = true;
      ++i;
      continue;
    }
    i += len;
  }
}

}  // namespace formats

namespace {

constexpr int64_t kYear2000Us = 946684800LL * kUsPerSec;
// A shell prompt pasted with the command that made the capture:
// "user@gpu-07:~$ dmesg -T | grep -i xid", "(venv) root@h:/x# nvidia-smi",
// "[user@host dir]$ cmd". Returns the command (empty view when none).
std::optional<std::string_view> shell_prompt(std::string_view s) {
  size_t i = 0;
  if (!s.empty() && s[0] == '(') {  // a conda/venv name
    size_t close = s.find(") ");
    if (close == std::string_view::npos || close > 64) return std::nullopt;
    i = close + 2;
  }
  bool bracket = i < s.size() && s[i] == '[';
  if (bracket) ++i;
  size_t at = s.find('@', i);
  if (at == std::string_view::npos || at == i || at - i > 32) return std::nullopt;
  for (size_t k = i; k < at; ++k)
    if (!(is_alpha(s[k]) || is_digit(s[k]) || s[k] == '-' || s[k] == '_' || s[k] == '.'))
      return std::nullopt;
  size_t h = at + 1;
  while (h < s.size() &&
         (is_alpha(s[h]) || is_digit(s[h]) || s[h] == '-' || s[h] == '.' || s[h] == '_'))
    ++h;
  if (h == at + 1 || h >= s.size()) return std::nullopt;
  // "host:path$ " or "host path]$ "
  size_t end = std::string_view::npos;
  if (!bracket && s[h] == ':') {
    for (size_t k = h + 1; k + 1 < s.size() && k < h + 256; ++k)
      if ((s[k] == '$' || s[k] == '#') && (k + 1 == s.size() || s[k + 1] == ' ')) {
        end = k + 1;
        break;
      }
  } else if (bracket && s[h] == ' ') {
    size_t close = s.find(']', h);
    if (close != std::string_view::npos && close + 1 < s.size() &&
        (s[close + 1] == '$' || s[close + 1] == '#'))
      end = close + 2;
  }
  if (end == std::string_view::npos) return std::nullopt;
  return ltrim(s.substr(std::min(end, s.size())));
}

// The file name says the file is a kernel capture (dmesg output, kern.log, a
// pstore or serial-console dump): its lines are kernel lines by default.
bool kernel_capture_name(std::string_view path) {
  size_t slash = path.rfind('/');
  std::string base(path.substr(slash == std::string_view::npos ? 0 : slash + 1));
  for (char& ch : base) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  auto starts = [&](const char* p) { return base.rfind(p, 0) == 0; };
  return starts("dmesg") || base.find("kern") != std::string::npos || starts("kmsg") ||
         starts("messages") || starts("console") || starts("pstore") ||
         base.find("ramoops") != std::string::npos || starts("serial") ||
         path.find("/pstore/") != std::string_view::npos;
}

// The file name says the file is a system log: its lines carry their own
// transport (rsyslog writes the kernel's lines tagged "kernel:"; a journal
// export keeps _TRANSPORT). An nvidia-bug-report.log, written by the
// driver's script as root, is one too: its sections say what they hold.
bool system_log_name(std::string_view path) {
  size_t slash = path.rfind('/');
  std::string base(path.substr(slash == std::string_view::npos ? 0 : slash + 1));
  for (char& ch : base) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return base.find("syslog") != std::string::npos || base.find("journal") != std::string::npos ||
         base.rfind("daemon.log", 0) == 0 || base.rfind("nvidia-bug-report", 0) == 0;
}

// Pasted standard input: its shell prompts declare what follows them.
bool pasted_input_name(std::string_view path) {
  size_t slash = path.rfind('/');
  return path.substr(slash == std::string_view::npos ? 0 : slash + 1).rfind("stdin", 0) == 0;
}

// The pasted command reads the kernel ring buffer ("sudo dmesg -T | grep xid",
// "journalctl -k").
bool kernel_capture_command(std::string_view cmd) {
  cmd = ltrim(cmd);
  if (cmd.substr(0, 5) == "sudo ") cmd = ltrim(cmd.substr(5));
  std::string_view first = cmd.substr(0, cmd.find(' '));
  if (first == "dmesg" || first.substr(first.size() >= 6 ? first.size() - 6 : 0) == "/dmesg")
    return true;
  if (first == "journalctl") {
    std::string_view args = cmd.substr(0, cmd.find('|'));
    return args.find(" -k") != std::string_view::npos ||
           args.find(" --dmesg") != std::string_view::npos ||
           args.find("_TRANSPORT=kernel") != std::string_view::npos;
  }
  return (first == "cat" || first == "grep" || first == "zcat" || first == "tail" ||
          first == "less" || first == "zgrep") &&
         (cmd.find("kern.log") != std::string_view::npos ||
          cmd.find("/dmesg") != std::string_view::npos);
}

}  // namespace

// ---------------------------------------------------------------------------

LineParserImpl::LineParserImpl(const Topology& t, FormatOptions o, FormatStats* s)
    : topo(t), opts(o), stats(s ? s : &own_stats) {}

void LineParserImpl::note_once(const std::string& n) {
  if (noted.insert(n).second) stats->notes.push_back(n);
}

void LineParserImpl::begin_file(FileContext c) {
  ctx = std::move(c);
  have_time = false;
  last_time = EventTime{};
  last_transport = kTransportApp;
  file_year = 0;
  rollover_month = 0;
  year_bump = 0;
  csv.keys.clear();
  cri.partial.clear();
  cri.pending = false;
  field_cache_key.clear();
  field_cache_valid = false;
  noted_no_boot = noted_no_year = noted_year_source = false;
  source = ctx.source;
  if (source == FileSource::by_name)
    source = kernel_capture_name(ctx.file) ? FileSource::kernel_capture
             : system_log_name(ctx.file)   ? FileSource::system_log
                                           : FileSource::job_output;
  prompts_declare = source != FileSource::job_output || pasted_input_name(ctx.file);
  capture_cmd_kernel = false;
  {
    size_t slash = ctx.file.rfind('/');
    bug_report =
        ctx.file.compare(slash == std::string::npos ? 0 : slash + 1, 17, "nvidia-bug-report") == 0;
  }
  section_header_pending = false;
  if (auto h = topo.resolve_host(ctx.host_dir)) {
    dir_host = *h;
    dir_known = true;
  } else {
    dir_host = ctx.host_dir;
    dir_known = false;
  }
  dir_speaks = dir_known || (ctx.own_host && !ctx.host_dir.empty());
}

// The host named by a syslog/journal field. Resolved names win; an unknown
// field on a known directory keeps the directory (noted once per file); an
// unknown field on an unknown directory is kept as written.
void LineParserImpl::host_from_field(std::string_view field, LogRecord* out) {
  if (field.empty() || field == "localhost" || field == "localhost.localdomain" || field == "-")
    return;
  if (!field_cache_valid || field != field_cache_key) {
    field_cache_key.assign(field);
    field_cache_valid = true;
    if (auto h = topo.resolve_host(field)) {
      field_cache_host = *h;
      field_cache_known = true;
    } else if (dir_speaks) {
      field_cache_host = dir_host;
      field_cache_known = dir_known;
      note_once("host field '" + std::string(field) + "' in " + ctx.file +
                " is not in the topology; its lines are placed on " + dir_host);
    } else {
      field_cache_host.assign(field);
      field_cache_known = false;
    }
  }
  out->host.assign(field_cache_host);
  out->host_known = field_cache_known;
  // A host speaks for itself: in the file of a host the topology knows (or
  // an agent's own), a line naming another known host is refused. A central
  // collector, a caller that sets the host, and a directory that names no
  // known host (the field wins, interfaces.md §3) take the host as named.
  if (dir_speaks && out->host != dir_host && !ctx.collector && source != FileSource::caller)
    out->refusal = Refusal::foreign_host;
}

// Whether a token names a topology host (cached: ISO-prefixed app logs probe
// every line).
bool LineParserImpl::known_host_token(std::string_view tok) {
  if (probe_valid && tok == probe_key) return probe_known;
  probe_key.assign(tok);
  probe_valid = true;
  probe_known = topo.resolve_host(tok).has_value();
  return probe_known;
}

int LineParserImpl::year_for(int month) {
  // Year-less formats: the file's own previous dated line, else the bundle's
  // year (a given --year beats both); December -> January in one file moves
  // to the next year.
  const bool given = ctx.year_fixed && ctx.year;
  int base = given ? *ctx.year : file_year ? file_year : ctx.year.value_or(0);
  if (rollover_month == 12 && month == 1) ++year_bump;
  rollover_month = month;
  if (!base) return 0;
  if ((given || !file_year) && !noted_year_source && !ctx.year_note.empty()) {
    // Where an inferred year came from, said once per file and deduplicated
    // by text, not through `noted`: a parser that reads files out of walk
    // order (--threads) must still say it in the first file that uses it.
    noted_year_source = true;
    add_note(stats, ctx.year_note);
  }
  return base + year_bump;
}

void LineParserImpl::set_wall_dated(int64_t us, LogRecord* out) {
  out->time.wall = us;
  file_year = year_of_us(us);
}

void LineParserImpl::set_wall_restarting_year(int64_t us, LogRecord* out) {
  set_wall_dated(us, out);
  rollover_month = 0;
  year_bump = 0;
}

void LineParserImpl::set_civil(const Civil& c, bool zone_less, LogRecord* out) {
  int year = c.year;
  if (year == 0) {
    year = year_for(c.month);
    if (year == 0) {
      year = 1970;  // no dated line anywhere: keep the order, flag the time
      out->time_implausible = true;
      if (!noted_no_year) {  // said once per file, without building the text per line
        noted_no_year = true;
        note_once("no dated line to take the year from for " + ctx.file +
                  "; year-less times are flagged implausible");
      }
    }
  } else {
    file_year = year;
    rollover_month = c.month;
    year_bump = 0;
  }
  int zone = c.has_zone ? c.zone_s : (zone_less ? ctx.tz_offset_s : 0);
  out->time.wall = to_us(c, year, zone);
}

void LineParserImpl::set_mono(double mono, LogRecord* out) {
  out->time.mono = mono;
  if (ctx.boot_time_us) {
    out->time.wall = *ctx.boot_time_us + int64_t(mono * 1e6 + (mono >= 0 ? 0.5 : -0.5));
  } else if (!noted_no_boot) {
    noted_no_boot = true;
    note_once("raw dmesg times in " + ctx.file +
              " have no boot_time: they are ordered within their host only");
  }
}

// Nothing to parse: an empty line (false); else the record's defaults are set.
bool LineParserImpl::begin_line(std::string_view* raw_io, uint64_t line_no, LogRecord* out) {
  std::string_view& raw = *raw_io;
  ++stats->lines;
  stats->bytes += raw.size() + 1;
  if (raw.size() > opts.max_line_bytes) {
    raw = raw.substr(0, opts.max_line_bytes);
    ++stats->truncated_long_lines;
  }
  while (!raw.empty() && (raw.back() == '\r' || raw.back() == '\n')) raw.remove_suffix(1);
  bool nul, bad;
  scan_bytes(raw, &nul, &bad);
  if (nul) ++stats->nul_bytes;
  if (bad) ++stats->invalid_utf8;

  // CRI partial lines wait for their final part.
  out->raw = raw;
  out->file = ctx.file;
  out->line_no = line_no;
  out->rank_hint = -1;
  out->time_inherited = false;
  out->time_implausible = false;
  out->time.wall.reset();
  out->time.mono.reset();
  out->time.inherited = false;
  out->transport = kTransportApp;
  out->refusal = Refusal::none;
  if (out->host != dir_host) out->host.assign(dir_host);
  out->host_known = dir_known;
  if (trim(raw).empty()) return false;

  return true;
}

// A line that is not a log line (bug-report section rules and headers, pasted
// shell prompts): true, and the state it sets for the lines after it.
bool LineParserImpl::skip_non_log(std::string_view raw) {
  const char c0 = raw[0];
  // nvidia-bug-report.log: sections open with a rule of underscores and a
  // header naming the command or file they hold ("dmesg:", "*** /var/log/
  // kern.log"); a section of the kernel ring buffer holds kernel lines.
  if (bug_report) {
    if (raw.size() >= 20 && raw.find_first_not_of('_') == std::string_view::npos) {
      capture_cmd_kernel = false;
      section_header_pending = true;
      ++stats->prompt_lines;
      return true;
    }
    if (section_header_pending) {
      section_header_pending = false;
      std::string_view h = trim(raw);
      if (h.substr(0, 4) == "*** ") h = ltrim(h.substr(4));
      if (!h.empty() && h.back() == ':') h.remove_suffix(1);
      capture_cmd_kernel = kernel_capture_command(h) || kernel_capture_name(h) ||
                           h.substr(0, 25) == "Scanning kernel log files";
      ++stats->prompt_lines;
      return true;
    }
  }

  // A pasted shell prompt is not a log line; its command tells what the
  // following lines are (`dmesg -T | grep -i xid`: kernel lines).
  if ((c0 == '[' || c0 == '(' || is_alpha(c0)) &&
      std::memchr(raw.data(), '@', std::min<size_t>(raw.size(), 100)) != nullptr) {
    if (auto cmd = shell_prompt(raw)) {
      ++stats->prompt_lines;
      capture_cmd_kernel = prompts_declare && kernel_capture_command(*cmd);
      return true;
    }
  }

  return false;
}

// The record's time (own, inherited, lead time; plausibility) and clock.
void LineParserImpl::settle_time(LogRecord* out) {
  if (out->time.wall && !in_rfc3339_range(*out->time.wall)) {
    // Past year 9999 (epoch digits, an offset): no RFC 3339 text could carry
    // it to the next reader, so it is not kept; counted as implausible.
    out->time.wall.reset();
    ++stats->implausible_time;
  }
  if (!out->time.wall && !out->time.mono) {
    // No time of its own: inherit the previous line's time, clock and
    // transport (continuation lines of a multi-line kernel message).
    if (have_time) {
      out->time = last_time;
      out->time.inherited = true;
      out->time_inherited = true;
      if (out->transport == kTransportApp) out->transport = last_transport;
    } else if (ctx.lead_time_us) {
      // Before the file's first timed line: take that line's time (an upper bound).
      out->time.wall = ctx.lead_time_us;
      out->time.clock.assign(out->host);
      out->time.clock.append(out->transport == kTransportKernel ? "/kernel" : "/app");
      out->time_inherited = true;
    } else {
      ++stats->no_timestamp;
    }
  } else {
    if (out->time.wall) {
      int64_t w = *out->time.wall;
      int ref = ctx.year.value_or(0);
      if (w < kYear2000Us || (ref && w > to_us(Civil{0, 1, 1, 0, 0, 0, 0, false, 0}, ref + 2, 0)))
        out->time_implausible = true;
    }
    if (out->time_implausible) ++stats->implausible_time;
  }
  if (!out->time_inherited) {
    out->time.clock.assign(out->host);
    out->time.clock.append(out->transport == kTransportKernel ? "/kernel" : "/app");
    // A refused line dates no other line.
    if ((out->time.wall || out->time.mono) && out->refusal == Refusal::none) {
      last_time = out->time;
      last_transport = out->transport;
      have_time = true;
    }
  }
}

bool LineParserImpl::parses_alone(std::string_view prev, std::string_view line) const {
  if (bug_report || cri.pending) return false;
  // What parse() would read a time from: the line after begin_line's cut.
  if (prev.size() > opts.max_line_bytes || line.size() > opts.max_line_bytes) return false;
  Civil a, b;
  const size_t na = bsd_time(prev, &a), nb = bsd_time(line, &b);
  if (!na || !nb || na >= prev.size() || prev[na] != ' ' || nb >= line.size() || line[nb] != ' ')
    return false;
  // skip_non_log reads a prompt only where an '@' is in the first 100 bytes.
  return a.month == b.month &&
         std::memchr(prev.data(), '@', std::min<size_t>(prev.size(), 100)) == nullptr;
}

bool LineParserImpl::parse(std::string_view raw, uint64_t line_no, LogRecord* out) {
  if (!begin_line(&raw, line_no, out)) return false;
  if (skip_non_log(raw)) return false;
  std::string_view msg = raw;
  bool known_format = false;
  // The formats registered for the line's first byte, in registry order; a
  // syslog line quoted inside other text is the last resort of every class.
  for (const Recognise* r = recognisers_for(raw[0]); *r; ++r) {
    const Match m = (*r)(*this, raw, out, &msg);
    if (m == Match::kYes) {
      known_format = true;
      break;
    }
    if (m == Match::kSkip) return false;
  }
  if (!known_format) msg = raw;
  // A kernel capture (by its file name or declaration, or by the pasted
  // command that made it) holds kernel lines whatever their shape, unless
  // --strict-transport. Only the kernel speaks for the kernel: a
  // kernel-shaped line in job output is refused.
  const bool kernel_file = source == FileSource::kernel_capture || capture_cmd_kernel;
  if (out->transport == kTransportApp && kernel_file && !opts.strict_transport)
    out->transport = kTransportKernel;
  else if (out->transport == kTransportKernel && source == FileSource::job_output && !kernel_file)
    out->refusal = Refusal::kernel_claim;

  app_prefixes(*this, &msg, out);
  settle_time(out);
  if (!out->host_known) ++stats->unknown_hosts;
  out->msg = msg;
  return true;
}

// ---------------------------------------------------------------------------

struct LineParser::Impl : LineParserImpl {
  using LineParserImpl::LineParserImpl;
};

LineParser::LineParser(const Topology& topo, FormatOptions opts, FormatStats* stats)
    : impl_(std::make_unique<Impl>(topo, opts, stats)) {}
LineParser::~LineParser() = default;
void LineParser::begin_file(FileContext ctx) {
  impl_->begin_file(std::move(ctx));
}
bool LineParser::parses_alone(std::string_view prev, std::string_view line) const {
  return impl_->parses_alone(prev, line);
}
bool LineParser::parse(std::string_view raw, uint64_t line_no, LogRecord* out) {
  try {
    return impl_->parse(raw, line_no, out);
  } catch (const std::exception&) {
    // Never throws (bad_alloc on a pathological line): keep the line as app text.
    out->raw = raw;
    out->msg = raw;
    return !raw.empty();
  }
}

}  // namespace reflex
