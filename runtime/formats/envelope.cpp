// Streaming envelopes (reflex watch): one JSON object a line,
// {"host","ts","source","msg"} with Vector/Fluent Bit's "message" and
// "timestamp" accepted (interfaces.md §4). The message may still carry a
// collector's prefix; the line parser strips it.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "civil_time.h"
#include "format_kit.h"
#include "line_parser_impl.h"
#include "reflex/log_format.h"

namespace reflex {

using namespace formats;

bool parse_envelope(std::string_view json_line, const Topology& topo, int64_t arrival_us,
                    FormatStats* stats, std::string* storage, LogRecord* out) {
  FormatStats local;
  if (!stats) stats = &local;
  try {
    ++stats->lines;
    stats->bytes += json_line.size() + 1;
    nlohmann::json j = nlohmann::json::parse(json_line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      ++stats->skipped_invalid_json;
      return false;
    }
    auto m = j.find("msg");
    if (m == j.end()) m = j.find("message");
    if (m == j.end() || !m->is_string()) {
      ++stats->skipped_no_msg;
      return false;
    }
    std::string msg = m->get<std::string>();
    bool nul, bad;
    scan_bytes(msg, &nul, &bad);
    if (nul) ++stats->nul_bytes;
    if (bad) ++stats->invalid_utf8;

    // Storage: the raw JSON line, then the message; the record's views point here.
    storage->assign(json_line);
    size_t msg_at = storage->size();
    storage->append(msg);
    out->raw = std::string_view(storage->data(), json_line.size());
    std::string_view body(storage->data() + msg_at, msg.size());
    out->file = {};
    out->line_no = 0;
    out->rank_hint = -1;
    out->time_inherited = false;
    out->time_implausible = false;
    out->time = EventTime{};

    std::string host;
    if (auto h = j.find("host"); h != j.end() && h->is_string()) host = h->get<std::string>();
    if (auto r = topo.resolve_host(host)) {
      out->host = *r;
      out->host_known = true;
    } else {
      out->host = host;
      out->host_known = false;
      ++stats->unknown_hosts;
    }

    out->transport = kTransportApp;
    if (auto s = j.find("source"); s != j.end() && s->is_string()) {
      std::string src = s->get<std::string>();
      if (auto tr = transport_from_string(src); tr && *tr != kTransportAny)
        out->transport = *tr;
      else
        stats->notes.push_back("envelope source '" + src + "' is unknown; taken as app");
    }

    std::optional<int64_t> ts;
    auto t = j.find("ts");
    if (t == j.end()) t = j.find("timestamp");
    if (t != j.end()) {
      if (t->is_string()) {
        std::string s = t->get<std::string>();
        Civil c;
        if (size_t n = parse_iso(s, &c); n && n == s.size())
          ts = to_us(c, c.year, c.has_zone ? c.zone_s : 0);
      } else if (t->is_number()) {
        // Epoch seconds, milliseconds or microseconds, by magnitude.
        const double v = t->get<double>();
        const double us = v > 1e14 ? v : v > 1e11 ? v * 1e3 : v * 1e6;
        // Compared as a double first: a cast of one past int64 is undefined.
        if (us >= double(kMinRfc3339Us) && us <= double(kMaxRfc3339Us)) ts = int64_t(us);
      }
      if (ts && !in_rfc3339_range(*ts)) ts.reset();  // an offset past year 9999
      if (!ts) ++stats->implausible_time;
    }

    // The message may carry its own collector prefix ("[123.456] ...",
    // "[rank3]:[E...]", an ISO time): strip it, keep its time when ts is absent.
    LineParserImpl p(topo, FormatOptions{}, nullptr);
    FileContext ctx;
    ctx.host_dir = out->host;
    ctx.source = FileSource::caller;  // the envelope says host and source
    p.begin_file(std::move(ctx));
    LogRecord inner;
    if (p.parse(body, 0, &inner)) {
      body = inner.msg;
      out->rank_hint = inner.rank_hint;
      if (!ts && !inner.time_inherited && !inner.time_implausible &&
          (inner.time.wall || inner.time.mono)) {
        out->time.wall = inner.time.wall;
        out->time.mono = inner.time.mono;
      }
    }
    if (ts) out->time.wall = ts;
    if (!out->time.wall) out->time.wall = arrival_us;
    out->time.clock = out->host + (out->transport == kTransportKernel ? "/kernel" : "/app");
    out->msg = body;
    return true;
  } catch (const std::exception&) {
    ++stats->skipped_invalid_json;
    return false;
  }
}

}  // namespace reflex
