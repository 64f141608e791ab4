/* test_live.c - the live numbers (live/): snapshots of an index fed packet
 * by packet, their text form and back, rates between two snapshots by the
 * decoder's formulas, and the Prometheus exposition.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "live/live.h"
#include "util/util.h"

static void feed(struct t4_live *l, const struct t4_packet *p)
{
	t4_live_feed(l, p);
}

/* A UCF PMU counting the n events ev (units: their units): its metadata,
 * a baseline and k intervals of 1 ms, the first event growing 1.5 M a ms,
 * the others 64 kB. */
static void ucf_log_of(struct t4_live *l, const char *name, uint64_t k_end,
		       const char *const *ev, const char *const *units, uint32_t n)
{
	struct t4_packet p;

	memset(&p, 0, sizeof(p));
	p.type = T4_PKT_SESSION;
	snprintf(p.session.host, sizeof(p.session.host), "host\x1b[2J\t\"x\"\xff");
	p.session.period_ns = 1000000;
	p.session.flags = T4_SESSION_SIMULATED;
	feed(l, &p);
	memset(&p, 0, sizeof(p));
	p.type = T4_PKT_DOMAIN;
	p.domain.domain_id = 3;
	p.domain.kind = T4_DOM_UCF;
	p.domain.cpu = -1;
	p.domain.clock_event = 0;
	snprintf(p.domain.name, sizeof(p.domain.name), "%s", name);
	feed(l, &p);
	for (uint32_t i = 0; i < n; i++) {
		memset(&p, 0, sizeof(p));
		p.type = T4_PKT_EVENT;
		p.event.domain_id = 3;
		p.event.index = i;
		snprintf(p.event.pmu, sizeof(p.event.pmu), "%s", name);
		snprintf(p.event.name, sizeof(p.event.name), "%s", ev[i]);
		snprintf(p.event.unit, sizeof(p.event.unit), "%s", units[i]);
		feed(l, &p);
	}
	memset(&p, 0, sizeof(p));
	p.type = T4_PKT_BOOKMARK;
	p.bookmark.bookmark_id = 1;
	snprintf(p.bookmark.name, sizeof(p.bookmark.name), "load");
	p.bookmark.set_ns = 1000000000ull;
	feed(l, &p);
	for (uint64_t k = 0; k <= k_end; k++) {
		memset(&p, 0, sizeof(p));
		p.type = T4_PKT_REF;
		p.ref.trigger_id = k;
		p.ref.ref_ns = 1000000000ull + k * 1000000;
		feed(l, &p);
		memset(&p, 0, sizeof(p));
		p.type = T4_PKT_RET;
		p.ret.domain_id = 3;
		p.ret.trigger_id = k;
		p.ret.read_begin_ns = 1000000000ull + k * 1000000;
		p.ret.read_end_ns = p.ret.read_begin_ns + 500;
		p.ret.n_counts = n;
		p.ret.counts[0] = k ? 1500000 : 0;
		for (uint32_t i = 1; i < n; i++)
			p.ret.counts[i] = k ? 65536 : 0;
		feed(l, &p);
	}
}

/* ...cycles and mem_bytes_rd. */
static void ucf_log(struct t4_live *l, const char *name, uint64_t k_end)
{
	static const char *const ev[] = { "cycles", "mem_bytes_rd" };
	static const char *const units[] = { "cycles", "bytes" };

	ucf_log_of(l, name, k_end, ev, units, 2);
}

Test(live, snapshots_round_trip_as_text_and_give_rates)
{
	struct t4_live *l;
	struct t4_live_health h = { .dropped = 7, .cpu_ns = 1000, .now_ns = 1100000000ull };
	struct t4_live_snap s, back;
	struct t4_live_view *v;
	const struct t4_live_row *rows;
	size_t n, len;
	char *text;

	cr_assert_eq(t4_live_new(&l), 0);
	ucf_log(l, "nvidia_ucf_pmu_1", 100);
	cr_assert_eq(t4_live_take(l, &h, &s), 0, "%s", t4_errmsg());
	cr_assert_eq(s.n_domains, 1);
	cr_assert_str_eq(s.phase, "load");
	cr_assert_eq(s.triggers, 101);
	cr_assert_eq(s.dropped, 7);
	cr_assert_eq(s.doms[0].ev[1].total, 100 * 65536);
	cr_assert_eq(t4_live_snap_text(&s, &text, &len), 0);
	for (size_t i = 0; i < len; i++) /* plain ASCII, whatever the names */
		cr_assert((text[i] >= 0x20 && text[i] < 0x7f) || text[i] == '\n' || text[i] == '\t',
			  "byte %02x at %zu", (unsigned char)text[i], i);
	cr_assert_eq(t4_live_snap_parse(text, len, &back), 0, "%s", t4_errmsg());
	cr_assert_str_eq(back.host, s.host, "the host name survives: escapes and bad bytes");
	cr_assert_eq(back.n_domains, 1);
	cr_assert_eq(back.doms[0].ev[1].total, s.doms[0].ev[1].total);
	cr_assert_str_eq(back.doms[0].ev[1].unit, "bytes");
	free(text);
	t4_live_snap_free(&s);

	/* rates: the view of two snapshots 100 ms apart */
	cr_assert_eq(t4_live_view_new(&v), 0);
	cr_assert_eq(t4_live_view_update(v, &back, &rows, &n), 0);
	cr_assert(isnan(rows[0].elapsed_ns ? 0.0 : NAN), "no rate from one snapshot");
	ucf_log(l, "nvidia_ucf_pmu_1", 0); /* metadata again: changes nothing */
	struct t4_packet p = { .type = T4_PKT_RET };
	for (uint64_t k = 101; k <= 200; k++) {
		p.ret.domain_id = 3;
		p.ret.trigger_id = k;
		p.ret.read_begin_ns = 1000000000ull + k * 1000000;
		p.ret.read_end_ns = p.ret.read_begin_ns + 500;
		p.ret.n_counts = 2;
		p.ret.counts[0] = 1500000;
		p.ret.counts[1] = 65536 * 2; /* twice the traffic */
		feed(l, &p);
	}
	h.now_ns += 100000000;
	cr_assert_eq(t4_live_take(l, &h, &s), 0);
	cr_assert_eq(t4_live_view_update(v, &s, &rows, &n), 0);
	cr_assert_eq(n, 1);
	cr_assert_eq(rows[0].elapsed_ns, 100000000);
	bool bw = false, freq = false;
	for (uint32_t m = 0; m < rows[0].n_metrics; m++) {
		if (!strcmp(rows[0].metric_name[m], "mem_read_bw")) {
			cr_assert_float_eq(rows[0].metric[m], 131072.0 / 1e6, 1e-9); /* GB/s */
			bw = true;
		}
		if (!strcmp(rows[0].metric_name[m], "ucf_freq")) {
			cr_assert_float_eq(rows[0].metric[m], 1.5, 1e-9);
			freq = true;
		}
	}
	cr_assert(bw && freq, "the kind's formulas");
	t4_live_view_free(v);
	t4_live_free(l);
}

Test(live, the_parser_takes_nothing_else)
{
	static const char *const bad[] = {
		"",
		"t410trace-live\t2\n",
		"hello\n",
		"t410trace-live\t1\nnow_ns\t-1\n",
		"t410trace-live\t1\nnow_ns\t1\nhost\ta\\q\n",
		"t410trace-live\t1\nnow_ns\t1\nhost\ta\\x00\n",
		"t410trace-live\t1\nnow_ns\t1\nhost\t\x01\n",
		"t410trace-live\t1\nnow_ns\t1\nhost\th\nsimulated\t0\nref_clock\t0\nperiod_ns\t1\n"
		"triggers\t1\noverruns\t0\ndropped\t0\nread_failures\t0\ncpu_ns\t0\nphase\t\n"
		"phase_set_ns\t0\ndomains\t99999999\n",
		"t410trace-live\t1\nnow_ns\t1\nhost\th\nsimulated\t0\nref_clock\t0\nperiod_ns\t1\n"
		"triggers\t1\noverruns\t0\ndropped\t0\nread_failures\t0\ncpu_ns\t0\nphase\t\n"
		"phase_set_ns\t0\ndomains\t1\ndomain\t1\t3\t-1\t5\t1\t65\tn\tp\n",
		"t410trace-live\t1\nnow_ns\t1\nhost\th\nsimulated\t0\nref_clock\t0\nperiod_ns\t1\n"
		"triggers\t1\noverruns\t0\ndropped\t0\nread_failures\t0\ncpu_ns\t0\nphase\t\n"
		"phase_set_ns\t0\ndomains\t0\n", /* no end */
	};
	struct t4_live_snap s;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(t4_live_snap_parse(bad[i], strlen(bad[i]), &s), -EPROTO, "case %zu", i);
		cr_assert(strstr(t4_errmsg(), "live snapshot, line"), "%s", t4_errmsg());
		cr_assert_null(s.doms);
	}
}

/* The exposition: each line a comment, or NAME{LABELS} VALUE with every
 * label value quoted and escaped, at most 7 labels; counters in base
 * units; the UCF PMU's bytes read on the memory, its socket from its name. */
Test(live, prometheus_exposition)
{
	struct t4_live *l;
	struct t4_live_health h = { .now_ns = 1000000000ull };
	struct t4_live_snap s;
	struct t4_live_view *v;
	const struct t4_live_row *rows;
	size_t n, len;
	char *text;

	cr_assert_eq(t4_live_new(&l), 0);
	ucf_log(l, "nvidia_ucf_pmu_1", 10);
	cr_assert_eq(t4_live_take(l, &h, &s), 0);
	cr_assert_eq(t4_live_view_new(&v), 0);
	cr_assert_eq(t4_live_view_update(v, &s, &rows, &n), 0);
	cr_assert_eq(t4_live_prometheus(t4_live_view_snap(v), rows, n, &text, &len), 0);
	cr_assert(strstr(text, "t410_pmu_bytes_total{host=\"host\\\\x1b[2J\\\\x09\\\"x\\\"\\\\xff\","
			       "socket=\"1\",pmu=\"nvidia_ucf_pmu_1\",kind=\"ucf\","
			       "direction=\"read\",target=\"mem\"} 655360\n"),
		  "%s", text);
	cr_assert(strstr(text, "t410_phase_info{host="), "%s", text);
	cr_assert(strstr(text, "phase=\"load\"} 1\n"), "%s", text);
	cr_assert(strstr(text, "# TYPE t410_pmu_cycles_total counter\n"), "%s", text);
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		if (line[0] == '#')
			continue;
		size_t labels = 0;
		for (const char *p = line; *p; p++)
			labels += *p == '=' ;
		cr_assert_leq(labels, 7, "%s", line);
		cr_assert(strchr(line, '{') && strstr(line, "} "), "%s", line);
	}
	free(text);
	t4_live_view_free(v);
	t4_live_free(l);
}

/* Events whose names give one direction and target (slc_access_rd and
 * slc_hit_rd: requests, read, slc; local_snoop and ext_snp_access:
 * requests, neither) were two samples of one series, which Prometheus
 * refuses (a duplicate sample: the whole scrape fails): each of them is
 * t410_pmu_events_total's, with its name, and every series is there once;
 * an event whose labels are its own keeps its family. */
Test(live, prometheus_series_are_unique)
{
	static const char *const ev[] = { "cycles", "slc_access_rd", "slc_hit_rd", "local_snoop",
					  "ext_snp_access", "mem_bytes_rd", "slc_access_wr" };
	static const char *const units[] = { "cycles", "requests", "requests", "requests",
					     "requests", "bytes", "requests" };
	struct t4_live *l;
	struct t4_live_health h = { .now_ns = 1000000000ull };
	struct t4_live_snap s;
	struct t4_live_view *v;
	const struct t4_live_row *rows;
	size_t n, len, n_lines = 0;
	char *text, *lines[256];

	cr_assert_eq(t4_live_new(&l), 0);
	ucf_log_of(l, "nvidia_ucf_pmu_0", 10, ev, units, T4_ARRAY_LEN(ev));
	cr_assert_eq(t4_live_take(l, &h, &s), 0);
	cr_assert_eq(t4_live_view_new(&v), 0);
	cr_assert_eq(t4_live_view_update(v, &s, &rows, &n), 0);
	cr_assert_eq(t4_live_prometheus(t4_live_view_snap(v), rows, n, &text, &len), 0);
	for (size_t i = 1; i <= 4; i++) {
		char want[256];
		snprintf(want, sizeof(want), "t410_pmu_events_total{host=\"host\\\\x1b[2J\\\\x09"
			 "\\\"x\\\"\\\\xff\",socket=\"0\",pmu=\"nvidia_ucf_pmu_0\",kind=\"ucf\","
			 "event=\"%s\"} 655360\n", ev[i]);
		cr_assert_not_null(strstr(text, want), "no '%s' in\n%s", want, text);
	}
	cr_assert_not_null(strstr(text, "kind=\"ucf\",direction=\"read\",target=\"mem\"} 655360\n"),
			   "%s", text);
	cr_assert_not_null(strstr(text, "t410_pmu_requests_total{host=\"host\\\\x1b[2J\\\\x09"
				  "\\\"x\\\"\\\\xff\",socket=\"0\",pmu=\"nvidia_ucf_pmu_0\","
				  "kind=\"ucf\",direction=\"write\",target=\"slc\"} 655360\n"),
			   "%s", text);
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		if (line[0] == '#')
			continue;
		*strstr(line, "} ") = '\0'; /* the series: its name and labels */
		for (size_t i = 0; i < n_lines; i++)
			cr_assert_str_neq(lines[i], line, "twice: %s", line);
		cr_assert_lt(n_lines, T4_ARRAY_LEN(lines));
		lines[n_lines++] = line;
	}
	cr_assert_gt(n_lines, 10);
	free(text);
	t4_live_view_free(v);
	t4_live_free(l);
}
