#include "core/plan.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

namespace dmabench {

std::vector<Transfer> Plan::issued_by(int issuer) const {
  std::vector<Transfer> out;
  for (const auto& t : transfers)
    if (t.issuer == issuer) out.push_back(t);
  return out;
}

bool Plan::host_memory() const {
  for (const auto* at : {&src_at, &dst_at})
    for (const Location& l : *at)
      if (l.host) return true;
  return false;
}

ByteRanges merged(ByteRanges ranges) {
  std::sort(ranges.begin(), ranges.end());
  ByteRanges out;
  for (const auto& [begin, end] : ranges) {
    if (begin >= end) continue;
    if (!out.empty() && begin <= out.back().second)
      out.back().second = std::max(out.back().second, end);
    else
      out.emplace_back(begin, end);
  }
  return out;
}

ByteRanges Plan::touched(int rank, bool source) const {
  ByteRanges out;
  for (int s = 0; s < sets; ++s)
    for (const Transfer& t : writes()) {
      if ((source ? t.src_rank : t.dst_rank) != rank) continue;
      const std::size_t at = s * (source ? src_stride(rank) : dst_stride(rank)) + (source ? t.src_offset : t.dst_offset);
      out.emplace_back(at, at + t.bytes);
    }
  return merged(std::move(out));
}

ByteRanges Plan::unwritten(int rank) const {
  ByteRanges w, out;
  for (const Transfer& t : writes())
    if (t.dst_rank == rank) w.emplace_back(t.dst_offset, t.dst_offset + t.bytes);
  std::sort(w.begin(), w.end());
  std::size_t covered = 0;
  for (const auto& [begin, end] : w) {
    if (begin > covered) out.emplace_back(covered, begin);
    covered = std::max(covered, end);
  }
  if (covered < dst_bytes[rank]) out.emplace_back(covered, dst_bytes[rank]);
  return out;
}

std::vector<Transfer> coalesce(const std::vector<Transfer>& transfers) {
  std::vector<Transfer> out;
  for (const Transfer& t : transfers) {
    if (!out.empty()) {
      Transfer& last = out.back();
      if (last.issuer == t.issuer && last.src_rank == t.src_rank && last.dst_rank == t.dst_rank &&
          last.src_offset + last.bytes == t.src_offset && last.dst_offset + last.bytes == t.dst_offset) {
        last.bytes += t.bytes;
        continue;
      }
    }
    out.push_back(t);
  }
  return out;
}

std::vector<int> Plan::issuers() const {
  std::vector<int> out;
  for (const auto& t : transfers)
    if (std::find(out.begin(), out.end(), t.issuer) == out.end()) out.push_back(t.issuer);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<Transfer> Plan::writes() const {
  std::vector<Transfer> out = transfers;
  out.insert(out.end(), preset.begin(), preset.end());
  return out;
}

std::optional<std::string> Plan::check() const {
  const int n = ranks();
  if (static_cast<int>(src_bytes.size()) != n || static_cast<int>(dst_bytes.size()) != n)
    return fmt::format("buffer size lists have {} and {} entries for {} ranks", src_bytes.size(), dst_bytes.size(), n);
  if ((!src_at.empty() && static_cast<int>(src_at.size()) != n) || (!dst_at.empty() && static_cast<int>(dst_at.size()) != n))
    return fmt::format("location lists have {} and {} entries for {} ranks", src_at.size(), dst_at.size(), n);
  std::vector<std::vector<std::pair<std::size_t, std::size_t>>> written(n);
  const std::vector<Transfer> all = writes();
  for (std::size_t i = 0; i < all.size(); ++i) {
    const Transfer& t = all[i];
    if (t.issuer < 0 || t.issuer >= n || t.src_rank < 0 || t.src_rank >= n || t.dst_rank < 0 || t.dst_rank >= n)
      return fmt::format("transfer {} names a rank outside 0..{}", i, n - 1);
    if (t.bytes == 0) return fmt::format("transfer {} is empty", i);
    if (t.src_offset + t.bytes > src_bytes[t.src_rank])
      return fmt::format("transfer {} reads [{}, {}) beyond rank {}'s source of {} bytes", i, t.src_offset,
                         t.src_offset + t.bytes, t.src_rank, src_bytes[t.src_rank]);
    if (t.dst_offset + t.bytes > dst_bytes[t.dst_rank])
      return fmt::format("transfer {} writes [{}, {}) beyond rank {}'s destination of {} bytes", i, t.dst_offset,
                         t.dst_offset + t.bytes, t.dst_rank, dst_bytes[t.dst_rank]);
    written[t.dst_rank].emplace_back(t.dst_offset, t.dst_offset + t.bytes);
  }
  for (int r = 0; r < n; ++r) {
    auto& w = written[r];
    std::sort(w.begin(), w.end());
    std::size_t covered = 0;
    for (const auto& [begin, end] : w) {
      if (begin < covered) return fmt::format("rank {}: destination bytes [{}, {}) written twice", r, begin, covered);
      if (begin > covered && !gaps) return fmt::format("rank {}: destination bytes [{}, {}) never written", r, covered, begin);
      covered = end;
    }
    if (covered != dst_bytes[r] && !gaps)
      return fmt::format("rank {}: destination bytes [{}, {}) never written", r, covered, dst_bytes[r]);
  }
  if (total_bytes == 0) return std::string("total_bytes (S) is 0");
  return std::nullopt;
}

}  // namespace dmabench
