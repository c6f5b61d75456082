#include "amd/sdma/ring.hpp"

#include <atomic>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

namespace dmabench::amd::sdma {

namespace {
std::uint64_t load_acquire(volatile std::uint64_t* p) {
  return __atomic_load_n(const_cast<std::uint64_t*>(p), __ATOMIC_ACQUIRE);
}
}  // namespace

RingWriter::RingWriter(Queue& queue, std::chrono::milliseconds space_timeout)
    : queue_(queue), cells_(queue.cells()), timeout_(space_timeout) {
  const std::uint64_t size = cells_.ring_bytes;
  if (size < 64 || (size & (size - 1)) != 0)
    throw std::invalid_argument(fmt::format("SDMA ring of {} bytes: the size must be a power of two of 64 bytes or more", size));
  wptr_ = published_ = load_acquire(cells_.wptr);
}

void RingWriter::wait_for_space(std::uint64_t bytes) {
  // free = size - (wptr - rptr) - 4: one dword stays empty, so a full ring never looks empty
  const std::uint64_t size = cells_.ring_bytes;
  if (bytes + 4 > size)
    throw std::runtime_error(fmt::format("{} bytes of packets can never fit in a {}-byte SDMA ring", bytes, size));
  auto free_bytes = [&] { return size - 4 - (wptr_ - load_acquire(cells_.rptr)); };
  if (free_bytes() >= bytes) return;
  submit();  // what is already written must run before space frees up
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  while (free_bytes() < bytes) {
    if (auto why = queue_.fault()) throw std::runtime_error(fmt::format("SDMA ring full and {}", *why));
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error(fmt::format(
          "SDMA ring full for {} ms: {} bytes needed, {} pending on {} (rptr {}, wptr {}); a pre-posted poll that is "
          "never released blocks its queue",
          timeout_.count(), bytes, wptr_ - load_acquire(cells_.rptr), queue_.describe(), load_acquire(cells_.rptr), wptr_));
    std::this_thread::yield();
  }
}

void RingWriter::write_dwords(const std::uint32_t* dw, std::size_t n) {
  const std::uint64_t mask = cells_.ring_bytes - 1;
  if (staging_)
    staged_.dwords.insert(staged_.dwords.end(), dw, dw + n);
  else
    std::memcpy(reinterpret_cast<char*>(cells_.ring) + (wptr_ & mask), dw, n * 4);  // never crosses the end
  if (capturing_) capture_.dwords.insert(capture_.dwords.end(), dw, dw + n);
  wptr_ += n * 4;
}

void RingWriter::put(const Packet& packet) {
  scratch_.clear();
  encode(packet, scratch_);
  const std::uint64_t bytes = scratch_.size() * 4;
  const std::uint64_t to_end = cells_.ring_bytes - (wptr_ & (cells_.ring_bytes - 1));
  if (bytes > to_end) {  // pad to the end with one NOP whose skip covers the rest
    wait_for_space(to_end + bytes);
    Dwords pad(to_end / 4, 0);
    pad[0] = encode(Nop{static_cast<std::uint32_t>(to_end / 4 - 1)})[0];
    write_dwords(pad.data(), pad.size());
    if (capturing_) capture_.packets.push_back("NOP");
  } else {
    wait_for_space(bytes);
  }
  write_dwords(scratch_.data(), scratch_.size());
  if (capturing_) capture_.packets.push_back(packet_name(packet));
}

void RingWriter::submit() {
  if (wptr_ == published_ || staging_) return;
  std::atomic_thread_fence(std::memory_order_release);  // ring contents before the write pointer
  queue_.submit(wptr_);
  published_ = wptr_;
}

void RingWriter::begin_staging() {
  submit();  // what was put before goes out the ordinary way
  staged_ = StagedPackets{.from = wptr_, .dwords = {}};
  staging_ = true;
}

StagedPackets RingWriter::end_staging() {
  staging_ = false;
  published_ = wptr_;  // the stager publishes these
  return std::move(staged_);
}

void RingWriter::start_capture() {
  capture_ = Capture{.ring_offset = wptr_ & (cells_.ring_bytes - 1), .dwords = {}, .packets = {}};
  capturing_ = true;
}

RingWriter::Capture RingWriter::stop_capture() {
  capturing_ = false;
  return std::move(capture_);
}

nlohmann::json to_json(const RingWriter::Capture& c) {
  nlohmann::json dw = nlohmann::json::array();
  for (std::uint32_t d : c.dwords) dw.push_back(fmt::format("0x{:08x}", d));
  return {{"ring_offset_bytes", c.ring_offset}, {"packets", c.packets}, {"dwords", dw}};
}

}  // namespace dmabench::amd::sdma
