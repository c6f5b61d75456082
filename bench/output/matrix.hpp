#pragma once
// devices "pairs": the console's matrix of every measured pair (scripts/matrix.py prints the same from a
// results file): one table per case with its devices left out, rows the sources (a device, or host
// memory on a NUMA node), columns the destinations, busbw at the p50, with row sums and the total.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dmabench {

// Prints the tables of the ok records that measure one pair (copy, bidir on two devices; h2d, d2h,
// h2d-bidir on one); returns how many it printed.
std::size_t print_pair_matrices(const std::vector<nlohmann::json>& records, const std::string& device_word);

}  // namespace dmabench
