// Host CPU packages through Linux powercap (RAPL): <root>/intel-rapl:N/energy_uj, which wraps at
// max_energy_range_uj. Readable only where the kernel exposes it and permissions allow.
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <stdexcept>

#include <fmt/format.h>

#include "power/source.hpp"

namespace dmabench::power {
namespace {

double read_number(const std::filesystem::path& p) {
  std::ifstream f(p);
  double v = 0;
  if (!(f >> v)) throw std::runtime_error(fmt::format("cannot read {}", p.string()));
  return v;
}

class RaplSource final : public Source {
 public:
  RaplSource(std::vector<std::filesystem::path> zones, double wrap_uj) : zones_(std::move(zones)), wrap_uj_(wrap_uj) {}
  std::string name() const override { return "rapl"; }
  int channels() const override { return static_cast<int>(zones_.size()); }
  std::string channel_name(int c) const override { return "CPU package " + zones_[c].filename().string(); }
  double energy_J(int c) override { return read_number(zones_[c] / "energy_uj") * 1e-6; }
  double resolution_J() const override { return 1e-6; }
  std::optional<double> wrap_J() const override { return wrap_uj_ * 1e-6; }

 private:
  std::vector<std::filesystem::path> zones_;
  double wrap_uj_;
};

}  // namespace

Opened open_rapl(const std::string& root) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<fs::path> zones;
  if (fs::is_directory(root, ec))
    for (const auto& e : fs::directory_iterator(root, ec))
      if (std::regex_match(e.path().filename().string(), std::regex(R"((intel|amd)-rapl:\d+)"))) zones.push_back(e.path());
  if (zones.empty()) {
    return Opened::no(fmt::format("no RAPL package zones under {}", root));
  }
  std::sort(zones.begin(), zones.end());
  try {
    double wrap = read_number(zones[0] / "max_energy_range_uj");
    for (const auto& z : zones) read_number(z / "energy_uj");
    return std::make_unique<RaplSource>(std::move(zones), wrap);
  } catch (const std::exception& e) {
    return Opened::no(fmt::format("RAPL not readable: {}", e.what()));
  }
}

}  // namespace dmabench::power
