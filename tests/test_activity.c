/* test_activity.c - the CPU and GPU activity (bpf/activity, sched/activity.c) and
 * libt410trace's uprobe bookmarks, from the records to what `decode` shows.
 *
 * Without privilege: the record decoder, the GPU job rule (t4_fence_step,
 * the function the kernel side runs too) and the /proc/PID/maps matcher;
 * and a recording made as an unprivileged user, which must succeed and say
 * in one line what it left out.
 *
 * With BPF (root, or CAP_BPF and CAP_PERFMON, and kernel BTF; skipped with
 * the reason elsewhere): tests/apps/phase_app ($T4_OUT/apps, built by make)
 * runs a known schedule and writes down what really happened (its own
 * clock reads, and its threads' context switches as perf reports them to
 * the thread itself), so a loaded machine moves the expectations with the
 * facts; the recording must agree with it: every busy period's time on
 * CPU within 1 ms (by the switches: steal and IRQ time included, as a CPU
 * slice shows them, unlike the thread's CPU-time clock, which a loaded VM
 * host moves by more than that), on CPU at both ends, off CPU while
 * asleep, and each phase's CPU % in the summary within 2 points. Its
 * bookmarks and triggers, through the uprobe, must land on their triggers.
 * Nothing here can make a GPU job (no GPU driver, no sw_sync on the test
 * machine): the GPU programs are checked to load and attach where tracefs
 * has dma_fence; GPU slices are decoded from synthesized packets
 * (test_decode_slices.c).
 */
#include "cli_testutil.h"
#include "probe.h"
#include "sched_testutil.h" /* read_back */

#include <errno.h>
#include <grp.h>
#include <math.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "bpf/bpf.h"
#include "control/control.h"

/* ---- probes ------------------------------------------------------------------ */

/* Where this machine cannot load BPF tracing programs, skip saying why. */
static void need_bpf(void)
{
	t4t_need_bpf_tracing("BPF activity");
}

/* The test workload, built by make next to the library. */
static const char *phase_app(char *path, size_t cap)
{
	return t4t_app("phase_app", path, cap);
}

/* ---- records -> packets ------------------------------------------------------ */

Test(activity, records_decode_to_packets)
{
	struct t4_bpf_activity_rec ph;
	struct t4_ph_task task = { .type = T4_ACT_TASK, .pid = 10, .tid = 11, .ppid = 1, .ns = 5 };
	struct t4_ph_cpu cpu = { .type = T4_ACT_CPU, .cpu = 3, .pid = 10, .tid = 11,
				 .start_ns = 100, .end_ns = 250,
				 .flags = T4_ACT_PREEMPTED | T4_ACT_START_RUNTIME | 0x80 };
	struct t4_ph_gpu gpu = { .type = T4_ACT_GPU, .pid = 10, .tid = 12, .flags = T4_ACT_FROM_RUN,
				 .context = 77, .seqno = 9, .start_ns = 300, .end_ns = 200 };
	struct t4_ph_ctx ctx = { .type = T4_ACT_GPU_CTX, .context = 77 };
	struct t4_ph_mark mark = { .type = T4_ACT_BOOKMARK, .pid = 10, .tid = 11, .ns = 42 };

	memcpy(task.comm, "sixteen_chars_xx", 16); /* a full comm: no NUL */
	cr_assert_eq(t4_bpf_activity_decode(&task, sizeof(task), &ph), T4_BPF_PH_PACKET);
	cr_assert_eq(ph.pkt.type, T4_PKT_TASK);
	cr_assert_eq(ph.pkt.task.ppid, 1);
	cr_assert_str_eq(ph.pkt.task.name, "sixteen_chars_xx");

	cr_assert_eq(t4_bpf_activity_decode(&cpu, sizeof(cpu), &ph), T4_BPF_PH_PACKET);
	cr_assert_eq(ph.pkt.type, T4_PKT_CPU_SLICE);
	cr_assert_eq(ph.pkt.cpu_slice.cpu, 3);
	cr_assert_eq(ph.pkt.cpu_slice.end_ns, 250);
	cr_assert_eq(ph.pkt.cpu_slice.flags, T4_SLICE_PREEMPTED | T4_SLICE_START_RUNTIME,
		     "known flags kept, unknown ones dropped");

	cr_assert_eq(t4_bpf_activity_decode(&gpu, sizeof(gpu), &ph), T4_BPF_PH_PACKET);
	cr_assert_eq(ph.pkt.type, T4_PKT_GPU_SLICE);
	cr_assert_eq(ph.pkt.gpu_slice.seqno, 9);
	cr_assert_eq(ph.pkt.gpu_slice.end_ns, 300, "an end before the start is the start");
	cr_assert_eq(ph.pkt.gpu_slice.flags, T4_GPU_FROM_RUN);

	strcpy(ctx.driver, "amdgpu");
	strcpy(ctx.timeline, "gfx_0.0.0");
	cr_assert_eq(t4_bpf_activity_decode(&ctx, sizeof(ctx), &ph), T4_BPF_PH_PACKET);
	cr_assert_eq(ph.pkt.type, T4_PKT_GPU_CTX);
	cr_assert_str_eq(ph.pkt.gpu_ctx.timeline, "gfx_0.0.0");

	strcpy(mark.name, "prefill");
	cr_assert_eq(t4_bpf_activity_decode(&mark, sizeof(mark), &ph), T4_BPF_PH_BOOKMARK);
	cr_assert_eq(ph.mono_ns, 42);
	cr_assert_str_eq(ph.name, "prefill");
	mark.type = T4_ACT_TRIGGER;
	cr_assert_eq(t4_bpf_activity_decode(&mark, sizeof(mark), &ph), T4_BPF_PH_TRIGGER);

	/* wrong sizes and unknown types are refused, never read past */
	cr_assert_eq(t4_bpf_activity_decode(&cpu, sizeof(cpu) - 1, &ph), -EPROTO);
	cr_assert_eq(t4_bpf_activity_decode(&cpu, 2, &ph), -EPROTO);
	cpu.type = 99;
	cr_assert_eq(t4_bpf_activity_decode(&cpu, sizeof(cpu), &ph), -EPROTO);
}

/* The GPU job rule: a job is the workload's from its first submission; an
 * emission moves its start unless the GPU scheduler ran it; the signal
 * ends it; other processes' fences are never entered. */
Test(activity, fence_rule)
{
	struct t4_fence f = { 0 };

	cr_assert_eq(t4_fence_step(T4_FEV_INIT, 0, 0, &f, 10, 5, 6), T4_FA_NONE, "not ours");
	cr_assert_eq(t4_fence_step(T4_FEV_EMIT, 0, 0, &f, 10, 5, 6), T4_FA_NONE);
	cr_assert_eq(t4_fence_step(T4_FEV_DONE, 0, 0, &f, 10, 5, 6), T4_FA_NONE);

	cr_assert_eq(t4_fence_step(T4_FEV_INIT, 0, 1, &f, 100, 5, 6), T4_FA_PUT);
	cr_assert_eq(f.start_ns, 100);
	cr_assert_eq(f.tid, 6);
	cr_assert_eq(f.flags, T4_ACT_FROM_SUBMIT);
	cr_assert_eq(t4_fence_step(T4_FEV_QUEUE, 1, 1, &f, 110, 5, 7), T4_FA_NONE, "first counts");
	cr_assert_eq(t4_fence_step(T4_FEV_EMIT, 1, 0, &f, 120, 0, 0), T4_FA_PUT);
	cr_assert_eq(f.start_ns, 120);
	cr_assert_eq(t4_fence_step(T4_FEV_RUN, 1, 0, &f, 130, 0, 0), T4_FA_PUT);
	cr_assert_eq(f.flags, T4_ACT_FROM_RUN);
	cr_assert_eq(t4_fence_step(T4_FEV_EMIT, 1, 0, &f, 140, 0, 0), T4_FA_NONE,
		     "a run beats an emission");
	cr_assert_eq(f.start_ns, 130);
	cr_assert_eq(f.tid, 6, "the submitter stays");
	cr_assert_eq(t4_fence_step(T4_FEV_DONE, 1, 0, &f, 200, 0, 0), T4_FA_SLICE);
	cr_assert_eq(t4_fence_step(T4_FEV_FORGET, 1, 0, &f, 200, 0, 0), T4_FA_DELETE);
	cr_assert_eq(t4_fence_step(T4_FEV_FORGET, 0, 0, &f, 200, 0, 0), T4_FA_NONE);
}

Test(activity, maps_line_matches_the_exact_file)
{
	const char *line = "7f1c2a000000-7f1c2a004000 r-xp 00001000 fd:01 1314 /opt/lib/libt410trace.so\n";
	uint64_t dev = 0, ino = 0;

	cr_assert_eq(t4_bpf_maps_line(line, "/opt/lib/libt410trace.so", &dev, &ino), 1);
	cr_assert_eq(ino, 1314);
	cr_assert_eq(dev, makedev(0xfd, 1));
	cr_assert_eq(t4_bpf_maps_line(line, "/opt/lib/libt410trace", &dev, &ino), 0, "a prefix");
	cr_assert_eq(t4_bpf_maps_line(line, "/opt/lib/libt410trace.so.0", &dev, &ino), 0);
	cr_assert_eq(t4_bpf_maps_line("7f1c2a000000-7f1c2a004000 rw-p 00000000 00:00 0 \n",
				      "/opt/lib/libt410trace.so", &dev, &ino), 0, "anonymous");
	cr_assert_eq(t4_bpf_maps_line("garbage", "/x", &dev, &ino), 0);
}

/* ---- without privilege --------------------------------------------------------- */

/* Without BPF privilege (as nobody when run as root; as is otherwise), a
 * recording of a command succeeds, says in one line that the CPU/GPU
 * phases are left out and why, and its log has the counters. As root, the
 * binary is copied where nobody can run it: the checkout may lie under a
 * directory nobody cannot enter (/root, mktemp -d). */
Test(activity, unprivileged_recording_says_what_it_leaves_out, .timeout = 60)
{
	const char *b = bin();
	struct run r;
	char path[PATH_MAX + 16], text[sizeof(r.out)];
	int rc;

	if (geteuid() == 0) {
		t4t_nobody_tmpdir(r.dir, sizeof(r.dir), "t4nobody", true);
		cr_assert_eq(chown(r.dir, T4T_NOBODY, T4T_NOBODY), 0, "%s", strerror(errno));
		t4t_copy_program(b, r.dir, path, sizeof(path));
		char *argv[] = { path, "record", "--sim", "--period", "10ms", "-o", "s.t4t",
				 "--", "sleep", "0.2", NULL };
		rc = t4t_run_as_nobody(r.dir, argv);
		snprintf(path, sizeof(path), "%s/out.txt", r.dir);
		cr_assert_geq(t4_read_small_file(path, text, sizeof(text)), 0);
	} else {
		tmpdir(&r);
		sh(&r, "cd '%s' && '%s' record --sim --period 10ms -o s.t4t -- sleep 0.2", r.dir, b);
		rc = r.status;
		snprintf(text, sizeof(text), "%s", r.out);
	}
	if (strstr(text, "activity:"))
		cr_skip_test("BPF is permitted to this unprivileged user: nothing to leave out");
	cr_assert_eq(rc, 0, "%s", text);
	const char *note = strstr(text, "notice: no CPU/GPU activity (");
	cr_assert_not_null(note, "no line says the phases are left out:\n%s", text);
	cr_assert(strstr(note, "); counters are recorded\n"), "%s", text);
	cr_assert(strstr(note, "not permitted"), "the reason: %s", text);
	sh(&r, "'%s' info --json '%s/s.t4t'", b, r.dir);
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert_gt(json_num(r.out, "triggers"), 0);
	cleanup(&r);
}

/* ---- with BPF: a known schedule ------------------------------------------------- */

#define MAX_ROWS 4096
#define MS 1000000ll

struct slice {
	long long start, end;
	int tid;
};

struct expect {
	long long mono_to_ref; /* add to the app's times */
	struct {
		char name[32];
		long long start, end, cpu;
	} phase[16];
	int n_phase;
	struct busy {
		int tid, phase;
		long long t0, t1, on; /* on CPU in [t0, t1] by its switches */
	} busy[32];
	int n_busy;
};

static void read_expect(const char *path, bool raw_ref, struct expect *e)
{
	char line[256], name[32];
	long long a, b, c;
	int i, tid;
	FILE *f = fopen(path, "r");

	cr_assert_not_null(f, "%s", path);
	memset(e, 0, sizeof(*e));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "clock %lld %lld", &a, &b) == 2)
			e->mono_to_ref = raw_ref ? b - a : 0;
		else if (sscanf(line, "phase %d %31s %lld %lld", &i, name, &a, &b) == 4 && i < 16) {
			snprintf(e->phase[i].name, sizeof(e->phase[i].name), "%s", name);
			e->phase[i].start = a;
			e->phase[i].end = b;
			e->n_phase = i + 1;
		} else if (sscanf(line, "cpu %d %lld", &i, &a) == 2 && i < 16)
			e->phase[i].cpu = a;
		else if (sscanf(line, "busy %d %d %lld %lld %lld", &tid, &i, &a, &b, &c) == 5 &&
			 e->n_busy < 32)
			e->busy[e->n_busy++] = (struct busy){ tid, i, a, b, c };
	}
	fclose(f);
	cr_assert_eq(e->n_phase, 8, "%s: the app wrote %d phases", path, e->n_phase);
	cr_assert_eq(e->n_busy, 8);
	for (int k = 0; k < e->n_busy; k++)
		if (e->busy[k].on < 0)
			cr_skip_test("phase_app got no context switch records of its own (perf: "
				     "PERF_RECORD_SWITCH): no truth for a thread's time on CPU");
}

/* The decoded CPU slices (decode -f slices) of the workload. */
static size_t read_slices(const char *csv, struct slice *s)
{
	size_t n = 0;
	const char *p = strchr(csv, '\n');

	for (; p && *++p && n < MAX_ROWS; p = strchr(p, '\n')) {
		char kind[8];
		int tid;
		if (sscanf(p, "%lld,%lld,%7[a-z],%*d,%*d,%d", &s[n].start, &s[n].end, kind, &tid) == 4 &&
		    !strcmp(kind, "cpu")) {
			s[n].tid = tid;
			n++;
		}
	}
	return n;
}

/* Thread tid's on-CPU time within [a, b]. */
static long long on_cpu(const struct slice *s, size_t n, int tid, long long a, long long b)
{
	long long sum = 0;

	for (size_t i = 0; i < n; i++) {
		long long lo = s[i].start > a ? s[i].start : a, hi = s[i].end < b ? s[i].end : b;
		if (s[i].tid == tid && hi > lo)
			sum += hi - lo;
	}
	return sum;
}

/* The summary's CPU % of phase `label` (e.g. "spin_a#2"), or -1. */
static double summary_cpu(const char *summary, const char *label)
{
	const char *w = strstr(summary, "\nWORKLOAD");
	char pat[64];
	double v;

	cr_assert_not_null(w, "no WORKLOAD table:\n%s", summary);
	snprintf(pat, sizeof(pat), "\n  %s ", label);
	const char *p = strstr(w, pat);
	return p && sscanf(p + strlen(pat), "%lf", &v) == 1 ? v : -1;
}

/* Whether every busy period of phase i lies in it (a thread woken late
 * spends part of its CPU time after the phase's end: the app's own split
 * by phase is then not the recording's, only its periods are). */
static bool phase_clean(const struct expect *e, int i)
{
	for (int k = 0; k < e->n_busy; k++)
		if (e->busy[k].phase == i &&
		    (e->busy[k].t0 > e->phase[i].start + MS || e->busy[k].t1 > e->phase[i].end + MS))
			return false;
	return true;
}

/* In phase i (the one before it clean), a worker without a busy period
 * was asleep: under 1 ms on CPU (the barrier's wake-ups). */
static void expect_asleep(const struct expect *e, int i, const struct slice *sl, size_t n)
{
	int tids[2] = { e->busy[0].tid, 0 };
	long long a = e->phase[i].start + e->mono_to_ref + MS, b = e->phase[i].end + e->mono_to_ref - MS;

	for (int k = 0; k < e->n_busy; k++)
		if (e->busy[k].tid != tids[0])
			tids[1] = e->busy[k].tid;
	for (int t = 0; t < 2; t++) {
		bool busy = false;
		for (int k = 0; k < e->n_busy; k++)
			busy |= e->busy[k].phase == i && e->busy[k].tid == tids[t];
		if (!busy)
			cr_assert_lt(on_cpu(sl, n, tids[t], a, b), MS, "thread %d on CPU in %s (phase %d)",
				     tids[t], e->phase[i].name, i);
	}
}

/* One recording of the schedule, decoded and compared with what the app
 * measured: every busy period, and every phase that had every thread on
 * time (clean, the one before it too); the phases compared. */
static int schedule_round(const char *b, const char *app_bin)
{
	static struct slice sl[MAX_ROWS];
	static char csv[1 << 20], summary[1 << 16];
	char app[PATH_MAX + 32], label[48];
	struct expect e;
	struct run r;
	size_t n;
	int clean = 0;

	tmpdir(&r);
	/* counters per CPU (-C every online CPU), as the BPF trigger path reads
	 * them: the command's own per-task counters would add perf's context
	 * switch work to each of its slices and take the user path */
	sh(&r, "'%s' record -C $(cat /sys/devices/system/cpu/online) --period 1ms -o '%s/s.t4t' -- "
	       "'%s' schedule '%s/sched.txt'", b, r.dir, app_bin, r.dir);
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert(strstr(r.out, "bookmarks and 0 triggers through the uprobe"), "%s", r.out);
	cr_assert_not(strstr(r.out, " 0 bookmarks and"), "the app's bookmarks: %s", r.out);
	snprintf(app, sizeof(app), "%s/sched.txt", r.dir);
	read_expect(app, strstr(r.out, "reference clock CLOCK_MONOTONIC_RAW") != NULL, &e);
	cr_assert_eq(cli_run(csv, sizeof(csv), "'%s' decode -f slices '%s/s.t4t'", b, r.dir), 0);
	n = read_slices(csv, sl);
	cr_assert_gt(n, 8, "%s", csv);
	cr_assert_eq(cli_run(summary, sizeof(summary), "'%s' decode '%s/s.t4t'", b, r.dir), 0);

	for (int k = 0; k < e.n_busy; k++) {
		long long t0 = e.busy[k].t0 + e.mono_to_ref, t1 = e.busy[k].t1 + e.mono_to_ref;
		long long want = e.busy[k].on;
		int tid = e.busy[k].tid;
		/* on CPU when it read its clock at both ends */
		cr_assert_geq(on_cpu(sl, n, tid, t0 - MS, t0 + MS), 1, "thread %d at %lld", tid, t0);
		cr_assert_geq(on_cpu(sl, n, tid, t1 - MS, t1 + MS), 1, "thread %d at %lld", tid, t1);
		long long got = on_cpu(sl, n, tid, t0, t1);
		cr_assert_leq(llabs(got - want), MS,
			      "thread %d, phase %d: %lld ns on CPU decoded, %lld ns by its own "
			      "switches (%lld ns busy)",
			      tid, e.busy[k].phase, got, want, t1 - t0);
	}
	for (int i = 0; i < e.n_phase; i++) {
		int occurrence = 1 + i / 4;
		double dur = (double)(e.phase[i].end - e.phase[i].start);
		double want = 100.0 * (double)e.phase[i].cpu / dur;
		snprintf(label, sizeof(label), "%s#%d", e.phase[i].name, occurrence);
		double got = summary_cpu(summary, label);
		cr_assert_geq(got, 0, "no row %s in\n%s", label, summary);
		if (!strcmp(e.phase[i].name, "rest") && phase_clean(&e, i - 1))
			cr_assert_lt(got, 2.0, "%s: asleep, %.3f%% on CPU", label, got);
		if (i > 0 && phase_clean(&e, i - 1))
			expect_asleep(&e, i, sl, n);
		/* a phase after one with a late thread may hold its spill-over
		 * (CI once: 3.4% of rest#2 after a thread woken 3.6 ms late in
		 * both#2): only a phase clean after a clean one is compared */
		if (!phase_clean(&e, i) || (i > 0 && !phase_clean(&e, i - 1)))
			continue;
		clean++;
		cr_assert_leq(fabs(got - want), 2.0, "%s: %.3f%% decoded, %.3f%% by the app", label,
			      got, want);
	}
	cr_assert(strstr(csv, ",t4ph_a,") && strstr(csv, ",t4ph_b,"), "thread names");
	cleanup(&r);
	return clean;
}

/* The schedule again while fewer than two phases could be compared: on a
 * busy machine threads wake late (a helper session saw it at load 9),
 * and a phase with a late thread has no truth to compare with. Three
 * rounds without two such phases: skipped, saying so. */
Test(activity, cpu_slices_follow_the_workload_schedule, .timeout = 300)
{
	const char *b = bin();
	char app[PATH_MAX + 32];
	char load[64] = "?";
	int best = 0, round;

	need_bpf();
	phase_app(app, sizeof(app));
	for (round = 0; round < 3 && best < 2; round++) {
		int clean = schedule_round(b, app);
		best = clean > best ? clean : best;
	}
	if (best >= 2)
		return;
	FILE *f = fopen("/proc/loadavg", "r");
	if (f) {
		if (!fgets(load, sizeof(load), f))
			snprintf(load, sizeof(load), "?");
		load[strcspn(load, "\n")] = 0;
		fclose(f);
	}
	cr_skip_test("the machine was too busy: in %d recordings of the schedule, at most %d "
		     "phase(s) had every thread woken on time to compare (/proc/loadavg: %s)",
		     round, best, load);
}

/* ---- with BPF: bookmarks and triggers through the uprobe ------------------------ */

#define MARKS 8

/* When a trigger took its bookmark: on the BPF path its timer reads the
 * bookmark word, then the counters, once it fires, which a loaded machine
 * delays past the grid point its reference packet is stamped with (by
 * 5 ms in one run of 15 with three spinning loops): the latest end of its
 * reads bounds it. The user path reads the bookmark before its clocks. */
static uint64_t bookmark_read_by(const struct readback *rb, const struct t4_ref_pkt *ref)
{
	uint64_t t = ref->mono_ns;

	for (size_t i = 0; i < rb->n_rets; i++)
		if (rb->rets[i].trigger_id == ref->trigger_id && rb->rets[i].read_end_ns > t)
			t = rb->rets[i].read_end_ns;
	return t;
}

/* phase_app marks: bookmark m<i>, 5 ms, trigger, 5 ms, MARKS times, with
 * periodic triggers paused: the only triggers are the baseline, the
 * app's and the final one (the baseline is a single trigger too). Each bookmark is stamped between the app's
 * clock reads around its call, and the i-th trigger the app asked for
 * carries m<i>: not the one before, not the one after. */
Test(activity, uprobe_bookmarks_land_on_their_triggers, .timeout = 120)
{
	const char *b = bin();
	char app[PATH_MAX + 32], line[128];
	long long mark[MARKS][2], trig[MARKS][2], off = 0, x, y;
	struct readback rb;
	struct run r;
	int i, n_single = 0, carried = -1;
	FILE *f;

	need_bpf();
	phase_app(app, sizeof(app));
	tmpdir(&r);
	sh(&r, "'%s' record --paused --period 1ms -o '%s/m.t4t' -- '%s' marks '%s/marks.txt' %d", b, r.dir,
	   app, r.dir, MARKS);
	cr_assert_eq(r.status, 0, "%s", r.out);
	snprintf(line, sizeof(line), "%d bookmarks and %d triggers through the uprobe", MARKS, MARKS);
	cr_assert(strstr(r.out, line), "want '%s' in:\n%s", line, r.out);
	snprintf(app, sizeof(app), "%s/marks.txt", r.dir);
	cr_assert_not_null(f = fopen(app, "r"));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "mark %d %lld %lld", &i, &x, &y) == 3 && i < MARKS)
			mark[i][0] = x, mark[i][1] = y;
		else if (sscanf(line, "trigger %d %lld %lld", &i, &x, &y) == 3 && i < MARKS)
			trig[i][0] = x, trig[i][1] = y;
	}
	fclose(f);
	if (strstr(r.out, "reference clock CLOCK_MONOTONIC_RAW")) /* user path: converted */
		off = 100000; /* the conversion's error, at most */

	snprintf(app, sizeof(app), "%s/m.t4t", r.dir);
	read_back(app, &rb);
	cr_assert_eq(rb.n_bms, MARKS);
	for (i = 0; i < MARKS; i++) {
		snprintf(line, sizeof(line), "m%d", i);
		cr_assert_str_eq(rb.bms[i].name, line);
		if (!off) /* MONOTONIC: the kernel's stamp itself */
			cr_assert(rb.bms[i].set_ns >= (uint64_t)mark[i][0] &&
				  rb.bms[i].set_ns <= (uint64_t)mark[i][1],
				  "%s set at %llu, called in [%lld, %lld]", line,
				  (unsigned long long)rb.bms[i].set_ns, mark[i][0], mark[i][1]);
	}
	qsort(rb.refs, rb.n_refs, sizeof(*rb.refs), cmp_ref);
	for (size_t k = 0; k < rb.n_refs; k++) {
		const struct t4_ref_pkt *ref = &rb.refs[k];
		if (ref->sched_id != 0 || ref->trigger_id == 0 || !(ref->flags & T4_REF_SINGLE))
			continue;
		cr_assert_lt(n_single, MARKS, "more single triggers than the app asked for");
		i = n_single++;
		/* The app does not wait for its trigger: one that took its
		 * bookmark after the app's next bookmark call began (a slow
		 * drain or a late timer: ASan, a loaded machine) may carry
		 * that one. */
		uint64_t took = off ? ref->mono_ns : bookmark_read_by(&rb, ref);
		int last = i, j = i;
		while (last + 1 < MARKS && (uint64_t)mark[last + 1][0] <= took)
			last++;
		while (j <= last && ref->bookmark_id != rb.bms[j].bookmark_id)
			j++;
		if (j > last) {
			char bms[MARKS * 64] = "";
			for (int m = 0; m < MARKS; m++)
				snprintf(bms + strlen(bms), sizeof(bms) - strlen(bms),
					 " m%d: ID %u set %llu called %lld;", m, rb.bms[m].bookmark_id,
					 (unsigned long long)rb.bms[m].set_ns, mark[m][0]);
			cr_assert_fail("trigger %d (ID %llu, at %llu, read by %llu, called %lld) "
				       "carries %u, not m%d..m%d;%s", i,
				       (unsigned long long)ref->trigger_id,
				       (unsigned long long)ref->mono_ns, (unsigned long long)took,
				       trig[i][0], ref->bookmark_id, i, last, bms);
		}
		if (j != carried) /* the first trigger to carry m<j> */
			cr_assert_eq(rb.bms[j].first_trigger, ref->trigger_id, "m%d's first trigger", j);
		carried = j;
		if (!off)
			cr_assert_geq(ref->mono_ns, (uint64_t)trig[i][0], "trigger %d fired before its call", i);
	}
	cr_assert_eq(n_single, MARKS);
	free(rb.refs);
	free(rb.rets);
	free(rb.bms);
	cleanup(&r);
}

/* ---- many processes, bursts, refusals ------------------------------------------ */

/* `record -q RECORD_ARGS -o DIR/a.t4t -- phase_app APP_ARGS` in a new
 * r->dir; the log's path into log (PATH_MAX + 16 bytes). */
static void record_app(struct run *r, char *log, const char *record_args, const char *app_args)
{
	char app[600];

	phase_app(app, sizeof(app));
	tmpdir(r);
	snprintf(log, PATH_MAX + 16, "%s/a.t4t", r->dir);
	sh(r, "'%s' record -q %s -o '%s' -- '%s' %s", bin(), record_args, log, app, app_args);
	cr_assert_eq(r->status, 0, "%s", r->out);
}

/* LIBRARY.md: "An older library (its t410__probe without credits) is
 * never given the uprobe: it keeps the socket." A workload that maps a
 * library with only t410__probe, then one with t410__probe2 (empty
 * stand-ins), says hello with each: the first is answered "ok socket",
 * the second "ok uprobe". */
Test(activity, an_older_library_keeps_the_socket, .timeout = 120)
{
	struct run r;

	need_bpf();
	t4t_need_cmd("python3");
	t4t_exec_tmpdir(r.dir, sizeof(r.dir), "t4old"); /* the libraries are loaded from it */
	r.status = cli_exec(&(struct cli_io){ .dir = r.dir, .out = r.out, .cap = sizeof(r.out),
					       .merge_err = true },
			    "unset T410TRACE_CONTROL; "
			    "for p in t410__probe t410__probe2; do "
			    "echo \"void $p(int op, const char *n) { (void)op; (void)n; }\" > $p.c && "
			    "%s -shared -fPIC -o $p.so $p.c || exit 1; done; "
			    "printf '%%s\\n' 'import ctypes, os, socket' "
			    "'for lib in (\"t410__probe.so\", \"t410__probe2.so\"):' "
			    "'    path = os.path.realpath(lib)' '    ctypes.CDLL(path)' "
			    "'    s = socket.socket(socket.AF_UNIX)' "
			    "'    s.connect(os.environ[\"T410TRACE_CONTROL\"])' "
			    "'    s.sendall((\"hello %%s\\n\" %% path).encode())' "
			    "'    print(lib, s.makefile().readline().strip())' > hello.py && "
			    "'%s' record -q --sim --period 10ms -o a.t4t -- python3 hello.py",
			    t4t_cc(), bin());
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert_str_eq(r.out, "t410__probe.so ok socket\nt410__probe2.so ok uprobe\n");
	cleanup(&r);
}

/* How many bookmark packets of the log have a name matching the regular
 * expression name_re; -1 when info says nothing. */
static int count_bookmarks(struct run *r, const char *log, const char *name_re)
{
	sh(r, "'%s' info --json '%s' | grep -o '\"name\": \"%s\", \"first_trigger\"' | wc -l", bin(),
	   log, name_re);
	return r->out[0] ? atoi(r->out) : -1;
}

/* The log's count `key` (bookmarks_refused, triggers_refused). */
static int count_in(struct run *r, const char *log, const char *key)
{
	sh(r, "'%s' info --json '%s' | grep -o '\"%s\": [0-9]*'", bin(), log, key);
	return strchr(r->out, ':') ? atoi(strchr(r->out, ':') + 1) : -1;
}

static int refused_in(struct run *r, const char *log)
{
	return count_in(r, log, "bookmarks_refused");
}

/* 256 processes of the workload set 4 bookmarks each at the same moment:
 * every call succeeds and every one is in the log (args: --no-phases, the old name of
 * --no-activity, kept working, for the control socket, "" for the uprobe where BPF loads). */
static void many_processes(const char *args)
{
	char log[PATH_MAX + 16], rec[64];
	struct run r;

	snprintf(rec, sizeof(rec), "--sim %s --period 1ms", args);
	record_app(&r, log, rec, "procs 256 4");
	cr_assert(strstr(r.out, "procs: 0 of 256 failed"), "%s", r.out);
	cr_assert_eq(count_bookmarks(&r, log, "p[0-9]*"), 256 * 4);
	cleanup(&r);
}

Test(activity, many_processes_bookmark_through_the_socket, .timeout = 120)
{
	many_processes("--no-phases");
}

Test(activity, many_processes_bookmark_through_the_uprobe, .timeout = 120)
{
	need_bpf();
	many_processes("");
}

/* A child forked after its parent's calls through the uprobe: on x86_64
 * Linux 6.18+ the parent's probe point had become a call to the kernel's
 * uprobe trampoline, a mapping fork does not copy, and the child's first
 * bookmark died of SIGSEGV. Every call of the child succeeds and is in
 * the log. */
Test(activity, a_child_forked_after_uprobe_calls_bookmarks, .timeout = 120)
{
	char log[PATH_MAX + 16];
	struct run r;

	need_bpf();
	record_app(&r, log, "--sim --period 1ms", "forked 10");
	cr_assert(strstr(r.out, "forked: child exited 0"), "%s", r.out);
	cr_assert_eq(count_bookmarks(&r, log, "child"), 10);
	cr_assert_eq(count_bookmarks(&r, log, "parent"), 2);
	cleanup(&r);
}

/* 10,000 bookmarks as fast as the uprobe takes them (a 100 us pause every
 * 10): each call returns 0 and each one is in the log. */
Test(activity, a_burst_of_10000_bookmarks_is_logged, .timeout = 120)
{
	char log[PATH_MAX + 16];
	struct run r;

	need_bpf();
	record_app(&r, log, "--period 1ms", "burst 10000");
	cr_assert(strstr(r.out, "burst: 10000 taken, 0 refused"), "%s", r.out);
	cr_assert_eq(count_bookmarks(&r, log, "b[0-9]*"), 10000);
	cr_assert_eq(refused_in(&r, log), 0);
	cleanup(&r);
}

/* With periodic triggers stopped the queue fills: the calls past it get an
 * error at once (args: the uprobe where BPF loads, or --no-activity: the
 * socket), every call that returned 0 is in the log, and the log counts the
 * refused ones. */
static void full_queue(const char *args)
{
	char log[PATH_MAX + 16], rec[64], burst[32];
	int taken = -1, refused = -1;
	struct run r;

	snprintf(rec, sizeof(rec), "--sim --paused %s", args);
	snprintf(burst, sizeof(burst), "burst %d", T4_BOOKMARK_QUEUE + 4000);
	record_app(&r, log, rec, burst);
	const char *line = strstr(r.out, "burst: ");
	cr_assert(line && sscanf(line, "burst: %d taken, %d refused", &taken, &refused) == 2, "%s",
		  r.out);
	cr_assert_eq(taken + refused, T4_BOOKMARK_QUEUE + 4000);
	cr_assert_geq(refused, 4000, "%s", r.out);
	cr_assert_eq(count_bookmarks(&r, log, "b[0-9]*"), taken);
	cr_assert_eq(refused_in(&r, log), refused);
	cleanup(&r);
}

Test(activity, a_full_queue_refuses_and_counts_through_the_uprobe, .timeout = 120)
{
	need_bpf();
	full_queue("");
}

Test(activity, a_full_queue_refuses_and_counts_through_the_socket, .timeout = 120)
{
	full_queue("--no-activity");
}

/* The bookmark queue full of bookmarks (triggers paused): a trigger through
 * the uprobe has no credit either; it is refused (the app gets -EREMOTEIO)
 * and counted as a trigger, not a bookmark. Through the socket it fires.
 * Either way the log's counts are the app's refusals, kind by kind. */
static void trigger_after_fill(const char *args, int want_rc)
{
	char log[PATH_MAX + 16], rec[64], fill[32];
	int taken = -1, refused = -1, rc = 1;
	struct run r;

	snprintf(rec, sizeof(rec), "--sim --paused %s", args);
	snprintf(fill, sizeof(fill), "fill %d", T4_BOOKMARK_QUEUE);
	record_app(&r, log, rec, fill);
	const char *line = strstr(r.out, "fill: ");
	cr_assert(line && sscanf(line, "fill: %d taken, %d refused; trigger: %d", &taken, &refused,
				 &rc) == 3, "%s", r.out);
	cr_assert_eq(taken, T4_BOOKMARK_QUEUE, "%s", r.out);
	cr_assert_eq(rc, want_rc, "%s", r.out);
	cr_assert_eq(refused_in(&r, log), refused);
	cr_assert_eq(count_in(&r, log, "triggers_refused"), want_rc ? 1 : 0);
	cleanup(&r);
}

Test(activity, a_trigger_without_room_is_counted_as_a_trigger, .timeout = 180)
{
	need_bpf();
	trigger_after_fill("", -EREMOTEIO);
}

Test(activity, a_trigger_through_the_socket_fires_with_the_queue_full, .timeout = 180)
{
	trigger_after_fill("--no-activity", 0);
}

/* A name too long, or with a space, that reaches the probe point (a caller
 * skipping the library's check) is refused and counted, never cut. */
Test(activity, the_uprobe_refuses_a_name_it_would_cut, .timeout = 60)
{
	char log[PATH_MAX + 16];
	struct run r;

	need_bpf();
	record_app(&r, log, "--period 1ms", "rawname");
	cr_assert_eq(count_bookmarks(&r, log, "[a-z ]*"), 2, "ok and done only, none cut");
	cr_assert_eq(count_bookmarks(&r, log, "ok"), 1);
	cr_assert_eq(count_bookmarks(&r, log, "done"), 1);
	cr_assert_eq(refused_in(&r, log), 2);
	cleanup(&r);
}

/* The kernel side's name rule is control/name.c's, byte for byte. */
Test(activity, the_kernel_name_rule_is_the_protocols)
{
	char name[2] = { 0, 0 };

	for (int c = 1; c < 256; c++) {
		name[0] = (char)c;
		cr_assert_eq(t4_ph_name_char((char)c) != 0, t4_control_name_ok(name), "byte %d", c);
	}
}
