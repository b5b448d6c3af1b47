// Splits a batch loop over XLA's CPU thread pool (ffi::ThreadPool) and the calling thread.
//
// Work is handed out in chunks from one atomic counter. The caller takes chunks too and then
// waits only for chunks that a pool thread has already claimed (those are running, so the wait
// ends); pool tasks that start after the batch is exhausted do nothing. So there is no deadlock
// when the pool is busy or has no free thread, and no task touches the caller's stack after the
// handler returns (the shared state outlives it; `body` is only called for claimed chunks).
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

#include "xla/ffi/api/ffi.h"

namespace batchla::cpu {

struct ParallelState {
  std::function<void(int64_t, int64_t)> body;
  int64_t count = 0, chunk = 1;
  std::atomic<int64_t> next{0}, finished{0};
  std::mutex mu;
  std::condition_variable done;

  void Drain() {
    for (int64_t begin; (begin = next.fetch_add(chunk)) < count;) {
      const int64_t end = std::min(begin + chunk, count);
      body(begin, end);
      if (finished.fetch_add(end - begin) + (end - begin) == count) {
        std::lock_guard<std::mutex> lock(mu);
        done.notify_all();
      }
    }
  }
};

// Calls body(begin, end) over [0, count) in chunks of about `work_per_item`-weighted size; runs
// inline when the batch is too small to pay for the hand-off.
inline void ParallelFor(xla::ffi::ThreadPool& pool, int64_t count, double work_per_item,
                        std::function<void(int64_t, int64_t)> body) {
  constexpr double kMinWorkPerChunk = 2e5;  // ~ flops worth a task hand-off (tens of microseconds)
  const int64_t threads = std::max<int64_t>(1, pool.num_threads());
  const int64_t min_chunk = std::max<int64_t>(1, static_cast<int64_t>(kMinWorkPerChunk / std::max(1.0, work_per_item)));
  const int64_t chunks = std::min<int64_t>(4 * threads, (count + min_chunk - 1) / min_chunk);
  if (threads == 1 || chunks <= 1) {
    if (count > 0) body(0, count);
    return;
  }
  auto state = std::make_shared<ParallelState>();
  state->body = std::move(body);
  state->count = count;
  state->chunk = (count + chunks - 1) / chunks;
  const int64_t helpers = std::min<int64_t>(threads, chunks) - 1;
  for (int64_t t = 0; t < helpers; ++t) pool.Schedule([state] { state->Drain(); });
  state->Drain();
  std::unique_lock<std::mutex> lock(state->mu);
  state->done.wait(lock, [&] { return state->finished.load() == count; });
}

}  // namespace batchla::cpu
