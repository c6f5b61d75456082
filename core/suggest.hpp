#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace dmabench {

// "Did you mean" for a near miss (issue 52): the one helper every unknown flag, engine, pattern and choice uses.
//   edit_distance: Damerau-Levenshtein (optimal string alignment: insert, delete, substitute, swap two neighbours),
//                  case-insensitive, '-' and '_' alike (--warmup-iters is --warmup_iters).
//   closest:       the candidate nearest `given` when it is near: at most 2 edits and at most a third of its characters
//                  (leading dashes not counted), the first of equals; "" when none is.
//   did_you_mean:  " (did you mean X?)" for closest, "" when none is near: to follow what was wrong in a message.
std::size_t edit_distance(std::string_view a, std::string_view b);
std::string closest(std::string_view given, const std::vector<std::string>& candidates);
std::string did_you_mean(std::string_view given, const std::vector<std::string>& candidates);

}  // namespace dmabench
