#include "engines/sdma_commands.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "amd/engine_map.hpp"

namespace dmabench::sdma_commands {
namespace {

using amd::sdma::Packet;

// Picks the engine of each unit under the options' policy.
class Chooser {
 public:
  Chooser(const Plan& plan, const SdmaOptions& o, const EngineChoice& c) : plan_(plan), o_(o), c_(c) {
    if (o.engines == SdmaEngines::map) map_ = amd::load_engine_map(o.map_file);  // checked when the config was read
  }
  // The engine for the k-th unit `rank` issues, moving bytes to rank `to`; throws Refused.
  int operator()(int rank, int to);
  // The engine for transfer `t`: a host-facing one where it reads or writes host memory, else as above.
  int operator()(const Transfer& t) { return plan_.touches_host(t) ? host_engine(t) : (*this)(t.issuer, t.dst_rank); }
  struct Refused {
    std::string why;
  };

 private:
  // A copy from or to host memory runs on one of the issuing GPU's host-facing (PCIe) engines, 0 ..
  // first_xgmi - 1 (SDMA0 and SDMA1 on MI300X; engines 2..15 are xGMI engines that serve peer links,
  // ../shared/SDMA-FACTS.md §2.3), under every `engines` option: the driver recommends engines per xGMI
  // link only, and an engine map names GPU pairs. recommended and map take ROCr's own assignment
  // (ROCm/ROCR-Runtime, runtime/hsa-runtime/core/runtime/amd_gpu_agent.cpp, GpuAgent::InitDma: the
  // host-to-device blit is made for SDMA0 and the device-to-host blit for SDMA1, and "gfx94x is more
  // efficient with reverse order of SDMA0/1 for host<->device copies" swaps them on gfx9.4 and later):
  // on gfx94x/95x, and where the ISA is unknown (the software engine), host -> device on engine 1 and
  // device -> host on engine 0, so the two directions of h2d-bidir run on two engines at once; on older
  // ISAs host -> device on 0 and device -> host on 1. round-robin: the rank's host copies over its
  // host-facing engines in turn. On gfx90a engine 0 takes host-to-device copies only ("Due to a RAS issue,
  // GFX90a can only support H2D copies on SDMA0", GpuAgent::DmaCopyOnEngine): other host copies avoid it.
  int host_engine(const Transfer& t);
  // Why engine e of device s cannot take a queue (the platform's answer, or beyond its count), or nullopt.
  WhyNot unusable(int s, int e) const {
    if (c_.unusable) return c_.unusable(s, e);
    if (e < 0 || e >= c_.engine_count(s)) return fmt::format("engine {} does not exist: GPU {} has {} SDMA engines", e, s, c_.engine_count(s));
    return std::nullopt;
  }
  // The usable engines of device s in [from, to).
  std::vector<int> usable_in(int s, int from, int to) const {
    std::vector<int> out;
    for (int e = std::max(0, from); e < to; ++e)
      if (!unusable(s, e)) out.push_back(e);
    return out;
  }

  const Plan& plan_;
  const SdmaOptions& o_;
  const EngineChoice& c_;
  std::vector<amd::MapEntry> map_;
  std::map<int, int> issued_, host_issued_;
};

int Chooser::operator()(int rank, int to) {
  const int s = plan_.devices[rank], d = plan_.devices[to];
  const int k = issued_[rank]++;
  int e = -1;
  switch (o_.engines) {
    case SdmaEngines::recommended: e = c_.recommended(s, d); break;
    case SdmaEngines::round_robin: {
      const std::vector<int> xgmi = usable_in(s, c_.first_xgmi(s), c_.engine_count(s));
      if (xgmi.empty()) throw Refused{fmt::format("round-robin: GPU {} has no usable xGMI SDMA engine", s)};
      e = xgmi[static_cast<std::size_t>(k) % xgmi.size()];
      break;
    }
    case SdmaEngines::map:
      if (auto m = amd::map_engine(map_, s, d)) e = *m;
      break;
  }
  if (e < 0 && s == d) {  // a GPU's copy to itself: its first usable xGMI engine
    const std::vector<int> xgmi = usable_in(s, c_.first_xgmi(s), c_.engine_count(s));
    e = xgmi.empty() ? c_.first_xgmi(s) : xgmi.front();
  }
  if (e < 0)
    throw Refused{o_.engines == SdmaEngines::map
                      ? fmt::format("engine map {} has no line for GPU {} -> GPU {} ('{},ENGINE,{}')", o_.map_file, s, d, s, d)
                      : fmt::format("the driver recommends no SDMA engine for GPU {} -> GPU {} (use engines=round-robin "
                                    "or map:FILE)",
                                    s, d)};
  if (auto why = unusable(s, e)) {
    const char* which = o_.engines == SdmaEngines::recommended ? "the driver's recommended"
                        : o_.engines == SdmaEngines::map       ? "the map's"
                                                               : "the";
    throw Refused{fmt::format("{} engine for GPU {} -> GPU {} cannot be used: {}", which, s, d, *why)};
  }
  return e;
}

int Chooser::host_engine(const Transfer& t) {
  const int s = plan_.devices[t.issuer], host_facing = c_.first_xgmi(s);
  const std::string gfx = c_.gfx_target ? c_.gfx_target(s) : std::string();
  const bool to_device = plan_.src_location(t.src_rank).host && !plan_.dst_location(t.dst_rank).host;
  const int first = !to_device && gfx.rfind("gfx90a", 0) == 0 ? 1 : 0;  // engines this copy may use: first ..
  const std::vector<int> usable = usable_in(s, first, host_facing);
  if (usable.empty())
    throw Refused{fmt::format("a copy from or to host memory needs a usable host-facing (PCIe) SDMA engine, and GPU {} has "
                              "none of {} (its first xGMI engine is {}){}",
                              s, std::max(0, host_facing - first), host_facing,
                              first ? "; gfx90a keeps engine 0 for host-to-device copies" : "")};
  if (o_.engines == SdmaEngines::round_robin) return usable[static_cast<std::size_t>(host_issued_[t.issuer]++) % usable.size()];
  const bool reversed = gfx.empty() || (gfx.size() > 5 && gfx.rfind("gfx9", 0) == 0 && gfx[4] >= '4' && gfx[4] <= '9');
  const int preferred = (to_device == reversed ? 1 : 0) % host_facing;
  // a fused-off preferred engine (MI308X's engine 1) gives way to the other host-facing one
  return std::find(usable.begin(), usable.end(), preferred) != usable.end() ? preferred : usable.front();
}

std::vector<Unit> copy_units(const Plan& plan, Chooser& choose) {
  std::vector<Unit> units;
  for (const Transfer& t : plan.transfers)
    units.push_back(Unit{Unit::copy, t.issuer, choose(t), {t}});
  return units;
}

// Copies of one source range by one rank, paired into 2-destination broadcasts (destinations with
// equal address residues mod 32, ROCr's rule); an odd one stays a copy. The pair's engine is the
// one for its second destination, as in the artifact.
std::vector<Unit> broadcast_units(const Plan& plan, Chooser& choose) {
  std::vector<Unit> units;
  std::map<std::tuple<int, int, std::size_t, std::size_t, std::size_t>, std::size_t> open;  // waiting for a partner
  for (const Transfer& t : plan.transfers) {
    const auto key = std::make_tuple(t.issuer, t.src_rank, t.src_offset, t.bytes, t.dst_offset % amd::sdma::kBroadcastResidue);
    auto it = open.find(key);
    if (it == open.end()) {
      open[key] = units.size();
      units.push_back(Unit{Unit::copy, t.issuer, -1, {t}});
      continue;
    }
    Unit& u = units[it->second];
    u.kind = Unit::broadcast;
    u.transfers.push_back(t);
    open.erase(it);
  }
  for (Unit& u : units) u.engine = choose(u.transfers.back());
  return units;
}

bool aligned(std::uint64_t v, std::uint64_t a) { return v % a == 0; }

// Each transfer and its mirror (the block that comes back) as one swap, issued by whichever of the
// two ranks has issued fewer swaps so far (the artifact's greedy assignment).
Maybe<std::vector<Unit>> swap_units(const Plan& plan, const SdmaOptions& o, Chooser& choose) {
  using Result = Maybe<std::vector<Unit>>;
  std::vector<Unit> units;
  std::map<int, int> issued;
  for (const Transfer& t : plan.transfers) {
    if (t.src_rank == t.dst_rank) return Result::no("packet=swap: a block moves within one rank");
    if (t.src_rank > t.dst_rank) continue;  // found as the mirror of its partner
    auto m = std::find_if(plan.transfers.begin(), plan.transfers.end(), [&](const Transfer& x) {
      return x.src_rank == t.dst_rank && x.dst_rank == t.src_rank && x.src_offset == t.dst_offset &&
             x.dst_offset == t.src_offset && x.bytes == t.bytes;
    });
    if (m == plan.transfers.end())
      return Result::no(fmt::format("packet=swap: the block rank {} sends rank {} has no mirror to exchange with", t.src_rank, t.dst_rank));
    if (!aligned(t.bytes, o.swap_alignment) || !aligned(t.src_offset, o.swap_alignment) || !aligned(t.dst_offset, o.swap_alignment))
      return Result::no(fmt::format("packet=swap with swap_alignment=64: blocks of {} bytes at offsets {} and {} are not 64-byte "
                                    "aligned (ROCr's rule on gfx94x/95x; swap_alignment=none runs them unchecked, as the artifact does)",
                                    t.bytes, t.src_offset, t.dst_offset));
    // swap_alignment=none leaves block sizes unchecked, never addresses: buffers start 256-byte aligned, so an
    // offset off 64 bytes would put address bits 5:0 in the SWAP packet's reserved field (ROCr sdma_registers.h
    // SDMA_PKT_COPY_LINEAR_SWAP: DW3/DW5 bits 5:0 reserved; "Addresses must be 64-byte aligned for gfx94/gfx95X").
    if (!aligned(t.src_offset, amd::sdma::kSwapAlignment) || !aligned(t.dst_offset, amd::sdma::kSwapAlignment))
      return Result::no(fmt::format("packet=swap with swap_alignment=none: blocks at offsets {} and {} are not 64-byte aligned, "
                                    "and the SWAP packet reserves address bits 5:0 (ROCr's SDMA_PKT_COPY_LINEAR_SWAP); only "
                                    "block sizes go unchecked",
                                    t.src_offset, t.dst_offset));
    const int issuer = issued[t.dst_rank] < issued[t.src_rank] ? t.dst_rank : t.src_rank;
    ++issued[issuer];
    units.push_back(Unit{Unit::swap, issuer, choose(issuer, issuer == t.src_rank ? t.dst_rank : t.src_rank), {t, *m}});
  }
  return units;
}

}  // namespace

Maybe<std::vector<Unit>> plan_units(const Plan& plan, const SdmaOptions& o, const EngineChoice& choice) {
  using Result = Maybe<std::vector<Unit>>;
  if (o.packet == SdmaPacketKind::swap && !plan.exchange)
    return Result::no("packet=swap exchanges blocks in place: it runs the in-place alltoall only");
  if (o.packet != SdmaPacketKind::swap && plan.exchange)
    return Result::no("the in-place alltoall exchanges blocks between ranks: it needs packet=swap");
  try {
    Chooser choose(plan, o, choice);
    switch (o.packet) {
      case SdmaPacketKind::linear: return copy_units(plan, choose);
      case SdmaPacketKind::broadcast: {
        auto units = broadcast_units(plan, choose);
        if (std::none_of(units.begin(), units.end(), [](const Unit& u) { return u.kind == Unit::broadcast; }))
          return Result::no(fmt::format("packet=broadcast pairs two copies of one source; no rank of this {} plan ({} ranks{}) "
                                        "copies one source twice",
                                        plan.pattern, plan.ranks(), plan.preset.empty() ? "" : ", in place"));
        return units;
      }
      case SdmaPacketKind::swap: return swap_units(plan, o, choose);
    }
  } catch (const Chooser::Refused& r) {
    return Result::no(r.why);
  }
  return Result::no("unknown packet kind");
}

std::vector<Command> schedule(const std::vector<Unit>& units, const SdmaOptions& o) {
  std::vector<Command> out;
  if (o.schedule == SdmaSchedule::pcpy) {
    for (const Unit& u : units) out.push_back(Command{u.rank, u.engine, {u}});
    return out;
  }
  std::map<int, std::size_t> open;  // rank -> its command being filled
  for (const Unit& u : units) {
    auto it = open.find(u.rank);
    if (it == open.end() || out[it->second].units.size() >= static_cast<std::size_t>(o.ways)) {
      open[u.rank] = out.size();
      out.push_back(Command{u.rank, u.engine, {}});
      it = open.find(u.rank);
    }
    out[it->second].units.push_back(u);
  }
  return out;
}

std::vector<Packet> data_packets(const Command& command, const SdmaOptions& o, const Where& where) {
  std::vector<Packet> out;
  for (const Unit& u : command.units) {
    const Transfer& t = u.transfers[0];
    if (u.kind == Unit::swap) {
      const Transfer& m = u.transfers[1];
      std::uint64_t max = std::min(o.max_packet_bytes, amd::sdma::kMaxSwapBytes);  // chunks start 64-byte aligned
      max = std::max(max / amd::sdma::kSwapAlignment * amd::sdma::kSwapAlignment, amd::sdma::kSwapAlignment);
      for (const auto& c : amd::sdma::copy_chunks(t.bytes, max))
        out.push_back(amd::sdma::Swap{where.src(t.src_rank, t.src_offset + c.offset), where.src(m.src_rank, m.src_offset + c.offset), c.bytes});
      continue;
    }
    const std::uint64_t max = u.kind == Unit::copy ? o.max_packet_bytes : std::min(o.max_packet_bytes, amd::sdma::kMaxBroadcastBytes);
    for (const auto& c : amd::sdma::copy_chunks(t.bytes, max)) {
      const std::uint64_t src = where.src(t.src_rank, t.src_offset + c.offset), dst = where.dst(t.dst_rank, t.dst_offset + c.offset);
      if (u.kind == Unit::copy) {
        out.push_back(amd::sdma::CopyLinear{src, dst, c.bytes});
      } else {
        const Transfer& t2 = u.transfers[1];
        out.push_back(amd::sdma::CopyBroadcast{src, dst, where.dst(t2.dst_rank, t2.dst_offset + c.offset), c.bytes});
      }
    }
  }
  return out;
}

}  // namespace dmabench::sdma_commands
