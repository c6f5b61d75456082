#pragma once
// Buffers kept across the cases of a sweep. A sweep installs one BufferPool (PoolScope); an engine's
// operation borrows each of its buffers from it (lend_buffer) by place (a GPU's memory, or host memory of a
// kind on a node, and the allocator) and size, and gives it back when the case ends, so the next case of
// that place and size takes it without allocating. Without a pool installed (tests, multi-process runs)
// every buffer is the case's own, freed with it.
//
// The pool also keeps what validation knows of each buffer (BufferState): the poison every byte holds at
// rest but for the ranges a case may have written. A case then re-poisons only those ranges, fills only
// the source bytes it reads, and checks the bytes it wrote exactly and the rest of the buffer against the
// resting poison (engines/gpu_operation.cpp, engines/host.cpp): setup grows with the bytes a case
// touches, not with the pool, but for that one read of the untouched bytes.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/host_memory.hpp"
#include "core/plan.hpp"  // ByteRanges

namespace dmabench {

// Where a buffer lives and what made it; buffers are lent only to a request of the same place and size.
struct BufferPlace {
  std::string maker;  // the allocator: "gpu" (the runtime's), "nccl", "host-heap" (the host backend's), ...
  int device = -1;    // the device whose memory it is (-1: none)
  bool host = false;  // host memory (also the host backend's ranks' "device" memory)
  HostKind kind = HostKind::pinned;  // host memory: its kind and node
  int node = -1;
  bool operator==(const BufferPlace&) const = default;
};

// What validation knows of a buffer's bytes: every byte holds the resting poison (the datagen stream
// kRestingKey, indexed by offset in the buffer) except in `dirty`; nullopt: nothing is known (a new
// buffer, or one a failed case may have written anywhere).
struct BufferState {
  bool resting = false;
  ByteRanges dirty;
  void forget() {
    resting = false;
    dirty.clear();
  }
};

// A buffer as allocated: its memory (freed by its deleter), size, how it was made (host buffers: the
// allocation record of core/host_memory.hpp) and its validation state.
struct PooledBuffer {
  using Memory = std::unique_ptr<void, std::function<void(void*)>>;
  Memory memory;
  std::size_t bytes = 0;
  BufferPlace place;
  hostmem::BufferInfo info;  // host buffers: alloc_s, register_s, placement, method of the allocation
  BufferState state;
  std::uint64_t lends = 0;   // how many cases borrowed it
  char* data() const { return static_cast<char*>(memory.get()); }
};

// Makes a buffer's memory (throws on failure); fills `info` for host memory.
using BufferMaker = std::function<PooledBuffer::Memory(hostmem::BufferInfo& info)>;

class BufferPool;

// One operation's hold on a buffer: gives it back to its pool (or frees it, without one) when it goes.
class BufferLease {
 public:
  BufferLease() = default;
  BufferLease(BufferLease&& o) noexcept { *this = std::move(o); }
  BufferLease& operator=(BufferLease&& o) noexcept;
  BufferLease(const BufferLease&) = delete;
  BufferLease& operator=(const BufferLease&) = delete;
  ~BufferLease() { give_back(); }
  char* data() const { return buffer_ ? buffer_->data() : nullptr; }
  std::size_t size() const { return buffer_ ? buffer_->bytes : 0; }
  explicit operator bool() const { return buffer_ != nullptr; }
  BufferState& state() { return buffer_->state; }
  const PooledBuffer& buffer() const { return *buffer_; }
  bool reused() const { return buffer_ && buffer_->lends > 1; }
  // Returns the buffer now (to its pool, or frees it).
  void give_back();

 private:
  friend class BufferPool;
  friend BufferLease lend_buffer(const BufferPlace&, std::size_t, const BufferMaker&, bool);
  std::unique_ptr<PooledBuffer> buffer_;  // while lent, the lease holds it
  BufferPool* pool_ = nullptr;            // null: the case's own buffer
};

// The buffers a sweep keeps. Idle buffers wait for a request of their place and size; at most
// idle_limit(place) bytes wait idle in the memory of a place (the host's, for every host place; a GPU's), the
// least recently used going first, and every idle buffer of a place is freed when an allocation there fails,
// before it is tried once more. Not thread-safe: one sweep,
// one thread. Every lease must be given back before the pool goes.
class BufferPool {
 public:
  using IdleLimit = std::function<std::size_t(const BufferPlace&)>;
  explicit BufferPool(IdleLimit idle_limit = {});
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  BufferLease lend(const BufferPlace& place, std::size_t bytes, const BufferMaker& make);
  // Frees every idle buffer (of one place, or all).
  void trim(const std::optional<BufferPlace>& place = std::nullopt);
  // Idle bytes kept at places that `match` selects (e.g. one GPU's, or host memory).
  std::size_t idle_bytes(const std::function<bool(const BufferPlace&)>& match) const;

  std::uint64_t freed() const { return freed_; }  // buffers it freed (evicted, trimmed)
  std::size_t lent() const { return lent_; }       // leases not given back yet

 private:
  friend class BufferLease;
  void take_back(std::unique_ptr<PooledBuffer> b);
  void evict_for(const BufferPlace& place, std::size_t incoming);
  IdleLimit idle_limit_;
  std::list<std::unique_ptr<PooledBuffer>> idle_;  // most recently returned first
  std::size_t lent_ = 0;
  std::uint64_t freed_ = 0;
};

// Buffers lent in this process so far (lend_buffer, pooled or not): allocated anew, or reused from the pool.
struct LendCounts {
  std::uint64_t allocated = 0, reused = 0;
  std::uint64_t allocated_bytes = 0;
};
LendCounts lend_counts();

// The pool buffers are lent from in this process: the sweep's (PoolScope), or null.
BufferPool* current_pool();
// Installs a pool for its life (the sweep, or a test); restores the one before.
class PoolScope {
 public:
  explicit PoolScope(BufferPool& pool);
  ~PoolScope();
  PoolScope(const PoolScope&) = delete;
  PoolScope& operator=(const PoolScope&) = delete;

 private:
  BufferPool* previous_;
};

// A buffer of `bytes` at `place`: from the current pool (when `pooled`), or made for the caller alone.
// bytes == 0: an empty lease.
BufferLease lend_buffer(const BufferPlace& place, std::size_t bytes, const BufferMaker& make, bool pooled = true);

// The datagen key of the resting poison (core/datagen.hpp): the same for every buffer and case.
std::uint64_t resting_key();

// The ranges of a buffer of `bytes` that poisoning must rewrite for the buffer to hold the resting poison
// everywhere: all of it when nothing is known, else its dirty ranges.
ByteRanges to_restore(const BufferState& s, std::size_t bytes);

}  // namespace dmabench
