// Fast libFuzzer targets, one per input surface, each a single cheap call so
// that ASan builds run thousands of inputs per second (the end-to-end targets
// fuzz_rfx / fuzz_runtime compile patterns or run a diagnosis per input and
// manage a few). REFLEX_FUZZ_TARGET picks the surface at compile time:
//   1 topology loader (Topology::load_text)
//   2 line parser: first byte = options and file context, the rest one line each
//   3 envelope decoder (parse_envelope), one envelope a line
//   4 compiled-KB artifact decoder (kb_from_cbor): a damaged or hostile
//     artifact must be refused with an error, never crash
//   5 the .rfx front end (parser + every semantic pass) without compiling
//     patterns: CompileOptions::check_regex off (a cheap syntax scan instead
//     of RE2/Hyperscan), no inline examples, at most 10 syntax errors a
//     file; the text renderer, and the JSON one on inputs with at most 4
//     diagnostics
//   6 the event codec (parse_event_json): one JSON line an input, first byte =
//     whether a KB / topology fills the gaps; what it reads must survive the
//     lossless record round trip unchanged
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "reflex/artifact.h"
#if REFLEX_FUZZ_TARGET == 5
#include "reflex/compiler.h"
#endif
#if REFLEX_FUZZ_TARGET == 6
#include "reflex/event_json.h"
#endif
#include "reflex/log_format.h"
#include "reflex/log_record.h"
#include "reflex/topology.h"

#ifndef REFLEX_FUZZ_TARGET
#error "REFLEX_FUZZ_TARGET must be 1..6"
#endif

namespace {
[[maybe_unused]] const reflex::Topology& topology() {
  static const std::unique_ptr<reflex::Topology> t = [] {
    reflex::TopologyError err;
    auto topo = reflex::Topology::load_file(REFLEX_FUZZ_TOPOLOGY, &err);
    if (!topo) {
      std::fprintf(stderr, "fuzz_fast: cannot load %s\n", REFLEX_FUZZ_TOPOLOGY);
      std::abort();
    }
    return topo;
  }();
  return *t;
}

#if REFLEX_FUZZ_TARGET == 6
// Two signatures, one kernel-only, so a KB-filled kind/transport/clock path runs.
const reflex::KnowledgeBase& codec_kb() {
  static const reflex::KnowledgeBase kb = [] {
    reflex::KnowledgeBase k;
    reflex::Signature a;
    a.name = "sig_kernel";
    a.kind = reflex::DeviceKind::gpu;
    a.sources = reflex::kTransportKernel;
    a.fault_class = "gpu_hw";
    reflex::Signature b;
    b.name = "sig_any";
    b.kind = reflex::DeviceKind::nic;
    k.signatures = {a, b};
    return k;
  }();
  return kb;
}
#endif

template <typename Fn>
void for_each_line(std::string_view rest, Fn fn) {
  uint64_t line_no = 0;
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    fn(rest.substr(0, nl), ++line_no);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
  }
}
}  // namespace

#if REFLEX_FUZZ_TARGET == 5 && defined(REFLEX_LIBFUZZER)
// Structure-aware mutation for the .rfx front end. libFuzzer's byte
// mutations turn nearly every input into garbage (the corpus's median input
// had 16 syntax errors, each costing ANTLR an exception and a recovery), so
// the passes behind the parser saw little of it. Three mutations in four
// work on the input's tokens instead: one deleted, repeated, swapped with or
// replaced by another of its tokens or by a word of the grammar
// (tests/fuzz/rfx.dict), a line repeated or dropped. That keeps most inputs
// near valid. The fourth is libFuzzer's own (bytes, with the dictionary), so
// the error paths keep being fuzzed.
extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

// The mutator's own branches are not the target's: it is built without
// coverage instrumentation (its comparison callbacks were 4% of a run; libFuzzer
// discards its counters anyway). ASan still checks it.
#define REFLEX_NO_COVERAGE __attribute__((no_sanitize("coverage")))

namespace {
struct Span {
  size_t b, e;
};

// Tokens roughly as the lexer sees them (comments, strings and /regex/ whole;
// words; two-character operators); white space between them is kept as is.
REFLEX_NO_COVERAGE std::vector<Span> rfx_tokens(std::string_view s) {
  std::vector<Span> out;
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t i = 0; i < s.size();) {
    const char c = s[i];
    size_t j = i + 1;
    if (std::isspace(static_cast<unsigned char>(c))) {
      i = j;
      continue;
    }
    if (c == '#') {
      while (j < s.size() && s[j] != '\n') ++j;
    } else if (c == '"' || c == '/') {
      size_t k = j;
      while (k < s.size() && s[k] != c && s[k] != '\n') k += (s[k] == '\\') ? 2 : 1;
      if (k < s.size() && s[k] == c) j = k + 1;
    } else if (word(c)) {
      while (j < s.size() && (word(s[j]) || s[j] == '.')) ++j;
    } else if (j < s.size() && std::string_view("->=!<.").find(c) != std::string_view::npos &&
               (s[j] == '=' || s[j] == '>' || s[j] == '.')) {
      ++j;
    }
    out.push_back({i, std::min(j, s.size())});
    i = out.back().e;
  }
  return out;
}

const std::vector<std::string>& grammar_words() {
  static const std::vector<std::string> words = [] {
    std::vector<std::string> w;
    std::ifstream in(REFLEX_FUZZ_DICT);
    for (std::string line; std::getline(in, line);) {
      const size_t q = line.find('"');
      if (line.empty() || line[0] == '#' || q == std::string::npos) continue;
      std::string v;
      for (size_t i = q + 1; i < line.size() && line[i] != '"'; ++i) {
        if (line[i] == '\\' && i + 3 < line.size() && line[i + 1] == 'x') {  // \xNN
          v += static_cast<char>(std::strtol(line.substr(i + 2, 2).c_str(), nullptr, 16));
          i += 3;
          continue;
        }
        if (line[i] == '\\' && i + 1 < line.size()) ++i;  // \" and \\ .
        v += line[i];
      }
      if (!v.empty()) w.push_back(v);
    }
    if (w.empty()) w.push_back("signature");
    return w;
  }();
  return words;
}

// One token-level mutation of `in`, or "" when none applies.
REFLEX_NO_COVERAGE std::string mutate_tokens(std::string_view in, std::minstd_rand& rng) {
  const std::vector<Span> toks = rfx_tokens(in);
  if (toks.size() < 2) return "";
  Span a = toks[rng() % toks.size()], b = toks[rng() % toks.size()];
  auto text = [&](Span t) { return in.substr(t.b, t.e - t.b); };
  auto before = [&](size_t at) { return in.substr(0, at); };
  auto after = [&](size_t at) { return in.substr(at); };
  std::string out;
  switch (rng() % 7) {
    case 0:  // a token deleted
      out.append(before(a.b)).append(after(a.e));
      break;
    case 1:  // a token repeated elsewhere
      out.append(before(a.b)).append(text(b)).append(" ").append(after(a.b));
      break;
    case 2:  // a token replaced by another
      out.append(before(a.b)).append(text(b)).append(after(a.e));
      break;
    case 3:  // two tokens swapped
      if (a.b > b.b) std::swap(a, b);
      if (a.e > b.b) return "";
      out.append(before(a.b)).append(text(b)).append(in.substr(a.e, b.b - a.e));
      out.append(text(a)).append(after(b.e));
      break;
    case 4: {  // a token replaced by a word of the grammar
      const auto& words = grammar_words();
      out.append(before(a.b)).append(words[rng() % words.size()]).append(after(a.e));
      break;
    }
    default: {  // a line repeated after another, or dropped
      auto line_at = [&](size_t at) {
        const size_t lb = in.rfind('\n', at == 0 ? 0 : at - 1);
        const size_t s = (lb == std::string_view::npos || at == 0) ? 0 : lb + 1;
        const size_t le = in.find('\n', at);
        return Span{s, le == std::string_view::npos ? in.size() : le + 1};
      };
      const Span la = line_at(a.b), lb = line_at(b.b);
      if (rng() % 2) {
        out.append(before(la.e)).append(text(lb));
        if (out.back() != '\n') out += '\n';
        out.append(after(la.e));
      } else {
        out.append(before(la.b)).append(after(la.e));
      }
    }
  }
  return out;
}
}  // namespace

extern "C" REFLEX_NO_COVERAGE size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size,
                                                             size_t max_size, unsigned seed) {
  std::minstd_rand rng(seed);
  if (rng() % 4 != 0) {
    const std::string out =
        mutate_tokens(std::string_view(reinterpret_cast<const char*>(data), size), rng);
    if (!out.empty() && out.size() <= max_size) {
      std::memcpy(data, out.data(), out.size());
      return out.size();
    }
  }
  return LLVMFuzzerMutate(data, size, max_size);
}
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
#if REFLEX_FUZZ_TARGET == 1
  reflex::TopologyError err;
  (void)reflex::Topology::load_text(in, "fuzz.json", &err);
#elif REFLEX_FUZZ_TARGET == 2
  if (in.empty()) return 0;
  // The first byte chooses what a bundle would know about the file.
  const unsigned o = static_cast<unsigned char>(in[0]);
  reflex::FormatOptions opts;
  opts.strict_transport = (o & 1) != 0;
  opts.max_line_bytes = (o & 2) ? 64 : (1u << 20);
  reflex::FormatStats stats;
  reflex::LineParser parser(topology(), opts, &stats);
  reflex::FileContext ctx;
  static constexpr const char* kDirs[] = {"node-0001", "node-0002", "unknown-host", "kern.log"};
  ctx.host_dir = kDirs[(o >> 2) & 3];
  ctx.file = (o & 16) ? "hosts/node-0001/dmesg.txt" : "hosts/node-0001/train.log";
  if (o & 32) ctx.boot_time_us = int64_t{1772668800} * 1000000;
  ctx.tz_offset_s = (o & 64) ? -5 * 3600 : 0;
  if (o & 128) ctx.year = 2026;
  parser.begin_file(ctx);
  for_each_line(in.substr(1), [&](std::string_view line, uint64_t n) {
    reflex::LogRecord rec;
    (void)parser.parse(line, n, &rec);
  });
#elif REFLEX_FUZZ_TARGET == 3
  reflex::FormatStats stats;
  for_each_line(in, [&](std::string_view line, uint64_t) {
    std::string storage;
    reflex::LogRecord rec;
    (void)reflex::parse_envelope(line, topology(), 1772668800000000, &stats, &storage, &rec);
  });
#elif REFLEX_FUZZ_TARGET == 4
  // A whole artifact file (its 8-byte "RFXKB" header, as reflexc writes it)
  // is decoded past the header, so a real artifact is a useful seed.
  size_t skip = 0;
  if (size >= 8 && in.substr(0, 6) == std::string_view("RFXKB\0", 6)) skip = 8;
  const std::vector<uint8_t> bytes(data + skip, data + size);
  std::string err;
  // Half the inputs decode everything, half as `reflex events` does (rules
  // and tests read past): both paths, at one decode per input.
  if (size % 2)
    (void)reflex::kb_from_cbor(bytes, &err,
                               reflex::KbParts{.rules = false, .tests = false, .examples = false});
  else
    (void)reflex::kb_from_cbor(bytes, &err);
#elif REFLEX_FUZZ_TARGET == 5
  reflex::CompileOptions o;
  o.allow_imports = false;
  o.check_regex = false;
  o.check_examples = false;
  o.max_file_bytes = 1 << 20;
  // 10 syntax errors per file, not 50: the recovery after the tenth is the
  // same code as before it, while the corpus's mutated inputs average ~20
  // errors and the cost per input grows with each (1.6x faster, measured).
  // The too-many-errors path runs more often, not less.
  o.max_errors_per_file = 10;
  const reflex::CompileResult r = reflex::compile_text("fuzz.rfx", std::string(in), o);
  (void)reflex::render_diagnostics(r, reflex::DiagFormat::text);
  // The JSON renderer is straight-line nlohmann serialisation (invalid UTF-8
  // replaced, exceptions caught): every branch it has (notes, names, no
  // file) shows up on inputs with few diagnostics, while the corpus's
  // many-error inputs made it 22% of the time (perf). The text renderer
  // (snippet windows, UTF-8 column arithmetic) stays on every input.
  if (r.diagnostics.size() <= 4) (void)reflex::render_diagnostics(r, reflex::DiagFormat::json);
  if (r.kb) (void)reflex::causal_graph_dot(*r.kb);
#elif REFLEX_FUZZ_TARGET == 6
  if (in.empty()) return 0;
  const unsigned o = static_cast<unsigned char>(in[0]);
  const reflex::KnowledgeBase* kb = (o & 1) ? &codec_kb() : nullptr;
  const reflex::Topology* topo = (o & 2) ? &topology() : nullptr;
  std::string err;
  auto ev = reflex::parse_event_json(in.substr(1), &err, kb, topo);
  if (!ev) return 0;
  // The record is lossless: written, read and written again it is the same.
  const std::string rec = reflex::event_to_record_json(*ev);
  auto back = reflex::parse_event_json(rec, &err, kb, topo);
  if (!back || reflex::event_to_record_json(*back) != rec) {
    std::fprintf(stderr, "record round trip changed the event:\n%s\n", rec.c_str());
    std::abort();
  }
  // The line form is read back as an event too.
  const std::string line = reflex::EventLineWriter(kb).line(*ev);
  if (!reflex::parse_event_json(line, &err, kb, topo)) {
    std::fprintf(stderr, "written line not read back (%s):\n%s\n", err.c_str(), line.c_str());
    std::abort();
  }
#else
#error "REFLEX_FUZZ_TARGET must be 1..6"
#endif
  return 0;
}
