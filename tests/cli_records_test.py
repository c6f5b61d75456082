#!/usr/bin/env python3
"""What a run records for CI and notebooks (issue 42), on the host backend (registered with ctest as cli_records_host).

usage: cli_records_test.py DMABENCH

  --junit FILE   a test case per recorded case, validated against tests/data/junit.xsd (lxml) and read back with
                 junitparser where it is installed: ok cases pass, skipped ones skip with their reason, a case that
                 failed is a failure of type `failed` with its reason, a case a --check judged FAIL a failure of type
                 `check` with the verdict line; the counts are the test cases'; a missing directory is made (as for
                 --out); a path that cannot be written (a directory, under a file, --out itself) is refused before
                 anything runs (exit 2, one line, no results); with --processes N the levels file's cases, written
                 once by the process that merges
  --samples      every ok record holds samples_us: as many samples as sampling.samples, their median the p50;
                 without it, or in a skipped record, none; the config's "samples" must be a boolean
  core_share     every ok record reads its core before each sample: its counts and ratio_p50 recomputed from its
                 ratios, one per sample; the calibration's 50 readings
  environment    context.environment holds the NCCL_/CUDA_/DMABENCH_ variables set for the run, and no other
"""
import json
import os
import re
import statistics
import sys
import tempfile

from driver_common import ROOT, expect, run, write_json as write

XSD = os.path.join(ROOT, "tests", "data", "junit.xsd")


def junit_cases(path):
    """The file validated against the schema; {name: (classname, outcome, type, message, time)} and the suite."""
    try:
        from lxml import etree
    except ImportError:  # the H200 image has no lxml: the structure and counts below are still checked
        import xml.etree.ElementTree as etree
        print(f"note: lxml is not installed (Debian: python3-lxml): {os.path.basename(path)} is not validated against "
              "junit.xsd")
        tree = etree.parse(path)
    else:
        schema = etree.XMLSchema(etree.parse(XSD))
        tree = etree.parse(path)
        expect(schema.validate(tree), f"{path} does not validate against junit.xsd: {schema.error_log}")
    root = tree.getroot()
    suites = root.findall("testsuite")
    expect(root.tag == "testsuites" and len(suites) == 1, "one testsuites root holding one testsuite")
    suite = suites[0]
    cases = {}
    for c in suite.findall("testcase"):
        problem = c.find("failure") if c.find("failure") is not None else c.find("skipped")
        outcome = "passed" if problem is None else problem.tag
        cases[c.get("name")] = (c.get("classname"), outcome, problem.get("type") if problem is not None else None,
                                problem.get("message") if problem is not None else None, float(c.get("time")))
    for element in (root, suite):
        expect(int(element.get("tests")) == len(cases), f"{element.tag} tests={element.get('tests')}, {len(cases)} cases")
        for attr, outcome in (("failures", "failure"), ("skipped", "skipped")):
            n = sum(v[1] == outcome for v in cases.values())
            expect(int(element.get(attr)) == n, f"{element.tag} {attr}={element.get(attr)}, {n} test cases")
        expect(element.get("errors") == "0", f"{element.tag} errors={element.get('errors')}")
        expect(abs(float(element.get("time")) - sum(v[4] for v in cases.values())) < 1e-5 * max(1, len(cases)),
               f"{element.tag} time {element.get('time')} is not the sum of its test cases'")
    expect(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", suite.get("timestamp") or ""), f"timestamp {suite.get('timestamp')}")
    expect(suite.get("name") == "dmabench" and suite.get("hostname"), "the suite's name and hostname")
    try:
        import junitparser
    except ImportError:
        print("note: junitparser is not installed (apt: python3-junitparser): the file is not read back with it")
    else:
        back = {c.name: (c.classname, type(c.result[0]).__name__ if c.result else "passed")
                for s in junitparser.JUnitXml.fromfile(path) for c in s}
        want = {n: (v[0], {"passed": "passed", "failure": "Failure", "skipped": "Skipped"}[v[1]]) for n, v in cases.items()}
        expect(back == want, f"junitparser reads {back}, lxml {want}")
    return cases


def main():
    exe = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        cfg = write(os.path.join(tmp, "records.json"), {
            "name": "records", "patterns": ["copy"], "engines": ["host", "ce"], "devices": [[0, 1]],
            "sizes": [4096, 65536], "timing": ["oneshot", "pipelined"], "pipeline_depth": 4, "iterations": 9,
            "warmup": 1})
        out, xml = os.path.join(tmp, "out.json"), os.path.join(tmp, "report.xml")
        env = {"NCCL_DEBUG": "WARN", "CUDA_VISIBLE_DEVICES": "0", "DMABENCH_RECORDS_MARK": "é µs", "NOT_RECORDED": "x"}
        run([exe, "--backend", "host", "--config", cfg, "--out", out, "--junit", xml, "--samples"], 0, env)
        doc = json.load(open(out))
        records = {r["name"]: r for r in doc["results"]}
        ok = [r for r in records.values() if r["status"] == "ok"]
        skipped = [r for r in records.values() if r["status"] == "skipped"]
        expect(len(ok) == 4 and len(skipped) == 4, f"{len(ok)} ok and {len(skipped)} skipped records, expected 4 and 4")

        # samples_us
        for r in ok:
            s = r.get("samples_us")
            expect(isinstance(s, list) and len(s) == r["sampling"]["samples"] == 9,
                   f"{r['name']}: {len(s or [])} samples_us, sampling.samples {r['sampling']['samples']}, iterations 9")
            expect(all(isinstance(v, (int, float)) and v > 0 for v in s), f"{r['name']}: samples_us {s}")
            expect(abs(statistics.median(s) - r["latency_us"]["p50"]) <= 0.001 + 1e-9,
                   f"{r['name']}: median of samples_us {statistics.median(s)}, p50 {r['latency_us']['p50']}")
            expect(min(s) <= r["latency_us"]["min"] + 0.001 and max(s) >= r["latency_us"]["max"] - 0.001,
                   f"{r['name']}: samples_us span [{min(s)}, {max(s)}], latency_us min/max "
                   f"{r['latency_us']['min']}/{r['latency_us']['max']}")
        expect(not any("samples_us" in r for r in skipped), "a skipped record holds samples_us")

        # core_share: one reading per sample, its counts recomputed from the readings
        for r in ok:
            c, s = r.get("core_share"), r["samples_us"]
            expect(isinstance(c, dict) and c["probed"] == len(s) == len(c.get("ratios", [])),
                   f"{r['name']}: core_share {c} against {len(s)} samples")
            t = c["threshold"]
            expect(all(isinstance(x, (int, float)) and x > 0 for x in c["ratios"]), f"{r['name']}: ratios {c['ratios']}")
            if not any(abs(x - t) < 6e-4 for x in c["ratios"]):  # a reading rounded onto the threshold: either side
                expect(c["shared"] == sum(x > t for x in c["ratios"]),
                       f"{r['name']}: core_share.shared {c['shared']}, ratios {c['ratios']}")
            expect(abs(c["ratio_p50"] - statistics.median(c["ratios"])) <= 0.001 + 1e-9,
                   f"{r['name']}: ratio_p50 {c['ratio_p50']}, ratios {c['ratios']}")
        expect(not any("core_share" in r for r in skipped), "a skipped record holds core_share")
        cal = doc["context"]["calibration"].get("core_share", {})
        expect(cal.get("readings") == 50 and 0 <= cal.get("shared", -1) <= 50 and cal.get("threshold") == 0.75,
               f"context.calibration.core_share {cal}")
        expect(all(p.get("samples") is True for p in [doc["context"]["config"]]),
               f"context.config.samples {doc['context']['config'].get('samples')}")

        # context.environment
        environment = doc["context"].get("environment")
        prefixes = ("NCCL_", "RCCL_", "CUDA_", "HIP_", "HSA_", "ROCR_", "AMD_", "GPU_", "UCX_", "OMPI_MCA_", "DMABENCH_")
        want = {k: v for k, v in {**os.environ, **env}.items() if k.startswith(prefixes)}
        # as given: not the CUDA_MODULE_LOADING dmabench sets where it is unset (bench/main.cpp)
        expect(environment == want, f"context.environment {environment}, expected {want}")

        # JUnit: ok cases pass, skipped ones skip with their reason
        cases = junit_cases(xml)
        expect(set(cases) == set(records), f"test cases {sorted(cases)}, records {sorted(records)}")
        for name, (classname, outcome, kind, message, seconds) in cases.items():
            r = records[name]
            expect(classname == f"copy.{r['engine']}", f"{name}: classname {classname}")
            if r["status"] == "ok":
                expect(outcome == "passed" and seconds > 0, f"{name}: {outcome}, time {seconds}")
                expect(seconds >= r["sampling"]["seconds"] * 0.999, f"{name}: time {seconds} < its sampling "
                                                                     f"{r['sampling']['seconds']}")
            else:
                expect(outcome == "skipped" and message == r["reason"] and r["reason"], f"{name}: {outcome} {message!r}")

        # without --samples: no samples_us; a config "samples" that is not a boolean is bad input
        run([exe, "--backend", "host", "--config", cfg, "--out", out], 0)
        expect(not any("samples_us" in r for r in json.load(open(out))["results"]), "samples_us without --samples")
        bad = write(os.path.join(tmp, "bad.json"), {"name": "bad", "patterns": ["copy"], "engines": ["host"],
                                                     "sizes": [4096], "samples": "yes"})
        p = run([exe, "--backend", "host", "--config", bad, "--out", out], 2)
        expect(p.stderr.count("\n") == 1 and "samples" in p.stderr and "true or false" in p.stderr,
               f"config samples \"yes\": {p.stderr!r}")
        with_samples = write(os.path.join(tmp, "with-samples.json"), {
            "name": "with", "patterns": ["copy"], "engines": ["host"], "devices": [[0, 1]], "sizes": [4096],
            "timing": "oneshot", "iterations": 5, "warmup": 0, "samples": True})
        run([exe, "--backend", "host", "--config", with_samples, "--out", out], 0)
        expect(len(json.load(open(out))["results"][0].get("samples_us", [])) == 5, "config samples: true")

        # a --check that fails: the checked cases are failures of type `check` with the verdict line; exit 5
        ceiling = write(os.path.join(tmp, "expect.json"), {
            "schema": "dmabench-expectations/1", "name": "an impossible ceiling", "tolerance_pct": 0,
            "checks": [{"metric": "p50_us", "expect": 0.001}]})
        p = run([exe, "--backend", "host", "--config", cfg, "--out", out, "--junit", xml, "--check", ceiling], 5)
        cases = junit_cases(xml)
        verdicts = {m.group(1): m.group(0) for m in re.finditer(r"^FAIL  (\S+).*$", p.stdout, re.M)}
        expect(len(verdicts) == 4, f"{len(verdicts)} FAIL lines\n{p.stdout[-2000:]}")
        for name, (_, outcome, kind, message, _) in cases.items():
            if name in verdicts:
                expect(outcome == "failure" and kind == "check" and message == verdicts[name],
                       f"{name}: {outcome} {kind} {message!r}, verdict {verdicts[name]!r}")
            else:
                expect(outcome == "skipped", f"{name}: {outcome}")

        # a case that fails (corrupt data): a failure of type `failed` with the record's reason; exit 1
        run([exe, "--backend", "host", "--config", cfg, "--out", out, "--junit", xml], 1,
            {"DMABENCH_HOST_FAULT": "corrupt:0"})
        records = {r["name"]: r for r in json.load(open(out))["results"]}
        cases = junit_cases(xml)
        failed = [n for n, r in records.items() if r["status"] == "failed"]
        expect(failed, "no failed record under DMABENCH_HOST_FAULT=corrupt:0")
        for name in failed:
            _, outcome, kind, message, _ = cases[name]
            expect(outcome == "failure" and kind == "failed" and message == records[name]["reason"].replace("\n", "\\n"),
                   f"{name}: {outcome} {kind} {message!r}, reason {records[name]['reason']!r}")

        # --processes N: the levels file's cases, written once by the process that merges (the processes write none),
        # its --check verdicts as failures
        levels, levels_xml = os.path.join(tmp, "levels.json"), os.path.join(tmp, "levels.xml")
        p = run([exe, "--backend", "host", "--config", cfg, "--out", levels, "--junit", levels_xml, "--processes", "2",
                 "--check", ceiling], 5)
        merged = {r["name"]: r for r in json.load(open(levels))["results"]}
        cases = junit_cases(levels_xml)
        expect(set(cases) == set(merged) and len(merged) == 8, f"--processes: test cases {sorted(cases)}")
        verdicts = {m.group(1): m.group(0) for m in re.finditer(r"^FAIL  (\S+).*$", p.stdout, re.M)}
        for name, (_, outcome, kind, message, _) in cases.items():
            want = ("failure", "check", verdicts.get(name)) if merged[name]["status"] == "ok" else ("skipped", None, merged[name]["reason"])
            expect((outcome, kind, message) == want, f"--processes {name}: {outcome} {kind} {message!r}, expected {want}")
        for k in (1, 2):
            process_args = json.load(open(os.path.join(levels + ".processes", f"process-{k}.json")))["context"]["command_line"]
            expect("--junit" not in process_args, f"process {k} was given --junit: {process_args}")
        p = run([exe, "--backend", "host", "--config", cfg, "--out", levels, "--junit", levels, "--processes", "2"], 2)
        expect(p.stderr.count("\n") == 1 and "--junit" in p.stderr, f"--processes, --junit = --out: {p.stderr!r}")

        # a --junit path in a missing directory: made, as for --out; one that cannot be written: refused before
        # anything runs
        nested = os.path.join(tmp, "new", "dir", "report.xml")
        run([exe, "--backend", "host", "--config", cfg, "--out", out, "--junit", nested], 0)
        expect(len(junit_cases(nested)) == 8, "--junit in a missing directory")
        fresh = os.path.join(tmp, "fresh.json")
        for path in (tmp, os.path.join(out, "report.xml"), out):
            p = run([exe, "--backend", "host", "--config", cfg, "--out", fresh if path != out else out, "--junit", path], 2)
            expect(p.stderr.count("\n") == 1 and "--junit" in p.stderr, f"--junit {path}: {p.stderr!r}")
            expect(not os.path.exists(fresh), f"--junit {path}: the run went ahead")
    print("PASS cli records: --junit (schema, outcomes, counts, check and failed cases, bad paths), --samples, "
          "context.environment")


if __name__ == "__main__":
    main()
