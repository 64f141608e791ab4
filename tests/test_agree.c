/* test_agree.c - one truth: every output of `decode` says the same thing
 * about every phase (issue 15).
 *
 * For each kind of recording a user makes (the simulator in virtual time
 * with its bookmarks on the grid, the simulator live with `ctl`
 * bookmarks, an app that bookmarks through the uprobe, several bookmarks
 * between two triggers), the per-phase totals and averages computed from
 * the rows of -f csv, of -f jsonl and of --bin outputs, grouped by phase
 * occurrence, equal the summary's tables (decode -v) to their printed
 * precision, every EVENTS total exactly, and summed over the phases they
 * equal `info --json`'s totals. The arithmetic on the rows is done by
 * tests/decode_cli_check.py (`agree`), a reader that is not the writer,
 * with the formulas the JSONL domain records give.
 */
#include "cli_testutil.h"
#include "probe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ag {
	const char *bin;
	char *dir;
	char check[PATH_MAX];
	char out[16384];
};

static void ag_init(struct ag *a)
{
	memset(a, 0, sizeof(*a));
	a->bin = cli_bin();
	t4t_need_cmd("python3");
	char path[PATH_MAX];
	cr_assert_not_null(cli_repo_file("tests/decode_cli_check.py", path),
			   "tests/decode_cli_check.py not found");
	cr_assert_lt(strlen(path), sizeof(a->check), "path too long: %s", path);
	snprintf(a->check, sizeof(a->check), "%s", path);
	a->dir = cli_tmpdir("t4agree");
}

static void ag_fini(struct ag *a)
{
	char out[64];

	cli_run(out, sizeof(out), "rm -rf '%s'", a->dir);
	free(a->dir);
}

/* Run a shell line in the test's directory; its output in a->out. */
static int ag_sh(struct ag *a, const char *line)
{
	return cli_exec(&(struct cli_io){ .dir = a->dir, .out = a->out, .cap = sizeof(a->out),
					  .merge_err = true },
			"%s", line);
}

/* Every output of log L agrees with its summary, and with info. */
static void agree(struct ag *a, const char *log)
{
	char line[16384];
	static const char *const grids[] = { "10ms", "3ms" };

	snprintf(line, sizeof(line),
		 "B='%s'; \"$B\" decode %s -v > s.txt && \"$B\" decode %s -f jsonl -o s.jsonl && "
		 "\"$B\" decode %s -f csv -o s.csv && \"$B\" info --json %s > i.json",
		 a->bin, log, log, log, log);
	cr_assert_eq(ag_sh(a, line), 0, "%s", a->out);
	snprintf(line, sizeof(line), "python3 '%s' agree s.txt s.jsonl --csv s.csv --info i.json",
		 a->check);
	cr_assert_eq(ag_sh(a, line), 0, "CSV against the summary and info:\n%s", a->out);
	snprintf(line, sizeof(line), "python3 '%s' agree s.txt s.jsonl --info i.json", a->check);
	cr_assert_eq(ag_sh(a, line), 0, "JSONL against the summary and info:\n%s", a->out);
	for (size_t i = 0; i < T4_ARRAY_LEN(grids); i++) {
		snprintf(line, sizeof(line),
			 "'%s' decode %s --bin %s -f csv -o g.csv && '%s' decode %s --bin %s "
			 "-f jsonl -o g.jsonl && python3 '%s' agree s.txt s.jsonl --csv g.csv "
			 "--info i.json && python3 '%s' agree s.txt s.jsonl --csv g.jsonl",
			 a->bin, log, grids[i], a->bin, log, grids[i], a->check, a->check);
		cr_assert_eq(ag_sh(a, line), 0, "--bin %s against the summary:\n%s", grids[i],
			     a->out);
	}
}

/* The phases of the summary, in order: "name#occurrence ..." */
static void expect_phases(struct ag *a, const char *want)
{
	char line[512];

	snprintf(line, sizeof(line),
		 "sed -n '/^PHASES/,/^$/p' s.txt | awk 'NR > 3 && NF { printf \"%%s \", $1 }'");
	cr_assert_eq(ag_sh(a, line), 0, "%s", a->out);
	cr_assert_str_eq(a->out, want, "phases of the summary: '%s', want '%s'", a->out, want);
}

Test(agree, virtual_sim_with_bookmarks_on_the_grid, .timeout = 240)
{
	struct ag a;
	char line[512];

	ag_init(&a);
	snprintf(line, sizeof(line),
		 "'%s' record -q --sim=3 --virtual --per-socket --period 1ms --duration 3s -o v.t4t",
		 a.bin);
	cr_assert_eq(ag_sh(&a, line), 0, "%s", a.out);
	agree(&a, "v.t4t");
	ag_fini(&a);
}

Test(agree, live_sim_with_ctl_bookmarks, .timeout = 240)
{
	struct ag a;
	char line[1024];

	ag_init(&a);
	snprintf(line, sizeof(line),
		 "export B='%s'; \"$B\" record -q --sim --no-activity --period 2ms --bookmark warm -o l.t4t -- sh -c "
		 "'sleep 0.2; \"$B\" ctl bookmark load; sleep 0.3; \"$B\" ctl bookmark store; sleep 0.2;"
		 " \"$B\" ctl bookmark load; sleep 0.2'",
		 a.bin);
	cr_assert_eq(ag_sh(&a, line), 0, "%s", a.out);
	agree(&a, "l.t4t");
	expect_phases(&a, "warm#1 load#1 store#1 load#2 ");
	ag_fini(&a);
}

/* Four bookmarks inside one 200 ms period: phases shorter than a
 * trigger period, each with its share of the interval that holds it. */
Test(agree, several_bookmarks_between_two_triggers, .timeout = 240)
{
	struct ag a;
	char line[1024];

	ag_init(&a);
	snprintf(line, sizeof(line),
		 "export B='%s'; \"$B\" record -q --sim --no-activity --period 200ms --bookmark a -o s.t4t -- sh -c "
		 "'sleep 0.5; \"$B\" ctl bookmark b; \"$B\" ctl bookmark c; \"$B\" ctl bookmark d;"
		 " \"$B\" ctl bookmark e; sleep 0.5'",
		 a.bin);
	cr_assert_eq(ag_sh(&a, line), 0, "%s", a.out);
	agree(&a, "s.t4t");
	expect_phases(&a, "a#1 b#1 c#1 d#1 e#1 ");
	ag_fini(&a);
}

/* An app bookmarking through libt410trace's uprobe (where BPF loads):
 * bookmarks timed by the kernel, late to the log. */
Test(agree, uprobe_bookmarked_app, .timeout = 240)
{
	struct ag a;
	char line[1024];
	const char *out = getenv("T4_OUT");

	t4t_need_perf();
	t4t_need_bpf_tracing("uprobe bookmarks");
	if (!out)
		cr_skip_test("T4_OUT not set (run through make check)");
	ag_init(&a);
	snprintf(line, sizeof(line),
		 "'%s' record --period 1ms -o u.t4t -- '%s/apps/phase_app' schedule sched.txt", a.bin,
		 out);
	cr_assert_eq(ag_sh(&a, line), 0, "%s", a.out);
	cr_assert(strstr(a.out, "through the uprobe") && !strstr(a.out, " 0 bookmarks and"),
		  "the app's bookmarks did not come through the uprobe: %s", a.out);
	agree(&a, "u.t4t");
	expect_phases(&a, "(none)#1 start#1 spin_a#1 spin_b#1 both#1 rest#1 spin_a#2 spin_b#2 both#2 rest#2 done#1 ");
	ag_fini(&a);
}

/* One zero for relative times: the first trigger's reference time, in
 * info (origin_ns, each bookmark's set_rel_ns), the summary's PHASES,
 * JSONL's header, and --time rel; --time real through the session's
 * anchor. */
Test(agree, one_zero_for_every_relative_time, .timeout = 240)
{
	struct ag a;
	char line[4096];

	ag_init(&a);
	snprintf(line, sizeof(line),
		 "export B='%s'; \"$B\" record -q --sim --no-activity --period 5ms --bookmark x -o z.t4t -- sh -c "
		 "'sleep 0.3; \"$B\" ctl bookmark y; sleep 0.3; \"$B\" ctl bookmark x; sleep 0.2' && "
		 "\"$B\" decode z.t4t > s.txt && \"$B\" info --json z.t4t > i.json && "
		 "\"$B\" decode z.t4t -f jsonl -o z.jsonl && \"$B\" decode z.t4t -f phases --time rel -o p.csv && "
		 "\"$B\" decode z.t4t -f csv -o ref.csv && \"$B\" decode z.t4t -f csv --time rel -o rel.csv && "
		 "\"$B\" decode z.t4t -f csv --time real -o real.csv",
		 a.bin);
	cr_assert_eq(ag_sh(&a, line), 0, "%s", a.out);
	snprintf(line, sizeof(line), "python3 - <<'EOF'\n"
		 "import csv, json, re\n"
		 "info = json.load(open('i.json'))\n"
		 "head = json.loads(open('z.jsonl').readline())\n"
		 "o = info['origin_ns']\n"
		 "assert head['type'] == 'header' and head['origin_ns'] == o, (head, o)\n"
		 "ph = list(csv.DictReader(open('p.csv')))\n"
		 "assert [p['phase'] for p in ph] == ['x', 'y', 'x'], ph\n"
		 "text = open('s.txt').read()\n"
		 "rows = re.findall(r'^  (\\S+#\\d+) +(-?[0-9.]+) ', text, re.M)\n"
		 "assert len(rows) == 3, rows\n"
		 "for p, (label, start) in zip(ph, rows):\n"
		 "    assert abs(int(p['start_ns']) / 1e9 - float(start)) < 0.0005, (p, start)\n"
		 "sets = {b['name']: b['set_rel_ns'] for b in info['bookmarks'] if b['name'] == 'y'}\n"
		 "assert int(ph[1]['start_ns']) == sets['y'], (ph[1], sets)\n"
		 "anchor = head['realtime_anchor']\n"
		 "for r0, r1, r2 in zip(csv.reader(open('ref.csv')), csv.reader(open('rel.csv')),\n"
		 "                      csv.reader(open('real.csv'))):\n"
		 "    if r0[0] == 'trigger':\n"
		 "        continue\n"
		 "    assert int(r1[1]) == int(r0[1]) - o, (r0, r1)\n"
		 "    assert int(r2[1]) == int(r0[1]) - anchor['ref_ns'] + anchor['real_ns'], (r0, r2)\n"
		 "print('one zero')\n"
		 "EOF\n");
	cr_assert_eq(ag_sh(&a, line), 0, "%s", a.out);
	ag_fini(&a);
}

/* A chunk in the middle of a recording damaged: the counts it held are
 * lost, and so is their time (the interval across it keeps the time its
 * counts cover: dom.c, counted_part). What the summary says over the
 * whole decode divides by the time the totals cover, as each phase
 * does: the clock table's FORMULA (cycles / elapsed) is the clock's
 * frequency, FREQ, where the clock kept one rate (2563 MHz for a 2917 MHz
 * clock before: over the span, the hole included; across a DVFS step
 * FREQ weighs each rate by its time, the hole's too, and FORMULA by the
 * time counted), and each EVENTS "(all phases)" rate of cycles lies
 * among the rates of its phases; CSV and JSONL agree with the summary
 * as for an intact log. */
/* An 8 s virtual recording, d.t4t, with 16 bytes of a chunk in its
 * middle damaged; its summary (-v) in c.txt. */
static void damaged_log(struct ag *a)
{
	char line[4096];

	snprintf(line, sizeof(line),
		 "'%s' record -q --sim=7 --virtual --period 1ms --duration 8s -o v.t4t && "
		 "python3 -c \"\n"
		 "d = bytearray(open('v.t4t', 'rb').read())\n"
		 "o = len(d) * 45 // 100\n"
		 "for i in range(16): d[o + i] ^= 0x5a\n"
		 "open('d.t4t', 'wb').write(d)\" && '%s' decode -v d.t4t > c.txt 2>/dev/null",
		 a->bin, a->bin);
	cr_assert_eq(ag_sh(a, line), 0, "%s", a->out);
}

Test(agree, a_damaged_chunk_takes_its_time_with_its_counts, .timeout = 240)
{
	struct ag a;
	char line[4096];

	ag_init(&a);
	damaged_log(&a);
	snprintf(line, sizeof(line), "python3 - <<'EOF'\n"
		 "import re\n"
		 "s = open('c.txt').read()\n"
		 "assert '1 damaged chunk' in s, s\n"
		 "clk = re.findall(r'^  (nvidia_\\S+) +rate +(\\d+) +(\\d+) ', s, re.M)\n"
		 "assert len(clk) > 20, clk\n"
		 "for d, freq, formula in clk:\n"
		 "    assert abs(int(freq) - int(formula)) <= 1, (d, freq, formula)\n"
		 "ev = re.findall(r'^  (nvidia_\\S+) +cycles +cycles +(.+?) +\\d+ +(\\d+)$', s, re.M)\n"
		 "rates = {}\n"
		 "for d, ph, r in ev:\n"
		 "    rates.setdefault(d, {})[ph] = int(r)\n"
		 "assert len(rates) == 34, rates\n"
		 "for d, r in rates.items():\n"
		 "    whole = r.pop('(all phases)')\n"
		 "    assert r and min(r.values()) <= whole <= max(r.values()), (d, whole, r)\n"
		 "print('agree')\n"
		 "EOF\n");
	cr_assert_eq(ag_sh(&a, line), 0, "%s", a.out);
	agree(&a, "d.t4t");
	ag_fini(&a);
}

/* The same damaged log: info's rates (index.c, without a decode) leave
 * the damaged stretch's time out as decode's do, so each event's rate
 * per second is the summary's "(all phases)" one to 1 ppm (the index
 * times a return by its read's start, the decoder by its clock model);
 * before, info's cycles ran at 2.563 GHz on a 2.917 GHz clock. */
Test(agree, info_rates_leave_out_the_damaged_stretch_as_decode_does, .timeout = 240)
{
	struct ag a;
	char line[4096];

	ag_init(&a);
	damaged_log(&a);
	snprintf(line, sizeof(line), "'%s' info --json d.t4t > i.json 2>/dev/null && "
		 "python3 - <<'EOF'\n"
		 "import json, re\n"
		 "s = open('c.txt').read()\n"
		 "rows = re.findall(r'^  (nvidia_\\S+) +(\\S+) +\\S+ +\\(all phases\\) +\\d+ +(\\d+)$',"
		 " s, re.M)\n"
		 "want = {(d, e): int(r) for d, e, r in rows}\n"
		 "assert len(want) == 190, len(want)\n"
		 "n = 0\n"
		 "for d in json.load(open('i.json'))['domains']:\n"
		 "    for e in d['events']:\n"
		 "        w = want[d['name'], e['name']]\n"
		 "        assert abs(e['rate_per_s'] - w) <= 1e-6 * w + 1, (d['name'], e, w)\n"
		 "        n += 1\n"
		 "assert n == 190, n\n"
		 "print('agree')\n"
		 "EOF\n", a.bin);
	cr_assert_eq(ag_sh(&a, line), 0, "%s", a.out);
	ag_fini(&a);
}
