/* test_merge_uts.c - two recordings at the same time on two "hosts"
 * (separate UTS namespaces: unshare --uts, host names of their own),
 * merged by `decode a.t4t b.t4t` (decode/merge.c), end to end.
 *
 * Both record `--sim` at different periods, started apart; one bookmark
 * is sent to each through its control socket, and the test reads
 * CLOCK_REALTIME just before the first `ctl bookmark` and just after the
 * second. Each host's placed phase start (UTC, -f phases) must fall in
 * that interval widened by the host's reported bound; and since both
 * "hosts" share this machine's one clock (the kernel's error of it is
 * common to both and cancels), within the fits' residuals of it as well,
 * which a merge that placed a host by its own origin would miss by the
 * recordings' start offset. Skipped with the reason where unshare cannot
 * run.
 */
#include "cli_testutil.h"
#include "probe.h"

#include <inttypes.h>

/* The number after key in the JSONL header of host `host`. */
static int64_t header_num(const char *out, const char *host, const char *key)
{
	char anchor[96];
	const char *a, *k;

	snprintf(anchor, sizeof(anchor), "\"host\": \"%s\", \"placement\"", host);
	cr_assert_not_null(a = strstr(out, anchor), "no header of %s in:\n%.3000s", host, out);
	cr_assert_not_null(k = strstr(a, key), "%s", out);
	return strtoll(k + strlen(key), NULL, 10);
}

static int64_t step_start(const char *csv, const char *host)
{
	char want[96];
	const char *p;

	snprintf(want, sizeof(want), "\n%s,step,1,", host);
	cr_assert_not_null(p = strstr(csv, want), "no step on %s in:\n%s", host, csv);
	return strtoll(p + strlen(want), NULL, 10);
}

Test(merge_uts, two_hosts_at_once_line_up_within_their_bounds, .timeout = 300)
{
	static struct run r;
	static char hdr[1 << 16];
	const char *b = bin();

	t4t_need_cmd("unshare");
	if (cli_run(hdr, sizeof(hdr), "unshare --uts sh -c 'hostname t4uts && hostname' 2>&1") ||
	    strcmp(hdr, "t4uts\n"))
		cr_skip_test("unshare --uts cannot run here: %.200s", hdr);
	tmpdir(&r);
	/* both recorders up (a trigger each), then the bookmarks, then SIGINT */
	sh_in_dir(&r, "\"$B\" record --sim --period 1ms -d 120s -c a.sock -o a.t4t 2> a.err & ra=$!; "
		      "sleep 0.3; unshare --uts sh -c 'hostname t4hostB && exec \"$B\" record --sim"
		      " --period 2ms -d 120s -c b.sock -o b.t4t' 2> b.err & rb=$!; "
		      "for s in a b; do for i in $(seq 600); do \"$B\" ctl --control $s.sock status"
		      " 2>/dev/null | grep -q 'triggers=[1-9]' && break; sleep 0.05; done; done; "
		      "t0=$(date +%s%N); \"$B\" ctl --control a.sock bookmark step >/dev/null &&"
		      " \"$B\" ctl --control b.sock bookmark step >/dev/null; t1=$(date +%s%N); "
		      "sleep 0.3; kill -INT $ra $rb; wait $ra; wa=$?; wait $rb; echo \"rc=$wa,$?"
		      " t0=$t0 t1=$t1\"");
	cr_assert(strstr(r.out, "rc=0,0 "), "%s", r.out);
	int64_t t0 = strtoll(strstr(r.out, "t0=") + 3, NULL, 10);
	int64_t t1 = strtoll(strstr(r.out, "t1=") + 3, NULL, 10);
	sh_in_dir(&r, "\"$B\" decode a.t4t b.t4t -f phases 2>/dev/null");
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert_eq(cli_run(hdr, sizeof(hdr), "cd '%s' && '%s' decode a.t4t b.t4t -f jsonl 2>&1 |"
				 " grep -e '\"type\": \"header\"' -e warning", r.dir, b), 0, "%s", hdr);
	char host_a[80];
	const char *h = strstr(hdr, "\"log\": \"a.t4t\", \"host\": \"");
	cr_assert_not_null(h, "%s", hdr);
	h += strlen("\"log\": \"a.t4t\", \"host\": \"");
	snprintf(host_a, sizeof(host_a), "%.*s", (int)strcspn(h, "\""), h);
	cr_assert_str_neq(host_a, "t4hostB");
	const char *names[] = { host_a, "t4hostB" };
	for (int i = 0; i < 2; i++) {
		int64_t start = step_start(r.out, names[i]);
		int64_t bound = header_num(hdr, names[i], "\"bound_ns\": ");
		int64_t resid = header_num(hdr, names[i], "\"residual_ns\": ");
		cr_log_info("%s: step at %+" PRId64 " ns of [t0, t1] (%" PRId64 " ns wide), bound +-%"
			    PRId64 ", residual %" PRId64, names[i], start - t0, t1 - t0, bound, resid);
		cr_assert(start >= t0 - bound && start <= t1 + bound, "%s", r.out);
		cr_assert(start >= t0 - resid && start <= t1 + resid,
			  "%s: %" PRId64 " ns outside [t0, t1] +- its residual %" PRId64, names[i],
			  start < t0 ? t0 - start : start - t1, resid);
	}
	int64_t gap = step_start(r.out, host_a) - step_start(r.out, "t4hostB");
	cr_assert_leq(llabs(gap), (t1 - t0) + header_num(hdr, host_a, "\"bound_ns\": ") +
					  header_num(hdr, "t4hostB", "\"bound_ns\": "));
	cleanup(&r);
}
