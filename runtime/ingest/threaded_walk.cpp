// --threads: a bundle's files read by worker Impls, a window of files ahead
// of the main Impl, which replays each file's ops in walk order as they come.
//
// Workers read files ahead (at most kAhead per thread past the one being
// replayed); a worker on the lowest untaken file waits for the replay when
// its file's queue is full, and files read out of order are at most
// kOutOfOrderBytes, so memory stays bounded by the window, not by the bundle.
// Files are the unit of parallel work, so the gain is at most the bundle's
// size over its largest file's; below kMinFileGain the per-line hand-over to
// the replay costs more than the second core gives back (an Xid storm in one
// host's kern.log: 2.7x the one-thread wall time, `make bench` 2026-12-02).
#include <algorithm>
#include <exception>
#include <thread>

#include "ingest_impl.h"

namespace reflex {

namespace ingest {

namespace {
constexpr double kMinFileGain = 1.5;
}  // namespace

bool files_keep_threads_busy(const std::vector<uintmax_t>& sizes) {
  uintmax_t total = 0, largest = 0;
  for (uintmax_t size : sizes) {
    total += size;
    largest = std::max(largest, size);
  }
  return largest > 0 && double(total) >= kMinFileGain * double(largest);
}

OpBatch ThreadedWalk::fresh_batch() {
  std::lock_guard lk(spare_mu);
  OpBatch b;
  if (!spare.empty()) {
    b = std::move(spare.back());
    spare.pop_back();
  }
  b.ops.reserve(kBatch);
  return b;
}

// Largest first within the window, so the walk does not end on one worker
// reading a large file while the other has none left (telemetry: the
// workers ended ~12 ms apart). The replay's own file comes first when no
// one has it. Deadlock-free: only an in-order worker (its file was the
// lowest untaken) waits for the replay, and every file below its own was
// taken before it; out-of-order files are small enough to queue whole.
size_t ThreadedWalk::pick(bool* in_order) {
  std::unique_lock lk(window_mu);
  for (;;) {
    while (lowest_untaken < taken.size() && taken[lowest_untaken]) ++lowest_untaken;
    if (lowest_untaken == taken.size()) return SIZE_MAX;
    if (lowest_untaken < replayed + ahead) break;
    window_cv.wait(lk);
  }
  size_t best = lowest_untaken;
  if (best != replayed) {
    const size_t end = std::min(taken.size(), replayed + ahead);
    for (size_t j = best + 1; j < end; ++j)
      if (!taken[j] && bytes[j] <= kOutOfOrderBytes && bytes[j] > bytes[best]) best = j;
  }
  taken[best] = 1;
  if (++n_taken == taken.size()) all_taken.store(true, std::memory_order_relaxed);
  *in_order = best == lowest_untaken;
  return best;
}

}  // namespace ingest

bool Ingestor::Impl::read_bundle_threads(BundleListing& listing, unsigned n, bool* declined,
                                         std::string* error) {
  *declined = !ingest::files_keep_threads_busy(listing.bytes);
  if (*declined) return false;
  ingest::ThreadedWalk walk;
  walk.plan = std::move(listing.plan);
  walk.bytes = std::move(listing.bytes);
  replayer.merge_listing_notes(listing);
  walk.dir = listing.dir;
  walk.ahead = ingest::ThreadedWalk::kAhead * n;
  walk.slots.resize(walk.plan.files.size());
  walk.taken.assign(walk.plan.files.size(), 0);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < n; ++t) pool.emplace_back([&] { walk_worker(walk); });
  const std::string failed = replay_in_walk_order(walk);
  for (std::thread& t : pool) t.join();
  if (!failed.empty()) {
    if (error) *error = failed;
    return false;
  }
  return true;
}

void Ingestor::Impl::walk_worker(ingest::ThreadedWalk& walk) {
  Impl w(kb, topo, opts, this);
  ingest::OpBatch ops = walk.fresh_batch();
  w.recorder.record_into(&ops);
  for (;;) {
    bool in_order = false;
    const size_t i = walk.pick(&in_order);
    if (i == SIZE_MAX) return;
    w.read_walk_file(walk, i, in_order, &ops);
  }
}

// One file of the walk, read by this worker Impl into the file's slot.
void Ingestor::Impl::read_walk_file(ingest::ThreadedWalk& walk, size_t i, bool in_order,
                                    ingest::OpBatch* ops) {
  ingest::FileSlot& slot = walk.slots[i];
  auto push = [&](bool last) {
    ingest::OpBatch next_batch = walk.fresh_batch();
    std::unique_lock lk(slot.mu);
    if (!last && in_order)
      slot.cv.wait(lk, [&] { return slot.batches.size() < ingest::ThreadedWalk::kMaxQueued; });
    if (!ops->ops.empty()) slot.batches.push_back(std::move(*ops));
    *ops = std::move(next_batch);
    slot.done = last;
    slot.cv.notify_all();
  };
  bool begun = false;
  recorder.hand_over = [&] { push(false); };
  // At the walk's end a file's ops go to the replay every kStreamBytes of
  // input, not only at kBatch ops: a mixed-profile file has fewer ops than
  // that, and the replay, given the last file's ops only at its end, went
  // on ~2 ms after the workers (one worker's ops queue up behind the other's
  // file in walk order). Before the end the replay does not wait for them:
  // batches handed over early only wake it more often (~370 more context
  // switches in a mixed run).
  size_t since = 0;
  auto stream = [&](size_t bytes) {
    since += bytes;
    if (since < ingest::ThreadedWalk::kStreamBytes) return;
    since = 0;
    if (!ops->ops.empty() && walk.all_taken.load(std::memory_order_relaxed)) push(false);
  };
  try {
    read_bundle_file(
        &walk.plan.files[i],
        [&](const BundleLine& bl) {
          if (!begun) begin_chunked_file(*bl.ctx);
          begun = true;
          file_line(bl.raw, bl.line_no, &chunk_rec_line);
          stream(bl.raw.size() + 1);
        },
        [&](const BundleBlock& b) {
          const uint64_t n = file_block(b.text, b.first_line_no);
          stream(b.text.size());
          return n;
        },
        [&](const FileContext*) { return begun && file_mode == FileMode::chunk; }, &fstats);
    flush_chunk();
    joins.end_of_file_stream();
    recorder.flush_unrecognised_counts();
  } catch (const std::exception& e) {
    std::lock_guard lk(slot.mu);
    slot.error = walk.dir + ": " + e.what();
  }
  recorder.hand_over = nullptr;
  ingest::FileCounters c = recorder.take_counters();
  {
    std::lock_guard lk(slot.mu);
    slot.counters = std::move(c);
  }
  push(true);
}

// The main Impl's side: each file's ops in walk order, as they come; the
// first worker error, or "".
std::string Ingestor::Impl::replay_in_walk_order(ingest::ThreadedWalk& walk) {
  std::string failed;
  std::vector<ingest::OpBatch> taken;
  for (size_t i = 0; i < walk.slots.size(); ++i) {
    ingest::FileSlot& slot = walk.slots[i];
    const std::string& file = walk.plan.files[i].ctx.file;
    for (bool done = false; !done;) {
      {
        std::unique_lock lk(slot.mu);
        slot.cv.wait(lk, [&] { return slot.done || !slot.batches.empty(); });
        std::swap(taken, slot.batches);
        done = slot.done;
        slot.cv.notify_all();
      }
      for (ingest::OpBatch& b : taken) {
        for (const ingest::Op& op : b.ops) replayer.replay(op, b, file);
        b.clear();
        count_progress(kProgressLines);
      }
      std::lock_guard lk(walk.spare_mu);
      for (ingest::OpBatch& b : taken) walk.spare.push_back(std::move(b));
      taken.clear();
    }
    if (!slot.error.empty() && failed.empty()) failed = slot.error;
    replayer.merge(slot.counters);
    std::lock_guard lk(walk.window_mu);
    walk.replayed = i + 1;
    walk.window_cv.notify_all();
  }
  return failed;
}

}  // namespace reflex
