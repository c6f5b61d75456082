// Flags over configs (issue 42): every sweep and sampling flag, --set and --axis is the config key it overrides (the
// config parsed with the flag equals the config parsed with the key set), errors name the flag, and a config can come
// through a pipe.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tests/test_support.hpp"
#include "bench/cli.hpp"
#include "bench/config/config.hpp"
#include "core/errors.hpp"
#include "core/suggest.hpp"

using namespace dmabench;
using json = nlohmann::json;

namespace {

using testing_support::error_of;

const json kBase = {{"sizes", "4KiB"}, {"patterns", "copy"}, {"engines", "host"}, {"timing", "oneshot"}};

// The canonical config of `doc` with the flags `args` applied.
json with_flags(const json& doc, const std::vector<std::string>& args) {
  return to_json(parse_config(doc, parse_cli(args).overrides));
}

}  // namespace

TEST(CliFlags, EachFlagIsTheConfigKeyItOverrides) {
  struct Case {
    std::vector<std::string> args;
    const char* key;
    json value;
  };
  const json range = {{"from", "1KiB"}, {"to", "1MiB"}};
  const std::vector<Case> cases = {
      {{"-b", "1KiB"}, "sizes", "1KiB"},
      {{"-b", "1024"}, "sizes", 1024U},
      {{"-b", "1KiB", "-e", "1MiB"}, "sizes", {{"from", "1KiB"}, {"to", "1MiB"}, {"factor", 2}}},
      {{"-b", "1KiB", "-e", "1MiB", "-f", "4"}, "sizes", {{"from", "1KiB"}, {"to", "1MiB"}, {"factor", 4}}},
      {{"--minbytes", "1KiB", "--maxbytes=64KiB", "--stepbytes", "4KiB"}, "sizes", {{"from", "1KiB"}, {"to", "64KiB"}, {"step", "4KiB"}}},
      {{"-b", "1KiB", "-e", "1MiB", "--stepfactor", "1.5"}, "sizes", {{"from", "1KiB"}, {"to", "1MiB"}, {"factor", 1.5}}},
      {{"--sizes", "1KiB:1MiB:x4"}, "sizes", {{"from", "1KiB"}, {"to", "1MiB"}, {"factor", 4}}},
      {{"--sizes", "1KiB:64KiB:+4KiB"}, "sizes", {{"from", "1KiB"}, {"to", "64KiB"}, {"step", "4KiB"}}},
      {{"--sizes", "1KiB:1MiB"}, "sizes", {{"from", "1KiB"}, {"to", "1MiB"}, {"factor", 2}}},
      {{"--sizes", "4KiB,64KiB"}, "sizes", {"4KiB", "64KiB"}},
      {{"--sizes=8KiB"}, "sizes", "8KiB"},
      {{"--patterns", "copy,bidir"}, "patterns", {"copy", "bidir"}},
      {{"--engines", "host,ce"}, "engines", {"host", "ce"}},
      {{"-n", "50"}, "iterations", 50},
      {{"--iterations", "7"}, "iterations", 7},
      {{"-w", "9"}, "warmup", 9},
      {{"--warmup=0"}, "warmup", 0},
      {{"--timing", "oneshot,pipelined"}, "timing", {"oneshot", "pipelined"}},
      {{"--timing", "pipelined"}, "timing", {"pipelined"}},
      {{"--pipeline-depth", "8"}, "pipeline_depth", 8},
      {{"--min-samples", "5"}, "min_samples", 5},
      {{"--max-samples", "500"}, "max_samples", 500},
      {{"--max-noise", "0.02"}, "max_noise", 0.02},
      {{"--max-noise", "2%"}, "max_noise", 0.02},
      {{"--min-time", "0.5"}, "min_time", 0.5},
      {{"--max-time", "2"}, "max_time", 2},
      {{"--axis", "rotate=1,2"}, "rotate", {1, 2}},
      {{"--axis", "patterns=copy,bidir"}, "patterns", {"copy", "bidir"}},
      {{"--set", "warmup=11"}, "warmup", 11},
      {{"--set", "name=hello"}, "name", "hello"},
      {{"--set", "timing=[\"pipelined\"]"}, "timing", {"pipelined"}},
      {{"--set", R"(sizes={"from": "1KiB", "to": "4KiB", "factor": 2})"}, "sizes", {{"from", "1KiB"}, {"to", "4KiB"}, {"factor", 2}}},
      {{"--set", "max_timed_bytes=1MiB", "-n", "20"}, "max_timed_bytes", "1MiB"},
  };
  for (const auto& c : cases) {
    json doc = kBase;
    doc[c.key] = c.value;
    if (c.args.size() == 4 && c.args[0] == "--set" && c.args[2] == "-n") doc["iterations"] = 20;
    const std::string what = fmt::format("{}", fmt::join(c.args, " "));
    EXPECT_EQ(with_flags(kBase, c.args), to_json(parse_config(doc))) << what;
    EXPECT_NE(with_flags(kBase, c.args), to_json(parse_config(kBase))) << what << ": the flag changed nothing";
    // a sweep from the flags alone: the same as the flags' document with the key set
    if (std::string(c.key) == "sizes") {
      json alone = flags_document();
      alone["sizes"] = c.value;
      EXPECT_EQ(to_json(load_config("", parse_cli(c.args).overrides)), to_json(parse_config(alone))) << what;
    }
  }
}

TEST(CliFlags, OverridesReachIntoObjectsAndSweeps) {
  json doc = {{"alltoallv", {{"topk", 2}, {"tokens", "packed"}}}};
  apply_overrides(doc, parse_cli({"--set", "alltoallv.topk=8", "--set", "layout.blocks=4"}).overrides);
  EXPECT_EQ(doc["alltoallv"], (json{{"topk", 8}, {"tokens", "packed"}}));
  EXPECT_EQ(doc["layout"], (json{{"blocks", 4}}));  // a missing object is made
  json scalar = {{"alltoallv", 3}};
  EXPECT_NE(error_of([&] { apply_overrides(scalar, parse_cli({"--set", "alltoallv.topk=8"}).overrides); })
                .find("--set alltoallv.topk: the config's alltoallv is 3, not an object"),
            std::string::npos);
  // a sweep that sets the key itself gets the flag's value; one that does not keeps the top level's (the flag's)
  json sweeps = kBase;
  sweeps["sweeps"] = {{{"sizes", "1MiB"}}, {{"warmup", 1}}};
  const Config c = parse_config(sweeps, parse_cli({"-b", "8KiB"}).overrides);
  ASSERT_EQ(c.sweeps.size(), 2U);
  EXPECT_EQ(c.sweeps[0].sizes, (std::vector<std::uint64_t>{8192}));
  EXPECT_EQ(c.sweeps[1].sizes, (std::vector<std::uint64_t>{8192}));
}

TEST(CliFlags, ConfigErrorsNameTheFlag) {
  const auto config_error = [](std::vector<std::string> args) {
    return error_of([&] { parse_config(kBase, parse_cli(args).overrides); });
  };
  const auto starts = [](const std::string& m, const std::string& head) {
    EXPECT_EQ(m.rfind(head, 0), 0U) << m;
  };
  starts(config_error({"-n", "0"}), "-n (the config's iterations): expected an integer from 1 to");
  starts(config_error({"--iterations", "many"}), "--iterations (the config's iterations): expected an integer");
  starts(config_error({"-w", "-1"}), "-w (the config's warmup): expected an integer from 0");
  starts(config_error({"-b", "1KiB", "-e", "4KiB", "-f", "1"}), "-b/-e/-f (the config's sizes.factor): expected a number above 1");
  starts(config_error({"-b", "4KiB", "-e", "1KiB"}), "-b/-e/-f (the config's sizes): empty range");
  starts(config_error({"-b", "lots"}), "-b (the config's sizes)");
  starts(config_error({"--sizes", "1KiB:1MiB:xtwo"}), "--sizes (the config's sizes.factor)");
  starts(config_error({"--patterns", "copy,nosuch"}), "--patterns (the config's patterns[1]): unknown value 'nosuch'");
  starts(config_error({"--engines", "warp"}), "--engines (the config's engines");
  starts(config_error({"--timing", "sometimes"}), "--timing (the config's timing[0]): unknown value 'sometimes'");
  starts(config_error({"--pipeline-depth", "0"}), "--pipeline-depth (the config's pipeline_depth)");
  starts(config_error({"--max-noise", "2"}), "--max-noise (the config's max_noise): expected a fraction");
  starts(config_error({"--min-samples", "0"}), "--min-samples (the config's min_samples)");
  starts(config_error({"--max-samples", "x"}), "--max-samples (the config's max_samples)");
  starts(config_error({"--min-time", "-1"}), "--min-time (the config's min_time)");
  starts(config_error({"--max-time", "0"}), "--max-time (the config's max_time)");
  starts(config_error({"--min-time", "5", "--max-time", "1"}), "--min-time (the config's min_time): 5 s is more than max_time");
  starts(config_error({"-n", "5", "--min-samples", "3"}), "-n and --min-samples (the config's iterations, min_samples)");
  starts(config_error({"--axis", "warmup=1,2"}), "--axis warmup (the config's warmup)");
  starts(config_error({"--set", "rotate=0"}), "--set rotate (the config's rotate)");
  starts(config_error({"--set", "nosuch=1"}), "--set nosuch: config: key 'nosuch' is unknown");
  // an error on a key no flag set is the config's own
  starts(error_of([] { parse_config(json{{"sizes", "4KiB"}, {"warmup", -1}}, parse_cli({"-n", "5"}).overrides); }),
         "config: warmup:");
  starts(error_of([] { load_config("", {}); }), "no config: give --config FILE");
  starts(error_of([] { load_config("", parse_cli({"-n", "5"}).overrides); }), "no sizes to sweep: give -b SIZE");
}

TEST(CliFlags, CommandLineErrors) {
  const auto starts = [](std::vector<std::string> args, const std::string& head) {
    const std::string m = error_of([&] { parse_cli(args); });
    EXPECT_EQ(m.rfind(head, 0), 0U) << m;
  };
  starts({"-e", "1MiB"}, "-e: needs -b (the smallest size)");
  starts({"-f", "2"}, "-f: needs -b");
  starts({"-b", "1KiB", "-f", "2"}, "-f: needs -e (the largest size) with -b");
  starts({"-b", "1KiB", "-e", "2KiB", "-f", "2", "-i", "1KiB"}, "-f and -i: choose one");
  starts({"-b", ""}, "-b: empty value");
  starts({"-b"}, "-b: missing value");
  starts({"--sizes", "1KiB:2KiB:3"}, "--sizes: '1KiB:2KiB:3' is not a size range or list; accepted: FROM:TO:xFACTOR");
  starts({"--sizes", "1KiB:2KiB,4KiB"}, "--sizes: '1KiB:2KiB,4KiB' is not");
  starts({"--set", "iterations"}, "--set: 'iterations' is not KEY=VALUE");
  starts({"--set", "=5"}, "--set: '=5' is not KEY=VALUE");
  starts({"--set", "Bad=5"}, "--set: 'Bad=5' is not KEY=VALUE");
  starts({"--axis", "a..b=1"}, "--axis: 'a..b=1' is not KEY=V1,V2,...");
  starts({"-n", "5", "--iterations", "6"}, "--iterations: given twice");
  starts({"-b", "1KiB", "--minbytes", "1KiB"}, "-b: given twice");
  starts({"--patterns", "copy", "--patterns", "bidir"}, "--patterns: given twice");
  starts({"-n", "5", "--set", "iterations=6"}, "-n and --set iterations: both set the config's iterations; give one");
  starts({"--set", "warmup=1", "--set", "warmup=2"}, "--set warmup: given twice for one key");
  starts({"--axis", "rotate=1,2", "--set", "rotate=3"}, "--axis rotate and --set rotate: both set the config's rotate");
  starts({"--set", "alltoallv={}", "--axis", "alltoallv.topk=1,2"}, "--set alltoallv and --axis alltoallv.topk: both set the config's alltoallv");
  starts({"-b", "1KiB", "--sizes", "4KiB"}, "-b and --sizes: both set the config's sizes");
  const std::string unknown = error_of([] { parse_cli({"--frobnicate"}); });
  for (const char* flag : {"-b/-e/-f/-i", "--sizes", "--patterns", "--engines", "-n", "-w", "--timing", "--pipeline-depth",
                           "--min-samples", "--max-samples", "--max-noise", "--min-time", "--max-time", "--set", "--axis"})
    EXPECT_NE(unknown.find(flag), std::string::npos) << flag << " not in: " << unknown;
  // --set and --axis repeat for other keys; the other flags keep their fields
  const CliOptions o = parse_cli({"--set", "warmup=1", "--set", "name=x", "--axis", "rotate=1,2", "-q", "--samples"});
  EXPECT_EQ(o.overrides.size(), 3U);
  EXPECT_EQ(o.verbosity, 0);
  EXPECT_TRUE(o.samples);
  EXPECT_EQ(config_source(o), "the sweep flags");
  const std::string text = usage();
  for (const char* flag : {"-b, --minbytes", "-e, --maxbytes", "-f, --stepfactor", "-i, --stepbytes", "--sizes SPEC",
                           "--patterns", "--engines", "-n, --iterations", "-w, --warmup", "--timing", "--pipeline-depth",
                           "--min-samples", "--max-samples", "--max-noise", "--min-time", "--max-time", "--set KEY=VALUE",
                           "--axis KEY=V1,V2", "Sampling:", "Output and run:"})
    EXPECT_NE(text.find(flag), std::string::npos) << flag;
}

// --config through a pipe (/dev/fd/N, as process substitution gives); a named FIFO (it may have no writer) and a device
// refused at once, never waited on.
TEST(CliFlags, ConfigFromAPipe) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const std::string text = R"({"sizes": "4KiB", "engines": "host", "patterns": "copy"})";
  ASSERT_EQ(::write(fds[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ::close(fds[1]);
  const std::string path = "/dev/fd/" + std::to_string(fds[0]);
  EXPECT_TRUE(config_read_once(path));
  json doc = json::parse(text);
  doc["iterations"] = 3;
  EXPECT_EQ(to_json(load_config(path, parse_cli({"-n", "3"}).overrides)), to_json(parse_config(doc)));
  ::close(fds[0]);
  const std::string fifo = ::testing::TempDir() + "/dmabench-config-fifo";
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_NE(error_of([&] { load_config(fifo); }).find("not a regular file (a FIFO)"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  ::unlink(fifo.c_str());
  EXPECT_NE(error_of([] { load_config("/dev/zero"); }).find("not a regular file (a device)"), std::string::npos);
  EXPECT_FALSE(config_read_once(DMABENCH_SOURCE_DIR "/configs/quick.json"));
}

// Issue 52: a run in which no case was ok measured nothing and exits 6 (a CI job on a runner whose driver broke must
// not go green); --allow-empty lets it pass; a failure and a --check keep their codes; the closing line says why.
TEST(CliFlags, ARunThatMeasuredNothingExitsSixUnlessAllowed) {
  const CliOptions strict = parse_cli({"-b", "4KiB", "--engines", "ce"});
  const CliOptions allowed = parse_cli({"-b", "4KiB", "--engines", "ce", "--allow-empty"});
  EXPECT_FALSE(strict.allow_empty);
  EXPECT_TRUE(allowed.allow_empty);
  EXPECT_THROW(parse_cli({"--allow-empty=yes"}), InputError);
  EXPECT_EQ(kExitNothingMeasured, 6);
  EXPECT_EQ(finished_run_code(strict, 0, 0, true), 6);   // every case skipped
  EXPECT_EQ(finished_run_code(allowed, 0, 0, true), 0);
  EXPECT_EQ(finished_run_code(strict, 0, 2, true), 1);   // a failure is exit 1 first
  EXPECT_EQ(finished_run_code(strict, 3, 0, false), 5);  // a --check failed
  EXPECT_EQ(finished_run_code(strict, 3, 0, true), 0);
  EXPECT_EQ(nothing_measured_line(strict, 1, 2, 0, "x", 2), "");
  EXPECT_EQ(nothing_measured_line(strict, 0, 3, 0, "engine ce runs on the cuda backend", 2),
            "dmabench: nothing was measured: no case was ok (3 skipped); most often skipped: engine ce runs on the cuda "
            "backend (2 of 3); exit 6 (--allow-empty lets such a run pass)\n");
  EXPECT_EQ(nothing_measured_line(allowed, 0, 1, 1, "", 1),
            "dmabench: nothing was measured: no case was ok (1 skipped, 1 failed); most often skipped: no reason given "
            "(1 of 1)\n");
  EXPECT_NE(usage().find("--allow-empty"), std::string::npos);
}

// Issue 52, habits: nccl-tests' long names are the same flags (given twice counts both names), -a is --axis.
TEST(CliFlags, NcclTestsLongNamesAreAliases) {
  EXPECT_EQ(with_flags(kBase, {"--iters", "7", "--warmup_iters=3"}), with_flags(kBase, {"-n", "7", "-w", "3"}));
  EXPECT_EQ(with_flags(kBase, {"--minbytes", "1K", "--maxbytes", "1M", "--stepfactor", "4"}),
            with_flags(kBase, {"-b", "1K", "-e", "1M", "-f", "4"}));
  EXPECT_EQ(with_flags(kBase, {"-a", "rotate=1,2"}), with_flags(kBase, {"--axis", "rotate=1,2"}));
  const auto error = [](std::vector<std::string> args) { return error_of([&] { parse_cli(args); }); };
  EXPECT_EQ(error({"--iters", "5", "-n", "6"}), "--iterations: given twice; give it once");
  EXPECT_EQ(error({"-w", "1", "--warmup_iters", "2"}), "--warmup: given twice; give it once");
  EXPECT_EQ(error({"--iters"}), "--iters: missing value");
  EXPECT_EQ(error_of([] { parse_config(kBase, parse_cli({"--iters", "0"}).overrides); }).rfind(
                "--iters (the config's iterations): expected an integer from 1 to", 0), 0U);
  // nccl-tests' flags without an equivalent: refused with what dmabench offers instead
  EXPECT_EQ(error({"--ngpus", "2"}).rfind("--ngpus: nccl-tests' --ngpus has no dmabench equivalent; instead: "
                                          "no GPUs-per-thread count here: --devices LIST names the GPUs", 0), 0U);
  EXPECT_EQ(error({"-g", "8"}).rfind("-g: nccl-tests' --ngpus has no dmabench equivalent; instead:", 0), 0U);
  EXPECT_NE(error({"--op=sum"}).find("instead: no reduction operator: --patterns LIST"), std::string::npos);
  EXPECT_NE(error({"-T", "10"}).find("instead: --case-timeout S"), std::string::npos);
  for (const char* flag : {"-g", "--ngpus", "-t", "--nthreads", "-d", "--datatype", "-o", "--op", "-z", "--blocking",
                           "-m", "--agg_iters", "-G", "--cudagraph", "-T", "--timeout", "-p", "--parallel_init", "-C",
                           "--report_cputime", "-R", "--local_register"}) {
    const std::string m = error({flag, "1"});
    EXPECT_NE(m.find("has no dmabench equivalent; instead: "), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
  const std::string text = usage();
  for (const char* s : {"--iters", "--warmup_iters", "-a, --axis", "KEY=[1,2,4]", "KEY=[START:STOP:STEP]", "per rank"})
    EXPECT_NE(text.find(s), std::string::npos) << s;
}

TEST(CliFlags, DidYouMean) {
  EXPECT_EQ(edit_distance("iteration", "iterations"), 1U);
  EXPECT_EQ(edit_distance("cpoy", "copy"), 1U);  // a swap is one edit
  EXPECT_EQ(edit_distance("--warmup-iters", "--warmup_iters"), 0U);
  EXPECT_EQ(closest("--iteration", {"--warmup", "--iterations"}), "--iterations");
  EXPECT_EQ(closest("-x", {"-n", "-w"}), "");  // one letter: no guess
  EXPECT_EQ(closest("--frobnicate", {"--iterations", "--config"}), "");
  EXPECT_EQ(closest("--fast", {"--list"}), "");  // two edits in four letters: no guess
  EXPECT_EQ(did_you_mean("hots", {"auto", "host"}), " (did you mean host?)");
  EXPECT_EQ(did_you_mean("zzz", {"auto", "host"}), "");
  const auto error = [](std::vector<std::string> args) { return error_of([&] { parse_cli(args); }); };
  const auto config_error = [](std::vector<std::string> args) {
    return error_of([&] { parse_config(kBase, parse_cli(args).overrides); });
  };
  EXPECT_EQ(error({"--iteration", "5"}).rfind("unknown argument '--iteration' (did you mean --iterations?); accepted: "
                                               "a preset name first, --config", 0), 0U);
  EXPECT_EQ(error({"--iter=5"}).rfind("unknown argument '--iter=5' (did you mean --iters?); accepted:", 0), 0U);
  EXPECT_EQ(error({"--warmup-iters", "5"}).rfind("unknown argument '--warmup-iters' (did you mean --warmup_iters?)", 0), 0U);
  EXPECT_EQ(error({"--mnibytes", "5"}).rfind("unknown argument '--mnibytes' (did you mean --minbytes?)", 0), 0U);
  EXPECT_EQ(error({"--frobnicate"}).rfind("unknown argument '--frobnicate'; accepted:", 0), 0U);
  EXPECT_EQ(error({"--backend", "hots"}), "--backend: unknown backend 'hots' (did you mean host?); accepted: auto, gpu, host, cuda, hip");
  EXPECT_EQ(error({"--cpu-choice", "quite"}), "--cpu-choice: unknown mode 'quite' (did you mean quiet?); accepted: quiet, off");
  EXPECT_EQ(error({"--benchmark_filte=x"}).rfind("unknown Google Benchmark flag '--benchmark_filte' (did you mean "
                                                  "--benchmark_filter?); accepted:", 0), 0U);
  EXPECT_EQ(config_error({"--patterns", "cpoy"}).rfind("--patterns (the config's patterns[0]): unknown value 'cpoy' (did you "
                                                        "mean copy?); accepted:", 0), 0U);
  EXPECT_NE(config_error({"--engines", "hots"}).find("unknown engine 'hots' (did you mean host?); accepted:"), std::string::npos);
  EXPECT_NE(config_error({"--set", "iteration=5"}).find("key 'iteration' is unknown (did you mean iterations?)"),
            std::string::npos);
  EXPECT_EQ(config_error({"--engines", "warp"}).find("did you mean"), std::string::npos);
  EXPECT_EQ(error({"quik"}).rfind("unknown preset 'quik' (did you mean quick?); the presets (", 0), 0U);
}

// nvbench's --axis forms: [V1,V2] and [START:STOP:STEP] (STOP included), beside V1,V2.
TEST(CliFlags, NvbenchAxisForms) {
  const auto axis = [](const std::string& v) { return parse_cli({"-a", v}).overrides.at(0).value; };
  EXPECT_EQ(axis("rotate=[1,2,4]"), json({1, 2, 4}));
  EXPECT_EQ(axis("rotate=[1:4:1]"), json({1, 2, 3, 4}));
  EXPECT_EQ(axis("rotate=[1:4]"), json({1, 2, 3, 4}));
  EXPECT_EQ(axis("rotate=[0:10:4]"), json({0, 4, 8}));
  EXPECT_EQ(axis("rotate=[3:3]"), json({3}));
  EXPECT_EQ(axis("k=[18446744073709551610:18446744073709551615:3]"), json({18446744073709551610ULL, 18446744073709551613ULL}));
  EXPECT_EQ(axis("sizes=[4KiB,1MiB]"), json({"4KiB", "1MiB"}));
  EXPECT_EQ(axis("rotate=1,2"), json({1, 2}));
  EXPECT_EQ(parse_cli({"--axis=rotate=[1:2]"}).overrides.at(0).flag, "--axis rotate");
  EXPECT_EQ(with_flags(kBase, {"-a", "sizes=[4096,8192]"}), with_flags(kBase, {"--axis", "sizes=4096,8192"}));
  const auto error = [](const std::string& v) { return error_of([&] { parse_cli({"-a", v}); }); };
  const std::string forms = "; accepted: KEY=V1,V2, KEY=[V1,V2] or KEY=[START:STOP:STEP] (nvbench's range: whole numbers, "
                            "STOP included, STEP 1 when left out, at most 10000 values)";
  EXPECT_EQ(error("k=[1:4:0]"), "--axis: 'k=[1:4:0]': STEP is 0" + forms);
  EXPECT_EQ(error("k=[4:1]"), "--axis: 'k=[4:1]': STOP is below START" + forms);
  EXPECT_EQ(error("k=[a:4]"), "--axis: 'k=[a:4]': START, STOP and STEP are whole numbers" + forms);
  EXPECT_EQ(error("k=[1:2:3:4]"), "--axis: 'k=[1:2:3:4]': a range is START:STOP or START:STOP:STEP" + forms);
  EXPECT_EQ(error("k=[0:100000]"), "--axis: 'k=[0:100000]': more than 10000 values" + forms);
  EXPECT_EQ(error("k=[1,2"), "--axis: 'k=[1,2' is not an axis" + forms);
  EXPECT_EQ(error("k=1,2]"), "--axis: 'k=1,2]' is not an axis" + forms);
  EXPECT_EQ(error("k=[]"), "--axis: 'k=[]' is not an axis" + forms);
  EXPECT_EQ(error("k=[[1]]"), "--axis: 'k=[[1]]' is not an axis" + forms);
  EXPECT_EQ(error("k=[1:2,3]"), "--axis: 'k=[1:2,3]' mixes a list and a range" + forms);
  EXPECT_EQ(error_of([] { parse_cli({"-a"}); }), "-a: missing value");
}

// -b/-e are bytes per rank: the console's size column says so; KB/MB/GB are refused as ambiguous.
TEST(CliFlags, SizesPerRankAndUnambiguousUnits) {
  EXPECT_EQ(error_of([] { parse_config(kBase, parse_cli({"-b", "1MB"}).overrides); }),
            "-b (the config's sizes): '1MB' is ambiguous (MB: powers of 1000 or of 1024?); accepted: 1MiB (powers of "
            "1024, as M alone) or the bytes 1000000 (powers of 1000)");
  EXPECT_EQ(with_flags(kBase, {"-b", "1M"}), with_flags(kBase, {"-b", "1048576"}));
}
