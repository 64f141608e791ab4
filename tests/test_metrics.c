/* test_metrics.c - `record --metrics-listen` (suite "metrics"): the
 * Prometheus endpoint of a simulated Tegra410 recording, scraped by curl
 * in every condition (malformed requests, stalled and half-sent
 * connections, 200 scrapes at once, a port in use) and by a real
 * Prometheus server (tests/prom_check.py: Debian's prometheus, scraping
 * every second; its rate() of each UCF PMU's read bandwidth must equal
 * what `decode` says of the same span within 2%).
 *
 * Whether the endpoint costs the recording overruns is a measurement on
 * a loaded machine, so it lives in `make bench` (docs/PERFORMANCE.md),
 * not here.
 */
#include "cli_testutil.h"
#include "probe.h"

#include <stdlib.h>
#include <string.h>

/* Shell: a simulated recording serving /metrics on a free port, $P once
 * it has said which (killed when the shell exits). */
#define RECORD_ON_A_FREE_PORT                                                                      \
	"\"$B\" record --sim --backend pwrite --metrics-listen 127.0.0.1:0 -o s.t4t "              \
	"2> rec.err & rec=$!; trap 'kill -9 $rec 2>/dev/null' EXIT; "                               \
	"for i in $(seq 1200); do P=$(sed -n 's/.*(port \\([0-9]*\\)).*/\\1/p' "                \
	"rec.err); [ -n \"$P\" ] && break; sleep 0.05; done; "

/* A port some other program holds: record refuses it at once, before
 * its command runs or a log exists; bad addresses likewise. */
Test(metrics, a_port_in_use_stops_record_before_it_starts, .timeout = 120)
{
	struct run r;

	t4t_need_cmd("python3");
	tmpdir(&r);
	sh_in_dir(&r, "python3 -c 'import socket, time\n"
		  "s = socket.socket(); s.bind((\"127.0.0.1\", 0)); s.listen()\n"
		  "print(s.getsockname()[1], flush=True); time.sleep(60)' > port & py=$!; "
		  "for i in $(seq 600); do [ -s port ] && break; sleep 0.05; done; P=$(cat port); "
		  "\"$B\" record -q --sim --backend pwrite --metrics-listen 127.0.0.1:$P -o s.t4t -- touch ran "
		  "2> err; echo rc=$?; sed \"s/:$P:/:PORT:/\" err; kill $py; wait $py; "
		  "ls; \"$B\" record -q --sim --backend pwrite --metrics-listen nowhere -d 10ms -o s.t4t; "
		  "echo rc=$?; \"$B\" record -q --sim --backend pwrite --metrics-listen 127.0.0.1:99999 -d 10ms "
		  "-o s.t4t; echo rc=$?; for a in +0 -0 ' 0'; do \"$B\" record -q --sim --backend pwrite "
		  "--metrics-listen \"127.0.0.1:$a\" -d 10ms -o s.t4t; echo rc=$?; done; ls");
	cr_assert(strstr(r.out, "rc=2\nt410trace: --metrics-listen 127.0.0.1:PORT: Address already "
				"in use\n"), "%s", r.out);
	cr_assert(!strstr(r.out, "ran") && !strstr(r.out, "s.t4t"), "%s", r.out);
	cr_assert(!strstr(r.out, "rc=0"), "%s", r.out);
	cr_assert(strstr(r.out, "--metrics-listen nowhere:"), "%s", r.out);
	cr_assert(strstr(r.out, "--metrics-listen 127.0.0.1:99999:"), "%s", r.out);
	/* strtoul's sign and blanks are no port either (they were taken as 0) */
	cr_assert(strstr(r.out, "--metrics-listen 127.0.0.1:+0: the port is not"), "%s", r.out);
	cr_assert(strstr(r.out, "--metrics-listen 127.0.0.1:-0: the port is not"), "%s", r.out);
	cr_assert(strstr(r.out, "--metrics-listen 127.0.0.1: 0: the port is not"), "%s", r.out);
	cleanup(&r);
}

/* With -q nothing says which port the kernel chose for port 0: the control
 * socket's status does, and /metrics is served there. */
Test(metrics, status_says_the_port_quiet_record_does_not, .timeout = 120)
{
	struct run r;

	t4t_need_cmd("curl");
	tmpdir(&r);
	/* pwrite: where io_uring is missing (qemu-user) its warning is no
	 * error of this test's */
	sh_in_dir(&r, "\"$B\" record -q --sim --backend pwrite --metrics-listen 127.0.0.1:0 "
		   "-c c.sock -o s.t4t "
		   "2> rec.err & rec=$!; trap 'kill -9 $rec 2>/dev/null' EXIT; "
		   "for i in $(seq 1200); do P=$(\"$B\" ctl --control c.sock status 2>/dev/null | "
		   "sed -n 's/.* metrics_port=\\([0-9]*\\)$/\\1/p'); [ -n \"$P\" ] && break; "
		   "sleep 0.05; done; echo port=$P; curl -s -o /dev/null -w 'code %{http_code}\\n' "
		   "http://127.0.0.1:$P/metrics; kill -INT $rec; wait $rec; echo rc=$?; "
		   "echo err=$(wc -c < rec.err)");
	cr_assert(strstr(r.out, "code 200\nrc=0\nerr=0\n"), "%s", r.out);
	cr_assert(!strstr(r.out, "port=\n"), "%s", r.out);
	cleanup(&r);
}

/* The exposition (one group per family, at most 8 labels a series, no
 * series twice), HEAD answered without a body, 404 and 405, a malformed
 * request, stalled and half-sent connections, 200 scrapes at once: every well-formed scrape answered,
 * and the recording ends cleanly with its log. */
Test(metrics, scrapes_in_every_condition, .timeout = 240)
{
	struct run r;

	t4t_need_cmd("curl python3 xargs");
	tmpdir(&r);
	sh_in_dir(&r,
		   "\"$B\" record --sim --metrics-listen 127.0.0.1:0 -c c.sock -o s.t4t 2> rec.err "
		   "& rec=$!; trap 'kill -9 $rec $hold 2>/dev/null' EXIT; "
		   "for i in $(seq 1200); do P=$(sed -n 's/.*(port \\([0-9]*\\)).*/\\1/p' "
		   "rec.err); [ -n \"$P\" ] && break; sleep 0.05; done; U=http://127.0.0.1:$P; "
		   "for i in $(seq 1200); do curl -s -D hdr -o m.txt $U/metrics; "
		   "grep -q '^t410_pmu_latency_seconds' m.txt && break; sleep 0.1; done; "
		   "grep -i '^content-type' hdr | tr -d '\\r'; "
		   "python3 -c 'import re, sys\n"
		   "fams, seen, series, most = [], set(), set(), 0\n"
		   "for line in open(\"m.txt\"):\n"
		   "    if line.startswith(\"# TYPE \"):\n"
		   "        f = line.split()[2]\n"
		   "        assert f not in seen, \"family twice: \" + f\n"
		   "        seen.add(f); fams.append(f); continue\n"
		   "    if line.startswith(\"#\"): continue\n"
		   "    name, labels = re.match(r\"([a-z0-9_]+)(\\{.*\\})? \", line).groups()\n"
		   "    assert name == fams[-1], \"not in its group: \" + line\n"
		   "    key = name + (labels or \"\")\n"
		   "    assert key not in series, \"twice: \" + key\n"
		   "    series.add(key); most = max(most, (labels or \"\").count(\"=\\\"\"))\n"
		   "g = sum(k.startswith((\"t410_pmu_latency\", \"t410_pmu_freq\")) for k in series)\n"
		   "print(\"families\", len(fams), \"series\", len(series) - g, \"+\", g, "
		   "\"most labels\", most)\n"
		   "' > check.txt 2>&1; cat check.txt; "
		   "grep -c '^t410_pmu_bytes_total{.*pmu=\"nvidia_ucf_pmu_[01]\"' m.txt; "
		   "curl -s -o /dev/null -w 'other %{http_code}\\n' $U/other; "
		   "curl -s -o /dev/null -w 'post %{http_code}\\n' -d x $U/metrics; "
		   "curl -s -o /dev/null -w 'nul %{http_code}\\n' $U/metrics%00x; "
		   "curl -s -o /dev/null -w 'escaped %{http_code}\\n' $U/%6detrics; "
		   "curl -s -I -o /dev/null -w 'head %{http_code} %{size_download}\\n' $U/metrics; "
		   "python3 -c 'import socket, sys\n"
		   "s = socket.create_connection((\"127.0.0.1\", int(sys.argv[1])))\n"
		   "s.sendall(b\"NONSENSE\\r\\n\\r\\n\"); s.settimeout(20); d = s.recv(100)\n"
		   "print(\"bad\", d.split(b\"\\r\\n\")[0].decode() if d else \"closed\")' $P; "
		   /* held open during the scrapes: silent, half a request, garbage */
		   "python3 -c 'import socket, sys, time\n"
		   "c = [socket.create_connection((\"127.0.0.1\", int(sys.argv[1]))) for i in range(3)]\n"
		   "c[1].sendall(b\"GET /metrics HTTP/1.1\\r\\nHost: x\\r\\n\")\n"
		   "c[2].sendall(b\"\\xff\\x00junk\\r\\n\\r\\n\")\n"
		   "print(\"held\", flush=True); time.sleep(120)' $P > held & hold=$!; "
		   "for i in $(seq 600); do [ -s held ] && break; sleep 0.05; done; cat held; "
		   "seq 200 | xargs -P 50 -I{} curl -s -o /dev/null -w '%{http_code}\\n' --max-time 60 "
		   "$U/metrics | sort | uniq -c | sed 's/^ *//'; "
		   "curl -s -o /dev/null -w 'after %{http_code}\\n' $U/metrics; "
		   "kill $hold; wait $hold; kill -INT $rec; wait $rec; echo rc=$?; "
		   "\"$B\" info s.t4t > /dev/null && echo log-ok");
	cr_assert(strstr(r.out, "Content-Type: text/plain; version=0.0.4"), "%s", r.out);
	/* 230 totals and info series; the interval's gauges (at most 62) need
	 * two snapshots with samples between them */
	cr_assert(strstr(r.out, "families 13 series 230 + "), "%s", r.out);
	const char *g = strstr(r.out, " + ");
	cr_assert(g && atoi(g + 3) > 0 && atoi(g + 3) <= 62, "%s", r.out);
	const char *most = strstr(r.out, "most labels ");
	cr_assert(most && atoi(most + 12) <= 8 && atoi(most + 12) >= 6, "%s", r.out);
	cr_assert(strstr(r.out, "\n8\nother 404\npost 405\nnul 404\nescaped 200\nhead 200 0\n"),
		  "%s", r.out);
	cr_assert(strstr(r.out, "bad HTTP/1.1 400") || strstr(r.out, "bad closed"),
		  "a malformed request: %s", r.out);
	cr_assert(strstr(r.out, "held\n200 200\nafter 200\n"), "%s", r.out);
	cr_assert(strstr(r.out, "rc=0\nlog-ok"), "%s", r.out);
	cleanup(&r);
}

/* A client trickling its request a byte every half second (slowloris)
 * is closed 10 s after it connected, although it is never idle for 10 s
 * (libmicrohttpd's own timeout); a scraper keeping its connection alive,
 * one request every 2 s, is served on that one connection throughout: 7
 * requests, the last 12 s after it connected, past the 10 s a server
 * counting from the connection would allow. */
Test(metrics, a_trickling_request_is_closed_a_kept_alive_scraper_is_not, .timeout = 180)
{
	struct run r;

	t4t_need_cmd("python3");
	tmpdir(&r);
	sh_in_dir(&r,
		   RECORD_ON_A_FREE_PORT
		   "python3 -c 'import http.client, socket, sys, threading, time\n"
		   "port = int(sys.argv[1])\n"
		   "def keep():\n"
		   "    c = http.client.HTTPConnection(\"127.0.0.1\", port, timeout=30)\n"
		   "    n = 0\n"
		   "    for i in range(7):\n"
		   "        c.request(\"GET\", \"/metrics\"); r = c.getresponse(); r.read()\n"
		   "        n += r.status == 200; time.sleep(2)\n"
		   "    print(\"kept\", n, flush=True)\n"
		   "t = threading.Thread(target=keep); t.start()\n"
		   "s = socket.create_connection((\"127.0.0.1\", port)); t0 = time.monotonic()\n"
		   "s.sendall(b\"GET /metrics HTTP/1.1\\r\\nX-Slow: \")\n"
		   "res = \"open\"\n"
		   "while time.monotonic() - t0 < 60:\n"
		   "    try:\n"
		   "        s.sendall(b\"a\"); time.sleep(0.5)\n"
		   "    except OSError:\n"
		   "        res = \"closed\"; break\n"
		   "t.join()\n"
		   "print(\"trickler\", res, \"early\" if time.monotonic() - t0 < 9.5 else \"\")' $P; "
		   "kill -INT $rec; wait $rec; echo rc=$?");
	cr_assert(strstr(r.out, "kept 7\n"), "%s", r.out);
	cr_assert(strstr(r.out, "trickler closed \n"), "%s", r.out);
	cr_assert(strstr(r.out, "rc=0"), "%s", r.out);
	cleanup(&r);
}

/* A flood of stalled connections from one host (200 of the 256 allowed,
 * each with half a request) is cut short: while 128 or more are open, each
 * may go 1 s without a whole request, not 10 s. So at least 200 - 127 of
 * them are closed within 9.5 s of connecting (without the pressure rule
 * none is closed before 10 s), and a scrape made during the flood is
 * answered. */
Test(metrics, a_flood_of_stalled_connections_is_cut_short, .timeout = 180)
{
	struct run r;

	t4t_need_cmd("python3");
	tmpdir(&r);
	sh_in_dir(&r,
		   RECORD_ON_A_FREE_PORT
		   "python3 -c 'import http.client, select, socket, sys, time\n"
		   "port = int(sys.argv[1])\n"
		   "at = {}\n"
		   "for i in range(200):\n"
		   "    s = socket.create_connection((\"127.0.0.1\", port))\n"
		   "    s.sendall(b\"GET /metrics HTTP/1.1\\r\\nX-Stalled: \"); at[s] = time.monotonic()\n"
		   "c = http.client.HTTPConnection(\"127.0.0.1\", port, timeout=60)\n"
		   "c.request(\"GET\", \"/metrics\"); print(\"scrape\", c.getresponse().status)\n"
		   "early = 0\n"
		   "end = time.monotonic() + 15\n"
		   "while at and time.monotonic() < end:\n"
		   "    for s in select.select(list(at), [], [], 0.2)[0]:\n"
		   "        try:\n"
		   "            gone = s.recv(1) == b\"\"\n"
		   "        except OSError:\n"
		   "            gone = True\n"
		   "        if gone:\n"
		   "            early += time.monotonic() - at.pop(s) < 9.5; s.close()\n"
		   "print(\"closed early\", \"enough\" if early >= 73 else early)' $P; "
		   "kill -INT $rec; wait $rec; echo rc=$?");
	cr_assert(strstr(r.out, "scrape 200\n"), "%s", r.out);
	cr_assert(strstr(r.out, "closed early enough\n"), "%s", r.out);
	cr_assert(strstr(r.out, "rc=0"), "%s", r.out);
	cleanup(&r);
}

/* 300 stalled connections (more than the endpoint's 256 at once, the rest
 * in the kernel's queue; stopped once the recorder holds 256 more fds)
 * when the recording is stopped: the endpoint closes every one as it
 * stops, well before its own 10 s timeout could close them. At 256 its
 * thread, which then does not watch the listening socket, never heard of
 * the stop: record's exit waited 10 s for the first connection's timeout. */
Test(metrics, stalled_connections_at_the_limit_do_not_hold_the_exit, .timeout = 180)
{
	struct run r;

	t4t_need_cmd("python3");
	if (access("/proc/self/fd", R_OK))
		cr_skip_test("no /proc/self/fd here (the recorder's connections uncounted)");
	tmpdir(&r);
	sh_in_dir(&r,
		   RECORD_ON_A_FREE_PORT
		   "python3 -c 'import os, select, signal, socket, sys, time\n"
		   "port, rec = int(sys.argv[1]), int(sys.argv[2])\n"
		   "fds = lambda: len(os.listdir(\"/proc/%d/fd\" % rec))\n"
		   "n0, t0 = fds(), time.monotonic()\n"
		   "held = set()\n"
		   "for i in range(300):\n"
		   "    s = socket.create_connection((\"127.0.0.1\", port))\n"
		   "    s.sendall(b\"GET /metrics HTTP/1.1\\r\\nX-Stalled: \"); held.add(s)\n"
		   "while fds() < n0 + 256 and time.monotonic() < t0 + 5:\n"
		   "    time.sleep(0.01)\n"
		   "os.kill(rec, signal.SIGINT)\n"
		   "end = time.monotonic() + 60\n"
		   "while held and time.monotonic() < end:\n"
		   "    for s in select.select(list(held), [], [], 0.2)[0]:\n"
		   "        try:\n"
		   "            gone = s.recv(1) == b\"\"\n"
		   "        except OSError:\n"
		   "            gone = True\n"
		   "        if gone:\n"
		   "            held.discard(s); s.close()\n"
		   "print(\"open\", len(held), \"closed early\" if time.monotonic() - t0 < 9.5 "
		   "else \"closed late\")' $P $rec; "
		   "wait $rec; echo rc=$?");
	cr_assert(strstr(r.out, "open 0 closed early\nrc=0\n"), "%s", r.out);
	cleanup(&r);
}

/* A real Prometheus server (tests/prom_check.py): its rate() of each UCF
 * PMU's read bandwidth equals decode's over the same span within 2%, and
 * the phase shows after `ctl bookmark`. */
Test(metrics, prometheus_rates_equal_decode, .timeout = 300)
{
	struct run r;
	char script[PATH_MAX];

	t4t_need_cmd("python3");
	tmpdir(&r);
	sh_in_dir(&r, "");
	sh(&r, "python3 '%s' '%s' '%s'; echo rc=$?", cli_repo_file("tests/prom_check.py", script),
	   bin(), r.dir);
	if (strstr(r.out, "rc=77"))
		cr_skip_test("%.200s", r.out);
	cr_assert(strstr(r.out, "phase prom_phase seen\n"), "%s", r.out);
	cr_assert(strstr(r.out, "nvidia_ucf_pmu_0: Prometheus ") &&
		  strstr(r.out, "nvidia_ucf_pmu_1: Prometheus "), "%s", r.out);
	cr_assert(strstr(r.out, "rc=0\n"), "%s", r.out);
	cleanup(&r);
}
