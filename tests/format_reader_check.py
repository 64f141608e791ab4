#!/usr/bin/env python3
"""format_reader_check.py - compares what tools/t4read.py (the reader
written from docs/FORMAT.md alone) reads in a log with what `t410trace info
--json` reads in it, for tests/test_format_reader.c. Prints every
difference and exits 1 on one.

  format_reader_check.py LOG INFO_JSON [--damaged N]

Compared exactly: chunks read and damaged, packets (info: copies and
unknown ones apart), reference and return packets, copies, unknown packets,
values, duplicates (section 6: not summed again), implausible reference
packets, where the next recording starts (section 7 step 3a), the first and
last trigger ID, each domain's return packets and each event's total (a
gauge's total is its last level, 4.3). With --damaged N, both must also
have found exactly N damaged chunks, so that a log damaged on purpose is
seen as damaged and not read as intact.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
READER = os.path.join(HERE, "..", "tools", "t4read.py")


def reader_view(log):
    p = subprocess.run([sys.executable, READER, "totals", log], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode != 0:
        sys.exit("t4read.py totals %s failed (%d): %s" % (log, p.returncode, p.stderr))
    return json.loads(p.stdout)


def info_totals(info):
    """Per "domain/index" its total, and per domain its return packets."""
    totals, returns = {}, {}
    for d in info.get("domains", []):
        returns[str(d["id"])] = d["ret_packets"]
        for e in d.get("events", []):
            totals["%d/%d" % (d["id"], e["index"])] = e["total"]
    return totals, returns


def compare(name, mine, theirs, diffs):
    """A line for diffs when they differ; for dicts, the keys that do
    (the first 8)."""
    if mine == theirs:
        return
    if isinstance(mine, dict) and isinstance(theirs, dict):
        keys = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
        mine = {k: mine.get(k) for k in keys[:8]}
        theirs = {k: theirs.get(k) for k in keys[:8]}
        name = "%s (%d differ)" % (name, len(keys))
    diffs.append("%s: t4read.py %r, t410trace info %r" % (name, mine, theirs))


def main(argv):
    if len(argv) not in (3, 5) or (len(argv) == 5 and argv[3] != "--damaged"):
        sys.exit("usage: format_reader_check.py LOG INFO_JSON [--damaged N]")
    r = reader_view(argv[1])
    with open(argv[2]) as f:
        info = json.load(f)
    diffs = []
    for mine, theirs in (("chunks", "chunks"), ("damaged", "damaged_chunks"),
                         ("references", "ref_packets"),
                         ("returns", "ret_packets"), ("copies", "copies"),
                         ("unknown", "unknown_packets"), ("values", "values"),
                         ("duplicates", "duplicates"), ("implausible", "implausible_refs"),
                         ("next_recording", "next_recording")):
        compare(mine, r[mine], info[theirs], diffs)
    compare("packets less copies and unknown ones", r["packets"] - r["copies"] - r["unknown"],
            info["packets"], diffs)
    if r["references"]:
        compare("first_trigger", r["first_trigger"], info["first_trigger"], diffs)
        compare("last_trigger", r["last_trigger"], info["last_trigger"], diffs)
    totals, returns = info_totals(info)
    compare("returns per domain", {d: n for d, n in r["domain_returns"].items()},
            {d: n for d, n in returns.items() if n or d in r["domain_returns"]}, diffs)
    compare("event totals", r["totals"], totals, diffs)
    if len(argv) == 5:
        compare("damaged chunks asked for", r["damaged"], int(argv[4]), diffs)
    for d in diffs:
        print(d)
    if not diffs:
        print("%s: t4read.py and t410trace agree (%d chunks, %d damaged, %d packets, "
              "%d events)" % (os.path.basename(argv[1]), r["chunks"], r["damaged"],
                              r["packets"], len(totals)))
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
