#!/usr/bin/env python3
"""report_check.py - opens a `t410trace report` in a real browser (Debian's
headless Chromium, driven through its DevTools protocol over a pipe, no
third-party module) and checks what a person would see, for
tests/test_report.c and the benchmark (tools/bench_decode.sh).

  open REPORT [--summary FILE] [--plots N] [--spans N] [--lanes N]
       [--warn ID,...] [--ok ID,...] [--screenshot PNG] [--window WxH] [--text STRING]
       [--timeout S] [--probe-fetch]
      loads file://REPORT and waits for the page to say it is drawn
      (data-t4-ready); then checks: no console error, no uncaught
      exception, no request for anything but the file itself (the
      Content-Security-Policy leaves nothing else; --probe-fetch also
      tries an http fetch from the page and expects the policy to refuse
      it); N plots (uPlot charts, lanes included), N phase spans in the
      band, N lanes; health items by id (t4-h-ID) in the warning or the ok
      colour; a text the page must show (the header's, e.g. SIMULATED);
      with --summary, every row of every per-kind table equals the row of
      `t410trace decode`'s summary (FILE, its text) for the same kind,
      label for label and number for number; a screenshot (saved to PNG
      with --screenshot) that is not blank: many colours, few pixels of
      the background. Prints the facts as JSON; exits 1 with what differs.
  tables REPORT SUMMARY
      without a browser: the file is UTF-8 with nothing that could run
      from a name (no `<script>` but the report's own three, none after
      the data), and the per-kind tables (read with Python's html.parser)
      equal the summary's rows as above
  time REPORT [--runs N]
      milliseconds from navigation to the first plot drawn (best of N),
      for the benchmark.

Exit status 77 with one line "skip: REASON" when Chromium cannot run here
(not installed, or it fails to start): the probe is starting it.
"""
import argparse
import base64
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zlib

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run",
                  "--disable-default-apps", "--disable-extensions", "--mute-audio",
                  "--hide-scrollbars", "--remote-debugging-pipe"]
problems = []


def skip(reason):
    print("skip: " + reason)
    sys.exit(77)


class Browser:
    """Chromium with its DevTools protocol on fds 3 (commands) and 4 (answers)."""

    def __init__(self, width, height, timeout):
        exe = os.environ.get("T4_CHROMIUM") or shutil.which("chromium") or \
            shutil.which("chromium-browser")
        if not exe:
            skip("no chromium here (make deps installs Debian's chromium)")
        self.profile = tempfile.mkdtemp(prefix="t4chromium-")
        cmd_r, self.cmd_w = os.pipe()
        self.ans_r, ans_w = os.pipe()

        def fds():  # in the child: the pipe ends as fds 3 and 4, whatever they were
            hi_r, hi_w = os.dup(cmd_r), os.dup(ans_w)
            os.dup2(hi_r, 3)
            os.dup2(hi_w, 4)
        self.proc = subprocess.Popen(
            [exe] + CHROMIUM_FLAGS + ["--user-data-dir=" + self.profile,
                                      "--window-size=%d,%d" % (width, height), "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            preexec_fn=fds, pass_fds=(3, 4))
        os.close(cmd_r)
        os.close(ans_w)
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.timeout = timeout
        self.session = None
        try:
            targets = self.call("Target.getTargets")["targetInfos"]
        except (OSError, RuntimeError, TimeoutError) as e:
            err = self.proc.stderr.read1(2000).decode(errors="replace") if self.proc.stderr else ""
            self.close()
            skip("chromium does not start here: %s %s" % (e, err.strip().splitlines()[-1:] or ""))
        page = [t for t in targets if t["type"] == "page"][0]
        self.session = self.call("Target.attachToTarget", targetId=page["targetId"],
                                 flatten=True)["sessionId"]

    def send(self, method, params):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params}
        if self.session and not method.startswith("Target."):
            msg["sessionId"] = self.session
        os.write(self.cmd_w, json.dumps(msg).encode() + b"\0")
        return self.next_id

    def read(self, deadline):
        while b"\0" not in self.buf:
            if time.monotonic() > deadline:
                raise TimeoutError("no answer from chromium")
            import select
            r, _, _ = select.select([self.ans_r], [], [], 0.2)
            if r:
                chunk = os.read(self.ans_r, 1 << 20)
                if not chunk:
                    raise RuntimeError("chromium closed its DevTools pipe")
                self.buf += chunk
        msg, _, self.buf = self.buf.partition(b"\0")
        return json.loads(msg)

    def call(self, method, **params):
        want = self.send(method, params)
        deadline = time.monotonic() + self.timeout
        while True:
            m = self.read(deadline)
            if m.get("id") == want:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            if "method" in m:
                self.events.append(m)

    def pump(self, seconds):
        deadline = time.monotonic() + seconds
        try:
            while True:
                m = self.read(deadline)
                if "method" in m:
                    self.events.append(m)
        except TimeoutError:
            pass

    def eval(self, expr):
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError("evaluate %s: %s" % (expr[:60], r["exceptionDetails"]))
        return r["result"].get("value")

    def close(self):
        try:
            if self.session:
                self.call("Browser.close")
        except (OSError, RuntimeError, TimeoutError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


def load(b, path, timeout):
    """Navigate to the report; the time (ms) when it says it is drawn."""
    for domain in ("Page", "Runtime", "Log", "Network"):
        b.call(domain + ".enable")
    url = "file://" + os.path.abspath(path)
    b.call("Page.navigate", url=url)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready = b.eval("document.body && document.body.getAttribute('data-t4-ready')")
        if ready:
            return url, b.eval("+document.body.getAttribute('data-t4-first-draw')")
        b.pump(0.2)
    problems.append("the page did not say it was drawn within %d s" % timeout)
    return url, None


# An http fetch from the page: the policy must refuse it (its violation
# event says which directive), not the network.
PROBE_FETCH = """new Promise(res => {
  document.addEventListener('securitypolicyviolation',
    e => res('refused by ' + e.effectiveDirective), {once: true});
  fetch('http://127.0.0.1:9/t4-probe').then(() => res('fetched'),
    e => setTimeout(() => res('failed, not by the policy: ' + e), 1000));
})"""


def console_errors(b):
    out = []
    for e in b.events:
        m, p = e["method"], e.get("params", {})
        if m == "Page.javascriptDialogOpening":
            out.append("a dialog opened: %s" % p.get("message"))
        if m == "Runtime.exceptionThrown":
            out.append("exception: %s" % p["exceptionDetails"].get("exception", {}).get(
                "description", p["exceptionDetails"].get("text")))
        elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            out.append("console.%s: %s" % (p["type"], [a.get("value", a.get("description"))
                                                      for a in p.get("args", [])]))
        elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
            out.append("log: %s" % p["entry"].get("text"))
    return out


def requests(b, url):
    return [e["params"]["request"]["url"] for e in b.events
            if e["method"] == "Network.requestWillBeSent"
            and e["params"]["request"]["url"] not in (url, "about:blank")]


# ---- the per-kind tables against the summary ------------------------------------------

def summary_tables(text):
    """{kind label: [row words...]} from the summary's "KIND, per phase" tables."""
    out, kind, skip_lines = {}, None, 0
    for line in text.splitlines():
        m = re.match(r"^(\S.*), per phase \(", line)
        if m and m.group(1) != "WORKLOAD":
            kind, skip_lines = m.group(1), 2
            out[kind] = []
            continue
        if kind is None:
            continue
        if not line.strip() or not line.startswith("  "):
            kind = None
            continue
        if skip_lines:
            skip_lines -= 1
            continue
        out[kind].append(line.split())
    return out


def summary_columns(text):
    """The headline metric columns of every kind table of the summary."""
    n, lines = 0, text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^(\S.*), per phase \(", line)
        if m and m.group(1) != "WORKLOAD" and i + 1 < len(lines):
            n += len(lines[i + 1].split()) - 2  # PHASE PMU, then the metrics
    return n


DOM_TABLES = """(() => Array.from(document.querySelectorAll('table.t4-kind')).map(t => ({
  caption: t.caption.textContent,
  rows: Array.from(t.tBodies[0].rows).map(r => Array.from(r.cells).map(c => c.textContent))})))()"""


def compare_tables(got, summary_path):
    """got: [{caption, rows: [[cell text]]}] of the report's kind tables."""
    with open(summary_path, encoding="utf-8", errors="replace") as f:
        want = summary_tables(f.read())
    seen = set()
    for t in got:
        kind = t["caption"].split(", per phase")[0]
        seen.add(kind)
        rows = [" ".join(c for c in r).split() for r in t["rows"]]
        if kind not in want:
            problems.append("report table %r: no such table in the summary" % kind)
        elif rows != want[kind]:
            problems.append("table %r: report rows %s != summary rows %s" % (kind, rows[:3],
                                                                          want[kind][:3]))
    for kind in want:
        if kind not in seen:
            problems.append("summary table %r: not in the report" % kind)
    return sum(len(t["rows"]) for t in got)


# ---- the screenshot ----------------------------------------------------------------------

def png_pixels(data):
    """(width, height, rows of RGB(A) bytes) of an 8-bit RGB or RGBA PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n = int.from_bytes(data[pos:pos + 4], "big")
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = body[0:4], body[4:8], body[8], body[9]
            w, h = int.from_bytes(w, "big"), int.from_bytes(h, "big")
            assert depth == 8 and ctype in (2, 6), "PNG type %d/%d" % (depth, ctype)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, rows, prev, stride = zlib.decompress(idat), [], bytearray(w * bpp), w * bpp
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            c = prev[i - bpp] if i >= bpp else 0
            up = prev[i]
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + up) & 255
            elif f == 3:
                line[i] = (line[i] + (a + up) // 2) & 255
            elif f == 4:
                p = a + up - c
                pa, pb, pc = abs(p - a), abs(p - up), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else up if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def variety(png):
    w, h, bpp, rows = png_pixels(png)
    colours, background = set(), 0
    for row in rows[::2]:
        for x in range(0, w * bpp, 2 * bpp):
            px = row[x:x + 3]
            colours.add(px)
            background += px == b"\xff\xff\xff"
    total = len(rows[::2]) * len(range(0, w * bpp, 2 * bpp))
    return len(colours), 1 - background / total


# ---- commands -------------------------------------------------------------------------------

def cmd_open(a):
    width, height = (int(v) for v in a.window.split("x"))
    b = Browser(width, height, a.timeout)
    facts = {}
    try:
        url, first = load(b, a.report, a.timeout)
        b.pump(0.5)
        facts["first_draw_ms"] = first
        facts["plots"] = b.eval("document.querySelectorAll('.uplot').length")
        facts["spans"] = b.eval("document.querySelectorAll('#t4-band .t4-span').length")
        facts["lane_plots"] = b.eval("document.querySelectorAll('.t4-lanes').length")
        facts["lanes"] = b.eval("(() => { const d = JSON.parse(document.getElementById("
                                "'t4-data').textContent); return d.lanes.length; })()")
        facts["errors_shown"] = b.eval("document.getElementById('t4-errors').textContent")
        facts["health"] = b.eval("Object.fromEntries(Array.from(document.querySelectorAll("
                                 "'#t4-health li')).map(l => [l.id.slice(5), l.className]))")
        facts["text"] = b.eval("document.body.innerText.length")
        facts["console_errors"] = console_errors(b)
        facts["requests"] = requests(b, url)
        if a.probe_fetch:
            facts["probe_fetch"] = b.eval(PROBE_FETCH)
            b.pump(0.5)
            facts["probe_requests"] = requests(b, url)
        if a.summary:
            facts["table_rows"] = compare_tables(b.eval(DOM_TABLES), a.summary)
        if a.text:
            if a.text not in b.eval("document.body.innerText"):
                problems.append("the page does not show %r" % a.text)
        shot = base64.b64decode(b.call("Page.captureScreenshot", format="png")["data"])
        if a.screenshot:
            with open(a.screenshot, "wb") as f:
                f.write(shot)
        facts["colours"], facts["inked"] = variety(shot)
    finally:
        b.close()
    if facts["console_errors"]:
        problems.append("console errors: %s" % facts["console_errors"])
    if facts["errors_shown"]:
        problems.append("the page shows errors: %s" % facts["errors_shown"])
    if facts["requests"]:
        problems.append("the page asked the network for %s" % facts["requests"])
    if a.probe_fetch:
        if facts["probe_fetch"] != "refused by connect-src" or facts["probe_requests"]:
            problems.append("an http fetch from the page was not refused: %s" % facts["probe_fetch"])
    if a.plots == "summary":
        with open(a.summary, encoding="utf-8", errors="replace") as f:
            a.plots = summary_columns(f.read()) + facts["lane_plots"]
    for key in ("plots", "spans", "lanes"):
        want = getattr(a, key)
        want = int(want) if want is not None else None
        if want is not None and facts[key] != want:
            problems.append("%s: %s in the page, %d expected" % (key, facts[key], want))
    for ids, cls in ((a.warn, "warn"), (a.ok, "ok")):
        for i in filter(None, (ids or "").split(",")):
            if facts["health"].get(i) != cls:
                problems.append("health %s: %s, expected %s" % (i, facts["health"].get(i), cls))
    if facts["colours"] < 16 or facts["inked"] < 0.05:
        problems.append("the screenshot looks blank: %d colours, %.1f%% not white"
                        % (facts["colours"], 100 * facts["inked"]))
    print(json.dumps(facts))


class KindTables(html.parser.HTMLParser):
    """The report's kind tables, and its script elements' types."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tables, self.scripts, self.cell, self.where = [], [], None, None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "script":
            self.scripts.append(attrs.get("type", "text/javascript"))
        elif tag == "table" and attrs.get("class") == "t4-kind":
            self.tables.append({"caption": "", "rows": []})
            self.where = "table"
        elif self.where and tag == "caption":
            self.cell = ""
        elif self.where and tag == "tbody":
            self.where = "body"
        elif self.where == "body" and tag == "tr":
            self.tables[-1]["rows"].append([])
        elif self.where == "body" and tag == "td":
            self.cell = ""

    def handle_endtag(self, tag):
        if tag == "table":
            self.where = None
        elif self.where and tag == "caption":
            self.tables[-1]["caption"], self.cell = self.cell, None
        elif self.where == "body" and tag == "td":
            self.tables[-1]["rows"][-1].append(self.cell)
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data


def cmd_tables(a):
    with open(a.report, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        problems.append("the report is not UTF-8: %s" % e)
        text = raw.decode("utf-8", "replace")
    p = KindTables()
    p.feed(text)
    if p.scripts != ["application/json", "text/javascript", "text/javascript"]:
        problems.append("script elements %s: expected the data, uPlot and the report's" % p.scripts)
    rows = compare_tables(p.tables, a.summary)
    print(json.dumps({"tables": len(p.tables), "rows": rows}))


def cmd_time(a):
    best = None
    for _ in range(a.runs):
        b = Browser(1400, 1000, 120)
        try:
            _, first = load(b, a.report, 120)
        finally:
            b.close()
        if first is not None and (best is None or first < best):
            best = first
    print(json.dumps({"first_draw_ms": best}))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    o = sub.add_parser("open")
    o.add_argument("report")
    o.add_argument("--summary")
    o.add_argument("--plots", help="a number, or 'summary': one per headline metric column"
                   " of the summary's kind tables, and the lanes")
    o.add_argument("--spans", type=int)
    o.add_argument("--lanes", type=int)
    o.add_argument("--warn")
    o.add_argument("--ok")
    o.add_argument("--text")
    o.add_argument("--screenshot")
    o.add_argument("--window", default="1400x1000", help="WIDTHxHEIGHT of the page")
    o.add_argument("--timeout", type=float, default=120)
    o.add_argument("--probe-fetch", action="store_true")
    tb = sub.add_parser("tables")
    tb.add_argument("report")
    tb.add_argument("summary")
    t = sub.add_parser("time")
    t.add_argument("report")
    t.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    if not os.path.exists(a.report):
        sys.exit("report_check.py: %s: no such file" % a.report)
    {"open": cmd_open, "tables": cmd_tables, "time": cmd_time}[a.cmd](a)
    if problems:
        for p in problems:
            print("PROBLEM: " + p)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
