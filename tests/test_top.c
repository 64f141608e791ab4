/* test_top.c - `t410trace top` and `record --top` (suite "top"): the live
 * view of a running recording of the simulated Tegra410, in plain mode
 * (stdout not a terminal: CSV lines) and in a real terminal (tmux: keys,
 * the bookmark's change, the terminal given back), and what it says
 * about a missing socket, a socket that is not a recorder's, and a
 * recording that ends.
 *
 * No test waits for a fixed time: each polls (bounded) for what it
 * expects, so a loaded machine makes them slower, never wrong.
 */
#include "cli_testutil.h"
#include "probe.h"

#include <stdlib.h>
#include <string.h>

/* A simulated recording with its control socket c.sock, in the
 * background ($rec), once its first trigger is in. */
#define START_RECORDER                                                                      \
	"\"$B\" record -q --sim -c c.sock -o s.t4t & rec=$!; "                              \
	"for i in $(seq 1200); do \"$B\" ctl --control c.sock status 2>/dev/null | "         \
	"grep -q 'triggers=[1-9]' && break; sleep 0.05; done; "
#define END_RECORDER "kill -INT $rec; wait $rec; echo rec_rc=$?; "

/* The number of PMUs a plain header names (one rd_GBps column each). */
static int header_pmus(const char *csv)
{
	int n = 0;

	for (const char *p = csv; (p = strstr(p, ":rd_GBps")) && p < strchr(csv, '\n'); p++)
		n++;
	return n;
}

/* Plain mode: a header naming every PMU of the simulated Tegra410, then
 * one line per refresh with the bookmark in force and rates of the
 * decoder's formulas. */
Test(top, plain_lines_name_every_pmu_and_the_phase, .timeout = 180)
{
	struct run r;
	char *csv;

	tmpdir(&r);
	sh_in_dir(&r, START_RECORDER
		  "\"$B\" ctl --control c.sock bookmark top_phase > /dev/null; "
		  /* a view's first line has no rates nor phase yet: its second one */
		  /* -c, as record names the socket */
		  "for i in $(seq 300); do \"$B\" top -c c.sock -i 100ms -n 2 > one.csv; "
		  "tail -n 1 one.csv | grep -q '^[0-9.]*,top_phase,' && break; done; "
		  /* the first line whose UCF read bandwidth is a number ends it */
		  "\"$B\" top --control c.sock -i 200ms -n 150 | awk -F, 'NR == 1 { print; "
		  "for (i = 1; i <= NF; i++) if ($i == \"nvidia_ucf_pmu_0:rd_GBps\") c = i; next } "
		  "{ print } $c > 0 { exit }' > t.csv; "
		  END_RECORDER "echo ---; cat t.csv");
	cr_assert(strstr(r.out, "rec_rc=0\n---\n"), "%s", r.out);
	csv = strstr(r.out, "---\n") + 4;
	cr_assert(!strncmp(csv, "time_s,phase,triggers,overruns,dropped,read_failures,", 53),
		  "%s", csv);
	cr_assert_eq(header_pmus(csv), 34, "%s", csv);
	cr_assert(strstr(csv, "nvidia_ucf_pmu_1:rd_GBps") && strstr(csv, "nvidia_pcie_pmu_1_rc_5:"),
		  "%s", csv);
	const char *last = csv + strlen(csv) - 1;
	while (last > csv && last[-1] != '\n')
		last--;
	cr_assert(count_lines(csv) >= 3, "no line with a rate: %s", csv);
	cr_assert(strstr(last, ",top_phase,"), "the bookmark is not shown: %s", last);
	cleanup(&r);
}

/* Whether text has a number in exponent form (1.06234e+09). */
static bool has_exponent(const char *text)
{
	for (const char *p = text; p[0] && p[1] && p[2] && p[3]; p++)
		if (p[0] >= '0' && p[0] <= '9' && p[1] == 'e' && (p[2] == '+' || p[2] == '-') &&
		    p[3] >= '0' && p[3] <= '9')
			return true;
	return false;
}

/* Plain mode's numbers are written as decode's CSV writes them: nine
 * significant digits in plain decimal (a request rate said
 * "1.06234e+09"). */
Test(top, plain_numbers_are_decimals_as_in_decodes_csv, .timeout = 180)
{
	struct run r;
	const char *csv;

	tmpdir(&r);
	sh_in_dir(&r, START_RECORDER
		  /* until a line has a rate of a million or more (a request rate) */
		  "for i in $(seq 300); do \"$B\" top --control c.sock -i 100ms -n 3 > n.csv; "
		  "tail -n +2 n.csv | grep -Eq ',([0-9]{7}|[0-9.]+e[+]0[6-9])' && break; done; "
		  END_RECORDER "tail -n +2 n.csv | grep -Eq ',[0-9]{7}' && echo seven digits; "
		  "echo ---; cat n.csv");
	cr_assert(strstr(r.out, "rec_rc=0\n"), "%s", r.out);
	csv = strstr(r.out, "---\n") + 4;
	cr_assert(has_exponent("1.06234e+09"));
	cr_assert(strstr(r.out, "\nseven digits\n---\n"), "%s", r.out);
	cr_assert_not(has_exponent(csv), "%s", csv);
	cleanup(&r);
}

/* A client asking for "live" thousands of times a second costs the recorder
 * at most one snapshot every T4_LIVE_CTL_MIN_MS (50 ms): the answers between
 * are the last snapshot again. Counted against the flood's own elapsed time,
 * so a slow machine only makes fewer snapshots. */
#define LIVE_FLOOD_PY                                                                       \
	"import socket, sys, time\n"                                                        \
	"s = socket.socket(socket.AF_UNIX); s.connect('c.sock'); f = s.makefile('rb')\n"    \
	"seen = set(); n = 2000; t0 = time.monotonic()\n"                                   \
	"for i in range(n):\n"                                                              \
	"    s.sendall(b'live\\n'); head = f.readline().split()\n"                          \
	"    assert head[:2] == [b'ok', b'data'], head\n"                                    \
	"    data = f.read(int(head[2])); seen.add(data.split(b'\\n')[1])\n"                \
	"el = time.monotonic() - t0\n"                                                      \
	"print('asked=%d snapshots=%d allowed=%d' % (n, len(seen), int(el / 0.05) + 2))\n"

Test(top, a_flood_of_live_requests_takes_few_snapshots, .timeout = 180)
{
	struct run r;
	int asked, snaps, allowed;

	if (!t4t_have_cmds("python3"))
		cr_skip_test("needs python3 (the flooding client)");
	tmpdir(&r);
	sh_in_dir(&r, "printf '%s' \"" LIVE_FLOOD_PY "\" > flood.py; " START_RECORDER
		  "python3 flood.py; " END_RECORDER);
	const char *line = strstr(r.out, "asked=");
	cr_assert_not_null(line, "%s", r.out);
	cr_assert_eq(sscanf(line, "asked=%d snapshots=%d allowed=%d", &asked, &snaps, &allowed), 3);
	cr_assert(strstr(r.out, "rec_rc=0\n"), "%s", r.out);
	cr_assert(snaps >= 1 && snaps <= allowed, "%d answers, %d snapshots (at most %d): %s",
		  asked, snaps, allowed, r.out);
	cleanup(&r);
}

/* top whose reader goes away (`top | head`) stops at its next line with
 * 141, as a shell reports a SIGPIPE death: it does not run out its -n. */
Test(top, a_reader_gone_ends_it, .timeout = 180)
{
	struct run r;

	tmpdir(&r);
	sh_in_dir(&r, START_RECORDER
		  "{ \"$B\" top --control c.sock -i 100ms -n 100000; echo top_rc=$? > rc.txt; } |"
		  " head -n 2 > /dev/null; " END_RECORDER "cat rc.txt");
	cr_assert(strstr(r.out, "rec_rc=0\ntop_rc=141\n"), "%s", r.out);
	cleanup(&r);
}

/* A recording that ends under top: top says so and exits 0. */
Test(top, says_when_the_recording_ends, .timeout = 180)
{
	struct run r;

	tmpdir(&r);
	sh_in_dir(&r, START_RECORDER
		  "\"$B\" top --control c.sock -i 200ms > t.csv 2> t.err & top=$!; "
		  "for i in $(seq 600); do [ \"$(wc -l < t.csv)\" -ge 2 ] && break; sleep 0.05; "
		  "done; " END_RECORDER "wait $top; echo top_rc=$?; cat t.err");
	cr_assert(strstr(r.out, "rec_rc=0\ntop_rc=0\nt410trace top: the recording at c.sock "
				"ended\n"), "%s", r.out);
	cleanup(&r);
}

/* The triggers of the recording at c.sock ($B ctl status), in $1. */
#define TRIGGERS_NOW                                                                        \
	"trig() { \"$B\" ctl --control c.sock status | sed 's/.*triggers=\\([0-9]*\\).*/\\1/'; }; "

/* Stopped for a second of the recording's time (a thousand triggers), top
 * goes on an interval at a time: the refreshes it missed are not made up
 * for in a burst, which printed the recorder's last snapshot again and
 * again (T4_LIVE_CTL_MIN_MS), lines with one time_s. */
Test(top, a_stopped_top_does_not_catch_up_in_a_burst, .timeout = 180)
{
	struct run r;

	tmpdir(&r);
	sh_in_dir(&r, START_RECORDER TRIGGERS_NOW
		  "\"$B\" top --control c.sock -i 100ms -n 12 > t.csv & top=$!; "
		  "for i in $(seq 600); do [ \"$(wc -l < t.csv)\" -ge 3 ] && break; sleep 0.05; "
		  "done; kill -STOP $top; t0=$(trig); "
		  "for i in $(seq 1200); do [ $(trig) -ge $((t0 + 1000)) ] && break; sleep 0.05; "
		  "done; kill -CONT $top; wait $top; echo top_rc=$?; "
		  "awk -F, 'NR > 1 && $1 !~ /^#/ { n++; if (n > 1 && $1 <= last) bad++; last = $1 } "
		  "END { print \"lines\", n, \"not after the one before\", bad + 0 }' t.csv; "
		  END_RECORDER);
	cr_assert(strstr(r.out, "top_rc=0\nlines 12 not after the one before 0\nrec_rc=0\n"), "%s",
		  r.out);
	cleanup(&r);
}

/* The recording top watches ends and another takes its socket before
 * top's next refresh (top stopped meanwhile): that recording has ended
 * all the same. top went on with the new one, its rates over the two
 * recordings' totals. */
Test(top, a_new_recorder_at_the_path_is_not_the_recording_watched, .timeout = 180)
{
	struct run r;

	tmpdir(&r);
	sh_in_dir(&r, START_RECORDER
		  "\"$B\" top --control c.sock -i 100ms -n 30 > t.csv 2> t.err & top=$!; "
		  "for i in $(seq 600); do [ \"$(wc -l < t.csv)\" -ge 2 ] && break; sleep 0.05; "
		  "done; kill -STOP $top; " END_RECORDER
		  "\"$B\" record -q --sim -c c.sock -o s2.t4t & rec=$!; "
		  "for i in $(seq 1200); do \"$B\" ctl --control c.sock status 2>/dev/null | "
		  "grep -q 'triggers=[1-9]' && break; sleep 0.05; done; "
		  "kill -CONT $top; wait $top; echo top_rc=$?; cat t.err; " END_RECORDER);
	cr_assert(strstr(r.out, "top_rc=0\nt410trace top: the recording at c.sock ended\n"
				"rec_rc=0\n"), "%s", r.out);
	cleanup(&r);
}

/* -i 1000h (in -i's range, up to 277777h): top waits for its next
 * refresh without using the CPU. Its wait in ms overflowed an int, and the
 * negative wait returned at once: a loop spinning on a CPU for 1000 h.
 * Its CPU time (utime + stime, /proc) is read over a thousand triggers of
 * the recording (a second at least): a spinning top had a tick of each
 * one, an idle one none. */
Test(top, a_long_interval_does_not_spin, .timeout = 180)
{
	struct run r;

	if (access("/proc/self/stat", R_OK))
		cr_skip_test("no /proc/self/stat here (a process's CPU time unknown)");
	tmpdir(&r);
	sh_in_dir(&r, START_RECORDER TRIGGERS_NOW
		  "cpu() { awk '{ print $14 + $15 }' /proc/$top/stat; }; "
		  "\"$B\" top --control c.sock -i 1000h -n 2 > t.csv & top=$!; "
		  "for i in $(seq 600); do [ -s t.csv ] && break; sleep 0.05; done; "
		  "c0=$(cpu); t0=$(trig); "
		  "for i in $(seq 1200); do [ $(trig) -ge $((t0 + 1000)) ] && break; sleep 0.05; "
		  "done; echo ticks_lt_25=$(( $(cpu) - c0 < 25 )); kill $top; wait $top; "
		  END_RECORDER);
	cr_assert(strstr(r.out, "ticks_lt_25=1\n"), "%s", r.out);
	cr_assert(strstr(r.out, "rec_rc=0\n"), "%s", r.out);
	cleanup(&r);
}

/* A recorder that stops answering after top's first refresh (stopped
 * here: SIGSTOP) has not ended: top says it did not answer and exits 1.
 * It said "the recording at c.sock ended" and exited 0. */
Test(top, a_recorder_that_stops_answering_has_not_ended, .timeout = 180)
{
	struct run r;

	tmpdir(&r);
	sh_in_dir(&r, START_RECORDER
		  "\"$B\" top --control c.sock -i 100ms > t.csv 2> t.err & top=$!; "
		  "for i in $(seq 600); do [ \"$(wc -l < t.csv)\" -ge 2 ] && break; sleep 0.05; "
		  "done; kill -STOP $rec; wait $top; echo top_rc=$?; cat t.err; kill -CONT $rec; "
		  END_RECORDER);
	cr_assert(strstr(r.out, "top_rc=1\nt410trace top: c.sock: the recorder did not answer "
				"within 5000 ms\nrec_rc=0\n"), "%s", r.out);
	cleanup(&r);
}

/* No recorder, a socket that is not a recorder's, one that never
 * answers, bad usage: one line each and the exit status the help says.
 * The fake servers listen before their socket gets the name top is
 * given (bound under another, then renamed): a connect between bind and
 * listen is refused, and once failed this test under load. */
Test(top, refuses_what_is_not_a_recorder, .timeout = 120)
{
	struct run r;

	t4t_need_cmd("python3");
	tmpdir(&r);
	sh_in_dir(&r, "\"$B\" top --control nosuch.sock -n 1; echo rc=$?; "
		  "python3 -c 'import os, socket, sys, time\n"
		  "s = socket.socket(socket.AF_UNIX); s.bind(\"fake.tmp\"); s.listen(4)\n"
		  "os.rename(\"fake.tmp\", \"fake.sock\")\n"
		  "c0, _ = s.accept(); c0.recv(100); c0.sendall(b\"ok data 6\\nbogus\\n\")\n"
		  "c, _ = s.accept(); c.recv(100); c.sendall(b\"hello there\\n\")\n"
		  "c2, _ = s.accept(); c2.recv(100); time.sleep(8)' & py=$!; "
		  "for i in $(seq 600); do [ -S fake.sock ] && break; sleep 0.05; done; "
		  "\"$B\" top --control fake.sock -n 1; echo rc=$?; "
		  "\"$B\" top --control fake.sock -n 1; echo rc=$?; "
		  "\"$B\" top --control fake.sock -n 1; echo rc=$?; kill $py; wait $py; "
		  "\"$B\" top --control c.sock -i 10ms; echo rc=$?; "
		  "\"$B\" top --control c.sock -i 18446744073709551615ns; echo rc=$?; "
		  "\"$B\" top --control c.sock -i 5; echo rc=$?; "
		  "\"$B\" top -n 1; echo rc=$?");
	cr_assert(strstr(r.out, "t410trace top: no recorder listening at nosuch.sock\nrc=1\n"),
		  "%s", r.out);
	cr_assert(strstr(r.out, "t410trace top: fake.sock: live snapshot, line 1: not a t410trace "
				"live snapshot\nrc=1\n"), "%s", r.out);
	cr_assert(strstr(r.out, "t410trace top: fake.sock: hello there\nrc=1\n"), "%s", r.out);
	cr_assert(strstr(r.out, "t410trace top: fake.sock: the recorder did not answer within "
				"5000 ms\nrc=1\n"), "%s", r.out);
	cr_assert(strstr(r.out, "-i '10ms': a duration from 100ms to 277777h"), "%s", r.out);
	/* a number without its unit is told the units, as record's and
	 * decode's durations are (it was told the range only) */
	cr_assert(strstr(r.out, "-i '5': a duration from 100ms to 277777h, with a unit (ns, us, "
				"ms, s, m (or min), h)"), "%s", r.out);
	/* 2^64 ns was told "a duration of at least 100ms" */
	cr_assert(strstr(r.out, "-i '18446744073709551615ns': a duration from 100ms to 277777h"),
		  "%s", r.out);
	cr_assert(strstr(r.out, "no recorder given: use --control PATH or set "
				"T410TRACE_CONTROL"), "%s", r.out);
	cr_assert(!strstr(r.out, "rc=0"), "%s", r.out);
	cleanup(&r);
}

/* What top's errors quote as typed (the socket's path, -i's value, an
 * operand) may hold any bytes: shown as \xNN (a line break in a path:
 * a space, as every message's), one line that moves no cursor. They
 * went to the terminal raw. */
Test(top, errors_show_the_input_as_text, .timeout = 120)
{
	struct run r;

	t4t_need_cmd("python3");
	tmpdir(&r);
	sh_in_dir(&r, "\"$B\" top --control \"$(printf 'no\\377\\nsock')\" -n 1; echo rc=$?; "
		  "python3 -c 'import os, socket\n"
		  "s = socket.socket(socket.AF_UNIX); s.bind(b\"f.tmp\"); s.listen(4)\n"
		  "os.rename(b\"f.tmp\", b\"f\\xff\\nk.sock\")\n"
		  "c, _ = s.accept(); c.recv(100); c.sendall(b\"hello there\\n\")' & py=$!; "
		  "for i in $(seq 600); do [ -S \"$(printf 'f\\377\\nk.sock')\" ] && break; "
		  "sleep 0.05; done; "
		  "\"$B\" top --control \"$(printf 'f\\377\\nk.sock')\" -n 1; echo rc=$?; "
		  "wait $py; "
		  "\"$B\" top -i \"$(printf '1\\377\\nx')\"; echo rc=$?; "
		  "\"$B\" top --control x \"$(printf 'a\\377\\033[2J\\nb')\"; echo rc=$?");
	cr_assert_str_eq(r.out,
			 "t410trace top: no recorder listening at no\\xff sock\nrc=1\n"
			 "t410trace top: f\\xff k.sock: hello there\nrc=1\n"
			 "t410trace top: -i '1\\xff\\x0ax': a duration from 100ms to 277777h, with "
			 "a unit (ns, us, ms, s, m (or min), h) (see 't410trace top --help')\nrc=2\n"
			 "t410trace top: unexpected argument 'a\\xff\\x1b[2J\\x0ab' "
			 "(see 't410trace top --help')\nrc=2\n");
	cleanup(&r);
}

/* A PMU's name escaped into more than a row holds (14 control characters
 * as \xNN, then a 4-byte character across the cut): cut at a whole
 * character, in the view and in the CSV lines, which stay UTF-8 (the
 * escaped name was cut bytewise, and the terminal got 3 bytes of 4). */
Test(top, a_long_escaped_name_is_cut_at_a_whole_character, .timeout = 180)
{
	struct run r;
	char layouts[PATH_MAX];

	t4t_need_cmd("python3");
	cr_assert_not_null(cli_repo_file("tests/fixtures/sysfs/make_layouts.sh", layouts));
	tmpdir(&r);
	snprintf(r.out, sizeof(r.out),
		 "sh '%s' lay generic > /dev/null && cd lay/generic && mv nvidia_uncore_pmu_2 "
		 "\"$(printf '\\001\\001\\001\\001\\001\\001\\001\\001\\001\\001\\001\\001\\001\\001"
		 "abcd\\360\\237\\230\\200z')\" && cd ../.. && "
		 "\"$B\" record -q --sim --sysfs-root lay/generic -c c.sock -o s.t4t & rec=$!; "
		 "for i in $(seq 1200); do \"$B\" ctl --control c.sock status 2>/dev/null | "
		 "grep -q 'triggers=[1-9]' && break; sleep 0.05; done; "
		 /* rows come with rates: until the PMU has some (bounded) */
		 "for i in $(seq 100); do \"$B\" top --control c.sock -i 100ms -n 3 > plain.csv; "
		 "grep -q abcd plain.csv && break; done; "
		 "if command -v script > /dev/null; then for i in $(seq 100); do script -qec "
		 "\"'$B' top --control c.sock -i 100ms -n 3\" /dev/null > view.txt; "
		 "grep -q abcd view.txt && break; done; fi; "
		 END_RECORDER
		 "python3 - <<'EOF'\n"
		 "import os\n"
		 "cut = '\\\\x01' * 14 + 'abcd'\n"
		 "for f in ('plain.csv', 'view.txt'):\n"
		 "    if not os.path.exists(f):\n"
		 "        continue\n"
		 "    t = open(f, 'rb').read().decode('utf-8')\n"
		 "    assert cut in t and cut + '\\ufffd' not in t, (f, t[:300])\n"
		 "print('whole characters')\n"
		 "EOF\n",
		 layouts);
	char *line = strdup(r.out);
	cr_assert_not_null(line);
	sh_in_dir(&r, line);
	free(line);
	cr_assert(strstr(r.out, "rec_rc=0\n"), "%s", r.out);
	cr_assert(strstr(r.out, "whole characters\n"), "%s", r.out);
	cleanup(&r);
}

/* A tmux server of the test's own ($T, a long history), a pane running
 * pane.sh, and see PATTERN: polls the pane (bounded) until it shows it.
 * Each use starts a server on a socket of its own: `kill-server` returns
 * before the server is gone, and a new session on the same socket could
 * meet the dying one ("server exited unexpectedly"). */
#define TMUX_PANE                                                                           \
	"echo 'set -g history-limit 100000' > tmux.conf; tp=$((${tp:-0} + 1)); "            \
	"T=\"tmux -f $D/tmux.conf -S $D/tmux$tp.sock\"; "                                   \
	"$T new-session -d -x 200 -y 60 -s top \"sh '$D/pane.sh'\"; "                       \
	"see() { for i in $(seq 1200); do $T capture-pane -p -t top > pane.txt; "         \
	"grep -q -e \"$1\" pane.txt && return 0; sleep 0.05; done; echo \"never saw $1\"; " \
	"cat pane.txt; }; "
/* In pane.sh (inside single quotes): the terminal's canonical mode and
 * echo, one word a line (icanon or -icanon, echo or -echo). */
#define PANE_TTY_MODES                                                                     \
	"stty -a | tr \" ;\" \"\\n\\n\" | grep -x -e icanon -e -icanon -e echo -e -echo; "
#define WAIT_FOR(file) "for i in $(seq 1200); do [ -e " file " ] && break; sleep 0.05; done; "

/* record --top -- COMMAND in a terminal: the view is drawn there, and what
 * the command writes to that terminal meanwhile (it still writes to a
 * terminal) is held and shown, in order, when the view closes (q); then
 * the command's output goes straight through. Its lines went into the
 * view and were lost with the alternate screen. 50000 lines while the view
 * is up do not hold the command up. */
Test(top, record_top_holds_the_commands_output, .timeout = 180)
{
	struct run r;

	t4t_need_cmd("tmux");
	tmpdir(&r);
	sh_in_dir(&r, "printf '%s\\n' '\"$B\" record -q --sim --top -o s.t4t -- sh -c '\\''"
		  "echo before-view; [ -t 1 ] && echo stdout-a-tty; until [ -e go1 ]; do sleep 0.05; "
		  "done; seq 50000; echo during-view; echo during-err >&2; touch printed; "
		  "until [ -e go2 ]; do sleep 0.05; done; echo after-q'\\''; echo rec-rc=$?; "
		  "echo pane-done; sleep 120' > pane.sh; " TMUX_PANE
		  "see 'RD GB/s'; echo view-seen; touch go1; " WAIT_FOR("printed")
		  "$T capture-pane -p -t top > pane.txt; grep -q during pane.txt && echo torn; "
		  "$T send-keys -t top q; see during-err; "
		  "grep -v '^$' pane.txt | tail -n 4; touch go2; see pane-done; "
		  "grep -e after-q -e rec-rc pane.txt; "
		  "$T capture-pane -p -S - -t top | grep -e before-view -e stdout-a-tty; "
		  "$T kill-server; \"$B\" info s.t4t > /dev/null && echo log-ok");
	cr_assert(strstr(r.out, "view-seen\n"), "%s", r.out);
	cr_assert_null(strstr(r.out, "torn"), "%s", r.out);
	cr_assert(strstr(r.out, "\n49999\n50000\nduring-view\nduring-err\n"), "%s", r.out);
	cr_assert(strstr(r.out, "\nafter-q\nrec-rc=0\nbefore-view\nstdout-a-tty\nlog-ok\n"),
		  "%s", r.out);
	cleanup(&r);
}

/* The command's pty has the terminal's size, and follows it when the
 * terminal is resized (SIGWINCH): it kept the size it had at the start. */
Test(top, record_top_pty_follows_the_terminal_size, .timeout = 180)
{
	struct run r;

	t4t_need_cmd("tmux");
	tmpdir(&r);
	sh_in_dir(&r, "printf '%s\\n' '\"$B\" record -q --sim --top -o s.t4t -- sh -c '\\''"
		  "stty size <&1 > s0 && mv s0 s1; until [ -e go ]; do sleep 0.05; done; "
		  "for i in $(seq 1200); do stty size <&1 > s2; [ \"$(cat s2)\" = \"40 120\" ] && "
		  "break; sleep 0.05; done; touch done'\\''; echo rec-rc=$?; echo pane-done; "
		  "sleep 120' > pane.sh; " TMUX_PANE
		  "see 'RD GB/s'; echo view-seen; " WAIT_FOR("s1")
		  "$T resize-window -t top -x 120 -y 40; touch go; "
		  "see pane-done; $T kill-server; "
		  "echo start=$(cat s1) now=$(cat s2); grep rec-rc pane.txt");
	cr_assert(strstr(r.out, "view-seen\nstart=60 200 now=40 120\nrec-rc=0\n"), "%s", r.out);
	cleanup(&r);
}

/* Ctrl-Z in --top's view (a shell with job control: set -m) gives the
 * terminal back before record stops (main screen, cursor shown, canonical
 * mode and echo: it stayed in the view's mode), fg brings the view back,
 * and the command's end still ends it with its output shown. */
Test(top, record_top_ctrl_z_gives_the_terminal_back, .timeout = 180)
{
	struct run r;

	t4t_need_cmd("tmux");
	tmpdir(&r);
	sh_in_dir(&r, "printf '%s\\n' 'set -m; \"$B\" record -q --sim --top -o s.t4t -- sh -c '\\''"
		  "until [ -e go ]; do sleep 0.05; done; echo cmd-done'\\''; echo stopped-rc=$?; "
		  PANE_TTY_MODES
		  "until [ -e cont ]; do sleep 0.05; done; fg > /dev/null; "
		  "echo rec-rc=$?; echo pane-done; sleep 120' > pane.sh; " TMUX_PANE
		  "mode() { $T display -p -t top 'alt=#{alternate_on} cursor=#{cursor_flag}'; }; "
		  "see 'RD GB/s'; echo view-seen; mode; $T send-keys -t top C-z; "
		  /* the shell's lines on the pane: what record wrote before is there too */
		  "see '^-*echo$'; mode; grep -e stopped-rc -e icanon -e echo pane.txt; "
		  "touch cont; for i in $(seq 1200); do [ \"$(mode)\" = 'alt=1 cursor=0' ] && break; "
		  "sleep 0.05; done; see 'RD GB/s'; echo view-again; mode; touch go; "
		  "see pane-done; $T kill-server; "
		  "grep -e cmd-done -e rec-rc pane.txt");
	cr_assert(strstr(r.out, "view-seen\nalt=1 cursor=0\nalt=0 cursor=1\nstopped-rc=148\n"
				"icanon\necho\nview-again\nalt=1 cursor=0\ncmd-done\nrec-rc=0\n"),
		  "%s", r.out);
	cleanup(&r);
}

/* Awk over a pane's history: from the hold's count ("t410trace: --top: N
 * more bytes ... after the M above") to rec-rc, M + N + the bytes after the
 * count ("accounted="), the last line after it ("last="). */
#define HOLD_ACCOUNT                                                                        \
	"sed -n '/^t410trace: --top: /,/^rec-rc=/p' all.txt | awk '"                        \
	"NR == 1 { split($0, m, \"after the \"); n = $3 + m[2]; next } "                      \
	"/^rec-rc=/ { print \"accounted=\" n + late; print; next } "                         \
	"{ late += length($0) + 1; last = $0 } END { print \"last=\" last }'; "

/* Past the hold's limit (T410TRACE_HOLD_MAX: 1000 bytes here, 256 MiB by
 * default) what the command writes while the view is up is dropped from
 * there on, never a hole in the middle: the first 1000 bytes of seq 10000
 * (up to 277) are shown, then how many bytes after them were dropped, and
 * then what was still on its way when the view closed (the command's end
 * closes it), so that they make the 48904 bytes (seq's 48894 and
 * "tail-line\n") whatever the relay had read by then. The same where the
 * spool can take no more (a file size limit: a full $TMPDIR), said with
 * why, on a line of its own after a cut line; that output was lost
 * unsaid. */
Test(top, record_top_says_what_the_hold_dropped, .timeout = 180)
{
	struct run r;

	t4t_need_cmd("tmux");
	tmpdir(&r);
	/* --backend pwrite: under qemu-user (check-arm64) io_uring's absence
	 * is warned of on the terminal, and the hold would count that too */
	sh_in_dir(&r, "printf '%s\\n' 'T410TRACE_HOLD_MAX=1000 \"$B\" record -q --sim --top "
		  "--backend pwrite -o s.t4t -- sh -c '\\''until [ -e go ]; do sleep 0.05; done; "
		  "seq 10000; echo tail-line'\\''; "
		  "echo rec-rc=$?; echo pane-done; sleep 120' > pane.sh; " TMUX_PANE
		  "see 'RD GB/s'; echo view-seen; touch go; see pane-done; "
		  "$T capture-pane -p -S - -t top > all.txt; $T kill-server; "
		  "grep -v '^$' all.txt | grep -A2 -x 276; " HOLD_ACCOUNT
		  /* the spool's file limited to 16 blocks, its 4 KiB probe page fits */
		  "rm go; printf '%s\\n' 'trap \"\" XFSZ; ulimit -f 16; \"$B\" record -q --sim --top "
		  "--backend pwrite -o - -- sh -c '\\''until [ -e go ]; do sleep 0.05; done; seq 10000; echo tail-line'\\'' "
		  "> /dev/null; echo rec-rc=$?; echo pane-done; sleep 120' > pane.sh; " TMUX_PANE
		  "see 'RD GB/s'; echo view-seen; touch go; see pane-done; "
		  "$T capture-pane -p -S - -t top > all.txt; $T kill-server; "
		  "grep -o '(holding them in $TMPDIR: .*)' all.txt; " HOLD_ACCOUNT);
	cr_assert(strstr(r.out, "view-seen\n276\n277\nt410trace: --top: "), "%s", r.out);
	cr_assert(strstr(r.out, "(at most 1000 are held)\n"), "%s", r.out);
	cr_assert(strstr(r.out, "\naccounted=48904\nrec-rc=0\n"), "%s", r.out);
	const char *second = strstr(r.out, "(holding them in $TMPDIR: File too large)\n");
	cr_assert(second, "%s", r.out);
	cr_assert(strstr(second, "\naccounted=48904\nrec-rc=0\n"), "%s", r.out);
	for (const char *p = r.out; (p = strstr(p, "last=")); p++)
		cr_assert(!strncmp(p, "last=tail-line\n", 15) || !strncmp(p, "last=\n", 6),
			  "what came after the count is the output's end: %s", r.out);
	cleanup(&r);
}

/* A T410TRACE_HOLD_MAX that is no count of bytes is refused in one line
 * naming it, before anything is written, not taken quietly as the default;
 * nor is one in hex (0x10 was 16 bytes held): plain decimal, as the
 * launchers' variables. An empty one is unset, as every variable
 * t410trace reads (t4_env): the default, so record goes on (to say it has
 * no terminal here). */
Test(top, record_top_refuses_a_hold_limit_not_in_decimal, .timeout = 60)
{
	static const char *const bad[] = { "12x", "0x10", "0X10", "-1", " 5" };
	struct run r;
	char line[256];

	tmpdir(&r);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(line, sizeof(line), "T410TRACE_HOLD_MAX='%s' \"$B\" record -q --sim --top "
			 "-o s.t4t -- true; echo rc=$?; ls", bad[i]);
		sh_in_dir(&r, line);
		char want[128];
		snprintf(want, sizeof(want), "t410trace: T410TRACE_HOLD_MAX=%s: not a count of "
			 "bytes\nrc=2\n", bad[i]);
		cr_assert_str_eq(r.out, want, "%s", bad[i]);
	}
	sh_in_dir(&r, "T410TRACE_HOLD_MAX= \"$B\" record -q --sim --top -o s.t4t -- true"
		  " < /dev/null; echo rc=$?; ls");
	cr_assert(strstr(r.out, "--top: no terminal to show the view on") &&
		  !strstr(r.out, "HOLD_MAX") && strstr(r.out, "rc=2\n") && !strstr(r.out, "s.t4t"),
		  "%s", r.out);
	cleanup(&r);
}

/* record --top draws on the terminal, never on standard output: a
 * command's standard output redirected to a file holds its lines alone (it
 * got the view's CSV lines), and -o - works (standard output carries the
 * log). */
Test(top, record_top_leaves_stdout_alone, .timeout = 180)
{
	struct run r;

	t4t_need_cmd("tmux");
	tmpdir(&r);
	sh_in_dir(&r, "printf '%s\\n' '\"$B\" record -q --sim --top -o s.t4t -- sh -c '\\''"
		  "until [ -e go ]; do sleep 0.05; done; echo only-this'\\'' > out.txt; "
		  "echo rec-rc=$?; \"$B\" record -q --sim --top -d 500ms -o - > p.t4t; "
		  "echo pipe-rc=$?; echo pane-done; sleep 120' > pane.sh; " TMUX_PANE
		  "see 'RD GB/s'; echo view-seen; touch go; see pane-done; $T kill-server; "
		  "grep -e rec-rc -e pipe-rc pane.txt; echo ---; cat out.txt; echo ---; "
		  "\"$B\" info p.t4t > /dev/null && echo piped-log-ok");
	cr_assert(strstr(r.out, "view-seen\nrec-rc=0\npipe-rc=0\n---\nonly-this\n---\n"
				"piped-log-ok\n"), "%s", r.out);
	cleanup(&r);
}

/* Without a terminal (no controlling terminal: setsid) --top has nowhere
 * to draw: refused before anything runs (exit 2), where it wrote CSV lines
 * to standard output. */
Test(top, record_top_needs_a_terminal, .timeout = 60)
{
	struct run r;

	t4t_need_cmd("setsid");
	tmpdir(&r);
	sh_in_dir(&r, "setsid -w \"$B\" record -q --sim --top -d 1s -o s.t4t -- echo ran "
		  "< /dev/null > out.txt 2>&1; echo rc=$?; cat out.txt; ls");
	cr_assert(strstr(r.out, "rc=2\nt410trace record: --top: no terminal to show the view on"),
		  "%s", r.out);
	cr_assert(strstr(r.out, "'t410trace top --control PATH' prints CSV lines to a pipe"),
		  "%s", r.out);
	cr_assert_null(strstr(r.out, "ran\n"), "%s", r.out);
	cr_assert_null(strstr(r.out, "s.t4t"), "%s", r.out);
	cleanup(&r);
}

/* In a real terminal (tmux): every PMU on screen, the bookmark's change,
 * s sorts by the next column, p pauses, k groups by kind, q quits with
 * status 0 and gives the terminal back (main screen, canonical mode and
 * echo). */
Test(top, in_a_terminal_keys_work_and_q_restores_it, .timeout = 180)
{
	struct run r;

	t4t_need_cmd("tmux");
	tmpdir(&r);
	sh_in_dir(&r, START_RECORDER
		  "printf '%s\\n' '\"$B\" top --control c.sock -i 200ms; echo top-rc=$?; "
		  PANE_TTY_MODES
		  "echo pane-done; sleep 120' > pane.sh; " TMUX_PANE
		  /* a frame with every PMU (they appear as their first samples are logged) */
		  "for i in $(seq 600); do $T capture-pane -p -t top > pane.txt; "
		  "[ \"$(grep -c '^nvidia_' pane.txt)\" = 34 ] && break; sleep 0.05; done; "
		  "echo pmus=$(grep -c '^nvidia_' pane.txt); "
		  "grep -q SIMULATED pane.txt && echo simulated; "
		  "\"$B\" ctl --control c.sock bookmark tmux_phase > /dev/null; "
		  "see '^phase tmux_phase (for'; echo phase-seen; "
		  "$T send-keys -t top s; see 'WR GB/s\\*'; echo sorted; "
		  "$T send-keys -t top p; see 'PAUSED'; echo paused; $T send-keys -t top p; "
		  "$T send-keys -t top k; see '^KIND  '; grep -q '^(ucf) ' pane.txt && echo per-kind; "
		  "$T send-keys -t top q; see pane-done; cat pane.txt; $T kill-server; "
		  END_RECORDER);
	cr_assert(strstr(r.out, "pmus=34\nsimulated\nphase-seen\nsorted\npaused\nper-kind\n"),
		  "%s", r.out);
	cr_assert(strstr(r.out, "top-rc=0\nicanon\necho\npane-done\n"), "%s", r.out);
	cr_assert(!strstr(r.out, "t410trace top:"), "the view stayed on screen: %s", r.out);
	cr_assert(strstr(r.out, "rec_rc=0"), "%s", r.out);
	cleanup(&r);
}

/* Ctrl-C in the full-screen view: top ends with status 0 and gives the
 * terminal back (main screen, canonical mode and echo), as q does. The
 * pane's shell takes the SIGINT with a handler of its own and goes on. */
Test(top, in_a_terminal_ctrl_c_restores_it, .timeout = 180)
{
	struct run r;

	t4t_need_cmd("tmux");
	tmpdir(&r);
	sh_in_dir(&r, START_RECORDER
		  "T=\"tmux -S $D/tmux.sock\"; "
		  "printf '%s\\n' 'trap \"echo sh-int\" INT; \"$B\" top --control c.sock -i 200ms; "
		  "echo top-rc=$?; " PANE_TTY_MODES "echo pane-done; sleep 120' > pane.sh; "
		  "$T new-session -d -x 200 -y 60 -s top \"sh '$D/pane.sh'\"; "
		  "see() { for i in $(seq 600); do $T capture-pane -p -t top > pane.txt; "
		  "grep -q -e \"$1\" pane.txt && return 0; sleep 0.05; done; echo \"never saw $1\"; "
		  "cat pane.txt; }; "
		  "see '^nvidia_'; echo view; $T send-keys -t top C-c; see pane-done; "
		  "grep -v '^$' pane.txt; $T kill-server; "
		  END_RECORDER);
	cr_assert(strstr(r.out, "view\nsh-int\ntop-rc=0\nicanon\necho\npane-done\n"), "%s", r.out);
	cr_assert(!strstr(r.out, "t410trace top:"), "the view stayed on screen: %s", r.out);
	cr_assert(strstr(r.out, "rec_rc=0"), "%s", r.out);
	cleanup(&r);
}

/* An 80x24 terminal, narrower than a PMU's row (96 columns): the rows are
 * cut at its edge, so the frame fits and its header stays on the first
 * lines. Wrapped, each row took two lines and the frame scrolled the
 * header (host, phase, column titles) off the screen. */
Test(top, in_a_narrow_terminal_the_frame_fits, .timeout = 180)
{
	struct run r;

	t4t_need_cmd("tmux");
	tmpdir(&r);
	sh_in_dir(&r, START_RECORDER
		  "T=\"tmux -S $D/tmux.sock\"; "
		  "printf '%s\\n' '\"$B\" top --control c.sock -i 200ms; sleep 120' > pane.sh; "
		  "$T new-session -d -x 80 -y 24 -s top \"sh '$D/pane.sh'\"; "
		  "for i in $(seq 600); do $T capture-pane -p -t top > pane.txt; "
		  "grep -q '^nvidia_' pane.txt && grep -q '^q quit' pane.txt && break; sleep 0.05; "
		  "done; head -n 1 pane.txt | cut -c1-15; grep -c '^PMU ' pane.txt; $T kill-server; "
		  END_RECORDER);
	cr_assert(strstr(r.out, "t410trace top: \n1\nrec_rc=0\n"), "%s", r.out);
	cleanup(&r);
}

/* -i's default, as the man page gives it: 1s. The full-screen view says
 * the interval it waits ("every 1s"), and in plain mode `-n 2` takes at
 * least that long (its second refresh is one interval after its first:
 * a bound from below, which a loaded machine only makes longer; the
 * header may come again, '#' first, as PMUs appear: data lines counted). */
Test(top, the_default_interval_is_one_second, .timeout = 180)
{
	struct run r;

	tmpdir(&r);
	sh_in_dir(&r, START_RECORDER
		  "t0=$(date +%s%N); \"$B\" top --control c.sock -n 2 > t.csv; echo top_rc=$?; "
		  "t1=$(date +%s%N); echo lines=$(grep -c '^[0-9]' t.csv) "
		  "atleast1s=$(( t1 - t0 >= 1000000000 )); " END_RECORDER);
	cr_assert(strstr(r.out, "top_rc=0\nlines=2 atleast1s=1\nrec_rc=0\n"), "%s", r.out);
	cleanup(&r);
	if (!t4t_have_cmds("tmux"))
		cr_skip_test("tmux not found (the full-screen view's interval unchecked)");
	tmpdir(&r);
	sh_in_dir(&r, START_RECORDER
		  "printf '%s\\n' '\"$B\" top --control c.sock; echo top-rc=$?; echo pane-done; "
		  "sleep 120' > pane.sh; " TMUX_PANE
		  "see '^t410trace top: '; grep '^t410trace top: ' pane.txt | grep -o 'every [^ ]*'; "
		  "$T send-keys -t top q; see pane-done; grep top-rc pane.txt; $T kill-server; "
		  END_RECORDER);
	cr_assert(strstr(r.out, "every 1s\ntop-rc=0\n"), "%s", r.out);
	cr_assert(strstr(r.out, "rec_rc=0"), "%s", r.out);
	cleanup(&r);
}

/* Without -c, top watches the recorder $T410TRACE_CONTROL names (the man
 * page's TOP), as ctl does: a command that record runs finds it so. */
Test(top, the_control_variable_is_the_default_recorder, .timeout = 120)
{
	struct run r;

	tmpdir(&r);
	sh_in_dir(&r, START_RECORDER
		  "T410TRACE_CONTROL=c.sock \"$B\" top -n 1 > t.csv; echo top_rc=$?; "
		  END_RECORDER "head -c 7 t.csv; echo; "
		  "\"$B\" record -q --sim -d 2s -o v.t4t -- sh -c '\"$0\" top -n 1 -i 100ms | "
		  "head -c 7' \"$B\"; rc2=$?; echo; echo rec2_rc=$rc2");
	cr_assert(strstr(r.out, "top_rc=0\nrec_rc=0\ntime_s,\n"), "%s", r.out);
	cr_assert(strstr(r.out, "time_s,\nrec2_rc=0"), "%s", r.out);
	cleanup(&r);
}

/* This machine's own PMUs: a row per domain (software and msr per CPU). */
Test(top, this_machines_pmus, .timeout = 120)
{
	struct run r;

	t4t_need_perf();
	tmpdir(&r);
	sh_in_dir(&r, "\"$B\" record -q -a -c c.sock -o h.t4t & rec=$!; "
		  "for i in $(seq 1200); do \"$B\" ctl --control c.sock status 2>/dev/null | "
		  "grep -q 'triggers=[1-9]' && break; sleep 0.05; done; "
		  "for i in $(seq 600); do \"$B\" top --control c.sock -n 1 | "
		  "grep -q software@cpu0 && break; sleep 0.05; done; "
		  "\"$B\" top --control c.sock -n 2 -i 200ms > t.csv; echo top_rc=$?; "
		  END_RECORDER "cat t.csv");
	cr_assert(strstr(r.out, "top_rc=0\nrec_rc=0\ntime_s,phase,"), "%s", r.out);
	cr_assert(strstr(r.out, ",software@cpu0:rd_GBps,"), "%s", r.out);
	cr_assert_geq(count_lines(strstr(r.out, "time_s,")), 3, "%s", r.out);
	cleanup(&r);
}
