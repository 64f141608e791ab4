#!/usr/bin/env python3
"""decode_cli_check.py - reads `t410trace decode`'s outputs back with
readers that are not the writer (Python's csv and json modules, plain text
parsing) and compares them with the truth file of tools/t4write.py, for
tests/test_decode_cli.c. Prints what differs and exits 1 on a mismatch.

  csv OUT TRUTH [--sep C] [--grid NS]
      header exactly trigger,...,unit; every field of every row; count rows
      integers, metric rows decimals; totals per (domain, event) equal what
      the log delivers (the truth's "delivered": its total less what damage
      lost); with --grid, cells of NS on the origin's grid
  jsonl OUT TRUTH
      one object per line; per domain the intervals tile the timeline
      (each starts where the previous ended, trigger after trigger; after
      lost counts, where its counts begin: a hole, never an overlap), their
      counts add up to what the log delivers, "partial" exactly on the
      intervals across lost counts
  summary OUT TRUTH
      what is missing: dropped packets, read failures, damage, triggers
      without a reference packet, carried / lost / duplicated returns per
      domain, PARTIAL; the phases in bookmark order; each clock's frequency
  same FULL PART [--truth T --from X --to X] [--bookmark NAME] [--pmu GLOB] [--event GLOB]
      PART holds exactly the rows of FULL that the filters keep: an
      interval is in [from, to) by its middle; X is ns after the first
      trigger, or a bookmark name: from its first phase's start, to the
      end of its first phase that starts at or after from
  sum FULL PART... : the rows of the PARTs together are the rows of FULL
  rates JSONL SUMMARY TRUTH
      every domain clock runs at one rate: each interval's and each phase's
      frequency metric (*_freq, GHz), where present, is within 1 % of it
  info-totals CSV INFO_JSON
      CSV totals per (domain, event) equal `info --json`'s per-event "total"
  info-same OLD NEW [--ignore K,K...]
      every value of `info --json` output OLD (recursively: objects, lists)
      is in NEW, the same, but the keys K at any depth: NEW says at least
      what OLD said (a newer t410trace adds keys, changes none)
"""
import argparse
import collections
import csv
import fnmatch
import json
import math
import re
import sys

HEADER = ["trigger", "start_ns", "end_ns", "bookmark", "domain", "pmu", "event", "value", "unit"]
problems = []


def fail(msg):
    problems.append(msg)
    if len(problems) > 20:
        done()


def done():
    for p in problems[:20]:
        print("FAIL:", p)
    sys.exit(1 if problems else 0)


def read_csv(path, sep=","):
    with open(path, newline="") as f:
        rows = list(csv.reader(f, delimiter=sep, strict=True))
    if not rows or rows[0] != HEADER:
        fail(f"{path}: header {rows[0] if rows else None}, want {HEADER}")
        done()
    return rows[1:]


def events_of(truth):
    return {d["name"]: {e["name"]: e for e in d["events"]} for d in truth["domains"]}


def check_csv(a):
    truth = json.load(open(a.truth))
    evs = events_of(truth)
    names = {b["name"] for b in truth["bookmarks"]} | {""}
    tot = collections.Counter()
    rows = read_csv(a.out, a.sep)
    for n, r in enumerate(rows, 2):
        if len(r) != 9:
            fail(f"line {n}: {len(r)} fields: {r}")
            continue
        trig, start, end, bm, dom, pmu, ev, val, unit = r
        if not all(re.fullmatch(r"\d+", x) for x in (trig, start, end)):
            fail(f"line {n}: trigger/start/end not integers: {r}")
            continue
        if int(start) >= int(end):
            fail(f"line {n}: start_ns {start} >= end_ns {end}")
        if bm not in names:
            fail(f"line {n}: bookmark {bm!r} not in the log")
        if dom not in evs:
            fail(f"line {n}: domain {dom!r} not in the log")
            continue
        if ev in evs[dom]:
            if not re.fullmatch(r"\d+", val):
                fail(f"line {n}: count {ev} = {val!r} is not an integer")
                continue
            if unit != evs[dom][ev]["unit"]:
                fail(f"line {n}: unit {unit!r} of {ev}, want {evs[dom][ev]['unit']!r}")
            tot[dom, ev] += int(val)
        else:
            try:
                v = float(val)
            except ValueError:
                v = math.nan
            if not math.isfinite(v) or not re.fullmatch(r"-?[0-9.]+(e[-+]?\d+)?", val):
                fail(f"line {n}: metric {ev} = {val!r} is not a decimal")
        if a.grid:
            rel = int(start) - truth["origin_ns"]
            if rel % a.grid or int(end) - int(start) != a.grid:
                fail(f"line {n}: [{start}, {end}) is not a cell of the {a.grid} ns grid")
    for d in truth["domains"]:
        for e in d["events"]:
            got, want = tot[d["name"], e["name"]], e["delivered"]
            if got != want:
                fail(f"{d['name']} {e['name']}: CSV total {got}, the log delivers {want} "
                     f"(total {e['total']}, lost {e['lost']}: off by {got - want})")
    print(f"csv: {len(rows)} rows")


def check_jsonl(a):
    truth = json.load(open(a.truth))
    evs = events_of(truth)
    by_dom = collections.defaultdict(list)
    with open(a.out) as f:
        for n, line in enumerate(f, 1):
            try:
                o = json.loads(line)
            except ValueError as e:
                fail(f"line {n}: not JSON ({e}): {line[:200]}")
                continue
            if not isinstance(o, dict):
                fail(f"line {n}: not an object")
                continue
            for k, t in (("domain", str), ("trigger", int), ("first_trigger", int),
                         ("start_ns", int), ("end_ns", int), ("counts", dict),
                         ("metrics", dict), ("bookmark", str)):
                if not isinstance(o.get(k), t):
                    fail(f"line {n}: {k} missing or not {t.__name__}: {line[:200]}")
                    break
            else:
                if o["start_ns"] >= o["end_ns"]:
                    fail(f"line {n}: start_ns {o['start_ns']} >= end_ns {o['end_ns']}")
                if o["domain"] not in evs:
                    fail(f"line {n}: domain {o['domain']!r} not in the log")
                    continue
                if set(o["counts"]) != set(evs[o["domain"]]) or \
                        not all(type(v) is int and v >= 0 for v in o["counts"].values()):
                    fail(f"line {n}: counts {o['counts']}")
                if not all(isinstance(v, (int, float)) for v in o["metrics"].values()):
                    fail(f"line {n}: metrics {o['metrics']}")
                by_dom[o["domain"]].append(o)
    for d in truth["domains"]:
        ivs = sorted(by_dom[d["name"]], key=lambda o: o["trigger"])
        if not ivs:
            fail(f"{d['name']}: no intervals")
            continue
        for p, o in zip(ivs, ivs[1:]):
            # an interval after lost counts keeps only the time its counts
            # cover: a hole before it, never an overlap
            hole = "partial" in o.get("flags", []) and o["start_ns"] > p["end_ns"]
            if o["first_trigger"] != p["trigger"] + 1 or (o["start_ns"] != p["end_ns"] and not hole):
                fail(f"{d['name']}: interval of trigger {o['trigger']} (from "
                     f"{o['first_trigger']}, {o['start_ns']}) does not follow trigger "
                     f"{p['trigger']} (ending {p['end_ns']})")
        partial = sum("partial" in o.get("flags", []) for o in ivs)
        spans = sum(o["trigger"] - o["first_trigger"] for o in ivs)
        if (partial > 0) != (d["lost_triggers"] > 0):
            fail(f"{d['name']}: {partial} intervals flagged partial, "
                 f"{d['lost_triggers']} triggers lost to damage")
        if spans != d["carried"] + d["lost_triggers"]:
            fail(f"{d['name']}: intervals span {spans} unanswered triggers, want "
                 f"{d['carried']} carried + {d['lost_triggers']} lost")
        for e in d["events"]:
            got = sum(o["counts"][e["name"]] for o in ivs)
            if got != e["delivered"]:
                fail(f"{d['name']} {e['name']}: JSONL total {got}, the log delivers "
                     f"{e['delivered']} (lost {e['lost']})")
    print(f"jsonl: {sum(len(v) for v in by_dom.values())} intervals")


def number_after(text, label):
    m = re.search(r"^\s*" + re.escape(label) + r"\s+(\S+)", text, re.M)
    if not m:
        fail(f"summary: no line '{label}'")
        return None
    return m.group(1)


def check_summary(a):
    truth = json.load(open(a.truth))
    text = open(a.out).read()
    if "\nMISSING\n" not in text:
        fail("summary: no MISSING section")
        done()
    missing = text[text.index("\nMISSING\n"):]
    want = str(truth["dropped"]) if truth["status_present"] else "unknown"
    if number_after(missing, "dropped packets") != want:
        fail(f"summary: dropped packets {number_after(missing, 'dropped packets')}, want {want}")
    if truth["status_present"] and number_after(missing, "read failures") != \
            str(truth["read_failures"]):
        fail(f"summary: read failures, want {truth['read_failures']}")
    m = re.search(r"damage\s+(\d+) damaged chunks?, (not truncated|truncated)", missing)
    if not m or int(m.group(1)) != len(truth["damaged_chunks"]) or \
            (m.group(2) == "truncated") != truth["truncated"]:
        fail(f"summary: damage line {m.group(0) if m else None}, want "
             f"{len(truth['damaged_chunks'])} damaged, truncated {truth['truncated']}")
    m = re.search(r"no reference\s+(\d+) triggers? without", missing)
    if not m or int(m.group(1)) != truth["refs_missing"]:
        fail(f"summary: {m.group(0) if m else 'no line'}; want {truth['refs_missing']}")
    quiet = True
    for d in truth["domains"]:
        unplaced = d.get("unplaced", 0)
        want = (f"carried {d['carried']}, lost {d['lost_triggers']}, "
                f"duplicates {d['duplicates']}, too late 0, unplaced {unplaced}")
        noisy = d["carried"] or d["lost_triggers"] or d["duplicates"] or unplaced
        quiet &= not noisy
        line = re.search(r"^    " + re.escape(d["name"]) + r" +(carried .*)$", missing, re.M)
        if noisy:
            if not line or line.group(1) != want:
                fail(f"summary: {d['name']}: {line.group(1) if line else 'no line'}; want {want}")
        elif line:
            fail(f"summary: {d['name']}: {line.group(1)}; it answered every trigger")
    if quiet != ("every domain answered every trigger" in missing):
        fail(f"summary: 'every domain answered every trigger' should be said: {quiet}")
    if truth["partial"] != ("TOTALS ARE PARTIAL" in missing):
        fail(f"summary: PARTIAL said {not truth['partial']}, counts lost {truth['partial']}")
    # the phases, in bookmark order (one row per occurrence)
    table = re.search(r"\nPHASES .*?\n\n", text, re.S)
    listed = re.findall(r"^  (\S+)#\d+ ", table.group(0) if table else "", re.M)
    want = [b["name"] for b in truth["bookmarks"]] or ["(none)"]
    if listed[:len(want)] != want:
        fail(f"summary: phases {listed[:len(want)]}, want {want}")
    # each clock: the model's frequency (MHz, 1 decimal) near the true rate
    for d in truth["domains"]:
        line = re.search(r"^  " + re.escape(d["name"]) + r" +(rate|offset|window) +(.*)$",
                         text, re.M)
        if not line:
            fail(f"summary: no clock line for {d['name']}")
        elif d["clock_hz"]:
            f = float(line.group(2).split()[0])
            if abs(f * 1e6 - d["clock_hz"]) > 1e-4 * d["clock_hz"]:
                fail(f"summary: {d['name']} at {f} MHz, true clock {d['clock_hz']} Hz")
    print("summary: checked")


def resolve_window(a):
    """--from / --to as reference times, from the truth's origin and bookmarks;
    the truth's phases for --phase."""
    a.from_ns = a.to_ns = None
    a.spans = []
    if a.from_x is None and a.to_x is None and a.bookmark is None:
        return
    truth = json.load(open(a.truth))
    bms = truth["bookmarks"]
    a.spans = sorted(bms, key=lambda b: b["set_ns"])
    if a.from_x is not None:
        if a.from_x.isdigit():
            a.from_ns = truth["origin_ns"] + int(a.from_x)
        else:
            a.from_ns = next(b["set_ns"] for b in bms if b["name"] == a.from_x)
    if a.to_x is not None:
        if a.to_x.isdigit():
            a.to_ns = truth["origin_ns"] + int(a.to_x)
        else:
            start = a.from_ns or 0
            i = next(i for i, b in enumerate(bms) if b["name"] == a.to_x and b["set_ns"] >= start)
            a.to_ns = bms[i + 1]["set_ns"] if i + 1 < len(bms) else None


def in_phase(start, end, a):
    """--phase NAME also keeps an interval that overlaps a NAME phase."""
    bms = a.spans
    for i, b in enumerate(bms):
        stop = bms[i + 1]["set_ns"] if i + 1 < len(bms) else None
        if (b["name"] == a.bookmark and b["set_ns"] < end
                and (stop is None or stop > start)):
            return True
    return False


def keep(r, a):
    start, end = int(r[1]), int(r[2])
    mid = start + (end - start) // 2
    return ((a.from_ns is None or mid >= a.from_ns) and (a.to_ns is None or mid < a.to_ns)
            and (a.bookmark is None or r[3] == a.bookmark or in_phase(start, end, a))
            and (a.pmu is None or fnmatch.fnmatchcase(r[4], a.pmu)
                 or fnmatch.fnmatchcase(r[5], a.pmu))
            and (a.event is None or fnmatch.fnmatchcase(r[6], a.event)))


def check_same(a):
    resolve_window(a)
    full, part = read_csv(a.full), read_csv(a.part)
    want = sorted(r for r in full if keep(r, a))
    if sorted(part) != want:
        extra = collections.Counter(map(tuple, part)) - collections.Counter(map(tuple, want))
        lack = collections.Counter(map(tuple, want)) - collections.Counter(map(tuple, part))
        fail(f"{a.part}: {len(part)} rows, want {len(want)} of {len(full)}; extra "
             f"{list(extra)[:3]}, missing {list(lack)[:3]}")
    if not want:
        fail(f"{a.part}: the filter keeps no row: a weak test")
    print(f"same: {len(part)} of {len(full)} rows")


def check_sum(a):
    """The parts (--phase of every name) give every row of FULL, and nothing
    else; a row is in two parts only where its interval holds a phase change."""
    full = collections.Counter(map(tuple, read_csv(a.full)))
    parts = collections.Counter(map(tuple, (r for p in a.parts for r in read_csv(p))))
    if set(full) != set(parts):
        fail(f"{len(parts)} distinct rows in the parts, {len(full)} in {a.full}; "
             f"missing {list(set(full) - set(parts))[:3]}, extra {list(set(parts) - set(full))[:3]}")
    twice = sum(parts[r] - full[r] for r in parts if parts[r] > full.get(r, 0))
    if twice > len(full) // 50:
        fail(f"{twice} rows in more than one part, of {len(full)}")
    print(f"sum: {sum(full.values())} rows, {twice} in two phases")


def check_rates(a):
    truth = json.load(open(a.truth))
    hz = {d["name"]: d["clock_hz"] for d in truth["domains"] if d["clock_hz"]}
    n = 0
    with open(a.jsonl) as f:
        for line in f:
            o = json.loads(line)
            for k, v in o["metrics"].items():
                if k.endswith("_freq") and o["domain"] in hz:
                    n += 1
                    if abs(v * 1e9 - hz[o["domain"]]) > 0.01 * hz[o["domain"]]:
                        fail(f"{o['domain']} trigger {o['trigger']} "
                             f"({','.join(o.get('flags', []))}): {k} {v} GHz, the clock "
                             f"runs at {hz[o['domain']] / 1e9} GHz")
    text = open(a.summary).read()
    for table in re.findall(r"\n\S[^\n]*, per phase [^\n]*\n(.*?)(?=\n\n)", text, re.S):
        lines = table.split("\n")
        cols = lines[0].split()[2:]  # PHASE PMU metric...
        freq = [i for i, c in enumerate(cols) if c.endswith("_freq")]
        for row in lines[2:]:
            for name in hz:
                m = re.match(r"  (.+?) +" + re.escape(name) + r" +(.*)$", row)
                if m and freq:
                    n += 1
                    v = float(m.group(2).split()[freq[0]])
                    if abs(v * 1e9 - hz[name]) > 0.01 * hz[name]:
                        fail(f"summary: {name} in phase {m.group(1)}: {cols[freq[0]]} {v} "
                             f"GHz, the clock runs at {hz[name] / 1e9} GHz")
    if not n:
        fail("no frequency metric found")
    print(f"rates: {n} frequencies")


def check_info_totals(a):
    info = json.load(open(a.info))
    want = {(d["name"], e["name"]): e["total"] for d in info["domains"] for e in d["events"]}
    tot = collections.Counter()
    for n, r in enumerate(read_csv(a.csv), 2):
        if (r[4], r[6]) in want:
            if not re.fullmatch(r"\d+", r[7]):
                fail(f"line {n}: count {r[6]} = {r[7]!r} is not an integer")
                continue
            tot[r[4], r[6]] += int(r[7])
    for key, total in want.items():
        if tot[key] != total:
            fail(f"{key[0]} {key[1]}: CSV total {tot[key]}, info {total}")
    if not want:
        fail("info lists no events")
    print(f"info-totals: {len(want)} events")


def check_info_same(a):
    ignore = set(a.ignore.split(",")) if a.ignore else set()

    def walk(x, y, path):
        if isinstance(x, dict):
            if not isinstance(y, dict):
                return fail(f"{path}: {y!r} is no object")
            for k, v in x.items():
                if k in ignore:
                    continue
                if k not in y:
                    fail(f"{path}/{k}: missing")
                else:
                    walk(v, y[k], f"{path}/{k}")
        elif isinstance(x, list):
            if not isinstance(y, list) or len(x) != len(y):
                return fail(f"{path}: {len(x)} items, now {len(y) if isinstance(y, list) else y}")
            for i, (p, q) in enumerate(zip(x, y)):
                walk(p, q, f"{path}/{i}")
        elif x != y:
            fail(f"{path}: {x!r}, now {y!r}")

    walk(json.load(open(a.old)), json.load(open(a.new)), "")
    print("info-same: checked")


# subcommand: (check, positional arguments, options with their argparse settings)
COMMANDS = {
    "csv": (check_csv, ["out", "truth"],
            {"--sep": dict(default=","), "--grid": dict(type=int, default=0)}),
    "jsonl": (check_jsonl, ["out", "truth"], {}),
    "summary": (check_summary, ["out", "truth"], {}),
    "same": (check_same, ["full", "part"],
             {"--truth": {}, "--from": dict(dest="from_x"), "--to": dict(dest="to_x"),
              "--bookmark": {}, "--pmu": {}, "--event": {}}),
    "sum": (check_sum, ["full", "parts+"], {}),
    "rates": (check_rates, ["jsonl", "summary", "truth"], {}),
    "info-totals": (check_info_totals, ["csv", "info"], {}),
    "info-same": (check_info_same, ["old", "new"], {"--ignore": {}}),
}


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name, (fn, args, opts) in COMMANDS.items():
        p = sub.add_parser(name)
        for arg in args:
            if arg.endswith("+"):
                p.add_argument(arg[:-1], nargs="+")
            else:
                p.add_argument(arg)
        for opt, kw in opts.items():
            p.add_argument(opt, **kw)
        p.set_defaults(fn=fn)
    a = ap.parse_args()
    a.fn(a)
    done()


if __name__ == "__main__":
    main()
