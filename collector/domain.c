/* domain.c - clock domains: counters grouped per PMU instance and CPU,
 * opened as one perf group each, read with one read() into a return packet.
 *
 * Grouping (t4_domains_build): one domain per (PMU, CPU) pair, in order of
 * first appearance; per-task counters (record -p/-t, a command's) one per
 * (PMU, thread), opened on that thread and any CPU (a command's with
 * inherit, enabled by its exec). The domain's clock (the kind's `cycles`, msr's `tsc`,
 * `cycles` on an unknown PMU) is moved to index 0 and leads the group, so
 * the local clock is sampled by the same read() as the counts. Software and
 * tracepoint domains have no clock of their own: their local clock is the
 * reference clock at read_begin_ns. A user's {group} may not span two
 * hardware PMUs (the kernel would refuse it); software, tracepoint and msr
 * events (perf_sw_context in the kernel) may join any group, but each still
 * goes to its own domain: it is read on the same CPU anyway, and one group
 * per domain keeps one local clock per return packet. Names are unique in
 * a set (name_domain: docs/FORMAT.md 4.2).
 *
 * Reading (t4_domain_read): PERF_FORMAT_GROUP | TOTAL_TIME_ENABLED |
 * TOTAL_TIME_RUNNING | ID into a stack buffer, values mapped back by ID so
 * the kernel's order does not matter. Deltas against the previous read of
 * the raw, never-reset 64-bit counters: the sum of all deltas after the
 * baseline is exactly the counter's total change. time_enabled/running
 * deltas are always filled (0 on the baseline and for simulated domains);
 * T4_RET_MULTIPLEXED says when running < enabled. A failed read fills the
 * packet with zero counts and T4_RET_READ_FAILED and keeps the previous
 * values, so the next good read's deltas cover the lost interval.
 * Allocation-free; a read from another CPU than d->cpu works but costs an
 * IPI (t4_domain_read_cpu() says where to pin the reader).
 *
 * Virtual time (t4_domain_read_at): a simulated domain can also be read as
 * if at a chosen instant, through a prepared simulator reader made at open;
 * the packet then goes through the same delta path as a live read, so
 * FIRST, unread and carried counts behave the same.
 */
#include "collector.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/util.h"

/* The fixed perf ABI type numbers of the two software-context PMUs. */
enum { PERF_TYPE_SW = 1, PERF_TYPE_TP = 2 };

/* Words of a group read: nr, time_enabled, time_running, {value, id}[nr]. */
#define GROUP_HDR 3
#define GROUP_WORDS (GROUP_HDR + 2 * T4_MAX_COUNTERS)

/* ---- grouping ------------------------------------------------------------ */

static enum t4_domain_kind kind_of(const struct t4_counter *c)
{
	const struct t4_pmu *p = c->pmu;

	if (p->kind)
		return p->kind->id;
	if (!strcmp(p->name, "software") || c->type == PERF_TYPE_SW)
		return T4_DOM_SOFTWARE;
	if (!strcmp(p->name, "tracepoint") || c->type == PERF_TYPE_TP)
		return T4_DOM_TRACEPOINT;
	if (!strcmp(p->name, "msr"))
		return T4_DOM_TSC;
	return T4_DOM_OTHER;
}

/* Events that may join any user group (perf_sw_context in the kernel). */
static bool joins_any_group(enum t4_domain_kind k)
{
	return k == T4_DOM_SOFTWARE || k == T4_DOM_TRACEPOINT ||
	       k == T4_DOM_TSC;
}

/* Is c the local clock of a domain of kind k? */
static bool is_domain_clock(enum t4_domain_kind k, const struct t4_counter *c)
{
	const struct t4_kind *tk = c->pmu->kind;

	switch (k) {
	case T4_DOM_SOFTWARE:
	case T4_DOM_TRACEPOINT:
		return false;
	case T4_DOM_TSC:
		return c->is_clock || !strcmp(c->name, "tsc");
	case T4_DOM_OTHER:
		return c->is_clock || !strcmp(c->name, "cycles");
	default:
		return c->is_clock ||
		       (tk && tk->clock_event && !strcmp(c->name, tk->clock_event));
	}
}

static int counter_cpu(const struct t4_counter *c)
{
	return c->cpu >= 0 ? c->cpu : c->pmu->cpu;
}

/* A user's {group} may hold at most one hardware PMU. */
static int check_groups(const struct t4_evlist *l)
{
	for (size_t i = 0; i < l->n; i++) {
		const struct t4_counter *a = &l->v[i];

		if (a->group < 0 || joins_any_group(kind_of(a)))
			continue;
		for (size_t j = 0; j < i; j++) {
			const struct t4_counter *b = &l->v[j];

			if (b->group != a->group || joins_any_group(kind_of(b)))
				continue;
			if (strcmp(a->pmu->name, b->pmu->name))
				return t4_err(EINVAL,
					      "%s: a group may not span two hardware PMUs (%s and %s)",
					      a->spec, b->pmu->name, a->pmu->name);
		}
	}
	return 0;
}

/* An empty domain: no counters, no fds, clocked by the reference clock. */
static void domain_blank(struct t4_domain *d, uint32_t id, int cpu)
{
	memset(d, 0, sizeof(*d));
	d->id = id;
	d->cpu = cpu;
	d->clock_index = -1;
	for (size_t i = 0; i < T4_MAX_COUNTERS; i++)
		d->fds[i] = -1;
}

/* Whether an earlier domain of ds is named name. */
static bool name_taken(const struct t4_domain_set *ds, const char *name)
{
	for (size_t i = 0; i < ds->n; i++)
		if (!strcmp(ds->v[i].name, name))
			return true;
	return false;
}

int t4_domains_name(const struct t4_domain_set *ds, const char *base, const char *suffix,
		    char out[T4_NAME_MAX])
{
	size_t cap = T4_NAME_MAX, len = strlen(base), slen = strlen(suffix);
	size_t room = cap - 1 - slen - 9, cut = len < room ? len : room;

	while (cut > 0 && cut < len && ((unsigned char)base[cut] & 0xc0) == 0x80)
		cut--; /* never inside a UTF-8 character */

	if (len + slen < cap) {
		memcpy(out, base, len);
		memcpy(out + len, suffix, slen + 1);
		if (!name_taken(ds, out))
			return 0;
	}
	memcpy(out, base, cut);
	snprintf(out + cut, cap - cut, "~%08x", t4_crc32c(0, base, len));
	memcpy(out + cut + 9, suffix, slen + 1);
	return name_taken(ds, out) ? -EEXIST : 0;
}

/* A PMU domain's name: the PMU's and its suffix ("@cpu3", "@tid42", ""),
 * made unique. */
static int name_domain(const struct t4_domain_set *ds, struct t4_domain *d,
		       const struct t4_pmu *p, const char *suffix)
{
	if (t4_domains_name(ds, p->name, suffix, d->name) < 0)
		return t4_err(EEXIST, "%s: two clock domains of this name (PMU %s and another): "
			      "leave one PMU out of -e", d->name, p->name);
	return 0;
}

static int domain_init(const struct t4_domain_set *ds, struct t4_domain *d, uint32_t id,
		       const struct t4_counter *c)
{
	const struct t4_pmu *p = c->pmu;
	int cpu = counter_cpu(c);
	char suffix[16] = ""; /* "@tid" or "@cpu" and an int */

	domain_blank(d, id, cpu);
	d->kind = kind_of(c);
	d->tid = c->tid;
	if (c->tid > 0)
		snprintf(suffix, sizeof(suffix), "@tid%d", c->tid);
	else if (!p->cpumask[0] && cpu >= 0)
		snprintf(suffix, sizeof(suffix), "@cpu%d", cpu);
	return name_domain(ds, d, p, suffix);
}

static struct t4_domain *domain_find(struct t4_domain_set *ds,
				     const struct t4_counter *c)
{
	int cpu = counter_cpu(c);

	for (size_t i = 0; i < ds->n; i++) {
		struct t4_domain *d = &ds->v[i];

		if (d->cpu == cpu && d->tid == c->tid &&
		    !strcmp(d->counters[0].pmu->name, c->pmu->name))
			return d;
	}
	return NULL;
}

/* A counter of d named like c: every output keys a domain's counts by
 * event name (the JSONL counts object, the totals), so two would be summed
 * as one event or lose one. */
static const struct t4_counter *same_name(const struct t4_domain *d, const struct t4_counter *c)
{
	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->counters[i].name, c->name))
			return &d->counters[i];
	return NULL;
}

/* Add c to d: its clock goes first (the group leader), the rest in order. */
static int domain_add(struct t4_domain *d, const struct t4_counter *c)
{
	const struct t4_counter *twin = same_name(d, c);
	char q[2 * T4_NAME_MAX + 2];

	if (twin)
		return t4_err(EINVAL, "%s: two events named %s (%s and %s): every output keys "
			      "counts by name; rename one: %s/...,name=NEW/", d->name, c->name,
			      twin->spec, c->spec,
			      t4_events_quote(q, sizeof(q), c->pmu->name) ? q : c->pmu->name);
	if (d->n == T4_MAX_COUNTERS)
		return t4_err(EINVAL, "%s: more than %d counters in one clock domain",
			      d->name, T4_MAX_COUNTERS);
	if (d->clock_index < 0 && is_domain_clock(d->kind, c)) {
		memmove(&d->counters[1], &d->counters[0], d->n * sizeof(*c));
		d->counters[0] = *c;
		d->clock_index = 0;
	} else {
		d->counters[d->n] = *c;
	}
	d->n++;
	return 0;
}

/* A log holds at most T4_MAX_DOMAINS clock domains: the decoder reads no
 * more, so a recording of more would keep counts nobody sees. */
static int too_many_domains(const char *what)
{
	return t4_err(ERANGE, "%s: more than %u clock domains (what decode reads); count fewer PMUs,"
		      " CPUs or threads", what, T4_MAX_DOMAINS);
}

static int add_counter(struct t4_domain_set *ds, size_t *cap,
		       const struct t4_counter *c)
{
	struct t4_domain *d = domain_find(ds, c);

	if (!d) {
		if (ds->n >= T4_MAX_DOMAINS)
			return too_many_domains(c->spec);
		if (ds->n == *cap) {
			size_t ncap = *cap ? 2 * *cap : 8;
			struct t4_domain *v = realloc(ds->v, ncap * sizeof(*v));

			if (!v)
				return t4_err(ENOMEM, "%s: out of memory", c->spec);
			ds->v = v;
			*cap = ncap;
		}
		d = &ds->v[ds->n];
		int rc = domain_init(ds, d, (uint32_t)ds->n, c);
		if (rc < 0)
			return rc;
		ds->n++;
	}
	return domain_add(d, c);
}

/* The config1 bits a format field occupies (0 when absent or elsewhere). */
static uint64_t config1_mask(const struct t4_pmu *p, const char *field)
{
	const struct t4_format *f = t4_pmu_format(p, field);
	uint64_t cfg[3] = { 0, 0, 0 };
	unsigned w;

	if (!f || f->field != T4_CFG1)
		return 0;
	w = t4_format_bits(f);
	t4_format_apply(f, w >= 64 ? UINT64_MAX : (1ull << w) - 1, cfg);
	return cfg[1];
}

/* PCIE group members inherit the leader's BDF filter (the kernel programs
 * one per PMU): a leader opened without it would silently unfilter its
 * members, so the leader (the cycles counter, which no filter changes)
 * takes the members' BDF filter. The parser refused two different BDFs. */
static void share_bdf_filter(struct t4_domain *d)
{
	const struct t4_pmu *p = d->counters[0].pmu;
	uint64_t en, keep;

	if (d->kind != T4_DOM_PCIE || d->n < 2)
		return;
	en = config1_mask(p, "src_bdf_en");
	keep = en | config1_mask(p, "src_bdf");
	if (!en)
		return;
	for (size_t i = 1; i < d->n; i++) {
		if (!(d->counters[i].config1 & en))
			continue;
		d->counters[0].config1 = (d->counters[0].config1 & ~(keep | config1_mask(p, "src_rp_mask"))) |
					 (d->counters[i].config1 & keep);
		return;
	}
}

int t4_domains_build(struct t4_domain_set *ds, const struct t4_evlist *l)
{
	size_t cap = 0;
	int err;

	ds->v = NULL;
	ds->n = 0;
	for (size_t i = 0; i < l->n; i++)
		if (!l->v[i].pmu)
			return t4_err(EINVAL, "%s: counter without a PMU", l->v[i].spec);
	err = check_groups(l);
	for (size_t i = 0; !err && i < l->n; i++)
		err = add_counter(ds, &cap, &l->v[i]);
	for (size_t i = 0; !err && i < ds->n; i++)
		share_bdf_filter(&ds->v[i]);
	if (err)
		t4_domains_free(ds);
	return err;
}

int t4_domains_add_source(struct t4_domain_set *ds, const char *name,
			  enum t4_domain_kind kind,
			  const struct t4_domain_source *src,
			  struct t4_domain **out)
{
	struct t4_domain *v;

	if (ds->n >= T4_MAX_DOMAINS)
		return too_many_domains(name);
	if (!(v = realloc(ds->v, (ds->n + 1) * sizeof(*v))))
		return t4_err(ENOMEM, "%s: out of memory", name);
	ds->v = v;
	*out = &v[ds->n];
	if (name_taken(ds, name))
		return t4_err(EEXIST, "%s: a clock domain of this name is there already (a PMU's)",
			      name);
	domain_blank(*out, (uint32_t)ds->n, -1);
	(*out)->kind = kind;
	(*out)->source = *src;
	t4_strlcpy((*out)->name, name, sizeof((*out)->name));
	ds->n++;
	return 0;
}

/* ---- opening ------------------------------------------------------------- */

void t4_counter_perf_args(const struct t4_counter *c, bool leader, struct perf_event_attr *a,
			  int *pid, int *cpu)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = c->type;
	a->config = c->config;
	a->config1 = c->config1;
	a->config2 = c->config2;
	a->read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
			 PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID;
	a->exclude_user = c->exclude_user;
	a->exclude_kernel = c->exclude_kernel;
	a->exclude_hv = c->exclude_hv;
	a->disabled = leader; /* members follow the leader */
	/* a command's: its children too, from its exec on (perf stat); an
	 * uncore PMU counts its socket, never a task (pid -1, inherit 0: the
	 * kernel refuses anything else for such a PMU) */
	a->inherit = c->tid > 0 && c->inherit;
	a->enable_on_exec = leader && a->inherit;
	*pid = c->tid > 0 ? c->tid : -1;
	*cpu = counter_cpu(c);
}

static int perf_open(struct perf_event_attr *a, int pid, int cpu, int group_fd)
{
	return (int)syscall(SYS_perf_event_open, a, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
}

static int open_error(const struct t4_counter *c, const struct t4_domain *d, int e)
{
	char where[48];

	if (d->tid > 0)
		snprintf(where, sizeof(where), "thread %d", d->tid);
	else
		snprintf(where, sizeof(where), "cpu %d", d->cpu);
	switch (e) {
	case EACCES:
	case EPERM:
		return t4_err(e, "%s: permission denied on %s (run as root or lower /proc/sys/kernel/perf_event_paranoid)",
			      c->spec, where);
	case ESRCH:
		return t4_err(e, "%s: thread %d is gone", c->spec, d->tid);
	case ENOENT:
	case EINVAL:
	case EOPNOTSUPP:
		return t4_err(e, "the kernel refused %s: unsupported event, filter or modifier",
			      c->spec);
	default:
		return t4_err(e, "%s: cannot open on %s: %s", c->spec, where, strerror(e));
	}
}

static void domain_close(struct t4_domain *d)
{
	for (size_t i = 0; i < T4_MAX_COUNTERS; i++) {
		if (d->fds[i] >= 0)
			close(d->fds[i]);
		d->fds[i] = -1;
	}
	t4_sim_reader_free(d->sim_reader);
	d->sim_reader = NULL;
	d->sim = NULL;
	d->primed = false;
}

static int open_attr(const struct t4_domain *d, size_t i)
{
	struct perf_event_attr a;
	int pid, cpu;

	t4_counter_perf_args(&d->counters[i], i == 0, &a, &pid, &cpu);
	return perf_open(&a, pid, cpu, i == 0 ? -1 : d->fds[0]);
}

/* perf's fallback: a per-task counter of every privilege level refused
 * (perf_event_paranoid >= 2 without CAP_PERFMON refuses the kernel's
 * share) counts user space only, its name saying so (":u"). */
static bool fall_back_to_user(struct t4_counter *c, const struct t4_domain *d, int err)
{
	if ((err != EACCES && err != EPERM) || d->tid <= 0 || c->exclude_user ||
	    c->exclude_kernel || c->exclude_hv)
		return false;
	if (strlen(c->name) + 3 > sizeof(c->name) || strlen(c->spec) + 3 > sizeof(c->spec))
		return false;
	c->exclude_kernel = c->exclude_hv = true;
	strcat(c->name, ":u");
	strcat(c->spec, ":u");
	return true;
}

static int open_counter(struct t4_domain *d, size_t i, size_t *user_only)
{
	struct t4_counter *c = &d->counters[i], was = *c;
	int fd = open_attr(d, i), err = errno;

	if (fd < 0 && fall_back_to_user(c, d, err)) {
		fd = open_attr(d, i);
		if (fd < 0)
			*c = was; /* the message names what was asked */
		*user_only += fd >= 0;
	}
	if (fd < 0)
		return open_error(c, d, err);
	d->fds[i] = fd;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &d->ids[i]) < 0)
		return t4_err(errno, "%s: PERF_EVENT_IOC_ID: %s", c->spec,
			      strerror(errno));
	return 0;
}

static int domain_open_perf(struct t4_domain *d, size_t *user_only)
{
	if (d->cpu < 0 && d->tid <= 0)
		return t4_err(EINVAL, "%s: no CPU to count on (the PMU has no cpumask)",
			      d->counters[0].spec);
	for (size_t i = 0; i < d->n; i++) {
		int err = open_counter(d, i, user_only);

		if (err)
			return err;
	}
	if (d->counters[0].inherit)
		return 0; /* enabled by the command's exec */
	if (ioctl(d->fds[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP) < 0)
		return t4_err(errno, "%s: cannot enable: %s", d->name,
			      strerror(errno));
	return 0;
}

static int domain_open(struct t4_domain *d, struct t4_sim *sim, size_t *user_only)
{
	const struct t4_pmu *p = d->counters[0].pmu;

	d->primed = false;
	if (d->source.answer)
		return 0; /* its source opens what it reads */
	if (p->unbacked)
		return t4_err(EINVAL, "%s: not a PMU the simulator models (with --sim and "
			      "--sysfs-root only the Tegra410 PMUs it backs are counted)", p->name);
	if (!p->simulated)
		return domain_open_perf(d, user_only);
	if (!sim)
		return t4_err(EINVAL, "%s: simulated PMU but no simulator", d->name);
	d->sim = sim;
	d->nominal_hz = t4_sim_nominal_hz(sim, p);
	return t4_sim_reader_new(&d->sim_reader, sim, d->counters, d->n);
}

int t4_domains_open(struct t4_domain_set *ds, struct t4_sim *sim)
{
	ds->user_only = 0;
	for (size_t i = 0; i < ds->n; i++) {
		int err = domain_open(&ds->v[i], sim, &ds->user_only);

		if (err) {
			for (size_t j = 0; j <= i; j++)
				domain_close(&ds->v[j]);
			return err;
		}
	}
	return 0;
}

void t4_domains_free(struct t4_domain_set *ds)
{
	if (!ds)
		return;
	for (size_t i = 0; i < ds->n; i++)
		domain_close(&ds->v[i]);
	free(ds->v);
	ds->v = NULL;
	ds->n = 0;
}

int t4_domain_read_cpu(const struct t4_domain *d)
{
	return d->cpu; /* the simulator binds its PMUs to CPUs we may use */
}

const struct t4_sim *t4_domain_sim(const struct t4_domain *d)
{
	return d->sim;
}

int t4_domain_fd(const struct t4_domain *d, size_t i)
{
	return i < d->n && !d->sim ? d->fds[i] : -1;
}

/* ---- reading ------------------------------------------------------------- */


/* Index of the counter with this ID; tries position k first. */
static int index_of_id(const struct t4_domain *d, size_t k, uint64_t id)
{
	if (k < d->n && d->ids[k] == id)
		return (int)k;
	for (size_t i = 0; i < d->n; i++)
		if (d->ids[i] == id)
			return (int)i;
	return -1;
}

/* Map a group read (r bytes of buf) onto s->v by ID. */
static int parse_group(const struct t4_domain *d, const uint64_t *buf,
		       ssize_t r, struct t4_sample *s)
{
	uint64_t seen = 0;

	if (r < 0)
		return t4_err(errno, "%s: read: %s", d->name, strerror(errno));
	if ((size_t)r < (GROUP_HDR + 2 * d->n) * sizeof(uint64_t) ||
	    buf[0] != d->n)
		return t4_err(EIO, "%s: short group read (%zd bytes)", d->name, r);
	s->enabled = buf[1];
	s->running = buf[2];
	for (size_t k = 0; k < d->n; k++) {
		int i = index_of_id(d, k, buf[GROUP_HDR + 2 * k + 1]);

		if (i < 0 || (seen >> i & 1))
			return t4_err(EPROTO, "%s: unexpected counter ID in group read",
				      d->name);
		seen |= 1ull << i;
		s->v[i] = buf[GROUP_HDR + 2 * k];
	}
	return 0;
}

static int read_perf(const struct t4_domain *d, struct t4_sample *s)
{
	uint64_t buf[GROUP_WORDS];
	ssize_t r;
	int e;

	if (d->fds[0] < 0) {
		s->begin = s->end = t4_mono_raw_ns();
		return t4_err(EBADF, "%s: not open", d->name);
	}
	s->begin = t4_mono_raw_ns();
	r = read(d->fds[0], buf, sizeof(buf));
	e = errno;
	s->end = t4_mono_raw_ns();
	errno = e;
	return parse_group(d, buf, r, s);
}

/* The simulator jitters each sample instant after the reference time it
 * is given; two reads a few microseconds apart could then sample out of
 * order, which real counters never do. A sample that would land before the
 * previous one is taken again from the previous instant. */
static int read_sim(struct t4_domain *d, struct t4_sample *s)
{
	uint64_t clock = 0, true_ns = 0, now;
	int err;

	s->begin = t4_mono_raw_ns();
	err = t4_sim_read(d->sim, d->counters, d->n, s->begin, s->v, &clock,
			  &true_ns);
	if (!err && true_ns < d->prev_true_ns)
		err = t4_sim_read(d->sim, d->counters, d->n, d->prev_true_ns, s->v,
				  &clock, &true_ns);
	if (!err)
		d->prev_true_ns = true_ns;
	now = t4_mono_raw_ns();
	s->end = now > true_ns ? now : true_ns;
	s->enabled = s->running = 0;
	return err;
}

static uint64_t local_clock(const struct t4_domain *d, const struct t4_sample *s)
{
	return d->clock_index >= 0 ? s->v[d->clock_index] : s->begin;
}

/* Deltas of s against the previous read; s becomes the previous read. */
static void apply_sample(struct t4_domain *d, const struct t4_sample *s,
			 struct t4_ret_pkt *out)
{
	bool first = !d->primed;

	memcpy(d->undo, d->prev, d->n * sizeof(d->prev[0]));
	d->undo_enabled = d->prev_enabled;
	d->undo_running = d->prev_running;
	d->undo_primed = d->primed;
	d->can_undo = true;
	out->flags = first ? T4_RET_FIRST : 0;
	for (size_t i = 0; i < d->n; i++) {
		uint64_t v = s->v[i];

		if (first) {
			out->counts[i] = 0;
			d->base[i] = v;
		} else if (v >= d->prev[i]) {
			out->counts[i] = v - d->prev[i];
		} else {
			out->counts[i] = 0;
			out->flags |= T4_RET_BACKWARDS;
		}
		d->prev[i] = v;
	}
	if (!first && s->enabled >= d->prev_enabled &&
	    s->running >= d->prev_running) {
		out->enabled_delta = s->enabled - d->prev_enabled;
		out->running_delta = s->running - d->prev_running;
		if (out->running_delta < out->enabled_delta)
			out->flags |= T4_RET_MULTIPLEXED;
	}
	d->prev_enabled = s->enabled;
	d->prev_running = s->running;
	d->prev_clock = out->local_clock = local_clock(d, s);
	d->primed = true;
}

int t4_domain_take(struct t4_domain *d, uint64_t trigger_id, const struct t4_sample *s,
		   int err, struct t4_ret_pkt *out)
{
	out->trigger_id = trigger_id;
	out->domain_id = d->id;
	out->n_counts = (uint32_t)d->n;
	out->enabled_delta = out->running_delta = 0;
	out->read_begin_ns = s->begin;
	out->read_end_ns = s->end;
	if (err) {
		out->flags = T4_RET_READ_FAILED;
		out->local_clock = d->clock_index >= 0 ? d->prev_clock : s->begin;
		memset(out->counts, 0, d->n * sizeof(out->counts[0]));
		return err;
	}
	apply_sample(d, s, out);
	return 0;
}

int t4_domain_read(struct t4_domain *d, uint64_t trigger_id,
		   struct t4_ret_pkt *out)
{
	struct t4_sample s;
	int err = d->sim ? read_sim(d, &s) : read_perf(d, &s);

	return t4_domain_take(d, trigger_id, &s, err, out);
}

int t4_domain_read_at(struct t4_domain *d, uint64_t trigger_id, uint64_t true_ns,
		      uint64_t read_begin_ns, uint64_t read_end_ns,
		      struct t4_ret_pkt *out)
{
	struct t4_sample s = { .begin = read_begin_ns, .end = read_end_ns };
	uint64_t clock;

	if (!d->sim_reader)
		return t4_err(EINVAL, "%s: a read at a chosen instant needs a simulated domain",
			      d->name);
	if (true_ns < read_begin_ns || true_ns > read_end_ns)
		return t4_err(EINVAL, "%s: sample at %llu outside its read window [%llu, %llu]",
			      d->name, (unsigned long long)true_ns,
			      (unsigned long long)read_begin_ns, (unsigned long long)read_end_ns);
	if (true_ns < d->prev_true_ns)
		return t4_err(EINVAL, "%s: sample at %llu before the previous one (%llu)",
			      d->name, (unsigned long long)true_ns,
			      (unsigned long long)d->prev_true_ns);
	t4_sim_reader_at(d->sim_reader, true_ns, s.v, &clock);
	d->prev_true_ns = true_ns;
	return t4_domain_take(d, trigger_id, &s, 0, out);
}

void t4_domain_unread(struct t4_domain *d)
{
	if (!d->can_undo)
		return;
	memcpy(d->prev, d->undo, d->n * sizeof(d->prev[0]));
	d->prev_enabled = d->undo_enabled;
	d->prev_running = d->undo_running;
	d->primed = d->undo_primed;
	d->can_undo = false;
}

/* ---- metadata ------------------------------------------------------------ */

void t4_domain_describe(const struct t4_domain *d, struct t4_domain_pkt *dp)
{
	memset(dp, 0, sizeof(*dp));
	dp->domain_id = d->id;
	dp->kind = (uint32_t)d->kind;
	dp->cpu = d->cpu;
	dp->clock_event = d->clock_index;
	dp->nominal_hz = d->nominal_hz;
	memcpy(dp->name, d->name, sizeof(dp->name));
}

void t4_domain_describe_event(const struct t4_domain *d, size_t i,
			      struct t4_event_pkt *ep)
{
	const struct t4_counter *c = &d->counters[i];

	memset(ep, 0, sizeof(*ep));
	ep->domain_id = d->id;
	ep->index = (uint32_t)i;
	ep->perf_type = c->type;
	ep->config = c->config;
	ep->config1 = c->config1;
	ep->config2 = c->config2;
	ep->scale = c->scale;
	if (d->tid > 0)
		ep->flags = T4_EV_TASK | (c->inherit ? T4_EV_INHERIT : 0);
	snprintf(ep->pmu, sizeof(ep->pmu), "%s", c->pmu->name);
	memcpy(ep->name, c->name, sizeof(ep->name));
	memcpy(ep->spec, c->spec, sizeof(ep->spec));
	memcpy(ep->unit, c->unit, sizeof(ep->unit));
}
