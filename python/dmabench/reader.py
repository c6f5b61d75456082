"""Loading results files and journals: `load` reads a results file (or its run's journal) and checks it.

A run that has not finished (crashed, killed -9, or still running) leaves its journal `<out>.journal` next to its
results file `<out>`; `load` reads either, and reads the journal in place of a results file that lags behind it."""
import json
import os
import re
import sys

from .files import JOURNAL_SUFFIX, read_bytes
from .schema import JOURNAL_SCHEMA, SCHEMA_MAJOR, check_document, check_kind, show
from .text import ResultsError


def load(path, tool=None):
    """The results document at `path`, checked by `check_document`; raises ResultsError (one line: the file and the
    first problem) when the file cannot be read, is not JSON (or nests too deeply to parse), or is not a
    `dmabench/1` document the scripts can use. `tool` is unused (kept for callers that pass it).

    Journals (`read_journal` says what one is): `path` may be a journal itself (`run.json.journal`), read as the
    document its header and records make. A results file whose journal exists beside it belongs to a run that has
    not finished, and is rewritten only every 2 s while it runs: when the journal holds more records (or the
    results file is missing or unusable), the journal is read instead, with one note on stderr that says so;
    otherwise the results file is, silently. A journal that is malformed is a ResultsError as any file is."""
    path = os.fspath(path)
    if path.endswith(JOURNAL_SUFFIX):
        try:
            doc, torn = read_journal(path)
        except FileNotFoundError as e:
            raise ResultsError(f"cannot read {path}: {e} (a journal exists only until its run ends)") from None
        if doc is None:
            raise ResultsError(f"{path}: line 1: no complete header line (the run was killed before it wrote one)")
        if torn:
            _note(f"{path}: line {torn} is torn (the run was killed while writing it); ignored")
        return doc
    journal = path + JOURNAL_SUFFIX
    try:  # the journal first: when the run ends between the two reads, the results file read second is complete
        jdoc, torn = read_journal(journal)
    except FileNotFoundError:
        return _load_results(path)
    try:
        doc = _load_results(path)
    except ResultsError:
        if jdoc is None:
            raise
        doc = None
    if jdoc is None or (doc is not None and len(doc["results"]) >= len(jdoc["results"])):
        return doc
    _note(f"{journal}: the run that writes {path} has not finished; reading its journal "
          f"({len(jdoc['results'])} records, {0 if doc is None else len(doc['results'])} in {path}"
          f"{f'; its torn line {torn} ignored' if torn else ''})")
    return jdoc


def _load_results(path):
    try:
        doc = parse_json(read_bytes(path))
    except FileNotFoundError as e:
        raise ResultsError(f"cannot read {path}: {e}") from None
    except (ValueError, RecursionError) as e:  # UnicodeDecodeError is a ValueError
        kind = "nests too deeply to parse" if isinstance(e, RecursionError) else str(e)
        raise ResultsError(f"cannot read {path}: {kind}") from None
    try:
        check_document(doc)
    except ResultsError as e:
        raise ResultsError(f"{path}: {e}") from None
    return doc


def parse_json(data):
    """The JSON value of UTF-8 `data`, its lone surrogates escaped (escape_surrogates); ValueError, RecursionError."""
    value = json.loads(data.decode("utf-8"))
    return escape_surrogates(value) if re.search(rb"\\u[dD][89a-fA-F]", data) else value


def escape_surrogates(value):
    """`value` (parsed JSON) with every string that holds a lone surrogate (JSON's `\\ud800` escape, which is no
    character) replaced by its escaped text (the six characters `\\ud800`), keys too, so that every script can print,
    write and draw it. Anything else is returned as it is."""
    def clean(text):
        try:
            text.encode("utf-8")
            return text
        except UnicodeEncodeError:
            return text.encode("utf-8", "backslashreplace").decode("utf-8")

    if isinstance(value, str):
        return clean(value)
    stack = [value]
    while stack:  # not recursive: the parser already accepted the nesting, this must not fail on it
        node = stack.pop()
        items = list(node.items()) if isinstance(node, dict) else list(enumerate(node)) if isinstance(node, list) else []
        for k, v in items:
            if isinstance(v, str):
                node[k] = clean(v)
            elif isinstance(v, (dict, list)):
                stack.append(v)
            if isinstance(k, str) and clean(k) is not k:
                node[clean(k)] = node.pop(k)
    return value


def _unreadable(e):
    """Why a journal line cannot be read, without json's own 'line 1' (every line is parsed alone)."""
    if isinstance(e, RecursionError):
        return "nests too deeply to parse"
    if isinstance(e, json.JSONDecodeError):
        return f"not valid JSON ({e.msg} at column {e.colno})"
    return f"not UTF-8 ({e.reason} at byte {e.start + 1})" if isinstance(e, UnicodeDecodeError) else str(e)


_noted = set()


def _note(line):
    """A note on stderr, once per process (plot.py loads each file twice)."""
    if line not in _noted:
        _noted.add(line)
        print(line, file=sys.stderr)


def read_journal(path):
    """(document, torn) from the journal at `path`; raises FileNotFoundError when there is none and ResultsError
    (naming the file and the line) when it is malformed.

    A journal is JSON Lines in UTF-8: line 1 a header object {"schema": "dmabench-journal/1", "results_schema":
    "dmabench/1", "context": {...}}, each further line one record of the results file's `results` list, appended
    as its case finishes. A run killed while appending leaves a torn last line (not JSON, or no newline at its
    end): it is left out and `torn` is its line number (else None). A bad line before the last is an error. The
    document is {"schema": results_schema, "context": context, "results": records}, checked by `check_document`
    with each record named by its line. `document` is None when not even the header line is complete (an empty
    journal: the run was killed before it wrote one)."""
    data = read_bytes(path, "journal")  # FileNotFoundError: none
    lines = data.split(b"\n")  # the last element is b"" when the file ends with a newline, else the unfinished line
    values, torn = [], None
    for i, line in enumerate(lines[:-1]):
        try:
            values.append(parse_json(line))
        except (ValueError, RecursionError) as e:  # UnicodeDecodeError is a ValueError
            if i == len(lines) - 2 and not lines[-1]:  # the last line: torn
                torn = i + 1
                break
            raise ResultsError(f"{path}: line {i + 1}: {_unreadable(e)}") from None
    if lines[-1]:  # no newline at its end
        torn = len(lines)
    if not values:
        return None, torn
    header = values[0]
    if not isinstance(header, dict):
        raise ResultsError(f"{path}: line 1: the header is {show(header)}, not an object")
    if header.get("schema") != JOURNAL_SCHEMA:
        raise ResultsError(f"{path}: line 1: not a dmabench journal (header 'schema' is {show(header.get('schema'))}, "
                           f"expected {JOURNAL_SCHEMA!r})")
    for field, kind in (("results_schema", str), ("context", dict)):
        if field not in header:
            raise ResultsError(f"{path}: line 1: header.{field}: missing")
        try:
            check_kind(header[field], kind, f"header.{field}")
        except ResultsError as e:
            raise ResultsError(f"{path}: line 1: {e}") from None
    if header["results_schema"] != SCHEMA_MAJOR:
        raise ResultsError(f"{path}: line 1: header.results_schema is {show(header['results_schema'])}; these scripts "
                           f"read {SCHEMA_MAJOR!r}")
    doc = {"schema": header["results_schema"], "context": header["context"], "results": values[1:]}
    try:
        check_document(doc, lambda i: f"line {i + 2}: results[{i}]")
    except ResultsError as e:
        raise ResultsError(f"{path}: {e}") from None
    return doc, torn
