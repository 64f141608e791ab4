#!/usr/bin/env python3
"""decode_cli_check.py - reads `t410trace decode`'s outputs back with
readers that are not the writer (Python's csv and json modules, plain text
parsing) and compares them with the truth file of tools/t4write.py, for
tests/test_decode_cli.c. Prints what differs and exits 1 on a mismatch.

  csv OUT TRUTH [--sep C] [--bin NS]
      header exactly trigger,...,unit,kind,occurrence; every field of every
      row; counter rows integers, metric rows decimals; totals per (domain,
      event) equal what the log delivers (the truth's "delivered": its total
      less what damage lost); no row straddles a bookmark's set time; with
      --bin, bins of NS from the origin, cut only at set times
  jsonl OUT TRUTH
      one object per line with its "type", the header first, each domain
      described before its first interval; per domain the intervals tile
      the timeline (each starts where the previous ended, trigger after
      trigger, the pieces of one trigger cut at bookmark set times; after
      lost counts, where its counts begin: a hole, never an overlap), their
      counts add up to what the log delivers, "partial" exactly on the
      intervals across lost counts
  summary OUT TRUTH
      what is missing: dropped packets, read failures, damage, triggers
      without a reference packet, unanswered triggers, duplicated returns,
      carried / lost triggers per domain, PARTIAL; the phases in bookmark order; each clock's frequency
  same FULL PART [--truth T --from X --to X] [--bookmark NAME] [--pmu GLOB] [--event GLOB]
      PART holds exactly the rows of FULL that the filters keep: an
      interval is in [from, to) by its middle; X is ns after the first
      trigger, or a bookmark name: from its first phase's start, to the
      end of its first phase that starts at or after from; --bookmark NAME:
      the rows labelled NAME
  sum FULL PART... : the rows of the PARTs together are the rows of FULL,
      each once
  rates JSONL SUMMARY TRUTH
      every domain clock runs at one rate: each interval's and each phase's
      frequency metric (*_freq, GHz), where present, is within 1 % of it
  info-totals CSV INFO_JSON
      CSV totals per (domain, event) equal `info --json`'s per-event "total"
  agree SUMMARY JSONL [--csv CSV] [--info INFO_JSON]
      one truth: the per-phase numbers computed from the rows of -f csv (or
      of -f jsonl, or of a --bin output: any of them as --csv) equal the
      summary's (decode -v): each phase occurrence's and each phase name's
      metric averages (evaluated from the rows' totals with the formulas the
      JSONL domain records give) to the summary's printed precision, and
      every EVENTS total exactly; summed over phases, the totals equal
      `info --json`'s
  info-same OLD NEW [--ignore K,K...]
      every value of `info --json` output OLD (recursively: objects, lists)
      is in NEW, the same, but the keys K at any depth: NEW says at least
      what OLD said (a newer t410trace adds keys, changes none)
"""
import argparse
import collections
import csv
import fnmatch
import gc
import json
import math
import re
import sys

# A short-lived reader of millions of rows that makes no reference cycles:
# the cyclic collector would only rescan them (a third of its time).
gc.disable()

HEADER = ["trigger", "start_ns", "end_ns", "bookmark", "domain", "pmu", "event", "value", "unit",
          "kind", "occurrence"]
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


def set_times(truth):
    """The bookmarks' set times: the phase boundaries, where rows are cut."""
    return sorted(b["set_ns"] for b in truth["bookmarks"] if b.get("set_ns"))


def straddles(start, end, cuts):
    return any(start < t < end for t in cuts)


def check_csv(a):
    truth = json.load(open(a.truth))
    evs = events_of(truth)
    names = {b["name"] for b in truth["bookmarks"]} | {""}
    # where no chunk was damaged every bookmark's set time is a boundary
    cuts = set_times(truth) if not truth["damaged_chunks"] else []
    tot = collections.Counter()
    bin_rows = collections.Counter()
    rows = read_csv(a.out, a.sep)
    for n, r in enumerate(rows, 2):
        if len(r) != len(HEADER):
            fail(f"line {n}: {len(r)} fields: {r}")
            continue
        trig, start, end, bm, dom, pmu, ev, val, unit, kind, occ = r
        if not all(re.fullmatch(r"\d+", x) for x in (trig, start, end, occ)) or occ == "0":
            fail(f"line {n}: trigger/start/end/occurrence not integers: {r}")
            continue
        if int(start) >= int(end):
            fail(f"line {n}: start_ns {start} >= end_ns {end}")
        if straddles(int(start), int(end), cuts):
            fail(f"line {n}: [{start}, {end}) straddles a bookmark's set time")
        if kind != ("counter" if ev in evs.get(dom, {}) else "metric"):
            fail(f"line {n}: kind {kind!r} for {ev}")
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
        if a.bin:
            # inside one bin: the whole bin, or the part its
            # counts cover (the recording's edges, a gap, a phase boundary)
            s0, e0 = int(start) - truth["origin_ns"], int(end) - truth["origin_ns"]
            if s0 // a.bin != (e0 - 1) // a.bin:
                fail(f"line {n}: [{start}, {end}) is not inside a bin of {a.bin} ns")
            bin_rows[dom, s0 // a.bin] += 1 if kind == "counter" and ev == "cycles" else 0
    for d in truth["domains"]:
        for e in d["events"]:
            got, want = tot[d["name"], e["name"]], e["delivered"]
            if got != want:
                fail(f"{d['name']} {e['name']}: CSV total {got}, the log delivers {want} "
                     f"(total {e['total']}, lost {e['lost']}: off by {got - want})")
    if a.bin and bin_rows and max(bin_rows.values()) > 1 + len(cuts):
        fail(f"a bin cut more often than there are phase boundaries: "
             f"{max(bin_rows.values())}")
    print(f"csv: {len(rows)} rows")


def check_jsonl(a):
    truth = json.load(open(a.truth))
    evs = events_of(truth)
    cuts = set_times(truth) if not truth["damaged_chunks"] else []
    by_dom = collections.defaultdict(list)
    described = set()
    bounds = set()  # the phase boundaries the output states
    with open(a.out) as f:
        for n, line in enumerate(f, 1):
            try:
                o = json.loads(line)
            except ValueError as e:
                fail(f"line {n}: not JSON ({e}): {line[:200]}")
                continue
            if not isinstance(o, dict) or "type" not in o:
                fail(f"line {n}: not an object with a type")
                continue
            if (n == 1) != (o["type"] == "header"):
                fail(f"line {n}: type {o['type']}; the header is the first line, only")
            if o["type"] == "phase":
                bounds.add(o["start_ns"])
            if o["type"] == "domain":
                if set(o.get("units", {})) != set(evs.get(o.get("domain"), {})):
                    fail(f"line {n}: units {o.get('units')} of {o.get('domain')}")
                described.add(o.get("domain"))
            if o["type"] != "interval":
                continue
            if o.get("domain") not in described:
                fail(f"line {n}: an interval of {o.get('domain')} before its domain record")
            for k, t in (("domain", str), ("trigger", int), ("first_trigger", int),
                         ("start_ns", int), ("end_ns", int), ("counts", dict),
                         ("metrics", dict), ("bookmark", str), ("occurrence", int)):
                if not isinstance(o.get(k), t):
                    fail(f"line {n}: {k} missing or not {t.__name__}: {line[:200]}")
                    break
            else:
                if o["start_ns"] >= o["end_ns"]:
                    fail(f"line {n}: start_ns {o['start_ns']} >= end_ns {o['end_ns']}")
                if straddles(o["start_ns"], o["end_ns"], cuts):
                    fail(f"line {n}: straddles a bookmark's set time")
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
        ivs = sorted(by_dom[d["name"]], key=lambda o: (o["trigger"], o["start_ns"]))
        if not ivs:
            fail(f"{d['name']}: no intervals")
            continue
        for p, o in zip(ivs, ivs[1:]):
            # an interval after lost counts keeps only the time its counts
            # cover: a hole before it, never an overlap; the pieces of one
            # interval (a bookmark set inside it) follow each other
            hole = "partial" in o.get("flags", []) and o["start_ns"] > p["end_ns"]
            piece = o["trigger"] == p["trigger"]
            if piece and (o["first_trigger"] != p["first_trigger"] or p["end_ns"] not in bounds):
                fail(f"{d['name']}: trigger {o['trigger']} cut at {p['end_ns']}, "
                     f"not where a phase starts")
            if (not piece and o["first_trigger"] != p["trigger"] + 1) or \
                    (o["start_ns"] != p["end_ns"] and not hole):
                fail(f"{d['name']}: interval of trigger {o['trigger']} (from "
                     f"{o['first_trigger']}, {o['start_ns']}) does not follow trigger "
                     f"{p['trigger']} (ending {p['end_ns']})")
        partial = len({o["trigger"] for o in ivs if "partial" in o.get("flags", [])})
        spans = sum(o["trigger"] - o["first_trigger"]
                    for o in {o["trigger"]: o for o in ivs}.values())
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
    m = re.search(r"damage\s+(?:none|(\d+) damaged chunks? skipped, (not truncated|truncated),"
                  r" \d+ bytes? unreadable)\n", missing)
    if not m or int(m.group(1) or 0) != len(truth["damaged_chunks"]) or \
            (m.group(2) == "truncated") != truth["truncated"]:
        fail(f"summary: damage line {m.group(0) if m else None}, want "
             f"{len(truth['damaged_chunks'])} damaged, truncated {truth['truncated']}")
    m = re.search(r"no reference\s+(\d+) triggers? without", missing)
    if not m or int(m.group(1)) != truth["refs_missing"]:
        fail(f"summary: {m.group(0) if m else 'no line'}; want {truth['refs_missing']}")
    quiet = True
    for d in truth["domains"]:
        unplaced = d.get("unplaced", 0)
        want = (f"unanswered {d['unanswered']}, duplicates {d['duplicates']}, "
                f"carried {d['carried']}, lost {d['lost_triggers']}, too late 0, "
                f"unplaced {unplaced}")
        noisy = d["unanswered"] or d["carried"] or d["lost_triggers"] or d["duplicates"] or \
            unplaced
        quiet &= not noisy
        line = re.search(r"^    " + re.escape(d["name"]) + r" +(unanswered .*)$", missing, re.M)
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


def keep(r, a):
    start, end = int(r[1]), int(r[2])
    mid = start + (end - start) // 2
    return ((a.from_ns is None or mid >= a.from_ns) and (a.to_ns is None or mid < a.to_ns)
            and (a.bookmark is None or r[3] == a.bookmark)
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
    """The parts (--phase of every name) give every row of FULL, each once:
    an interval that holds a phase change is cut there, one part each."""
    full = collections.Counter(map(tuple, read_csv(a.full)))
    parts = collections.Counter(map(tuple, (r for p in a.parts for r in read_csv(p))))
    if full != parts:
        fail(f"{sum(parts.values())} rows in the parts, {sum(full.values())} in {a.full}; "
             f"missing {list(full - parts)[:3]}, extra {list(parts - full)[:3]}")
    print(f"sum: {sum(full.values())} rows")


def check_rates(a):
    truth = json.load(open(a.truth))
    hz = {d["name"]: d["clock_hz"] for d in truth["domains"] if d["clock_hz"]}
    n = 0
    with open(a.jsonl) as f:
        for line in f:
            o = json.loads(line)
            if o["type"] != "interval":
                continue
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


def formula_value(expr, totals, elapsed):
    """A formula of decode's (names, numbers, + - * /, parentheses) over
    the totals; None when an event is missing or a division by zero."""
    out = []
    for tok in expr.split():
        lead = len(tok) - len(tok.lstrip("("))
        trail = len(tok) - len(tok.rstrip(")"))
        core = tok[lead:len(tok) - trail]
        if core in "+-*/":
            out.append("(" * lead + core + ")" * trail)
            continue
        if re.fullmatch(r"[0-9.]+(e[-+]?[0-9]+)?", core):
            val = core
        elif core == "elapsed_ns":
            val = repr(float(elapsed))
        elif core in totals:
            val = repr(float(totals[core]))
        else:
            return None
        out.append("(" * lead + val + ")" * trail)
    try:
        return eval(" ".join(out), {"__builtins__": {}}, {})
    except ZeroDivisionError:
        return None


def read_rows(path):
    """Counter rows of a CSV or JSONL output, as (label, occurrence, domain,
    pmu, event, value, start, end), one at a time (a list of a 1 ms log's
    rows would be a gigabyte)."""
    if path.endswith(".jsonl"):
        with open(path) as f:
            for line in f:
                o = json.loads(line)
                if o["type"] == "interval":
                    for ev, v in o["counts"].items():
                        yield (o["bookmark"], o["occurrence"], o["domain"], o["pmu"], ev, v,
                               o["start_ns"], o["end_ns"])
        return
    with open(path, newline="") as f:
        rd = csv.reader(f, delimiter=",", strict=True)
        head = next(rd, None)
        if head != HEADER:
            fail(f"{path}: header {head}, want {HEADER}")
            done()
        for r in rd:
            if r[9] == "counter":
                yield (r[3], int(r[10]), r[4], r[5], r[6], int(r[7]), int(r[1]), int(r[2]))


def summary_tables(text, title_re, labels):
    """Each table whose title matches: (title, column names, rows as dicts).
    The first `labels` columns are left-aligned text (cut at the header's
    offsets: they may hold spaces), the others right-aligned numbers."""
    out = []
    for m in re.finditer(r"\n(" + title_re + r")\n(.*?)(?=\n\n|\Z)", text, re.S):
        lines = m.group(2).split("\n")
        head = lines[0]
        starts = [mm.start() for mm in re.finditer(r"\S+", head)]
        names = head.split()
        rows = []
        for line in lines[2:]:
            if not line.strip() or line.lstrip().startswith("..."):
                continue
            # labels but the last by the header's offsets; the numbers are
            # the last fields, the last label what lies before them
            row = {n: line[starts[i]:starts[i + 1]].strip()
                   for i, n in enumerate(names[:labels - 1])}
            rest = line[starts[labels - 1]:].split()
            k = len(names) - labels
            row[names[labels - 1]] = " ".join(rest[:-k])
            row.update(zip(names[labels:], rest[-k:]))
            rows.append(row)
        out.append((m.group(1), names, rows))
    return out


def check_agree(a):
    text = open(a.summary).read()
    formulas, units = {}, {}
    with open(a.jsonl) as f:
        for line in f:
            # only the domain records' formulas: parse no interval
            if '"type": "domain"' not in line:
                continue
            o = json.loads(line)
            if o["type"] == "domain":
                formulas[o["domain"]] = {k: v["formula"] for k, v in o["metrics"].items()}
    rows = read_rows(a.csv or a.jsonl)
    tot = collections.defaultdict(collections.Counter)  # (label, occ, domain) -> totals
    name_tot = collections.defaultdict(collections.Counter)  # (label, domain)
    spans = collections.defaultdict(set)  # (label, occ, domain) -> pieces
    ev_tot = collections.Counter()  # (label or None, pmu, event)
    ev_occ = collections.Counter()  # (label, occurrence, pmu, event)
    all_tot = collections.Counter()  # (domain, event)
    fine = collections.Counter()  # (label, occ, domain, pmu, event): the rows' sums
    for label, occ, dom, pmu, ev, v, start, end in rows:
        fine[label, occ, dom, pmu, ev] += v
        spans[label, occ, dom].add((start, end))
    for (label, occ, dom, pmu, ev), v in fine.items():
        tot[label, occ, dom][ev] += v
        name_tot[label, dom][ev] += v
        ev_tot[label, pmu, ev] += v
        ev_tot[None, pmu, ev] += v
        ev_occ[label, occ, pmu, ev] += v
        all_tot[dom, ev] += v
    elapsed = {k: sum(e - s for s, e in v) for k, v in spans.items()}
    name_el = collections.Counter()
    for (label, occ, dom), e in elapsed.items():
        name_el[label, dom] += e
    checked = 0
    for title, names, trows in summary_tables(text, r"[^\n]*, per phase \(averages[^\n]*", 2):
        for r in trows:
            ph, dom = r["PHASE"], r["PMU"]
            m = re.fullmatch(r"(.*)#(\d+)", ph)
            n = re.fullmatch(r"(.*) \(all \d+\)", ph)
            label = "" if (m or n).group(1) == "(none)" else (m or n).group(1)
            if m:
                t, el = tot[label, int(m.group(2)), dom], elapsed.get((label, int(m.group(2)), dom), 0)
            else:
                t, el = name_tot[label, dom], name_el[label, dom]
            for metric in names[2:]:
                shown = r[metric]
                want = formula_value(formulas[dom][metric], t, el) if el else None
                if shown == "-":
                    if want is not None and math.isfinite(want):
                        fail(f"{title}: {ph} {dom} {metric}: summary '-', rows give {want}")
                    continue
                dec = len(shown.split(".")[1]) if "." in shown else 0
                if want is None or abs(want - float(shown)) > 0.5 * 10 ** -dec + 1e-9 * abs(want):
                    fail(f"{title}: {ph} {dom} {metric}: summary {shown}, rows give {want}")
                checked += 1
    for title, names, trows in summary_tables(text, r"EVENTS [^\n]*", 4):
        for r in trows:
            pmu = re.sub(r" \(\d+ CPUs\)$", "", r["PMU"])
            ph = r["PHASE"]
            occ = re.fullmatch(r"(.*)#(\d+)", ph)
            every = re.fullmatch(r"(.*) \(all \d+\)", ph)
            if ph == "(all phases)":
                got = ev_tot[None, pmu, r["EVENT"]]
            elif occ:
                label = "" if occ.group(1) == "(none)" else occ.group(1)
                got = ev_occ[label, int(occ.group(2)), pmu, r["EVENT"]]
            else:
                label = "" if every.group(1) == "(none)" else every.group(1)
                got = ev_tot[label, pmu, r["EVENT"]]
            if str(got) != r["TOTAL"]:
                fail(f"EVENTS {ph} {pmu} {r['EVENT']}: summary {r['TOTAL']}, rows {got}")
            checked += 1
    if a.info:
        info = json.load(open(a.info))
        for d in info["domains"]:
            for e in d["events"]:
                if all_tot[d["name"], e["name"]] != e["total"]:
                    fail(f"{d['name']} {e['name']}: rows sum to {all_tot[d['name'], e['name']]}, "
                         f"info says {e['total']}")
                checked += 1
    if checked < 10:
        fail(f"only {checked} numbers compared: a weak test")
    print(f"agree: {checked} numbers")
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
            {"--sep": dict(default=","), "--bin": dict(type=int, default=0)}),
    "jsonl": (check_jsonl, ["out", "truth"], {}),
    "summary": (check_summary, ["out", "truth"], {}),
    "same": (check_same, ["full", "part"],
             {"--truth": {}, "--from": dict(dest="from_x"), "--to": dict(dest="to_x"),
              "--bookmark": {}, "--pmu": {}, "--event": {}}),
    "sum": (check_sum, ["full", "parts+"], {}),
    "rates": (check_rates, ["jsonl", "summary", "truth"], {}),
    "info-totals": (check_info_totals, ["csv", "info"], {}),
    "agree": (check_agree, ["summary", "jsonl"], {"--csv": {}, "--info": {}}),
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
