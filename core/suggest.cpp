#include "core/suggest.hpp"

#include <algorithm>
#include <cctype>

namespace dmabench {
namespace {

char fold(char c) { return c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

// The characters that say something: `s` without its leading dashes.
std::size_t significant(std::string_view s) {
  std::size_t dashes = 0;
  while (dashes < s.size() && s[dashes] == '-') ++dashes;
  return s.size() - dashes;
}

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i)
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = fold(a[i - 1]) == fold(b[j - 1]) ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && fold(a[i - 1]) == fold(b[j - 2]) && fold(a[i - 2]) == fold(b[j - 1]))
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

std::string closest(std::string_view given, const std::vector<std::string>& candidates) {
  if (given.size() > 200) return "";  // nobody mistypes 200 characters; the table would be large
  std::string best;
  std::size_t best_d = 3;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(given, c);
    if (d < best_d && 3 * d <= significant(given)) best = c, best_d = d;
  }
  return best;
}

std::string did_you_mean(std::string_view given, const std::vector<std::string>& candidates) {
  const std::string c = closest(given, candidates);
  return c.empty() ? "" : " (did you mean " + c + "?)";
}

}  // namespace dmabench
