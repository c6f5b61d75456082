"""The machine-readable JSON Schema of a results file (issue 52): python/dmabench/results.schema.json, shipped in the
package, validates every results file the checkout tracks under results/; a planted bad field is refused naming its
path, by the schema (jsonschema) and by check_document, which validates with it."""
import copy
import json
import lzma
import os

import pytest

from dmabench import ResultsError, check_document
from dmabench.schema import SCHEMA_FILE, results_schema, schema_validator, validate_with_schema
from test_scripts import ROOT, tracked

jsonschema = pytest.importorskip("jsonschema", reason="python3-jsonschema (scripts/test.sh installs it)")


def results_files():
    """Every tracked results/ file whose top level names schema dmabench/1 (journals, traces and levels inputs aside),
    .json or .json.xz (committed xz-compressed: results/h200x1/crossover/)."""
    found = []
    for f in tracked("results"):
        if not f.endswith((".json", ".json.xz")):
            continue
        with (lzma.open(f, "rt", encoding="utf-8") if f.endswith(".xz") else open(f, encoding="utf-8")) as fh:
            try:
                doc = json.load(fh)
            except ValueError:
                continue
        if isinstance(doc, dict) and doc.get("schema") == "dmabench/1":
            found.append((f, doc))
    return found


def test_the_schema_is_a_valid_draft_2020_12_schema():
    schema = results_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
    assert os.path.dirname(SCHEMA_FILE) == os.path.join(ROOT, "python", "dmabench")  # shipped in the package
    assert schema_validator() is not None


def test_every_tracked_results_file_validates():
    files = results_files()
    assert len(files) >= 50, len(files)  # 52 runs and more when this was written
    assert sum(f.endswith(".json.xz") for f, _ in files) >= 2, "the compressed crossover levels files are checked too"
    validator = jsonschema.Draft202012Validator(results_schema())
    for f, doc in files:
        errors = list(validator.iter_errors(doc))
        assert not errors, (os.path.relpath(f, ROOT), errors[0].message, list(errors[0].absolute_path))
        check_document(doc)


def ok_doc():
    f = os.path.join(ROOT, "results", "h200x1", "levels", "start2", "loading-EAGER-1.json")  # ok, with sampling
    with open(f, encoding="utf-8") as fh:
        doc = json.load(fh)
    i = next(i for i, r in enumerate(doc["results"]) if r["status"] == "ok" and "sampling" in r)
    return doc, i


# (planting function, the path the message must name): each refused by the schema and by check_document
PLANTS = [
    (lambda r: r["latency_us"].__setitem__("p50", 0), "latency_us.p50"),
    (lambda r: r["latency_us"].__setitem__("p99", "fast"), "latency_us.p99"),
    (lambda r: r.__setitem__("status", "done"), "status"),
    (lambda r: r.__setitem__("bytes_per_rank", 0), "bytes_per_rank"),
    (lambda r: r.__setitem__("devices", [0, "1"]), "devices[1]"),
    (lambda r: r["sampling"].__setitem__("mode", "guess"), "sampling.mode"),
    (lambda r: r.__setitem__("in_place", 1), "in_place"),
    (lambda r: r.__setitem__("noise", -0.1), "noise"),
    (lambda r: r.pop("options"), "options"),
]


@pytest.mark.parametrize("plant,path", PLANTS, ids=[p for _, p in PLANTS])
def test_a_planted_bad_field_fails_naming_its_path(plant, path):
    doc, i = ok_doc()
    bad = copy.deepcopy(doc)
    plant(bad["results"][i])
    with pytest.raises(ResultsError) as schema_error:
        validate_with_schema(bad)
    assert str(schema_error.value).startswith(f"results[{i}]"), str(schema_error.value)
    # a missing field is named by its parent (the schema's "required"), every other by its own path
    named = f"results[{i}]" if path == "options" else f"results[{i}].{path}"
    assert str(schema_error.value).startswith(named + ":"), str(schema_error.value)
    assert "results.schema.json" in str(schema_error.value)
    with pytest.raises(ResultsError) as checked:
        check_document(bad)
    assert f"results[{i}].{path}" in str(checked.value) or named in str(checked.value), str(checked.value)


def test_the_schema_holds_what_the_hand_checks_miss(monkeypatch):
    """check_document validates with the schema: a failure only the schema sees (a hand check switched off here) is
    still refused, naming the path."""
    import dmabench.schema as schema
    doc, i = ok_doc()
    bad = copy.deepcopy(doc)
    bad["results"][i]["sampling"]["stopped"] = "bored"
    monkeypatch.setattr(schema, "check_interval", lambda r, where: None)
    with pytest.raises(ResultsError, match=rf"^results\[{i}\]\.sampling\.stopped: .*'bored' is not one of"):
        check_document(bad)


def test_without_jsonschema_the_hand_checks_stand(monkeypatch):
    import dmabench.schema as schema
    monkeypatch.setattr(schema, "_validator", [None])  # as where jsonschema is not installed
    doc, i = ok_doc()
    check_document(doc)
    doc["results"][i]["latency_us"]["p50"] = 0
    with pytest.raises(ResultsError, match=rf"results\[{i}\]\.latency_us\.p50: expected a positive number"):
        check_document(doc)


def test_schema_md_links_to_the_schema_file():
    text = open(os.path.join(ROOT, "results", "SCHEMA.md"), encoding="utf-8").read()
    assert "](../python/dmabench/results.schema.json)" in text


def test_a_name_with_control_characters_is_as_valid_as_the_hand_checks_find_it():
    """The schema asks no more of a name than the hand checks: a case name holding a newline or ESC (a hostile trace
    name) is read, and every tool then prints it escaped (test_hostile_input). The name pattern once used `.`, which
    matches no newline, and refused such a file with exit 2."""
    doc = copy.deepcopy(results_files()[0][1])
    r = doc["results"][0]
    # inside the engine part, as a hostile option value puts it (the name's first and last parts hold no newline)
    r["name"] = r["name"].replace(f"/{r['engine']}/", f"/{r['engine']},tag=a\nFAIL  x\x1b[2J/", 1)
    assert "\nFAIL" in r["name"], r["name"]
    validate_with_schema(doc)
    check_document(doc)
