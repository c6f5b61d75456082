#pragma once
// The producer side of an SDMA ring (SDMA-FACTS.md §1.10, §2.4): packets are encoded straight into
// the ring at the write position; a packet that would cross the ring's end is preceded by NOPs up to
// the end, so no packet straddles it; free space is checked against the engine's read pointer (one
// dword always left empty); submit() publishes the write pointer and rings the doorbell.
//
// Optionally records what it writes (capture), for packet dumps: the ring dwords of one operation.
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "amd/sdma/packets.hpp"
#include "amd/sdma/platform.hpp"

namespace dmabench::amd::sdma {

class RingWriter {
 public:
  // `fault` is polled while waiting for ring space (a stopped engine never frees any).
  explicit RingWriter(Queue& queue, std::chrono::milliseconds space_timeout = std::chrono::milliseconds(10000));

  // Encodes `packet` at the write position (after NOP padding where it would cross the ring's end).
  // Waits for the engine to free space; throws std::runtime_error when it does not within the
  // timeout, or when the packet could never fit (bigger than the ring).
  void put(const Packet& packet);
  // Publishes everything put since the last submit (nothing happens when nothing was put).
  void submit();
  std::uint64_t position() const { return wptr_; }       // bytes put so far (only increases)
  std::uint64_t submitted() const { return published_; }
  Queue& queue() const { return queue_; }

  // Staging (submit=gpu): between begin_staging() and end_staging() put() checks space and pads as
  // always but collects the dwords instead of writing the ring; whoever writes them (a GPU) publishes.
  void begin_staging();
  StagedPackets end_staging();

  // Capture: every dword put (NOP padding included) from start_capture() until stop_capture(), with
  // the ring byte offset of the first one and each packet's name.
  struct Capture {
    std::uint64_t ring_offset = 0;
    std::vector<std::uint32_t> dwords;
    std::vector<std::string> packets;
  };
  void start_capture();
  Capture stop_capture();

 private:
  void wait_for_space(std::uint64_t bytes);
  void write_dwords(const std::uint32_t* dw, std::size_t n);

  Queue& queue_;
  const QueueCells& cells_;
  std::chrono::milliseconds timeout_;
  std::uint64_t wptr_ = 0, published_ = 0;
  bool capturing_ = false, staging_ = false;
  StagedPackets staged_;
  Capture capture_;
  Dwords scratch_;
};

// The capture as JSON (results/SCHEMA.md "packet dumps"): ring_offset, dwords as "0x%08x" strings,
// packet names.
nlohmann::json to_json(const RingWriter::Capture& capture);

}  // namespace dmabench::amd::sdma
