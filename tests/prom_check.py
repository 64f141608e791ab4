#!/usr/bin/env python3
"""prom_check.py - a real Prometheus server scrapes `record --metrics-listen`
(test_metrics.c, suite "metrics"; Python's standard library only).

    prom_check.py T410TRACE DIR

In DIR: starts `T410TRACE record --sim --metrics-listen 127.0.0.1:0 -c
c.sock -o s.t4t`, then Debian's `prometheus` scraping it every second
(its configuration and database in DIR). Once Prometheus holds 10 s of
samples it sets a bookmark (`ctl bookmark prom_phase`) and waits for
t410_phase_info to show it; then it asks Prometheus, at one instant T,
for each UCF PMU's read bandwidth by rate() over the last 10 s (bytes over
the reference time the samples span) and for the raw samples of that
window; stops the recording, decodes its log to CSV and sums the same
PMU's bytes over exactly the span those samples cover. Prints one line per
PMU and exits 0 when every bandwidth is within 2% of the decoder's, 1
otherwise, 77 (skip) with the reason when Prometheus cannot run here.
Every process it started is ended, whatever happens.
"""
import csv
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

WINDOW_S = 10
BOUND = 0.02


def fail(msg):
    print("prom_check: " + msg, flush=True)
    sys.exit(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


START = time.monotonic()


def wait_for(what, probe, timeout_s=120):
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        got = probe()
        if got:
            print("%.1f s: %s" % (time.monotonic() - START, what), flush=True)
            return got
        time.sleep(0.1)
    fail("gave up waiting for " + what)


def query(base, q, at=None):
    args = {"query": q}
    if at is not None:
        args["time"] = "%.3f" % at
    url = base + "/api/v1/query?" + urllib.parse.urlencode(args)
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            body = json.load(r)
    except OSError:
        return None
    return body["data"]["result"] if body.get("status") == "success" else None


def recorder_port(err_path):
    try:
        with open(err_path) as f:
            for line in f:
                if "(port " in line:
                    return int(line.split("(port ")[1].split(")")[0])
    except OSError:
        pass
    return None


def mem_read_rows(binary, log):
    """decode's CSV rows of every PMU's mem_bytes_rd, by PMU."""
    out = subprocess.run([binary, "decode", "-f", "csv", "--time", "ref", "--pmu",
                          "nvidia_ucf_pmu_*", log],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    rows = {}
    for r in csv.DictReader(out[:1] + [x for x in out if ",mem_bytes_rd," in x]):
        rows.setdefault(r["pmu"], []).append(r)
    return rows


def decoded_bandwidth(rows, pmu, s1, s2):
    """Bytes per reference second of pmu's mem_bytes_rd from s1 to s2 s
    after its first sample."""
    if not rows.get(pmu):
        fail("no mem_bytes_rd rows for " + pmu)
    t0 = int(rows[pmu][0]["start_ns"])
    lo, hi = t0 + s1 * 1e9, t0 + s2 * 1e9
    total = sum(int(r["value"]) for r in rows[pmu] if lo < int(r["end_ns"]) <= hi)
    return total / (s2 - s1)


def main():
    binary, d = sys.argv[1], sys.argv[2]
    procs = []
    try:
        if subprocess.run(["sh", "-c", "command -v prometheus"],
                          capture_output=True).returncode:
            print("prometheus not found (make deps installs it)")
            sys.exit(77)
        err = open(os.path.join(d, "rec.err"), "w")
        rec = subprocess.Popen([binary, "record", "--sim", "--metrics-listen", "127.0.0.1:0",
                                "-c", "c.sock", "-o", "s.t4t"], cwd=d, stdout=err,
                               stderr=err)
        procs.append(rec)
        port = wait_for("the recorder's port", lambda: recorder_port(err.name))
        pport = free_port()
        with open(os.path.join(d, "prom.yml"), "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                    "scrape_configs:\n  - job_name: t410trace\n    static_configs:\n"
                    "      - targets: ['127.0.0.1:%d']\n" % port)
        plog = open(os.path.join(d, "prom.log"), "w")
        prom = subprocess.Popen(["prometheus", "--config.file=" + os.path.join(d, "prom.yml"),
                                 "--storage.tsdb.path=" + os.path.join(d, "tsdb"),
                                 "--web.listen-address=127.0.0.1:%d" % pport],
                                cwd=d, stdout=plog, stderr=plog)
        procs.append(prom)
        base = "http://127.0.0.1:%d" % pport

        def ready():
            if prom.poll() is not None:
                with open(plog.name) as f:
                    print("prometheus cannot run here: " + f.read()[-300:].replace("\n", " "))
                sys.exit(77)
            try:
                with urllib.request.urlopen(base + "/-/ready", timeout=2) as r:
                    return r.status == 200
            except OSError:
                return False

        wait_for("prometheus to be ready", ready)
        ucf = 'pmu=~"nvidia_ucf_pmu_.*"'
        span = 'count_over_time(t410_pmu_sampled_seconds_total{%s}[%ds])' % (ucf, WINDOW_S + 5)
        wait_for("%d s of samples" % WINDOW_S, lambda: (r := query(base, span)) and
                 len(r) == 2 and all(float(x["value"][1]) >= WINDOW_S + 2 for x in r))
        subprocess.run([binary, "ctl", "--control", "c.sock", "bookmark", "prom_phase"],
                       cwd=d, check=True, capture_output=True)
        wait_for("the phase", lambda: query(base, 't410_phase_info{phase="prom_phase"}'))
        print("phase prom_phase seen", flush=True)
        at = time.time()
        sel = '{%s,direction="read",target="mem"}' % ucf
        # the expression the man page and README give
        rates = query(base, 'rate(t410_pmu_bytes_total%s[%ds]) / ignoring(direction, target) '
                      'group_left rate(t410_pmu_sampled_seconds_total{%s}[%ds])'
                      % (sel, WINDOW_S, ucf, WINDOW_S), at)
        spans = query(base, 't410_pmu_sampled_seconds_total{%s}[%ds]' % (ucf, WINDOW_S), at)
        if not rates or len(rates) != 2 or not spans or len(spans) != 2:
            fail("Prometheus answered %s and %s" % (rates, spans))
        rec.send_signal(signal.SIGINT)
        if rec.wait(timeout=120) != 0:
            fail("record exited %d" % rec.returncode)
        span_of = {s["metric"]["pmu"]: s["values"] for s in spans}
        rows = mem_read_rows(binary, os.path.join(d, "s.t4t"))
        worst = 0.0
        for r in rates:
            pmu = r["metric"]["pmu"]
            got = float(r["value"][1])
            s1, s2 = float(span_of[pmu][0][1]), float(span_of[pmu][-1][1])
            want = decoded_bandwidth(rows, pmu, s1, s2)
            diff = abs(got - want) / want
            worst = max(worst, diff)
            print("%s: Prometheus %.4f GB/s, decode %.4f GB/s over %.3f s: %.3f%% apart"
                  % (pmu, got / 1e9, want / 1e9, s2 - s1, 100 * diff), flush=True)
        sys.exit(0 if worst <= BOUND else 1)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()


if __name__ == "__main__":
    main()
