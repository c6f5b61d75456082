#include "engines/buffer_pool.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/datagen.hpp"

namespace dmabench {

namespace {
BufferPool* g_pool = nullptr;
LendCounts g_counts;
}  // namespace

LendCounts lend_counts() { return g_counts; }

namespace {
// A new buffer of a place and size, made by `make` and counted (the pool's and the unpooled path's one allocation).
std::unique_ptr<PooledBuffer> allocate(const BufferPlace& place, std::size_t bytes, const BufferMaker& make) {
  auto b = std::make_unique<PooledBuffer>();
  b->bytes = bytes;
  b->place = place;
  b->memory = make(b->info);
  ++g_counts.allocated;
  g_counts.allocated_bytes += bytes;
  return b;
}
}  // namespace

BufferLease& BufferLease::operator=(BufferLease&& o) noexcept {
  if (this != &o) {
    give_back();
    buffer_ = std::move(o.buffer_);
    pool_ = std::exchange(o.pool_, nullptr);
  }
  return *this;
}

void BufferLease::give_back() {
  if (!buffer_) return;
  if (pool_)
    pool_->take_back(std::move(buffer_));
  else
    buffer_.reset();
  pool_ = nullptr;
}

BufferPool::BufferPool(IdleLimit idle_limit) : idle_limit_(std::move(idle_limit)) {}

BufferPool::~BufferPool() {
  // every lease is back (the sweep released its last case); what is idle is freed here, in the order it
  // was returned, while the runtime that made it is still up (the pool goes before the engines and backend)
  trim();
}

BufferLease BufferPool::lend(const BufferPlace& place, std::size_t bytes, const BufferMaker& make) {
  BufferLease lease;
  lease.pool_ = this;
  const auto it = std::find_if(idle_.begin(), idle_.end(), [&](const auto& b) { return b->bytes == bytes && b->place == place; });
  if (it != idle_.end()) {
    lease.buffer_ = std::move(*it);
    idle_.erase(it);
    ++g_counts.reused;
  } else {
    evict_for(place, bytes);
    try {
      lease.buffer_ = allocate(place, bytes, make);
    } catch (const std::exception&) {
      // memory may be short because of what waits idle here: free it and try once more
      if (idle_bytes([&](const BufferPlace& p) { return p == place; }) == 0) throw;
      trim(place);
      lease.buffer_ = allocate(place, bytes, make);
    }
  }
  ++lease.buffer_->lends;
  ++lent_;
  return lease;
}

void BufferPool::take_back(std::unique_ptr<PooledBuffer> b) {
  --lent_;
  const BufferPlace place = b->place;
  idle_.push_front(std::move(b));
  evict_for(place, 0);
}

void BufferPool::evict_for(const BufferPlace& place, std::size_t incoming) {
  if (!idle_limit_) return;
  const std::size_t limit = idle_limit_(place);
  // the same memory: the host's (every host place), or one GPU's
  auto same = [&](const BufferPlace& p) { return p.host == place.host && (p.host || p.device == place.device); };
  // the least recently returned buffers go first; a buffer just given back (the front, when incoming is 0) stays,
  // even alone over the limit: it was allocated, and the next case of its place and size takes it
  auto first = idle_.begin();
  if (incoming == 0 && first != idle_.end()) ++first;
  for (auto it = idle_.end(); it != first && idle_bytes(same) + incoming > limit;) {
    --it;
    if (!same((*it)->place)) continue;
    it = idle_.erase(it);
    ++freed_;
  }
}

void BufferPool::trim(const std::optional<BufferPlace>& place) {
  for (auto it = idle_.begin(); it != idle_.end();) {
    if (place && !((*it)->place == *place)) {
      ++it;
      continue;
    }
    it = idle_.erase(it);
    ++freed_;
  }
}

std::size_t BufferPool::idle_bytes(const std::function<bool(const BufferPlace&)>& match) const {
  std::size_t n = 0;
  for (const auto& b : idle_)
    if (match(b->place)) n += b->bytes;
  return n;
}

BufferPool* current_pool() { return g_pool; }

PoolScope::PoolScope(BufferPool& pool) : previous_(std::exchange(g_pool, &pool)) {}
PoolScope::~PoolScope() { g_pool = previous_; }

BufferLease lend_buffer(const BufferPlace& place, std::size_t bytes, const BufferMaker& make, bool pooled) {
  if (bytes == 0) return {};
  if (g_pool && pooled) return g_pool->lend(place, bytes, make);
  BufferLease lease;
  lease.buffer_ = allocate(place, bytes, make);
  lease.buffer_->lends = 1;
  return lease;
}

std::uint64_t resting_key() { return datagen::stream_key(datagen::kPoisonSalt, 0x7e57u); }

ByteRanges to_restore(const BufferState& s, std::size_t bytes) {
  if (!s.resting) return {{0, bytes}};
  return merged(s.dirty);
}

}  // namespace dmabench
