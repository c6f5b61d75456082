"""Times of the software SDMA engine (engine_details.hardware_times false) are labelled as such wherever the
scripts show a variant, so they cannot pass for hardware numbers in a table or figure."""
import json
import os
import sys

from test_scripts import H200, SCRIPTS, run

from dmabench import software_times, to_frame, variant


def software_doc(tmp_path):
    with open(os.path.join(H200, "quick-case-pipeline.json"), encoding="utf-8") as f:
        doc = json.load(f)
    rec = next(r for r in doc["results"] if r["status"] == "ok" and r["pattern"] == "allgather" and r["engine"] == "ce")
    soft = dict(rec, engine="sdma", name=rec["name"].replace("/ce", "/sdma,packet=broadcast", 1),
                options={"packet": "broadcast"}, engine_details={"hardware_times": False})
    doc["results"] = [rec, soft]
    path = tmp_path / "soft.json"
    path.write_text(json.dumps(doc))
    return str(path), rec, soft


def test_variant_says_software_engine(tmp_path):
    _, rec, soft = software_doc(tmp_path)
    assert software_times(soft) and not software_times(rec)
    assert variant(soft).endswith(" [software engine]") and "[software" not in variant(rec)


def test_summary_and_frame_mark_them(tmp_path):
    path, _, _ = software_doc(tmp_path)
    p = run("summarize.py", path)
    assert p.returncode == 0, p.stderr
    assert "[software engine]" in p.stdout
    frame = to_frame([path])
    assert list(frame["hardware_times"]) == [True, False]
