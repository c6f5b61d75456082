// --merge (merge_files.hpp): the results files of N processes into one levels file.
#include "bench/levels/merge_files.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <sys/stat.h>

#include "bench/levels/levels.hpp"
#include "bench/levels/results_file.hpp"
#include "bench/output/console.hpp"
#include "bench/output/out_file.hpp"
#include "core/errors.hpp"
#include "core/json_file.hpp"
#include "core/quote.hpp"

namespace dmabench::levels {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

struct MergeArgs {
  std::vector<std::string> files;
  std::string out, merged_by = "dmabench --merge";
  bool help = false;
};

MergeArgs parse_args(const std::vector<std::string>& args) {
  MergeArgs a;
  bool merge_seen = false, out_seen = false, by_seen = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    const std::string flag = arg.rfind("--", 0) == 0 ? arg.substr(0, arg.find('=')) : arg;
    const auto once = [&](bool& seen) {
      if (seen) throw InputError(fmt::format("{}: given twice; give it once", flag));
      seen = true;
    };
    const auto value = [&] {
      if (flag != arg) return arg.substr(flag.size() + 1);
      if (i + 1 >= args.size()) throw InputError(fmt::format("{}: missing value", flag));
      return args[++i];
    };
    if (arg == "--merge") {
      once(merge_seen);
    } else if (arg == "--help" || arg == "-h") {
      a.help = true;
    } else if (flag == "--out" || flag == "--merged-by") {
      once(flag == "--out" ? out_seen : by_seen);
      (flag == "--out" ? a.out : a.merged_by) = value();
      if ((flag == "--out" ? a.out : a.merged_by).empty()) throw InputError(fmt::format("{}: empty value", flag));
    } else if (arg.size() > 1 && arg[0] == '-') {
      throw InputError(fmt::format("unknown argument '{}' with --merge; accepted: the results files, --out FILE, "
                                   "--merged-by NAME, --help", quote(arg, 80)));
    } else {
      a.files.push_back(arg);
    }
  }
  if (!a.help && a.out.empty()) throw InputError("--merge: --out FILE is missing (the levels file to write)");
  return a;
}

// What makes two paths one file: its device and inode, or its canonical path where it cannot be stat'ed (a journal
// read in place of a results file that is not there).
std::string identity(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) return fmt::format("{}:{}", st.st_dev, st.st_ino);
  std::error_code ec;
  const fs::path c = fs::weakly_canonical(fs::absolute(path, ec), ec);
  return "path:" + c.string();
}

const json& get(const json& j, const char* key) {
  static const json none;
  const auto it = j.is_object() ? j.find(key) : j.end();
  return j.is_object() && it != j.end() ? *it : none;
}

// A key of a file's object in a dotted path: as it is where it is a short name, else quoted.
std::string key_text(const std::string& key) {
  const bool name = !key.empty() && key.size() <= 40 && !std::isdigit(static_cast<unsigned char>(key[0])) &&
                    std::all_of(key.begin(), key.end(), [](unsigned char c) { return std::isalnum(c) || c == '_'; });
  return name ? key : fmt::format("'{}'", quote(key, 40));
}

// The kind of a JSON value as Python's type() tells them apart (an integer of either sign one kind).
int kind(const json& v) { return v.is_number_integer() ? -1 : static_cast<int>(v.type()); }

// The dotted path of the first field where two JSON values differ (objects compared key by key, in key order: a key
// either lacks first; anything else whole), or "" where they are the same. Not recursive (any nesting the parser took).
std::string first_difference(const json& first, const json& second, const std::string& root) {
  std::vector<std::tuple<const json*, const json*, std::string>> stack = {{&first, &second, root}};
  while (!stack.empty()) {
    const auto [a, b, where] = stack.back();
    stack.pop_back();
    if (!a->is_object() || !b->is_object()) {
      if (kind(*a) != kind(*b) || *a != *b) return where;
      continue;
    }
    for (const json* x : {a, b})
      for (const auto& [key, _] : x->items())
        if (!a->contains(key) || !b->contains(key)) return where + "." + key_text(key);
    std::vector<std::tuple<const json*, const json*, std::string>> children;
    for (const auto& [key, value] : a->items()) children.emplace_back(&value, &(*b)[key], where + "." + key_text(key));
    stack.insert(stack.end(), children.rbegin(), children.rend());
  }
  return "";
}

// A value in a message: a string in quotes, anything else as JSON.
std::string shown(const json& v) { return v.is_string() ? fmt::format("'{}'", quote(v.get<std::string>(), 40)) : quote_json(v, 40); }

// InputError (one line naming the file and the field) unless `docs` are the results files of 2 or more processes of
// one build and config: no file twice, no levels file, one context.config, one context.dmabench.git_revision.
void refuse_unmergeable(const std::vector<json>& docs, const std::vector<std::string>& files) {
  std::map<std::string, std::string> seen;
  for (std::size_t k = 0; k < docs.size(); ++k) {
    const auto [it, fresh] = seen.try_emplace(identity(files[k]), files[k]);
    if (!fresh) throw InputError(fmt::format("{}: given twice (the same file as {}); each process's file once", files[k], it->second));
    if (docs[k]["context"].contains("levels"))
      throw InputError(fmt::format("{}: context.levels: already a levels file; merge the results files of the processes "
                                   "it was made from", files[k]));
  }
  const json& first = docs[0]["context"];
  const json& revision = get(get(first, "dmabench"), "git_revision");
  for (std::size_t k = 1; k < docs.size(); ++k) {
    const json& c = docs[k]["context"];
    if (const std::string d = first_difference(get(first, "config"), get(c, "config"), "context.config"); !d.empty())
      throw InputError(fmt::format("{}: {} differs from {}'s: the files of one merge come from one config", files[k], d, files[0]));
    if (const json& theirs = get(get(c, "dmabench"), "git_revision"); theirs != revision)
      throw InputError(fmt::format("{}: context.dmabench.git_revision {} differs from {}'s {}: the files of one merge "
                                   "come from one build", files[k], shown(theirs), files[0], shown(revision)));
  }
}

// Whether every number in `doc` is finite (a median of figures near a double's limit may not be).
bool all_finite(const json& doc) {
  std::vector<const json*> stack = {&doc};
  while (!stack.empty()) {
    const json* v = stack.back();
    stack.pop_back();
    if (v->is_number_float() && !std::isfinite(v->get<double>())) return false;
    if (v->is_structured())
      for (const json& child : *v) stack.push_back(&child);
  }
  return true;
}

// --out, checked once the inputs are read: not one of them (as given, through links, or another name of the file),
// not a run's own file, a regular file or a new path where a temporary can be made beside it.
std::string checked_out(const MergeArgs& a) {
  for (const std::string& in : a.files)
    if (identity(in) == identity(a.out))
      throw InputError(fmt::format("--out {}: the results file {} given to --merge, which it reads; accepted: a file of "
                                   "its own", a.out, in));
  return check_output_file("--out", a.out, "", /*creates_directories=*/true).path;
}

}  // namespace

std::string merge_usage() {
  return R"(usage: dmabench --merge A.json B.json [C.json ...] --out M.json [--merged-by NAME]

Merges the results files of N processes of one build and config (mpirun / srun jobs, CI runs, processes started
any way) into one levels file, as --processes N does: per case the median over the processes with the
between-process interval (results/SCHEMA.md, "Levels across fresh processes"). A results file may be given as its
run's journal FILE.journal; a results file with a journal beside it is read from the journal where that holds more
cases (said on stderr). Refused (exit 2, one line): fewer than 2 files, a file given twice, a levels file, files
whose context.config or context.dmabench.git_revision differ, a file that cannot be read or is malformed, an --out
that is an input or cannot be written. --out is written whole (a temporary renamed into place).
  --out FILE         the levels file to write
  --merged-by NAME   context.levels.merged_by (default "dmabench --merge")
Exit codes: 0 merged (also where cases failed: the levels file says which), 2 bad input, 3 internal error.
)";
}

bool merge_mode(const std::vector<std::string>& args) { return std::find(args.begin(), args.end(), "--merge") != args.end(); }

int merge_files(const std::vector<std::string>& args) {
  const MergeArgs a = parse_args(args);
  if (a.help) {
    console::say("{}", merge_usage());
    return 0;
  }
  if (a.files.size() < 2)
    throw InputError(fmt::format("{}: one results file; a merge takes the results files of 2 or more processes",
                                 a.files.empty() ? "--merge" : a.files[0]));
  std::vector<json> docs;
  std::vector<ProcessFile> files;
  for (const std::string& f : a.files) {
    ResultsRead read = read_results(f);
    if (!read.note.empty()) console::warn("dmabench: {}\n", read.note);
    docs.push_back(std::move(read.doc));
    files.push_back({f, std::nullopt});
  }
  refuse_unmergeable(docs, a.files);
  const std::string out = checked_out(a);
  const json settings = {{"processes", docs.size()}, {"order", nullptr}, {"order_seed", nullptr}};
  const json merged = merge(docs, files, a.merged_by, settings);
  if (!all_finite(merged))
    throw InputError(fmt::format("cannot merge {} ...: a merged figure is beyond a double (figures near its limit); "
                                 "nothing written", a.files[0]));
  try {
    write_json_atomically(out, merged);
  } catch (const std::runtime_error& e) {
    throw InputError(fmt::format("--out {}: {}", a.out, e.what()));
  }
  int counts[3] = {0, 0, 0};
  for (const json& r : merged["results"]) ++counts[r["status"] == "ok" ? 0 : r["status"] == "failed" ? 1 : 2];
  console::say("dmabench: {} results files merged into {}: {} cases, {} ok, {} failed, {} skipped\n", docs.size(), out,
               merged["results"].size(), counts[0], counts[1], counts[2]);
  return 0;
}

}  // namespace dmabench::levels
