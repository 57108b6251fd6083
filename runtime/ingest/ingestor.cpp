// The Ingestor facade: LineParser/parse_envelope -> Matcher -> multi-line
// joins -> device location -> StormFilter -> sink. Each public method takes
// the lock and hands over to Ingestor::Impl (ingest_impl.h), which wires the
// stages a line goes through, a class each.
#include <chrono>
#include <filesystem>

#include "ingest_impl.h"

namespace reflex {

Ingestor::Ingestor(const KnowledgeBase& kb, const Topology& topo, IngestOptions opts)
    : impl_(std::make_unique<Impl>(kb, topo, opts)) {}

Ingestor::~Ingestor() = default;

void Ingestor::set_sink(EventSink sink) {
  std::lock_guard lock(impl_->mu);
  impl_->sink = std::move(sink);
}

bool Ingestor::ok() const {
  return impl_->ok;
}
size_t Ingestor::pattern_count() const {
  return impl_->matcher.patterns().size();
}
void Ingestor::set_memo_first(bool on) {
  std::lock_guard lock(impl_->mu);
  impl_->blocks.allow_memo_first(on);
}
uint64_t Ingestor::memo_first_lines() const {
  std::lock_guard lock(impl_->mu);
  return impl_->blocks.memo_first_lines();
}

BundleListing BundleListing::of(const std::string& dir) {
  BundleListing l;
  l.dir = dir;
  l.ok = plan_bundle(dir, &l.plan, &l.stats, &l.error);
  for (const BundleFile& f : l.plan.files) {
    std::error_code ec;
    const uintmax_t size = f.path.empty() ? 0 : std::filesystem::file_size(f.path, ec);
    l.bytes.push_back(ec ? 0 : size);
  }
  return l;
}

bool Ingestor::read_bundle(const std::string& dir, std::string* error) {
  return read_bundle(BundleListing::of(dir), error);
}

bool Ingestor::read_bundle(BundleListing listing, std::string* error) {
  std::lock_guard lock(impl_->mu);
  Impl& m = *impl_;
  if (!listing.ok) {
    if (error) *error = listing.error;
    m.have_file = false;
    return false;
  }
  if (m.opts.threads > 1) {
    bool declined = false;
    bool ok = m.read_bundle_threads(listing, m.opts.threads, &declined, error);
    m.have_file = false;
    if (!declined) return ok;
  }
  return m.read_bundle_one_thread(listing, error);
}

void Ingestor::read_file(const std::string& path, const std::string& bundle_relative,
                         const std::string& host_dir_name) {
  std::lock_guard lock(impl_->mu);
  impl_->read_any_file(path, bundle_relative, host_dir_name);
}

void Ingestor::feed_envelope(std::string_view json_line) {
  std::lock_guard lock(impl_->mu);
  Impl& m = *impl_;
  LogRecord rec;
  int64_t now = std::chrono::duration_cast<std::chrono::microseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  ++m.envelopes;
  if (!parse_envelope(json_line, m.topo, now, &m.fstats, &m.envelope_storage, &rec)) return;
  if (rec.line_no == 0) rec.line_no = m.envelopes;
  m.lines.process(rec);
}

void Ingestor::feed_line(const std::string& host, Transport transport, std::string_view line,
                         std::string_view evidence_file, uint64_t line_no) {
  std::lock_guard lock(impl_->mu);
  Impl& m = *impl_;
  if (!m.have_file || m.cur_host != host || m.cur_file != evidence_file) {
    if (m.have_file && m.cur_file != evidence_file) m.joins.end_of_file_stream();
    m.cur_host = host;
    m.cur_file.assign(evidence_file);
    m.have_file = true;
    FileContext ctx;
    ctx.host_dir = host;
    ctx.file = m.cur_file;
    ctx.source = FileSource::caller;  // host and transport are the caller's
    m.parser.begin_file(ctx);
  }
  LogRecord rec;
  if (!m.parser.parse(line, line_no, &rec)) return;
  // The caller knows host and transport; they win over what the line claims.
  if (auto h = m.topo.resolve_host(host)) {
    rec.host = *h;
    rec.host_known = true;
  } else {
    rec.host = host;
    rec.host_known = false;
  }
  rec.transport = transport;
  rec.file = m.cur_file;
  rec.line_no = line_no;
  m.lines.process(rec);
}

void Ingestor::feed_record(const LogRecord& rec) {
  std::lock_guard lock(impl_->mu);
  impl_->lines.process(rec);
}

void Ingestor::finish() {
  std::lock_guard lock(impl_->mu);
  Impl& m = *impl_;
  m.joins.end_of_file_stream();
  m.have_file = false;
  m.storms.flush(m.emit_fn);
}

void Ingestor::set_progress(std::function<void(const OpenStorms&)> fn) {
  std::lock_guard lock(impl_->mu);
  impl_->progress = std::move(fn);
}

void Ingestor::with_open_storms(const std::function<void(const OpenStorms&)>& fn) const {
  std::lock_guard lock(impl_->mu);
  fn(impl_->storms);
}

void Ingestor::advance_time(TimeUs now) {
  std::lock_guard lock(impl_->mu);
  impl_->storms.advance(now, impl_->emit_fn);
}

const IngestStats& Ingestor::stats() const {
  std::lock_guard lock(impl_->mu);
  impl_->refresh_view();
  return impl_->view;
}

IngestStats Ingestor::stats_snapshot() const {
  std::lock_guard lock(impl_->mu);
  impl_->refresh_view();
  return impl_->view;
}

}  // namespace reflex
