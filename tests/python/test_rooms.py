"""The rooms of the C++ tree and what each may include (docs/design.md, "Rooms"), checked so that it stays true.

A room is a folder; a file belongs to the deepest room that holds it (bench/run/gbench.cpp: bench/run). A file may
include its own room and the rooms its room may use, directly or through them (the closure of MAY_USE). The table
itself has no circle, so no arrow runs upward and no circle of rooms can form. A few folders are parts of the room
above them, not rooms of their own (PARTS): their files belong to that room, may include its files but not its top's
(TOP: what the room's parts are used by), and include no file of another part of the same room. Tests (tests/) and the standalone
probes (tools/, which include nothing of the tree) are not rooms. The vendor-header rule (only gpu/ includes vendor
headers) is tests/check_vendor_includes.cmake's.
"""
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# room -> the rooms it may use directly (the bottom first).
MAY_USE = {
    "core": [],                                  # the ground floor: Plan, the signal flag, units, errors, JSON
    "amd": ["core"],                             # AMD facts that need no vendor header (engine map, SDMA packets)
    "team": ["core"],                            # the run's processes (MPI is inside)
    "gpu": ["core", "amd"],                      # the only vendor code
    "power": ["core", "gpu"],                    # power and energy sources
    "patterns": ["core"],                        # what moves: a pattern is a pure function to a Plan
    "engines/options": ["core", "amd"],          # the option vocabulary and each engine's table
    "engines": ["engines/options", "gpu", "team"],   # how it moves: engines and their registry
    "bench/output": ["core"],                    # the console, the results file, reports, progress
    "bench/sampling": ["core"],                  # statistics and the stopping rule
    "bench/beside": ["engines"],                 # what runs beside a case (compute, host stream; transfer's maker passed in)
    "bench/config": ["patterns", "power", "engines", "bench/sampling", "bench/beside"],  # configs and presets
    "bench/cases": ["bench/config"],             # a config's cases and their plans
    "bench/measure": ["bench/cases", "bench/output"],   # timing, validation, overlap, power of one case
    "bench/run": ["bench/measure"],              # running one case (and the transfer workload, a case itself)
    "bench": ["bench/run"],                      # the command line, the sweep, levels, check mode, main
}
# folder -> the room it is part of: a folder of sources is a room of MAY_USE or a part of one.
PARTS = {
    "amd/sdma": "amd",        # SDMA packets, the ring producer, the platform interface, the software SDMA engine
    # The program's parts: they use its cli, check and power_setup (the runner uses them), so as rooms of their own
    # they would close a circle with bench/.
    "bench/levels": "bench",  # --processes N (levels, levels_run) and a multi-process run's ranks (processes)
    "bench/sweep": "bench",   # the sweep: its cases run and recorded (Sweep, Recorder, engines, workloads, the seal)
}
# room -> its files that use its parts, which no part includes.
TOP = {"bench": ["bench/runner.hpp", "bench/runner.cpp", "bench/main.cpp"]}
SOURCE = re.compile(r"\.(cpp|hpp|cu|h)$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def closure(room):
    seen, todo = set(), list(MAY_USE[room])
    while todo:
        r = todo.pop()
        if r not in seen:
            seen.add(r)
            todo.extend(MAY_USE[r])
    return seen


def room_of(path):
    """The deepest room holding a path relative to ROOT, or None (not a room's file)."""
    parts = path.split("/")
    for n in range(len(parts) - 1, 0, -1):
        r = "/".join(parts[:n])
        if r in MAY_USE:
            return r
    return None


def sources():
    for top in sorted({r.split("/")[0] for r in MAY_USE}):
        for d, _, files in os.walk(os.path.join(ROOT, top)):
            for f in files:
                if SOURCE.search(f):
                    yield os.path.relpath(os.path.join(d, f), ROOT)


def part_of(path):
    """The part (a folder of PARTS) holding a path relative to ROOT, or None."""
    return next((p for p in PARTS if path.startswith(p + "/")), None)


def part_violation(path, inc):
    """Why a file of a part may not include `inc` (a file of its own room), or None."""
    part = part_of(path)
    if part is None:
        return None
    if inc in TOP.get(PARTS[part], []):
        return f"{path} ({part}) includes {inc}, the top of {PARTS[part]}, which uses its parts"
    other = part_of(inc)
    if other is not None and other != part:
        return f"{path} ({part}) includes {inc}, of another part of {PARTS[part]} ({other})"
    return None


def violations():
    out = []
    for path in sources():
        mine = room_of(path)
        allowed = closure(mine) | {mine}
        for inc in INCLUDE.findall(open(os.path.join(ROOT, path), encoding="utf-8").read()):
            if "/" not in inc:
                continue  # generated (version.hpp) or same-folder
            target = room_of(inc)
            if target is None:
                out.append(f"{path}: includes {inc}, which is in no room")
            elif not os.path.exists(os.path.join(ROOT, inc)):
                out.append(f"{path}: includes {inc}, which does not exist")
            elif target not in allowed:
                out.append(f"{path} ({mine}) includes {inc} ({target}): {mine} may use {sorted(allowed - {mine})}")
            elif target == mine and part_violation(path, inc):
                out.append(part_violation(path, inc))
    return out


def test_the_rooms_table_has_no_circle():
    for room in MAY_USE:
        assert room not in closure(room), f"{room} reaches itself through MAY_USE"
        for r in MAY_USE[room]:
            assert r in MAY_USE, f"{room} may use {r}, which is no room"


def test_every_folder_of_the_tree_is_a_room():
    for top in sorted({r.split("/")[0] for r in MAY_USE}):
        for d, _, files in os.walk(os.path.join(ROOT, top)):
            rel = os.path.relpath(d, ROOT)
            if any(SOURCE.search(f) for f in files):
                assert rel in MAY_USE or rel in PARTS, f"{rel}: sources in a folder that is no room (MAY_USE) nor a part of one (PARTS)"


def test_every_part_is_a_folder_inside_its_room():
    for part, room in PARTS.items():
        assert room in MAY_USE and part not in MAY_USE and part.startswith(room + "/"), part
        assert os.path.isdir(os.path.join(ROOT, part)), f"{part}: no such folder"
    for room, files in TOP.items():
        for f in files:
            assert room_of(f) == room and part_of(f) is None and os.path.exists(os.path.join(ROOT, f)), f


def test_no_file_includes_a_room_its_room_may_not_use():
    bad = violations()
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("path,inc,ok", [
    ("core/units.cpp", "engines/registry.hpp", False),
    ("team/team.cpp", "bench/output/console.hpp", False),
    ("patterns/copy.cpp", "engines/registry.hpp", False),
    ("engines/options/ce.cpp", "engines/registry.hpp", False),
    ("bench/beside/load.cpp", "bench/run/run_case.hpp", False),
    ("bench/run/gbench.cpp", "bench/config/config.hpp", True),
    ("bench/measure/pairs.cpp", "team/team.hpp", True),
])
def test_the_rule_tells_a_bad_arrow_from_a_good_one(path, inc, ok):
    mine, target = room_of(path), room_of(inc)
    assert (target in closure(mine) | {mine}) == ok


@pytest.mark.parametrize("path,inc,ok", [
    ("bench/sweep/sweep.cpp", "bench/cli.hpp", True),
    ("bench/sweep/sweep.cpp", "bench/sweep/recorder.hpp", True),
    ("bench/sweep/sweep.cpp", "bench/runner.hpp", False),
    ("bench/levels/levels_run.cpp", "bench/sweep/sweep.hpp", False),
    ("bench/runner.cpp", "bench/sweep/sweep.hpp", True),
    ("bench/runner.cpp", "bench/levels/processes.hpp", True),
])
def test_the_rule_keeps_a_part_below_its_room_top_and_apart_from_the_others(path, inc, ok):
    assert room_of(path) == room_of(inc) == "bench"
    assert (part_violation(path, inc) is None) == ok
