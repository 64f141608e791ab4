#!/usr/bin/env python3
"""format_reader_check.py - compares what tools/t4read.py (the reader
written from docs/FORMAT.md alone) reads in a log with what `t410trace info
--json` reads in it, for tests/test_format_reader.c. Prints every
difference and exits 1 on one.

  format_reader_check.py LOG INFO_JSON [--damaged N] [--jsonl JSONL]

Compared exactly: chunks read and damaged, packets (info: copies and
unknown ones apart), reference and return packets, copies, unknown packets,
values, duplicates (section 6: not summed again), implausible reference
packets, where the next recording starts (section 7 step 3a), the first and
last trigger ID, the origin (the smallest ref_ns), each domain's return
packets and each event's total (a gauge's total is its last level, 4.3).
With --damaged N, both must also have found exactly N damaged chunks, so
that a log damaged on purpose is seen as damaged and not read as intact.

With --jsonl (`t410trace decode -f jsonl` of an undamaged LOG), packet by
packet: every return packet t4read.py dumps that is a sample (not a
baseline, not a failed read, not a duplicate) has the counts of decode's
interval of its domain and trigger (the pieces a phase boundary cut it
into summed back; gauges apart, being levels), and decode has no interval
without such a packet.
"""
import argparse
import collections
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


def reader_dump(log):
    p = subprocess.run([sys.executable, READER, "dump", log], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode != 0:
        sys.exit("t4read.py dump %s failed (%d): %s" % (log, p.returncode, p.stderr))
    return [json.loads(line) for line in p.stdout.splitlines()]


def metadata(pkt, names, events):
    """Domain names and event (name, flags) from a packet or a copy's."""
    if pkt["type"] == "copy" and pkt["inner"] is not None:
        pkt = dict(pkt["inner"], type={2: "domain", 3: "event"}.get(pkt["inner_type"]))
    if pkt["type"] == "domain":
        names.setdefault(pkt["domain_id"], pkt["name"])
    elif pkt["type"] == "event":
        events.setdefault((pkt["domain_id"], pkt["index"]), (pkt["name"], pkt["flags"]))


def reader_samples(log):
    """{(domain name, trigger): {event name: count}} of the sample returns."""
    pkts = reader_dump(log)
    names, events = {}, {}
    for pkt in pkts:
        metadata(pkt, names, events)
    samples = {}
    for pkt in pkts:
        if pkt["type"] != "return" or pkt["flags"] & (1 | 8):   # READ_FAILED, FIRST
            continue
        key = (names[pkt["domain_id"]], pkt["trigger_id"])
        if key in samples:
            continue   # a duplicate
        counts = {}
        for i, c in enumerate(pkt["counts"]):
            name, flags = events[(pkt["domain_id"], i)]
            if not flags & 1:   # GAUGE
                counts[name] = c
        samples[key] = counts
    return samples, {n for n, f in events.values() if f & 1}


def decode_samples(jsonl, gauges):
    """The same from decode's intervals, pieces of one trigger summed."""
    samples = collections.defaultdict(dict)
    with open(jsonl) as f:
        for line in f:
            rec = json.loads(line)
            if rec["type"] != "interval":
                continue
            counts = samples[(rec["domain"], rec["trigger"])]
            for name, c in rec["counts"].items():
                if name not in gauges:
                    counts[name] = counts.get(name, 0) + c
    return dict(samples)


def compare_samples(log, jsonl, diffs):
    mine, gauges = reader_samples(log)
    theirs = decode_samples(jsonl, gauges)
    keys = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
    for k in keys[:5]:
        diffs.append("sample %s trigger %d: t4read.py %r, decode %r"
                     % (k[0], k[1], mine.get(k), theirs.get(k)))
    if len(keys) > 5:
        diffs.append("... %d samples differ" % len(keys))
    return len(mine)


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
    ap = argparse.ArgumentParser(description="t4read.py against t410trace info/decode")
    ap.add_argument("log")
    ap.add_argument("info_json")
    ap.add_argument("--damaged", type=int)
    ap.add_argument("--jsonl")
    a = ap.parse_args(argv[1:])
    r = reader_view(a.log)
    with open(a.info_json) as f:
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
        compare("origin_ns", r["origin_ns"], info["origin_ns"], diffs)
    totals, returns = info_totals(info)
    compare("returns per domain", {d: n for d, n in r["domain_returns"].items()},
            {d: n for d, n in returns.items() if n or d in r["domain_returns"]}, diffs)
    compare("event totals", r["totals"], totals, diffs)
    if a.damaged is not None:
        compare("damaged chunks asked for", r["damaged"], a.damaged, diffs)
    samples = compare_samples(a.log, a.jsonl, diffs) if a.jsonl else 0
    for d in diffs:
        print(d)
    if not diffs:
        print("%s: t4read.py and t410trace agree (%d chunks, %d damaged, %d packets, "
              "%d events%s)" % (os.path.basename(a.log), r["chunks"], r["damaged"],
                                r["packets"], len(totals),
                                ", %d samples" % samples if a.jsonl else ""))
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
