/* activity.c - user side of the CPU and GPU activity: load activity.bpf.o
 * through its skeleton, attach, follow processes, attach the uprobe of a
 * library on demand, and turn the ring buffer's records into packets.
 *
 * What must work: the scheduler tracepoints (tp_btf: BTF and privilege).
 * What may be missing: the dma_fence tracepoints (classic ones, attached
 * through tracefs), and the GPU scheduler's, which exist only where the
 * gpu_sched module is loaded: their programs are not loaded when tracefs
 * does not list them (bpf_program__set_autoload, libbpf-tools' habit), and
 * what is left out is said in one line (t4_bpf_activity_note).
 *
 * The uprobe: a process of the workload says which file holds its
 * libt410trace (its "hello"); the file must be mapped by that process
 * (/proc/PID/maps), is reached through /proc/PID/root (its mount
 * namespace), and gets one uprobe on t410__probe2, found by libbpf in the
 * file's symbols, so no offset a process sends is ever trusted. One link per
 * file (device, inode), shared by every process that maps it; the process
 * is then let through the program's uprobe_ok filter. Attaching happens on
 * the control socket's thread while the drain thread polls: a mutex keeps
 * the table of files.
 *
 * Records -> packets (t4_bpf_activity_decode) is a pure function of the bytes,
 * so tests feed it hand-made records. Errors follow util.h.
 */
#include "bpf.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <time.h>
#include <unistd.h>

#include "bpf/activity.skel.h" /* generated: $(OUT)/bpf */
#include "common.h"
#include "control/control.h"
#include "util/util.h"

_Static_assert(T4_ACT_PROBE_BOOKMARK == T4_PROBE_BOOKMARK && T4_ACT_PROBE_TRIGGER == T4_PROBE_TRIGGER &&
	       T4_ACT_PROBE_WAKE == T4_PROBE_WAKE,
	       "control.h and activity.h must name the same probe operations");
_Static_assert(T4_PROBE_CREDIT <= T4_ACT_MARKS_MAX,
	       "the marks ring holds every call libt410trace may make before a drain");
_Static_assert(sizeof(T4_ACT_PROBE_SYMBOL) == sizeof(T4_PROBE_SYMBOL),
	       "control.h and activity.h must name the same probe point");
_Static_assert((unsigned)T4_ACT_PREEMPTED == (unsigned)T4_SLICE_PREEMPTED &&
	       (unsigned)T4_ACT_START_RUNTIME == (unsigned)T4_SLICE_START_RUNTIME &&
	       (unsigned)T4_ACT_FROM_SUBMIT == (unsigned)T4_GPU_FROM_SUBMIT &&
	       (unsigned)T4_ACT_FROM_RUN == (unsigned)T4_GPU_FROM_RUN,
	       "phase flags are the packets' flags");
_Static_assert(T4_ACT_NAME == T4_NAME_MAX, "one name length");

#define DEFAULT_RING_BYTES (4u << 20)
#define MAX_LIBS 16 /* files with libt410trace's probe point */

struct t4_bpf_activity {
	struct activity_bpf *skel;
	struct ring_buffer *ring;
	struct bpf_link *links[16]; /* the tracepoints */
	size_t n_links;
	pthread_mutex_t lock;       /* libs */
	struct {
		uint64_t dev, ino;
		struct bpf_link *link;
	} libs[MAX_LIBS];
	size_t n_libs;
	t4_bpf_activity_fn fn;
	void *ud;
	struct t4_bpf_activity_rec ph;
	uint64_t malformed;
	char note[256];
};

/* ---- records -> packets ------------------------------------------------------ */

/* Copy a string the kernel wrote (NUL-terminated or not) into a packet. */
static void take_str(char *dst, size_t cap, const char *src, size_t src_cap)
{
	size_t n = strnlen(src, src_cap < cap ? src_cap : cap - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

static void task_packet(const struct t4_ph_task *r, struct t4_packet *p)
{
	p->type = T4_PKT_TASK;
	p->task = (struct t4_task_pkt){ .pid = r->pid, .tid = r->tid, .ppid = r->ppid,
					.mono_ns = r->ns };
	take_str(p->task.name, sizeof(p->task.name), r->comm, sizeof(r->comm));
}

static void cpu_packet(const struct t4_ph_cpu *r, struct t4_packet *p)
{
	p->type = T4_PKT_CPU_SLICE;
	p->cpu_slice = (struct t4_cpu_slice_pkt){
		.cpu = r->cpu, .pid = r->pid, .tid = r->tid, .start_ns = r->start_ns,
		.end_ns = r->end_ns > r->start_ns ? r->end_ns : r->start_ns,
		.flags = r->flags & (T4_SLICE_PREEMPTED | T4_SLICE_START_RUNTIME),
	};
}

static void gpu_packet(const struct t4_ph_gpu *r, struct t4_packet *p)
{
	p->type = T4_PKT_GPU_SLICE;
	p->gpu_slice = (struct t4_gpu_slice_pkt){
		.context = r->context, .seqno = r->seqno, .pid = r->pid, .tid = r->tid,
		.start_ns = r->start_ns, .end_ns = r->end_ns > r->start_ns ? r->end_ns : r->start_ns,
		.flags = r->flags & (T4_GPU_FROM_SUBMIT | T4_GPU_FROM_RUN),
	};
}

static void ctx_packet(const struct t4_ph_ctx *r, struct t4_packet *p)
{
	p->type = T4_PKT_GPU_CTX;
	p->gpu_ctx.context = r->context;
	take_str(p->gpu_ctx.driver, sizeof(p->gpu_ctx.driver), r->driver, sizeof(r->driver));
	take_str(p->gpu_ctx.timeline, sizeof(p->gpu_ctx.timeline), r->timeline,
		 sizeof(r->timeline));
}

static void mark(const struct t4_ph_mark *r, struct t4_bpf_activity_rec *out)
{
	out->kind = r->type == T4_ACT_TRIGGER ? T4_BPF_PH_TRIGGER : T4_BPF_PH_BOOKMARK;
	out->mono_ns = r->ns;
	out->pid = r->pid;
	out->tid = r->tid;
	take_str(out->name, sizeof(out->name), r->name, sizeof(r->name));
}

/* The size each record type must have. */
static size_t rec_size(uint32_t type)
{
	switch (type) {
	case T4_ACT_TASK: return sizeof(struct t4_ph_task);
	case T4_ACT_CPU: return sizeof(struct t4_ph_cpu);
	case T4_ACT_GPU: return sizeof(struct t4_ph_gpu);
	case T4_ACT_GPU_CTX: return sizeof(struct t4_ph_ctx);
	case T4_ACT_BOOKMARK:
	case T4_ACT_TRIGGER: return sizeof(struct t4_ph_mark);
	default: return 0;
	}
}

int t4_bpf_activity_decode(const void *data, size_t size, struct t4_bpf_activity_rec *out)
{
	uint32_t type;

	if (size < sizeof(type))
		return t4_err(EPROTO, "activity record of %zu bytes", size);
	memcpy(&type, data, sizeof(type));
	if (!rec_size(type) || size != rec_size(type))
		return t4_err(EPROTO, "activity record of type %" PRIu32 " and %zu bytes", type, size);
	out->kind = T4_BPF_PH_PACKET;
	switch (type) {
	case T4_ACT_TASK: task_packet(data, &out->pkt); break;
	case T4_ACT_CPU: cpu_packet(data, &out->pkt); break;
	case T4_ACT_GPU: gpu_packet(data, &out->pkt); break;
	case T4_ACT_GPU_CTX: ctx_packet(data, &out->pkt); break;
	default: mark(data, out); break;
	}
	return out->kind;
}

/* ---- loading ------------------------------------------------------------------- */

/* Whether tracefs lists the tracepoint (either of its usual mounts). */
static bool tracepoint_listed(const char *category, const char *name)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[256];

	for (size_t i = 0; i < T4_ARRAY_LEN(roots); i++) {
		snprintf(path, sizeof(path), "%s/events/%s/%s", roots[i], category, name);
		if (access(path, F_OK) == 0)
			return true;
	}
	return false;
}

static void autoload(struct bpf_program *const *progs, size_t n, bool on)
{
	for (size_t i = 0; i < n; i++)
		bpf_program__set_autoload(progs[i], on);
}

/* Leave out what this kernel lacks; say so when it is the GPU jobs. */
static void choose_programs(struct t4_bpf_activity *p)
{
	struct activity_bpf *s = p->skel;
	struct bpf_program *fence[] = { s->progs.on_fence_init, s->progs.on_fence_emit,
					s->progs.on_fence_signaled, s->progs.on_fence_destroy };
	struct bpf_program *sched[] = { s->progs.on_sched_job, s->progs.on_run_job,
					s->progs.on_job_done };
	bool fences = tracepoint_listed("dma_fence", "dma_fence_signaled");

	autoload(fence, T4_ARRAY_LEN(fence), fences);
	autoload(sched, T4_ARRAY_LEN(sched), fences && tracepoint_listed("gpu_scheduler", "drm_run_job"));
	if (!fences)
		snprintf(p->note, sizeof(p->note), "no GPU jobs (tracefs lists no dma_fence "
			 "tracepoints)");
}

/* Attach every loaded program but the uprobe (attached per library). A
 * GPU one that fails is left out (said); a CPU one fails the whole. */
static int attach(struct t4_bpf_activity *p)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, p->skel->obj) {
		bool cpu = !strncmp(bpf_program__section_name(prog), "tp_btf/", 7);
		struct bpf_link *l;

		if (prog == p->skel->progs.on_probe || !bpf_program__autoload(prog))
			continue;
		l = bpf_program__attach(prog);
		if (!l && cpu)
			return t4_bpf_fail(errno, bpf_program__section_name(prog));
		if (!l) {
			snprintf(p->note, sizeof(p->note), "no GPU jobs (%s: %s)",
				 bpf_program__section_name(prog), strerror(errno));
			continue;
		}
		if (p->n_links == T4_ARRAY_LEN(p->links)) {
			bpf_link__destroy(l);
			return t4_err(E2BIG, "BPF activity: more programs than links");
		}
		p->links[p->n_links++] = l;
	}
	return 0;
}

static int on_sample(void *ctx, void *data, size_t size);

/* The marks ring's size: T4_ACT_MARKS_MAX records (each with its 8-byte
 * header), a power of two. */
static uint32_t marks_bytes(void)
{
	uint32_t need = T4_ACT_MARKS_MAX * (uint32_t)(sizeof(struct t4_ph_mark) + 8), n = 4096;

	while (n < need)
		n <<= 1;
	return n;
}

static int load(struct t4_bpf_activity *p, const struct t4_bpf_activity_opts *o)
{
	size_t ring = o->ring_bytes ? o->ring_bytes : DEFAULT_RING_BYTES;
	int rc;

	p->skel = activity_bpf__open();
	if (!p->skel)
		return t4_bpf_fail(errno, "open");
	p->skel->rodata->trace_all = o->all;
	p->skel->rodata->self_tgid = (__u32)getpid();
	p->skel->rodata->wake_on_bookmark = o->wake_on_bookmark;
	bpf_map__set_max_entries(p->skel->maps.rb, (uint32_t)ring);
	bpf_map__set_max_entries(p->skel->maps.marks, marks_bytes());
	choose_programs(p);
	if ((rc = activity_bpf__load(p->skel)) < 0)
		return t4_bpf_fail(rc, "load");
	if ((rc = attach(p)) < 0)
		return rc;
	for (size_t i = 0; i < o->n_pids; i++)
		if ((rc = t4_bpf_activity_track(p, o->pids[i])) < 0)
			return rc;
	p->ring = ring_buffer__new(bpf_map__fd(p->skel->maps.rb), on_sample, p, NULL);
	if (!p->ring)
		return t4_bpf_fail(errno, "ring buffer");
	if ((rc = ring_buffer__add(p->ring, bpf_map__fd(p->skel->maps.marks), on_sample, p)) < 0)
		return t4_bpf_fail(rc, "ring buffer");
	return 0;
}

int t4_bpf_activity_open(struct t4_bpf_activity **out, const struct t4_bpf_activity_opts *o)
{
	struct t4_bpf_activity *p = calloc(1, sizeof(*p));
	int rc;

	if (!p)
		return t4_err(ENOMEM, "out of memory");
	pthread_mutex_init(&p->lock, NULL);
	t4_bpf_messages(o->verbose);
	if ((rc = load(p, o)) < 0) {
		t4_bpf_activity_close(p);
		return rc;
	}
	*out = p;
	return 0;
}

const char *t4_bpf_activity_note(const struct t4_bpf_activity *p)
{
	return p->note;
}

int t4_bpf_activity_track(struct t4_bpf_activity *p, int pid)
{
	uint32_t key = (uint32_t)pid;
	uint8_t one = 1;
	int rc = bpf_map__update_elem(p->skel->maps.tracked, &key, sizeof(key), &one, sizeof(one),
				      BPF_ANY);

	return rc < 0 ? t4_bpf_fail(rc, "tracked processes") : 0;
}

/* ---- the uprobe ------------------------------------------------------------------ */

int t4_bpf_maps_line(const char *line, const char *path, uint64_t *dev, uint64_t *ino)
{
	unsigned maj, min;
	unsigned long long inode;
	int at = 0;
	size_t len;

	if (sscanf(line, "%*x-%*x %*s %*x %x:%x %llu %n", &maj, &min, &inode, &at) != 3 || !at)
		return 0;
	len = strcspn(line + at, "\n");
	if (len != strlen(path) || strncmp(line + at, path, len))
		return 0;
	*dev = makedev(maj, min);
	*ino = inode;
	return 1;
}

/* The file path as process pid maps it: its device and inode. */
static int mapped_by(int pid, const char *path, uint64_t *dev, uint64_t *ino)
{
	char maps[64], *line = NULL;
	size_t cap = 0;
	int found = 0;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
	if (!(f = fopen(maps, "re")))
		return t4_err(errno, "%s: %s", maps, strerror(errno));
	while (!found && getline(&line, &cap, f) > 0)
		found = t4_bpf_maps_line(line, path, dev, ino);
	free(line);
	fclose(f);
	return found ? 0 : t4_err(ENOENT, "%s: process %d does not map it", path, pid);
}

/* With the lock held: the uprobe on the file (dev, ino), made once. */
static int attach_lib(struct t4_bpf_activity *p, int pid, const char *path, uint64_t dev,
		      uint64_t ino)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = T4_ACT_PROBE_SYMBOL);
	char target[4200];
	struct bpf_link *l;

	for (size_t i = 0; i < p->n_libs; i++)
		if (p->libs[i].dev == dev && p->libs[i].ino == ino)
			return 0;
	if (p->n_libs == MAX_LIBS)
		return t4_err(E2BIG, "%s: more than %d files with libt410trace", path, MAX_LIBS);
	snprintf(target, sizeof(target), "/proc/%d/root%s", pid, path);
	l = bpf_program__attach_uprobe_opts(p->skel->progs.on_probe, -1, target, 0, &uo);
	if (!l)
		return t4_bpf_fail(errno, "uprobe");
	p->libs[p->n_libs].dev = dev;
	p->libs[p->n_libs].ino = ino;
	p->libs[p->n_libs++].link = l;
	return 0;
}

int t4_bpf_activity_uprobe(struct t4_bpf_activity *p, int pid, const char *path)
{
	uint64_t dev, ino;
	uint32_t key = (uint32_t)pid;
	uint8_t one = 1;
	int rc;

	if (pid <= 0 || path[0] != '/')
		return t4_err(EINVAL, "uprobe: process %d, file '%s': an absolute path is needed",
			      pid, path);
	if ((rc = mapped_by(pid, path, &dev, &ino)) < 0)
		return rc;
	pthread_mutex_lock(&p->lock);
	rc = attach_lib(p, pid, path, dev, ino);
	pthread_mutex_unlock(&p->lock);
	if (rc == 0 && (rc = bpf_map__update_elem(p->skel->maps.uprobe_ok, &key, sizeof(key), &one,
						  sizeof(one), BPF_ANY)) < 0)
		rc = t4_bpf_fail(rc, "uprobe processes");
	return rc;
}

/* ---- draining ---------------------------------------------------------------------- */

static int on_sample(void *ctx, void *data, size_t size)
{
	struct t4_bpf_activity *p = ctx;

	if (t4_bpf_activity_decode(data, size, &p->ph) < 0)
		p->malformed++;
	else
		p->fn(p->ud, &p->ph);
	return 0;
}

/* ring_buffer__poll takes only what woke it: the records written without
 * a wake-up are taken by the consume after it. */
int t4_bpf_activity_poll(struct t4_bpf_activity *p, int timeout_ms, t4_bpf_activity_fn fn, void *ud)
{
	int n, m;

	p->fn = fn;
	p->ud = ud;
	n = ring_buffer__poll(p->ring, timeout_ms);
	if (n < 0 && n != -EINTR)
		return t4_bpf_fail(n, "ring buffer");
	m = ring_buffer__consume(p->ring);
	if (m < 0)
		return t4_bpf_fail(m, "ring buffer");
	return (n > 0 ? n : 0) + m;
}

int t4_bpf_activity_flush(struct t4_bpf_activity *p, t4_bpf_activity_fn fn, void *ud)
{
	int ncpu = libbpf_num_possible_cpus(), n = 0;
	struct t4_ph_oncpu *v;
	uint32_t zero = 0;
	uint64_t now = t4_clock_ns(CLOCK_MONOTONIC);

	if (ncpu <= 0)
		return t4_bpf_fail(-ncpu, "possible CPUs");
	if (!(v = calloc((size_t)ncpu, sizeof(*v))))
		return t4_err(ENOMEM, "out of memory");
	if (bpf_map__lookup_elem(p->skel->maps.oncpu, &zero, sizeof(zero), v,
				 (size_t)ncpu * sizeof(*v), 0) == 0) {
		for (int c = 0; c < ncpu; c++) {
			struct t4_ph_cpu r = { .type = T4_ACT_CPU, .cpu = (uint32_t)c, .pid = v[c].pid,
					       .tid = v[c].tid, .start_ns = v[c].start_ns, .end_ns = now };
			if (!v[c].tid || t4_bpf_activity_decode(&r, sizeof(r), &p->ph) < 0)
				continue;
			fn(ud, &p->ph);
			n++;
		}
	}
	free(v);
	return n;
}

uint64_t t4_bpf_activity_refused(const struct t4_bpf_activity *p, bool triggers)
{
	return __atomic_load_n(triggers ? &p->skel->bss->triggers_refused
					: &p->skel->bss->marks_refused, __ATOMIC_RELAXED);
}

uint64_t t4_bpf_activity_lost(const struct t4_bpf_activity *p)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *v, n = 0;
	uint32_t zero = 0;

	if (ncpu <= 0 || !(v = calloc((size_t)ncpu, sizeof(*v))))
		return 0;
	if (bpf_map__lookup_elem(p->skel->maps.lost, &zero, sizeof(zero), v,
				 (size_t)ncpu * sizeof(*v), 0) == 0)
		for (int c = 0; c < ncpu; c++)
			n += v[c];
	free(v);
	return n + p->malformed;
}

void t4_bpf_activity_close(struct t4_bpf_activity *p)
{
	if (!p)
		return;
	ring_buffer__free(p->ring);
	for (size_t i = 0; i < p->n_libs; i++)
		bpf_link__destroy(p->libs[i].link);
	for (size_t i = 0; i < p->n_links; i++)
		bpf_link__destroy(p->links[i]);
	activity_bpf__destroy(p->skel);
	pthread_mutex_destroy(&p->lock);
	free(p);
}
