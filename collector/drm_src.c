/* drm_src.c - the DRM source: the workload's DRM clients as clock domains
 * of kind drm, clocked by the reference clock.
 *
 * Two threads share it. The scanner (t4_drm_start: every scan_ns, 100 ms by
 * default, resting at least 9x as long as a scan took, so at most a tenth
 * of a CPU on a machine with thousands of processes; while it finds no
 * client it walks the fds of processes new since its last full walk at
 * each scan and everybody's every 2, 4, ... up to 32 scans: a client that
 * an old process opens late is found within 3.2 s, and its cumulative
 * counts are not lost, they start from 0) finds the workload's processes
 * (every process under the proc root, or the trees of the roots
 * through the ppid field of <pid>/stat, which works without
 * CONFIG_PROC_CHILDREN, read once per process), their fds that link to
 * /dev/dri/, and each one's identity from its fdinfo, and hands that list
 * over. The answering thread (the domain's own unpinned monitor, never a
 * PMU domain's) takes the latest list at its next trigger, then opens and
 * reads the known clients' fdinfo files only: nothing is scanned on the
 * trigger path.
 *
 * A client is identified by (drm-pdev, drm-client-id), so shared and
 * duplicated fds count once; without a client-id by (pid, fd), which may
 * count a shared DRM file twice (the stats say so). Each (client, key) pair
 * is an event, appended when first seen: to "drm" (the attached domain's
 * ID), then "drm.1", "drm.2", ... (T4_DRM_EXTRA_ID + k - 1) once one holds
 * 64. A domain appears when its first event does; its first return packet
 * is its baseline (FIRST, no counts); its domain and event packets go into
 * the same ring just before the return packet that first carries them.
 *
 * Counts: cumulative keys (engine ns, cycles) give deltas against the value
 * last logged, under the spec's rule that a value lower than one seen
 * before keeps the higher one until it catches up (a high-water mark:
 * never negative, nothing counted twice). Gauges (capacity, memory) put
 * their level (T4_EV_GAUGE). A return packet that could not be logged
 * changes nothing, so the next one carries its counts. A client that is
 * gone (its fds closed, its processes exited) keeps its events: cumulative
 * keys stop (deltas 0), gauges drop to 0; found again, it goes on where it
 * was. Clients found before the first answer existed before the recording:
 * they count from their first read (the baseline); clients found later
 * count from 0, where the spec's counters start when the DRM file opens.
 */
#include "collector.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/util.h"

#define LEFT_OUT UINT16_MAX /* evref.dom of a (client, key) not recorded */
#define T4_DRM_QUIET_SCANS 32 /* while no client: every process's fds at
			       * least every 32 scans, new processes' at each */

struct fdref {
	int pid, fd;
};

/* One DRM fd a scan found, with the identity its fdinfo gave. */
struct found {
	struct fdref at;
	char pdev[32];
	char driver[T4_NAME_MAX];
	uint64_t id;
	bool has_id;
};

struct scan {
	struct found *v;
	size_t n, cap;
};

/* A (client, key) pair: where its event is, or LEFT_OUT. */
struct evref {
	uint16_t dom, idx;
	uint8_t key;
	char name[T4_DRM_NAME_MAX];
};

struct client {
	struct found who;     /* identity; who.at: the first fd seen */
	char prefix[32];      /* "c17", "c17@1", "p123-5" */
	struct fdref *fds;    /* where to read it (the last scan's fds) */
	size_t n_fds, cap_fds;
	struct evref *evs;    /* its events, in the order first seen */
	size_t n_evs, cap_evs;
	uint32_t bad_lines;   /* most malformed lines in one read */
	bool gone, baseline, read_once;
};

struct ev {
	uint32_t client;
	uint8_t key;          /* enum t4_drm_key */
	char name[T4_DRM_NAME_MAX];
	uint64_t now;         /* cumulative: high-water mark; gauge: level */
	uint64_t logged;      /* cumulative: value in the last logged packet */
	uint64_t stamp;       /* the read that last saw it */
};

struct dom {
	uint32_t id;
	char name[T4_NAME_MAX];
	bool described, started; /* domain packet, FIRST return logged */
	uint32_t n, n_described; /* events; those whose packet is logged */
	struct ev ev[T4_MAX_COUNTERS];
};

struct ints {
	int *v;
	size_t n, cap;
};

struct t4_drm {
	struct t4_drm_opts o;
	char root[512];

	pthread_mutex_t lock; /* roots, pending, stopping */
	pthread_cond_t wake;
	int *roots;
	size_t n_roots, cap_roots;
	struct scan *pending; /* the latest scan, not yet taken */
	bool stopping, running;
	pthread_t thread;
	_Atomic uint64_t scans;
	struct t4_drm_info scan_info; /* the scanner's */
	_Atomic uint64_t too_large;   /* fdinfo reads refused: over T4_DRM_FDINFO_MAX */
	char first_too_large[256];    /* the first such file (under lock) */
	int *known_pid, *known_ppid;  /* the last scan's processes (sorted) and
				       * their parents: the scanner's cache */
	size_t n_known;
	struct ints walked;           /* processes whose fds the last scan saw */
	unsigned full_every, since_full; /* scans between walks of every
					  * process: 1 while there are clients,
					  * doubling to T4_DRM_QUIET_SCANS */

	/* the answering thread's */
	struct client *clients;
	size_t n_clients, cap_clients;
	struct dom *doms;
	size_t n_doms;
	uint32_t domain_id;
	char names[T4_DRM_MAX_DOMAINS][T4_NAME_MAX]; /* the domains' (name_domains) */
	bool answered;
	uint64_t reads;
	uint64_t left_out, read_failures;
	char first_bad[160];
	struct t4_drm_info info;
	struct t4_packet pkt;
};

/* Grow a vector to hold one more element. */
static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	size_t ncap;
	void *nv;

	if (n < *cap)
		return 0;
	ncap = *cap ? 2 * *cap : 8;
	nv = realloc(*v, ncap * size);
	if (!nv)
		return t4_err(ENOMEM, "DRM source: out of memory");
	*v = nv;
	*cap = ncap;
	return 0;
}

/* A decimal number that is the whole name, else -1. */
static int numeric(const char *name)
{
	long v = 0;

	if (!*name)
		return -1;
	for (const char *p = name; *p; p++) {
		if (*p < '0' || *p > '9' || v > 100000000)
			return -1;
		v = v * 10 + (*p - '0');
	}
	return (int)v;
}

/* ---- scanning ------------------------------------------------------------- */

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* A directory's numeric entries, sorted: a scan's order (and so clients'
 * names) does not depend on readdir's. -errno when it cannot be read. */
static int list_numbers(const char *path, struct ints *out)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int rc = 0;

	out->n = 0;
	if (!d)
		return -errno;
	while (rc == 0 && (e = readdir(d))) {
		int x = numeric(e->d_name);
		if (x >= 0 && (rc = grow((void **)&out->v, &out->cap, out->n, sizeof(int))) == 0)
			out->v[out->n++] = x;
	}
	closedir(d);
	if (out->n)
		qsort(out->v, out->n, sizeof(int), cmp_int);
	return rc;
}

static int read_ppid(const struct t4_drm *s, int pid)
{
	char path[600], buf[1024];
	const char *p;
	int ppid;

	snprintf(path, sizeof(path), "%s/%d/stat", s->root, pid);
	if (t4_read_small_file(path, buf, sizeof(buf)) < 0)
		return -1;
	/* "pid (comm) S ppid ...": comm may hold spaces and parentheses */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
		return -1;
	return ppid;
}

/* The parent of each process: from the last scan for the processes it
 * saw (a parent changes only when it exits, and the orphan was in the tree
 * or not already), read for the new ones. A stat read costs ~15 us in a
 * VM: reading every process's at every scan cost the recording ~10 us of
 * CPU per 1 ms trigger with 70 processes. The cache then holds this scan's. */
static void parents_of(struct t4_drm *s, const struct ints *pids, int *ppid)
{
	for (size_t i = 0; i < pids->n; i++) {
		const int *k = s->n_known ? bsearch(&pids->v[i], s->known_pid, s->n_known,
						    sizeof(int), cmp_int) : NULL;
		ppid[i] = k ? s->known_ppid[k - s->known_pid] : read_ppid(s, pids->v[i]);
	}
	int *kp = realloc(s->known_pid, (pids->n + 1) * sizeof(int));
	if (kp)
		s->known_pid = kp;
	int *kq = realloc(s->known_ppid, (pids->n + 1) * sizeof(int));
	if (kq)
		s->known_ppid = kq;
	s->n_known = kp && kq ? pids->n : 0; /* no memory: no cache */
	if (s->n_known) {
		memcpy(s->known_pid, pids->v, pids->n * sizeof(int));
		memcpy(s->known_ppid, ppid, pids->n * sizeof(int));
	}
}

/* Which of the processes (pids) are the workload: every one, or the
 * roots' trees, breadth-first over the ppid links. */
static int select_procs(struct t4_drm *s, const struct ints *pids, bool *in)
{
	int *ppid = NULL;
	bool more = true;

	for (size_t i = 0; i < pids->n; i++)
		in[i] = s->o.every_process;
	if (s->o.every_process)
		return 0;
	if (!(ppid = calloc(pids->n + 1, sizeof(*ppid))))
		return t4_err(ENOMEM, "DRM source: out of memory");
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < pids->n; i++)
		for (size_t r = 0; r < s->n_roots && !in[i]; r++)
			in[i] = pids->v[i] == s->roots[r];
	pthread_mutex_unlock(&s->lock);
	parents_of(s, pids, ppid);
	while (more) {
		more = false;
		for (size_t i = 0; i < pids->n; i++) {
			int *parent = in[i] ? NULL : bsearch(&ppid[i], pids->v, pids->n,
							     sizeof(int), cmp_int);
			if (parent && in[parent - pids->v])
				more = in[i] = true;
		}
	}
	free(ppid);
	return 0;
}

static void fd_path(const struct t4_drm *s, const char *dir, struct fdref at,
		    char *buf, size_t cap)
{
	snprintf(buf, cap, "%s/%d/%s/%d", s->root, at.pid, dir, at.fd);
}

static bool is_drm_fd(const struct t4_drm *s, struct fdref at)
{
	static const char dri[] = "/dev/dri/";
	char path[600], link[256];
	ssize_t n;

	fd_path(s, "fd", at, path, sizeof(path));
	n = readlink(path, link, sizeof(link) - 1);
	return n >= (ssize_t)sizeof(dri) - 1 && !memcmp(link, dri, sizeof(dri) - 1);
}

static int add_found(struct t4_drm *s, struct scan *sc, struct fdref at)
{
	const struct t4_drm_info *in = &s->scan_info;
	struct found *f;
	int rc = grow((void **)&sc->v, &sc->cap, sc->n, sizeof(*sc->v));

	if (rc < 0)
		return rc;
	f = &sc->v[sc->n++];
	f->at = at;
	f->id = in->client_id;
	f->has_id = in->has_client_id;
	memcpy(f->pdev, in->pdev, sizeof(f->pdev));
	memcpy(f->driver, in->driver, sizeof(f->driver));
	return 0;
}

/* A fdinfo file over T4_DRM_FDINFO_MAX: not read, counted, the first
 * named (either thread). */
static void note_too_large(struct t4_drm *s, const char *path)
{
	if (atomic_fetch_add(&s->too_large, 1) > 0)
		return;
	pthread_mutex_lock(&s->lock);
	t4_strlcpy(s->first_too_large, path, sizeof(s->first_too_large));
	pthread_mutex_unlock(&s->lock);
}

/* The DRM fds of one process that export usage stats. A process that is
 * gone, or not ours to look at, has none. */
static int scan_fds(struct t4_drm *s, int pid, struct ints *fds, struct scan *sc)
{
	char path[600];
	int rc = 0;

	snprintf(path, sizeof(path), "%s/%d/fd", s->root, pid);
	if (list_numbers(path, fds) < 0)
		return 0;
	for (size_t i = 0; rc == 0 && i < fds->n; i++) {
		struct fdref at = { pid, fds->v[i] };
		if (!is_drm_fd(s, at))
			continue;
		fd_path(s, "fdinfo", at, path, sizeof(path));
		int got = t4_drm_read(path, &s->scan_info);
		if (got == 0)
			rc = add_found(s, sc, at);
		else if (got == -EFBIG)
			note_too_large(s, path);
	}
	return rc;
}

static void scan_free(struct scan *sc)
{
	if (sc)
		free(sc->v);
	free(sc);
}

static bool walked_before(const struct t4_drm *s, int pid)
{
	return s->walked.n && bsearch(&pid, s->walked.v, s->walked.n, sizeof(int), cmp_int);
}

/* After a scan: remember the processes it covered (pids is sorted), and
 * how often the next ones walk everybody: at each scan while clients are
 * found, less and less often while none are (a workload or machine without
 * a GPU), new processes still at every scan. */
static int next_scan_plan(struct t4_drm *s, const struct ints *pids, const bool *in, bool full,
			  bool found)
{
	int rc = 0;

	if (full || found) {
		s->since_full = 0;
		s->full_every = found ? 1 : s->full_every < T4_DRM_QUIET_SCANS
							 ? s->full_every * 2 : s->full_every;
	}
	if (!full)
		return 0; /* the processes seen stay those of the last full walk */
	s->walked.n = 0;
	for (size_t i = 0; rc == 0 && i < pids->n; i++)
		if (in[i] && (rc = grow((void **)&s->walked.v, &s->walked.cap, s->walked.n,
					sizeof(int))) == 0)
			s->walked.v[s->walked.n++] = pids->v[i];
	return rc;
}

int t4_drm_scan(struct t4_drm *s)
{
	struct ints pids = { 0 }, fds = { 0 };
	struct scan *sc = calloc(1, sizeof(*sc));
	bool *in = NULL;
	int rc = sc ? list_numbers(s->root, &pids) : -ENOMEM;

	if (rc < 0)
		rc = t4_err(-rc, "%s: %s", s->root, strerror(-rc));
	else if (!(in = calloc(pids.n + 1, sizeof(*in))))
		rc = t4_err(ENOMEM, "DRM source: out of memory");
	else
		rc = select_procs(s, &pids, in);
	bool full = ++s->since_full >= s->full_every;
	for (size_t i = 0; rc == 0 && i < pids.n; i++)
		if (in[i] && (full || !walked_before(s, pids.v[i])))
			rc = scan_fds(s, pids.v[i], &fds, sc);
	if (rc == 0)
		rc = next_scan_plan(s, &pids, in, full, sc->n > 0);
	free(in);
	free(pids.v);
	free(fds.v);
	if (rc < 0) {
		scan_free(sc);
		return rc;
	}
	pthread_mutex_lock(&s->lock);
	scan_free(s->pending);
	s->pending = sc;
	pthread_mutex_unlock(&s->lock);
	atomic_fetch_add(&s->scans, 1);
	return 0;
}

/* ---- clients ----------------------------------------------------------------- */

static bool same_identity(const struct found *a, const struct found *b)
{
	if (a->has_id != b->has_id || strcmp(a->driver, b->driver))
		return false;
	if (a->has_id)
		return a->id == b->id && !strcmp(a->pdev, b->pdev);
	return a->at.pid == b->at.pid && a->at.fd == b->at.fd;
}

/* "c<id>"; "c<id>@<k>" for the k-th other device giving the same ID (the
 * spec allows IDs unique per device only); "p<pid>-<fd>" without an ID. */
static void name_client(const struct t4_drm *s, struct client *c)
{
	unsigned same = 0;

	if (!c->who.has_id) {
		snprintf(c->prefix, sizeof(c->prefix), "p%d-%d", c->who.at.pid, c->who.at.fd);
		return;
	}
	for (size_t i = 0; i < s->n_clients; i++)
		same += s->clients[i].who.has_id && s->clients[i].who.id == c->who.id;
	if (same)
		snprintf(c->prefix, sizeof(c->prefix), "c%llu@%u",
			 (unsigned long long)c->who.id, same);
	else
		snprintf(c->prefix, sizeof(c->prefix), "c%llu", (unsigned long long)c->who.id);
}

static struct client *client_of(struct t4_drm *s, const struct found *f)
{
	struct client *c;

	for (size_t i = 0; i < s->n_clients; i++)
		if (same_identity(&s->clients[i].who, f))
			return &s->clients[i];
	if (grow((void **)&s->clients, &s->cap_clients, s->n_clients, sizeof(*c)) < 0)
		return NULL;
	c = &s->clients[s->n_clients];
	memset(c, 0, sizeof(*c));
	c->who = *f;
	c->baseline = !s->answered;
	name_client(s, c);
	s->n_clients++;
	return c;
}

static int add_fd(struct client *c, struct fdref at)
{
	for (size_t i = 0; i < c->n_fds; i++)
		if (c->fds[i].pid == at.pid && c->fds[i].fd == at.fd)
			return 0;
	if (grow((void **)&c->fds, &c->cap_fds, c->n_fds, sizeof(*c->fds)) < 0)
		return -ENOMEM;
	c->fds[c->n_fds++] = at;
	return 0;
}

static struct ev *ev_at(struct t4_drm *s, struct evref r)
{
	return r.dom == LEFT_OUT ? NULL : &s->doms[r.dom].ev[r.idx];
}

/* Gone: cumulative keys stop where they are, gauges drop to 0. */
static void client_gone(struct t4_drm *s, struct client *c)
{
	c->gone = true;
	c->n_fds = 0;
	for (size_t i = 0; i < c->n_evs; i++) {
		struct ev *e = ev_at(s, c->evs[i]);
		if (e && t4_drm_keydef(e->key)->gauge)
			e->now = 0;
	}
}

/* The latest scan says where each client can be read now; a known client
 * it did not find is gone. */
static void take_scan(struct t4_drm *s)
{
	struct scan *sc;

	pthread_mutex_lock(&s->lock);
	sc = s->pending;
	s->pending = NULL;
	pthread_mutex_unlock(&s->lock);
	if (!sc)
		return;
	for (size_t i = 0; i < s->n_clients; i++)
		s->clients[i].n_fds = 0;
	for (size_t i = 0; i < sc->n; i++) {
		struct client *c = client_of(s, &sc->v[i]);
		if (c && add_fd(c, sc->v[i].at) == 0)
			c->gone = false;
	}
	for (size_t i = 0; i < s->n_clients; i++)
		if (!s->clients[i].n_fds && !s->clients[i].gone)
			client_gone(s, &s->clients[i]);
	scan_free(sc);
}

/* ---- reading --------------------------------------------------------------- */

static bool still_it(const struct client *c, const struct t4_drm_info *in)
{
	struct found now = { .at = c->who.at, .id = in->client_id, .has_id = in->has_client_id };

	memcpy(now.pdev, in->pdev, sizeof(now.pdev));
	memcpy(now.driver, in->driver, sizeof(now.driver));
	return same_identity(&c->who, &now);
}

/* Read a client from any of its fds into s->info. An fd that is closed, or
 * reused by another file, is dropped; -ENOENT when none is left. */
static int read_client(struct t4_drm *s, struct client *c)
{
	char path[600];

	for (size_t k = 0; k < c->n_fds;) {
		int rc;

		fd_path(s, "fdinfo", c->fds[k], path, sizeof(path));
		rc = t4_drm_read(path, &s->info);
		if (rc == 0 && still_it(c, &s->info))
			return 0;
		if (rc == -EFBIG)
			note_too_large(s, path);
		if (rc != 0 && rc != -ENOENT && rc != -ENODATA)
			return rc; /* unreadable now: keep it, keep its values */
		c->fds[k] = c->fds[--c->n_fds];
	}
	return -ENOENT;
}

static void event_name(const struct t4_drm *s, const struct ev *e, char *buf, size_t cap,
		       int *len)
{
	const struct client *c = &s->clients[e->client];

	*len = snprintf(buf, cap, "%s.%s.%s", c->prefix, t4_drm_keydef(e->key)->label, e->name);
}

static struct dom *dom_with_room(struct t4_drm *s)
{
	struct dom *d;

	if (s->n_doms && s->doms[s->n_doms - 1].n < T4_MAX_COUNTERS)
		return &s->doms[s->n_doms - 1];
	if (s->n_doms == T4_DRM_MAX_DOMAINS)
		return NULL;
	if (!s->doms && !(s->doms = calloc(T4_DRM_MAX_DOMAINS, sizeof(*s->doms))))
		return NULL;
	d = &s->doms[s->n_doms];
	d->id = s->n_doms ? T4_DRM_EXTRA_ID + (uint32_t)s->n_doms - 1 : s->domain_id;
	memcpy(d->name, s->names[s->n_doms], sizeof(d->name));
	s->n_doms++;
	return d;
}

/* A new (client, key) pair: an event in the last domain with room, or
 * left out (counted once) when there is none or its name does not fit. */
static void new_event(struct t4_drm *s, uint32_t ci, struct evref *r)
{
	struct ev e = { .client = ci, .key = r->key };
	struct dom *d;
	char name[T4_NAME_MAX];
	int len;

	memcpy(e.name, r->name, sizeof(e.name));
	event_name(s, &e, name, sizeof(name), &len);
	r->dom = LEFT_OUT;
	if (len >= (int)sizeof(name) || !(d = dom_with_room(s))) {
		s->left_out++;
		return;
	}
	r->dom = (uint16_t)(d - s->doms);
	r->idx = (uint16_t)d->n;
	d->ev[d->n++] = e;
}

/* The event of (client, value), NULL when left out: the client's next
 * pair first (files keep their key order), else searched, else new. */
static struct ev *event_of(struct t4_drm *s, uint32_t ci, const struct t4_drm_value *v,
			   size_t *hint, bool *fresh)
{
	struct client *c = &s->clients[ci];
	size_t i = *hint < c->n_evs ? *hint : 0;
	struct evref *r;

	*fresh = false;
	for (size_t k = 0; k < c->n_evs; k++, i = (i + 1) % c->n_evs) {
		r = &c->evs[i];
		if (r->key == v->key && !strcmp(r->name, v->name)) {
			*hint = i + 1;
			return ev_at(s, *r);
		}
	}
	if (grow((void **)&c->evs, &c->cap_evs, c->n_evs, sizeof(*c->evs)) < 0)
		return NULL;
	r = &c->evs[c->n_evs++];
	r->key = v->key;
	memcpy(r->name, v->name, sizeof(r->name));
	new_event(s, ci, r);
	*fresh = true;
	return ev_at(s, *r);
}

/* One read's values into the client's events. */
static void take_values(struct t4_drm *s, uint32_t ci)
{
	struct client *c = &s->clients[ci];
	const struct t4_drm_info *in = &s->info;
	bool baseline = c->baseline && !c->read_once;
	size_t hint = 0;

	for (size_t i = 0; i < in->n; i++) {
		bool fresh, gauge = t4_drm_keydef(in->v[i].key)->gauge;
		struct ev *e = event_of(s, ci, &in->v[i], &hint, &fresh);
		if (!e)
			continue;
		e->stamp = s->reads;
		if (gauge || in->v[i].v > e->now)
			e->now = in->v[i].v; /* a lower cumulative value: keep the higher */
		if (fresh && baseline)
			e->logged = e->now;
	}
	for (size_t i = 0; i < c->n_evs; i++) { /* a level the file no longer has */
		struct ev *e = ev_at(s, c->evs[i]);
		if (e && e->stamp != s->reads && t4_drm_keydef(e->key)->gauge)
			e->now = 0;
	}
	c->read_once = true;
	if (in->bad_lines > c->bad_lines)
		c->bad_lines = in->bad_lines;
	if (in->bad_lines && !s->first_bad[0])
		memcpy(s->first_bad, in->first_bad, sizeof(s->first_bad));
}

static void read_clients(struct t4_drm *s)
{
	s->reads++;
	for (size_t i = 0; i < s->n_clients; i++) {
		struct client *c = &s->clients[i];
		int rc;

		if (c->gone)
			continue;
		rc = read_client(s, c);
		if (rc == 0)
			take_values(s, (uint32_t)i);
		else if (rc == -ENOENT)
			client_gone(s, c);
		else
			s->read_failures++;
	}
}

/* ---- packets ------------------------------------------------------------------ */

static void describe_dom(const struct dom *d, struct t4_packet *p)
{
	memset(p, 0, sizeof(*p));
	p->type = T4_PKT_DOMAIN;
	p->domain.domain_id = d->id;
	p->domain.kind = T4_DOM_DRM;
	p->domain.cpu = -1;
	p->domain.clock_event = -1;
	t4_strlcpy(p->domain.name, d->name, sizeof(p->domain.name));
}

static void describe_event(const struct t4_drm *s, const struct dom *d, uint32_t i,
			   struct t4_packet *p)
{
	const struct ev *e = &d->ev[i];
	const struct found *who = &s->clients[e->client].who;
	const struct t4_drm_keydef *k = t4_drm_keydef(e->key);
	struct t4_event_pkt *ep = &p->event;
	char *spec = ep->spec;
	size_t cap = sizeof(ep->spec);
	int len;

	memset(p, 0, sizeof(*p));
	p->type = T4_PKT_EVENT;
	ep->domain_id = d->id;
	ep->index = i;
	ep->flags = k->gauge ? T4_EV_GAUGE : 0;
	ep->config = e->key;
	ep->config1 = who->has_id ? who->id : 0;
	ep->scale = 1.0;
	t4_strlcpy(ep->pmu, "drm", sizeof(ep->pmu));
	t4_strlcpy(ep->unit, k->unit, sizeof(ep->unit));
	event_name(s, e, ep->name, sizeof(ep->name), &len);
	len = snprintf(spec, cap, "%s%s", k->prefix, e->name);
	if (who->pdev[0])
		len += snprintf(spec + len, cap - (size_t)len, ",pdev=%s", who->pdev);
	if (who->has_id)
		len += snprintf(spec + len, cap - (size_t)len, ",client-id=%llu",
				(unsigned long long)who->id);
	else
		len += snprintf(spec + len, cap - (size_t)len, ",pid=%d,fd=%d", who->at.pid,
				who->at.fd);
	snprintf(spec + len, cap - (size_t)len, ",driver=%s", who->driver);
}

static void fill_return(const struct dom *d, uint64_t trigger_id, uint64_t begin,
			uint64_t end, struct t4_packet *p)
{
	struct t4_ret_pkt *r = &p->ret;

	p->type = T4_PKT_RET;
	memset(r, 0, offsetof(struct t4_ret_pkt, counts));
	r->trigger_id = trigger_id;
	r->domain_id = d->id;
	r->local_clock = r->read_begin_ns = begin;
	r->read_end_ns = end;
	if (!d->started) {
		r->flags = T4_RET_FIRST;
		return;
	}
	r->n_counts = d->n_described;
	for (uint32_t i = 0; i < r->n_counts; i++) {
		const struct ev *e = &d->ev[i];
		r->counts[i] = t4_drm_keydef(e->key)->gauge ? e->now : e->now - e->logged;
	}
}

/* One domain's packets: its description and baseline first, then the
 * descriptions of its new events and the return packet. Returns the
 * counts logged; a packet that was dropped is tried again next time. */
static int emit_dom(struct t4_drm *s, struct dom *d, uint64_t trigger_id, uint64_t begin,
		    uint64_t end, t4_emit_fn emit, void *ud)
{
	if (!d->described) {
		describe_dom(d, &s->pkt);
		if (emit(ud, &s->pkt) < 0)
			return 0;
		d->described = true;
	}
	while (d->started && d->n_described < d->n) {
		describe_event(s, d, d->n_described, &s->pkt);
		if (emit(ud, &s->pkt) < 0)
			break;
		d->n_described++;
	}
	fill_return(d, trigger_id, begin, end, &s->pkt);
	if (emit(ud, &s->pkt) < 0)
		return 0;
	d->started = true;
	for (uint32_t i = 0; i < s->pkt.ret.n_counts; i++)
		d->ev[i].logged = d->ev[i].now;
	return (int)s->pkt.ret.n_counts;
}

int t4_drm_answer(struct t4_drm *s, uint64_t trigger_id, clockid_t ref_clock, t4_emit_fn emit,
		  void *ud)
{
	uint64_t begin, end;
	int values = 0;

	take_scan(s);
	begin = t4_clock_ns(ref_clock);
	read_clients(s);
	end = t4_clock_ns(ref_clock);
	s->answered = true;
	for (size_t i = 0; i < s->n_doms; i++)
		values += emit_dom(s, &s->doms[i], trigger_id, begin, end, emit, ud);
	return values;
}

/* ---- life ---------------------------------------------------------------------- */

static int answer_source(void *ctx, uint64_t trigger_id, clockid_t ref_clock, t4_emit_fn emit,
			 void *ud)
{
	return t4_drm_answer(ctx, trigger_id, ref_clock, emit, ud);
}

/* Nothing to read and nothing found: answering would put nothing. Clients
 * found while it rests count from 0 (their counters start when their DRM
 * file opens), so its rest loses nothing. */
static bool source_idle(void *ctx)
{
	struct t4_drm *s = ctx;
	bool idle;

	if (!s->answered || s->n_doms || s->n_clients)
		return false;
	pthread_mutex_lock(&s->lock);
	idle = !s->pending || !s->pending->n;
	pthread_mutex_unlock(&s->lock);
	return idle;
}

/* The names of its domains, unique in ds (docs/FORMAT.md 4.2 and 6.2):
 * "drm", "drm.1", ... where no domain of ds has them, else marked
 * ("drm~1a2b3c4d.1"): the extra domains appear while recording, after
 * every PMU's domain is named, so a PMU named "drm.1" cannot take the
 * name of one. The marked names cannot meet each other (".k" differs). */
static int name_domains(struct t4_drm *s, const struct t4_domain_set *ds)
{
	for (unsigned k = 0; k < T4_DRM_MAX_DOMAINS; k++) {
		char suffix[16] = "";
		if (k)
			snprintf(suffix, sizeof(suffix), ".%u", k);
		if (t4_domains_name(ds, "drm", suffix, s->names[k]) < 0)
			return t4_err(EEXIST, "%s: PMUs have the DRM source's domain names, marked "
				      "ones too: leave one PMU out of -e, or --no-drm", s->names[k]);
	}
	return 0;
}

int t4_drm_attach(struct t4_drm *s, struct t4_domain_set *ds)
{
	const struct t4_domain_source src = { answer_source, source_idle, s };
	struct t4_domain *d;
	int rc = name_domains(s, ds);

	if (rc == 0 && (rc = t4_domains_add_source(ds, s->names[0], T4_DOM_DRM, &src, &d)) == 0)
		s->domain_id = d->id;
	return rc;
}

int t4_drm_add_root(struct t4_drm *s, int pid)
{
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = grow((void **)&s->roots, &s->cap_roots, s->n_roots, sizeof(*s->roots));
	if (rc == 0)
		s->roots[s->n_roots++] = pid; /* not walked yet: the next scan walks it */
	pthread_mutex_unlock(&s->lock);
	return rc;
}

static uint64_t mono_ns(void)
{
	return t4_clock_ns(CLOCK_MONOTONIC);
}

/* Scan every scan_ns, whatever wakes the thread, and rest at least nine
 * times as long as a scan took: a machine with thousands of processes and
 * fds costs the scanner at most a tenth of one CPU (t4_drm_scan decides
 * which processes' fds each scan walks). */
static void *scanner_main(void *arg)
{
	struct t4_drm *s = arg;
	uint64_t next = mono_ns() + s->o.scan_ns;

	pthread_mutex_lock(&s->lock);
	while (!s->stopping) {
		struct timespec ts = { (time_t)(next / 1000000000ull), (long)(next % 1000000000ull) };
		uint64_t start = mono_ns(), took;
		if (start < next) {
			pthread_cond_timedwait(&s->wake, &s->lock, &ts);
			continue;
		}
		pthread_mutex_unlock(&s->lock);
		t4_drm_scan(s); /* a failed scan keeps the previous list */
		took = mono_ns() - start;
		next = start + took + (9 * took > s->o.scan_ns ? 9 * took : s->o.scan_ns);
		pthread_mutex_lock(&s->lock);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

int t4_drm_start(struct t4_drm *s)
{
	int rc;

	if (s->running)
		return 0;
	if ((rc = t4_thread_start(&s->thread, scanner_main, s, "t4-drm-scan", "DRM scanner")) < 0)
		return rc;
	s->running = true;
	return 0;
}

void t4_drm_stop(struct t4_drm *s)
{
	if (!s->running)
		return;
	pthread_mutex_lock(&s->lock);
	s->stopping = true;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	s->running = false;
}

int t4_drm_open(struct t4_drm **out, const struct t4_drm_opts *o)
{
	struct t4_drm *s = calloc(1, sizeof(*s));
	pthread_condattr_t ca;
	int rc;

	if (!s)
		return t4_err(ENOMEM, "DRM source: out of memory");
	s->o = *o;
	if (!s->o.scan_ns)
		s->o.scan_ns = T4_DRM_SCAN_NS;
	s->full_every = 1;
	t4_strlcpy(s->root, o->proc_root ? o->proc_root : T4_PROC_DEFAULT, sizeof(s->root));
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->wake, &ca);
	pthread_condattr_destroy(&ca);
	s->o.roots = NULL; /* copied by add_root */
	rc = name_domains(s, &(const struct t4_domain_set){ 0 }); /* until attached */
	for (size_t i = 0; i < o->n_roots && rc == 0; i++)
		rc = t4_drm_add_root(s, o->roots[i]);
	if (rc < 0 || (rc = t4_drm_scan(s)) < 0) {
		t4_drm_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

void t4_drm_stats(struct t4_drm *s, struct t4_drm_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->clients = s->n_clients;
	for (size_t i = 0; i < s->n_clients; i++) {
		st->clients_no_id += !s->clients[i].who.has_id;
		st->bad_lines += s->clients[i].bad_lines;
	}
	for (size_t i = 0; i < s->n_doms; i++)
		st->events += s->doms[i].n;
	st->events_left_out = s->left_out;
	st->read_failures = s->read_failures;
	st->scans = atomic_load(&s->scans);
	memcpy(st->first_bad, s->first_bad, sizeof(st->first_bad));
	st->too_large = atomic_load(&s->too_large);
	pthread_mutex_lock(&s->lock);
	memcpy(st->first_too_large, s->first_too_large, sizeof(st->first_too_large));
	pthread_mutex_unlock(&s->lock);
}

void t4_drm_free(struct t4_drm *s)
{
	if (!s)
		return;
	t4_drm_stop(s);
	for (size_t i = 0; i < s->n_clients; i++) {
		free(s->clients[i].fds);
		free(s->clients[i].evs);
	}
	free(s->clients);
	free(s->doms);
	free(s->roots);
	free(s->known_pid);
	free(s->known_ppid);
	free(s->walked.v);
	scan_free(s->pending);
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
