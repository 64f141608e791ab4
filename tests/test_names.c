/* test_names.c - names that are no plain text in every output: the
 * characters that reorder a terminal's line or break it without being
 * C0 or C1 (bidirectional controls, U+2028), JSON's escapes of them, a GPU
 * timeline's name as a column head of the summary, CSV written to a
 * terminal or with -x '\', and "did you mean" (util/text.c decides each).
 */
#include "cli_testutil.h"
#include "craft_log.h"
#include "decode/decode_int.h"
#include "packets/packets.h"
#include "probe.h"
#include "util/util.h"

#include <string.h>

/* U+202E (right-to-left override), U+2066 (left-to-right isolate), U+200F
 * (right-to-left mark), U+061C (Arabic letter mark), U+2028 (line
 * separator), U+009B (C1 CSI), DEL: what a terminal must not get. */
#define RLO "\xe2\x80\xae"
#define LRI "\xe2\x81\xa6"
#define RLM "\xe2\x80\x8f"
#define ALM "\xd8\x9c"
#define LSEP "\xe2\x80\xa8"
#define CSI8 "\xc2\x9b"

static const char *text_of(const char *s, unsigned flags)
{
	static char buf[512];

	return t4_text(s, flags, buf, sizeof(buf));
}

/* "txt" RLO "fdp.exe" shows as txtexe.pdf: the bidirectional controls and
 * the separators are escaped for a terminal as C0 and C1 are; their
 * neighbours (U+202F, U+2065, U+2027, U+200D) and other text are not. */
Test(names, bidi_controls_and_separators_are_escaped_for_terminals)
{
	cr_assert_str_eq(text_of("txt" RLO "fdp.exe", T4_TEXT_CONTROL), "txt\\xe2\\x80\\xaefdp.exe");
	cr_assert_str_eq(text_of(LRI "a" RLM "b" ALM "c" LSEP "d\xe2\x80\xa9" "e",
				 T4_TEXT_CONTROL),
			 "\\xe2\\x81\\xa6a\\xe2\\x80\\x8fb\\xd8\\x9cc\\xe2\\x80\\xa8d\\xe2\\x80\\xa9e");
	static const char *const bidi[] = { "\xe2\x80\x8e", "\xe2\x80\xaa", "\xe2\x80\xab",
					    "\xe2\x80\xac", "\xe2\x80\xad", "\xe2\x81\xa7",
					    "\xe2\x81\xa8", "\xe2\x81\xa9" };
	for (size_t i = 0; i < T4_ARRAY_LEN(bidi); i++) {
		cr_assert(!t4_text_clean(bidi[i], T4_TEXT_CONTROL), "%zu", i);
		cr_assert(t4_text_clean(bidi[i], 0), "%zu", i); /* valid UTF-8 */
	}
	static const char *const fine[] = { "\xe2\x80\xaf", "\xe2\x81\xa5", "\xe2\x80\xa7",
					    "\xe2\x80\x8d", "\xc3\xa9", "\xd8\x9b", "\xf0\x9f\x98\x80" };
	for (size_t i = 0; i < T4_ARRAY_LEN(fine); i++)
		cr_assert(t4_text_clean(fine[i], T4_TEXT_CONTROL), "%zu", i);
	/* an error message quoting one: a space, as a control character */
	t4_err(EINVAL, "%s: no such file", "a" RLO "b" LSEP "c");
	cr_assert_str_eq(t4_errmsg(), "a b c: no such file");
}

/* Every JSON output's one rule: what a terminal must not get as \uXXXX
 * (the same string once parsed), a byte that is not UTF-8 as the text
 * \xNN; for the report's <script>, < > & too, and (T4_TEXT_CONTROL) the
 * characters as the text the tables show. JSONL and info --json printed
 * U+202E, U+2028 and C1 raw. */
Test(names, json_escapes_what_a_terminal_must_not_get)
{
	static const struct {
		const char *in;
		unsigned flags;
		const char *out;
	} cases[] = {
		{ "a" RLO "b", 0, "\"a\\u202eb\"" },
		{ LSEP "\xe2\x80\xa9", 0, "\"\\u2028\\u2029\"" },
		{ CSI8 "\x7f" ALM LRI, 0, "\"\\u009b\\u007f\\u061c\\u2066\"" },
		{ "\x1b[2J\n\"\\", 0, "\"\\u001b[2J\\u000a\\\"\\\\\"" },
		{ "x\xff\xc0\xaf", 0, "\"x\\\\xff\\\\xc0\\\\xaf\"" },
		{ "\xc3\xa9\xf0\x9f\x98\x80<&>", 0, "\"\xc3\xa9\xf0\x9f\x98\x80<&>\"" },
		{ "</script>", T4_JSON_HTML, "\"\\u003c/script\\u003e\"" },
		{ "\x1b" RLO "&", T4_TEXT_CONTROL | T4_JSON_HTML,
		  "\"\\\\x1b\\\\xe2\\\\x80\\\\xae\\u0026\"" },
	};
	char piece[T4_JSON_PIECE], got[256];

	for (size_t i = 0; i < T4_ARRAY_LEN(cases); i++) {
		size_t n = 0;
		const char *s = cases[i].in;
		got[n++] = '"';
		while (*s) {
			s += t4_json_next(s, cases[i].flags, piece);
			n += (size_t)snprintf(got + n, sizeof(got) - n, "%s", piece);
		}
		snprintf(got + n, sizeof(got) - n, "\"");
		cr_assert_str_eq(got, cases[i].out, "case %zu", i);
		if (cases[i].flags)
			continue;
		/* the decoder's writer and stdio's write the same */
		struct t4_wbuf w;
		cr_assert_eq(dec_wbuf_init(&w, NULL, 16), 0);
		dec_wbuf_json_str(&w, cases[i].in);
		cr_assert_eq(w.len, strlen(cases[i].out), "case %zu", i);
		cr_assert_eq(memcmp(w.buf, cases[i].out, w.len), 0, "case %zu: %.*s", i,
			     (int)w.len, w.buf);
		dec_wbuf_free(&w);
	}
}

/* A CSV field is quoted by what is written: with -x '\', a byte written
 * as the text \xNN holds the separator, and was written unquoted (the
 * row's columns shifted). A name that opens like a spreadsheet formula
 * stays as recorded (the man page says so). */
Test(names, csv_quotes_the_separator_an_escape_brings)
{
	static const struct {
		const char *in;
		char sep;
		unsigned flags;
		const char *out;
	} cases[] = {
		{ "a\xff", '\\', 0, "\"a\\xff\"" },
		{ "a\xff", ',', 0, "a\\xff" },
		{ "a\x1b", '\\', 0, "a\x1b" },
		{ "a\x1b", '\\', T4_TEXT_CONTROL, "\"a\\x1b\"" },
		{ "a\nb", ',', 0, "\"a\nb\"" },
		{ "a\nb", ',', T4_TEXT_CONTROL, "a\\x0ab" },
		{ "q\"" RLO, ';', T4_TEXT_CONTROL, "\"q\"\"\\xe2\\x80\\xae\"" },
		{ "plain", '\\', 0, "plain" },
		{ "a\x7f", ',', T4_TEXT_CONTROL, "a\\x7f" },
		/* a name is data: a spreadsheet's formula lead is kept (man page) */
		{ "=HYPERLINK(\"x\")", ',', 0, "\"=HYPERLINK(\"\"x\"\")\"" },
		{ "+1-1", ',', T4_TEXT_CONTROL, "+1-1" },
		{ "@SUM(A1)", ';', 0, "@SUM(A1)" },
		{ "-2", ',', 0, "-2" },
	};

	for (size_t i = 0; i < T4_ARRAY_LEN(cases); i++) {
		struct t4_wbuf w;
		cr_assert_eq(dec_wbuf_init(&w, NULL, 16), 0);
		dec_wbuf_csv_field(&w, cases[i].in, cases[i].sep, cases[i].flags);
		cr_assert_eq(w.len, strlen(cases[i].out), "case %zu: %.*s", i, (int)w.len, w.buf);
		cr_assert_eq(memcmp(w.buf, cases[i].out, w.len), 0, "case %zu: %.*s", i,
			     (int)w.len, w.buf);
		dec_wbuf_free(&w);
	}
}

/* ---- a crafted log with such names in every field -------------------------- */

#define HOSTILE "\x1b]52;c;eA==\x07" RLO "x" LSEP CSI8 "\xff,\"q\"\n"

static void named_domain(struct lw *w, uint32_t id, const char *name)
{
	struct t4_packet p = { .type = T4_PKT_EVENT };

	domain_called(w, id, name);
	p.event.domain_id = id;
	p.event.scale = 1.0;
	snprintf(p.event.pmu, sizeof(p.event.pmu), "p%s", name);
	snprintf(p.event.name, sizeof(p.event.name), "e%s", name);
	snprintf(p.event.unit, sizeof(p.event.unit), "u\xfe" RLO "\x1b[m");
	lw_put(w, &p);
}

/* One software domain, a thread and a GPU context (driver and timeline)
 * named with HOSTILE, 40 triggers with CPU and GPU slices, a bookmark. */
static void write_hostile(const char *path)
{
	struct lw w;
	struct t4_packet p;

	lw_open(&w, path);
	session(&w, 1000000);
	named_domain(&w, 1, "d" HOSTILE);
	bookmark(&w, 1, "b" HOSTILE, 10, 1000000000ull + 9500000);
	memset(&p, 0, sizeof(p));
	p.type = T4_PKT_TASK;
	p.task.pid = p.task.tid = 77;
	p.task.mono_ns = 1000000000ull;
	snprintf(p.task.name, sizeof(p.task.name), "t" HOSTILE);
	lw_put(&w, &p);
	memset(&p, 0, sizeof(p));
	p.type = T4_PKT_GPU_CTX;
	p.gpu_ctx.context = 9;
	snprintf(p.gpu_ctx.driver, sizeof(p.gpu_ctx.driver), "g" HOSTILE);
	snprintf(p.gpu_ctx.timeline, sizeof(p.gpu_ctx.timeline), "\x1b[5m" RLO "gl");
	lw_put(&w, &p);
	for (uint64_t k = 0; k < 40; k++) {
		uint64_t t = 1000000000ull + k * 1000000;
		ref(&w, k, t, k >= 10);
		ret(&w, 1, k, t, 9);
		if (!k || k == 39)
			continue;
		memset(&p, 0, sizeof(p));
		p.type = T4_PKT_CPU_SLICE;
		p.cpu_slice.pid = p.cpu_slice.tid = 77;
		p.cpu_slice.start_ns = t + 100000;
		p.cpu_slice.end_ns = t + 600000;
		lw_put(&w, &p);
		memset(&p, 0, sizeof(p));
		p.type = T4_PKT_GPU_SLICE;
		p.gpu_slice.context = 9;
		p.gpu_slice.seqno = k;
		p.gpu_slice.pid = p.gpu_slice.tid = 77;
		p.gpu_slice.start_ns = t + 100000;
		p.gpu_slice.end_ns = t + 400000;
		lw_put(&w, &p);
	}
	lw_close(&w);
}

static char *hostile_dir(void)
{
	char *dir = cli_tmpdir("t4names"), path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/h.t4t", dir);
	write_hostile(path);
	return dir;
}

static int in_dir(const char *dir, char *out, size_t cap, const char *fmt, const char *arg)
{
	return cli_exec(&(struct cli_io){ .dir = dir, .out = out, .cap = cap, .merge_err = true },
			fmt, arg);
}

/* What a terminal gets from a file's bytes: all UTF-8, no control
 * character but the line break, no bidirectional control or separator. */
#define PY_TERMINAL_CLEAN                                                                    \
	"import sys\n"                                                                       \
	"BAD = set(map(chr, [0x61c, 0x200e, 0x200f, 0x2028, 0x2029, *range(0x202a, 0x202f),\n" \
	"                    *range(0x2066, 0x206a)]))\n"                                   \
	"for f in sys.argv[1:]:\n"                                                           \
	"    t = open(f, 'rb').read().replace(b'\\r\\n', b'\\n').decode('utf-8')\n"          \
	"    bad = [c for c in t if (ord(c) < 32 and c != '\\n') or 127 <= ord(c) < 160\n"   \
	"           or c in BAD]\n"                                                          \
	"    assert not bad, (f, bad[:5])\n"

/* The summary, -v and info on a terminal, and JSONL and info --json as
 * files: no byte of the names that could drive a terminal (the summary's
 * WORKLOAD heads, a GPU timeline's name, were printed raw; bidirectional
 * controls everywhere; JSON kept them raw), and JSON gives the names back
 * exactly (but for the bytes that are not UTF-8). */
Test(names, no_output_hands_a_terminal_the_names_raw, .timeout = 120)
{
	t4t_need_cmd("python3");
	char *dir = hostile_dir(), out[16384];

	cr_assert_eq(in_dir(dir, out, sizeof(out),
			    "\"$B\" decode h.t4t > sum.txt && \"$B\" decode -v h.t4t > sumv.txt && "
			    "\"$B\" info h.t4t > info.txt && \"$B\" info --json h.t4t > info.json && "
			    "\"$B\" decode h.t4t -f jsonl -o o.jsonl 2>/dev/null && "
			    "python3 - sum.txt sumv.txt info.txt info.json o.jsonl <<'EOF'\n"
			    PY_TERMINAL_CLEAN
			    "import json\n"
			    "want = '\\x1b]52;c;eA==\\x07\\u202ex\\u2028\\x9b\\\\xff,\"q\"\\n'\n"
			    "recs = [json.loads(l) for l in open('o.jsonl', encoding='utf-8')]\n"
			    "doms = {r['domain'] for r in recs if r['type'] == 'interval'}\n"
			    "assert doms == {'d' + want}, doms\n"
			    "def strings(o):\n"
			    "    if isinstance(o, dict):\n"
			    "        o = list(o.values())\n"
			    "    if isinstance(o, list):\n"
			    "        return [s for v in o for s in strings(v)]\n"
			    "    return [o] if isinstance(o, str) else []\n"
			    "info = json.load(open('info.json', encoding='utf-8'))\n"
			    "assert 'b' + want in strings(info), strings(info)\n"
			    "print('clean')\n"
			    "EOF\n%s",
			    ""),
		     0, "%s", out);
	cr_assert(strstr(out, "clean"), "%s", out);
	/* the GPU context's column: its timeline as text */
	cr_assert_eq(in_dir(dir, out, sizeof(out), "grep -cF '%s' sum.txt",
			    "\\x1b[5m\\xe2\\x80\\xaegl:9"),
		     0, "%s", out);
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}

/* CSV, the phase table and the slices written to a terminal escape the
 * control characters as the summary does (they reached it raw: an OSC 52
 * in a thread's name wrote the clipboard); written to a file, a line
 * break stays in its quoted field. */
Test(names, csv_on_a_terminal_escapes_control_characters, .timeout = 120)
{
	t4t_need_cmd("python3 script"); /* script(1) gives the decoder a terminal */
	char *dir = hostile_dir(), out[16384];

	cr_assert_eq(in_dir(dir, out, sizeof(out),
			    "for f in csv phases slices; do "
			    "script -qec \"'$B' decode h.t4t -f $f 2>/dev/null\" /dev/null > $f.tty || exit 1; "
			    "done; \"$B\" decode h.t4t -f csv -o f.csv 2>/dev/null && "
			    "python3 - csv.tty phases.tty slices.tty <<'EOF'\n"
			    PY_TERMINAL_CLEAN
			    "import csv, io\n"
			    "for f in sys.argv[1:]:\n"
			    "    t = open(f, encoding='utf-8').read().replace('\\r\\n', '\\n')\n"
			    "    rows = list(csv.reader(io.StringIO(t), strict=True))\n"
			    "    assert len({len(r) for r in rows}) == 1, (f, rows[:3])\n"
			    "    assert any('\\\\x1b]52;c;eA==\\\\x07\\\\xe2\\\\x80\\\\xae' in c\n"
			    "               for r in rows for c in r), (f, rows[:3])\n"
			    "rows = list(csv.reader(open('f.csv', encoding='utf-8', newline='')))\n"
			    "assert any(c.endswith(',\"q\"\\n') for r in rows for c in r), rows[:2]\n"
			    "print('clean')\n"
			    "EOF\n%s",
			    ""),
		     0, "%s", out);
	cr_assert(strstr(out, "clean"), "%s", out);
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}

/* -x '\': every row as wide as the header, the names back as written (a
 * unit with a byte that is not UTF-8, and nothing else to quote, was
 * written unquoted: its \xNN split the row). */
Test(names, csv_with_a_backslash_separator_keeps_its_columns, .timeout = 120)
{
	t4t_need_cmd("python3");
	char *dir = hostile_dir(), out[16384];

	cr_assert_eq(in_dir(dir, out, sizeof(out),
			    "for f in csv phases slices; do "
			    "\"$B\" decode h.t4t -f $f -x '\\' -o x.$f 2>/dev/null || exit 1; done && "
			    "python3 - <<'EOF'\n"
			    "import csv\n"
			    "for f in ('x.csv', 'x.phases', 'x.slices'):\n"
			    "    rows = list(csv.reader(open(f, encoding='utf-8', newline=''),\n"
			    "                           delimiter='\\\\', strict=True))\n"
			    "    assert len({len(r) for r in rows}) == 1, (f, {len(r) for r in rows})\n"
			    "    assert any(c.endswith('\\\\xff,\"q\"\\n') for r in rows for c in r), f\n"
			    "rows = list(csv.reader(open('x.csv', encoding='utf-8', newline=''),\n"
			    "                       delimiter='\\\\'))\n"
			    "assert any(r[8] == 'u\\\\xfe\\u202e\\x1b[m' for r in rows), rows[:3]\n"
			    "print('columns kept')\n"
			    "EOF\n%s",
			    ""),
		     0, "%s", out);
	cr_assert(strstr(out, "columns kept"), "%s", out);
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}

/* "did you mean" names a name as the list beside it does (it showed its
 * line break as a space: a name nobody can type). */
Test(names, did_you_mean_shows_the_name_as_listed, .timeout = 60)
{
	char *dir = cli_tmpdir("t4names"), path[PATH_MAX], out[8192];
	struct lw w;

	snprintf(path, sizeof(path), "%s/n.t4t", dir);
	lw_open(&w, path);
	session(&w, 1000000);
	named_domain(&w, 1, "ucf\nx");
	bookmark(&w, 1, "warm" RLO "up", 2, 1000000000ull + 1500000);
	for (uint64_t k = 0; k < 10; k++) {
		ref(&w, k, 1000000000ull + k * 1000000, k >= 2);
		ret(&w, 1, k, 1000000000ull + k * 1000000, 9);
	}
	lw_close(&w);
	cr_assert_eq(in_dir(dir, out, sizeof(out), "\"$B\" decode n.t4t --pmu ucfx%s", ""), 2,
		     "%s", out);
	cr_assert(strstr(out, "(did you mean ucf\\x0ax?)"), "%s", out);
	cr_assert_eq(in_dir(dir, out, sizeof(out), "\"$B\" decode n.t4t --phase warm%s", ""), 2,
		     "%s", out);
	cr_assert(strstr(out, "(did you mean warm\\xe2\\x80\\xaeup?)"), "%s", out);
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}

/* A phase whose name escapes long (a control byte is written \xNN, four
 * characters): the summary's labels were cut to 95 bytes, so NAME#1 and
 * NAME#2 read the same, the occurrence lost, in the phase tables and the
 * tables across hosts alike. */
Test(names, a_long_escaped_name_keeps_its_occurrence, .timeout = 60)
{
	char *dir = cli_tmpdir("t4names"), path[PATH_MAX], name[T4_NAME_MAX], want[512];
	static char out[1 << 16];
	struct lw w;

	memset(name, 0x01, sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	snprintf(path, sizeof(path), "%s/l.t4t", dir);
	lw_open(&w, path);
	session(&w, 1000000);
	named_domain(&w, 1, "d");
	for (uint64_t k = 0; k < 30; k++) {
		uint64_t t = 1000000000ull + k * 1000000;
		uint32_t bm = k < 5 ? 0 : k < 10 || k >= 15 ? 1 : 2;
		if (k == 5 || k == 15)
			bookmark(&w, 1, name, k, t - 500000);
		if (k == 10)
			bookmark(&w, 2, "x", k, t - 500000);
		ref(&w, k, t, bm);
		ret(&w, 1, k, t, 9);
	}
	lw_close(&w);
	cr_assert_eq(in_dir(dir, out, sizeof(out), "\"$B\" decode -v l.t4t%s", ""), 0, "%s", out);
	for (unsigned occ = 1; occ <= 2; occ++) {
		size_t n = 0;
		for (size_t i = 0; i < sizeof(name) - 1; i++)
			n += (size_t)snprintf(want + n, sizeof(want) - n, "\\x01");
		snprintf(want + n, sizeof(want) - n, "#%u ", occ);
		cr_assert(strstr(out, want), "no %s in:\n%s", want, out);
	}
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}
