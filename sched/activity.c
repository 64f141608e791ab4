/* activity.c - CPU and GPU activity: what the kernel sees of the workload (bpf/
 * activity component) into the log, and libt410trace's probe bookmarks and
 * triggers into the scheduler's commands.
 *
 * One drain thread polls the program's ring buffer: it sleeps until a
 * trigger record wakes it (a bookmark's too at periods under 1 ms), or
 * DRAIN_MS passes (slices and names never wake anybody), then takes every
 * record in order:
 *   - a task, CPU slice, GPU slice or GPU context becomes its packet in a
 *     ring of its own into the log (a context is written once, even when
 *     the kernel's table of contexts forgot it and sent it again);
 *   - a bookmark is queued with the instant the program called it (its
 *     set_ns: bookmark.c places it among the triggers), into a queue slot
 *     reserved before the app called: libt410trace makes a probe call only
 *     with a credit from the probe page (control/probe.c), and each credit
 *     this thread lends is a slot it reserved in the bookmark queue
 *     (T4_PROBE_CREDIT of them, topped up after each drain; a call that
 *     finds a quarter left wakes the drain), so a call the app was told is
 *     made cannot be refused here. Without a credit the library refuses
 *     the call at once (the app gets an error) and counts it in the page;
 *   - a trigger fires one, as the control socket's "trigger" does (the
 *     thread waits for it, a period at most), and gives back its slot.
 * It holds the page's robust mutex while it runs, so that a recorder
 * killed (SIGKILL) leaves its page marked and the library's calls stop
 * taking credits nobody will log (control/probe.c). At the end (before
 * the final trigger) it closes the page, waits for the calls under way,
 * takes what is left, gives back the unused reservations, and makes a
 * slice for each thread still on a CPU.
 *
 * The program is loaded at the scheduler's creation, with the rings, and
 * not at all when opts.activity.on is false; when it cannot load (no
 * privilege, no BTF) the reason goes to s->activity_note and the recording
 * goes on without it.
 */
#include "sched_internal.h"
#include "control/control.h"
#include "util/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DRAIN_MS ((int)(SCHED_DRAIN_NS / 1000000)) /* how often it takes slices */
#define RING_BYTES (4u << 20) /* its packets into the log: many drains' worth */
#define CONTEXTS 4096         /* GPU contexts remembered (more are written again) */

struct sched_activity {
	struct t4_sched *s;
	struct t4_bpf_activity *bpf;
	struct t4_ring *ring;
	pthread_t thread;
	bool started;
	_Atomic bool quit;
	uint64_t contexts[CONTEXTS]; /* context + 1; 0 = empty */
	_Atomic uint64_t cpu_slices, tasks, gpu_jobs, gpu_contexts;
	_Atomic uint64_t bookmarks, triggers, refused;
	char refusal[160]; /* the first refused probe command (drain thread) */
	struct t4_probe_page *page; /* the credits lent to libt410trace */
	int page_fd;                /* handed over with "ok uprobe" */
	uint64_t reserved, taken;   /* bookmark queue slots reserved for the
				     * calls (drain thread), and used */
};

/* ---- records --------------------------------------------------------------- */

/* Whether context is new (and remember it). */
static bool new_context(struct sched_activity *ph, uint64_t context)
{
	size_t i = (size_t)(t4_mix64(context) % CONTEXTS);

	for (size_t n = 0; n < CONTEXTS; n++, i = (i + 1) % CONTEXTS) {
		if (ph->contexts[i] == context + 1)
			return false;
		if (!ph->contexts[i]) {
			ph->contexts[i] = context + 1;
			return true;
		}
	}
	return true; /* full: written again, harmless */
}

static void put_packet(struct sched_activity *ph, const struct t4_packet *p)
{
	static const uint32_t types[] = { T4_PKT_CPU_SLICE, T4_PKT_TASK, T4_PKT_GPU_SLICE,
					  T4_PKT_GPU_CTX };
	_Atomic uint64_t *counts[] = { &ph->cpu_slices, &ph->tasks, &ph->gpu_jobs,
				       &ph->gpu_contexts };

	if (p->type == T4_PKT_GPU_CTX && !new_context(ph, p->gpu_ctx.context))
		return;
	if (t4_ring_put(ph->ring, p) < 0)
		return; /* dropped, and counted by the log */
	for (size_t i = 0; i < T4_ARRAY_LEN(types); i++)
		if (p->type == types[i])
			atomic_fetch_add_explicit(counts[i], 1, memory_order_relaxed);
}

/* The message first, then the count that publishes it (one writer). */
static void refuse(struct sched_activity *ph)
{
	if (!atomic_load(&ph->refused))
		snprintf(ph->refusal, sizeof(ph->refusal), "%s", t4_errmsg());
	atomic_fetch_add(&ph->refused, 1);
}

static void on_phase(void *ud, const struct t4_bpf_activity_rec *r)
{
	struct sched_activity *ph = ud;
	int rc;

	switch (r->kind) {
	case T4_BPF_PH_PACKET:
		put_packet(ph, &r->pkt);
		return;
	case T4_BPF_PH_BOOKMARK:
		ph->taken++;
		rc = sched_bookmarks_set_reserved(ph->s->bm, r->name, sched_from_mono(ph->s, r->mono_ns));
		if (rc == 0)
			atomic_fetch_add(&ph->bookmarks, 1);
		break;
	default:
		ph->taken++; /* its credit's slot is not used: given back */
		sched_bookmarks_unreserve(ph->s->bm, 1);
		rc = t4_sched_trigger(ph->s);
		if (rc == 0)
			atomic_fetch_add(&ph->triggers, 1);
		break;
	}
	if (rc < 0)
		refuse(ph);
}

/* Keep T4_PROBE_CREDIT calls reserved and lent (as far as the bookmark
 * queue has room). */
static void top_up(struct sched_activity *ph)
{
	uint64_t out = ph->reserved - ph->taken;
	uint32_t got;

	if (out >= T4_PROBE_CREDIT)
		return;
	got = sched_bookmarks_reserve(ph->s->bm, (uint32_t)(T4_PROBE_CREDIT - out));
	ph->reserved += got;
	t4_probe_grant(ph->page, got);
}

static void *drain_main(void *arg)
{
	struct sched_activity *ph = arg;

	t4_probe_hold(ph->page); /* till t4_probe_close: the page says if we die */
	while (!atomic_load(&ph->quit)) {
		t4_bpf_activity_poll(ph->bpf, DRAIN_MS, on_phase, ph);
		top_up(ph);
	}
	t4_probe_close(ph->page);
	while (t4_bpf_activity_poll(ph->bpf, 0, on_phase, ph) > 0)
		;
	sched_bookmarks_unreserve(ph->s->bm, (uint32_t)(ph->reserved - ph->taken));
	ph->reserved = ph->taken;
	t4_bpf_activity_flush(ph->bpf, on_phase, ph);
	return NULL;
}

/* ---- the API ---------------------------------------------------------------- */

int sched_activity_open(struct t4_sched *s)
{
	const struct t4_activity_opts *o = &s->opts.activity;
	struct t4_bpf_activity_opts bo = {
		.all = o->all, .pids = o->pids, .n_pids = o->n_pids,
		.verbose = t4_env_on("T410TRACE_BPF_DEBUG"),
		/* below ~1 ms the triggers a decoder waits for a late
		 * bookmark are shorter than the drains' wait (FORMAT.md 6.1) */
		.wake_on_bookmark = t4_bookmark_must_hurry(s->opts.period_ns),
	};
	struct sched_activity *ph;
	int rc;

	if (!o->on)
		return 0;
	if (!(ph = calloc(1, sizeof(*ph))))
		return t4_err(ENOMEM, "out of memory");
	ph->s = s;
	if ((rc = t4_log_ring(s->opts.log, RING_BYTES, T4_RING_NONBLOCK, &ph->ring)) < 0) {
		free(ph);
		return rc;
	}
	if (t4_bpf_activity_open(&ph->bpf, &bo) < 0) {
		snprintf(s->activity_note, sizeof(s->activity_note), "no CPU/GPU activity (%s)",
			 t4_errmsg());
		free(ph); /* its ring stays with the log, empty */
		return 0;
	}
	if ((rc = t4_probe_page_create(&ph->page, &ph->page_fd)) < 0) {
		t4_bpf_activity_close(ph->bpf);
		free(ph);
		return rc;
	}
	snprintf(s->activity_note, sizeof(s->activity_note), "%s", t4_bpf_activity_note(ph->bpf));
	s->ph = ph;
	return 0;
}

int sched_activity_start(struct t4_sched *s)
{
	struct sched_activity *ph = s->ph;
	int rc;

	if (!ph)
		return 0;
	top_up(ph);
	if ((rc = t4_thread_start(&ph->thread, drain_main, ph, "t4-activity", "activity thread")) < 0)
		return rc;
	ph->started = true;
	return 0;
}

void sched_activity_stop(struct t4_sched *s)
{
	struct sched_activity *ph = s->ph;

	if (!ph || !ph->started)
		return;
	atomic_store(&ph->quit, true);
	pthread_join(ph->thread, NULL);
	ph->started = false;
}

void sched_activity_close(struct t4_sched *s)
{
	if (!s->ph)
		return;
	sched_activity_stop(s);
	t4_bpf_activity_close(s->ph->bpf);
	t4_probe_page_unmap(s->ph->page);
	close(s->ph->page_fd);
	free(s->ph);
	s->ph = NULL;
}

void sched_activity_status(struct t4_sched *s, struct t4_sched_status *st)
{
	struct sched_activity *ph = s->ph;

	if (!ph)
		return;
	st->activity = true;
	st->cpu_slices = atomic_load(&ph->cpu_slices);
	st->tasks = atomic_load(&ph->tasks);
	st->gpu_jobs = atomic_load(&ph->gpu_jobs);
	st->gpu_contexts = atomic_load(&ph->gpu_contexts);
	st->probe_bookmarks = atomic_load(&ph->bookmarks);
	st->probe_triggers = atomic_load(&ph->triggers);
	st->probe_refused = atomic_load(&ph->refused);
	if (st->probe_refused)
		snprintf(st->probe_refusal, sizeof(st->probe_refusal), "%s", ph->refusal);
	st->activity_lost = t4_bpf_activity_lost(ph->bpf);
	/* the page is the workload's to write: its counts are clamped, not
	 * trusted to agree */
	uint64_t page = atomic_load(&ph->page->refused);
	uint64_t page_triggers = atomic_load(&ph->page->refused_triggers);
	if (page_triggers > page)
		page_triggers = page;
	st->bookmarks_refused += t4_bpf_activity_refused(ph->bpf, false) + page - page_triggers;
	st->triggers_refused += t4_bpf_activity_refused(ph->bpf, true) + page_triggers;
}

const char *t4_sched_activity_note(const struct t4_sched *s)
{
	return s->activity_note;
}

int t4_sched_follow(struct t4_sched *s, int pid)
{
	return s->ph ? t4_bpf_activity_track(s->ph->bpf, pid) : 0;
}

int t4_sched_probe_route(struct t4_sched *s, int pid, const char *path, int *fd)
{
	*fd = -1;
	if (!s->ph)
		return t4_err(ENOTSUP, "no uprobe: %s", s->activity_note[0] ? s->activity_note
									: "activity is off");
	if (t4_bpf_activity_uprobe(s->ph->bpf, pid, path) < 0)
		return 0;
	*fd = s->ph->page_fd;
	return 1;
}
