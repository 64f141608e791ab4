/* metadata.c - the packets that open a recording: the session, then each
 * clock domain (with the ID of the scheduler whose triggers it answers)
 * followed by its events. Shared by the live recording (`record`) and the
 * virtual-time one (virtual.c), so both describe a recording the same way.
 *
 * Metadata goes into one ring of the caller's, created before any other,
 * so the writer (which drains rings in creation order) logs it before the
 * packets it describes. Off the trigger path: it may allocate.
 */
#include "sched_internal.h"
#include "util/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

uint32_t t4_sched_id_of(const struct t4_domain *d, bool per_socket)
{
	if (!per_socket || d->n == 0 || !d->counters[0].pmu)
		return 0;
	int sock = d->counters[0].pmu->socket;
	return sock > 0 ? (uint32_t)sock : 0;
}

size_t sched_ids(const struct t4_domain_set *ds, bool per_socket, uint32_t *ids)
{
	size_t n = 0;

	for (size_t i = 0; i < ds->n; i++) {
		uint32_t id = t4_sched_id_of(&ds->v[i], per_socket);
		size_t at = 0;

		while (at < n && ids[at] < id)
			at++;
		if (at < n && ids[at] == id)
			continue;
		memmove(&ids[at + 1], &ids[at], (n - at) * sizeof(*ids));
		ids[at] = id;
		n++;
	}
	return n;
}

/* A session ID whose low 32 bits (the chunks' tag) are never 0. */
static uint64_t nonzero_tag(uint64_t id)
{
	return (uint32_t)id ? id : id | 1;
}

/* Random: two recordings never share one, whatever their clocks say. */
static uint64_t random_session_id(const struct t4_session_pkt *s)
{
	uint64_t id;
	struct timespec ts;

	if (getrandom(&id, sizeof(id), GRND_NONBLOCK) == (ssize_t)sizeof(id))
		return nonzero_tag(id);
	clock_gettime(CLOCK_REALTIME, &ts); /* no entropy yet: early boot */
	return nonzero_tag(t4_hash((uint64_t)getpid(), (uint64_t)ts.tv_nsec, s->start_ref_ns,
				   s->start_real_ns));
}

uint64_t t4_session_content_id(const struct t4_session_pkt *s)
{
	uint64_t text = (uint64_t)t4_crc32c(0, s->cmdline, strlen(s->cmdline)) << 32 |
			t4_crc32c(t4_crc32c(0, s->host, strlen(s->host)), s->kernel,
				  strlen(s->kernel));
	return nonzero_tag(t4_hash(text, s->start_ref_ns, s->start_real_ns, s->period_ns));
}

void t4_session_init(struct t4_session_pkt *s, const char *cmdline, uint64_t start_ref_ns,
		     uint64_t start_real_ns, uint64_t period_ns, bool simulated)
{
	struct utsname u;

	memset(s, 0, sizeof(*s));
	if (uname(&u) == 0) {
		char kernel[3 * sizeof(u.release)];
		snprintf(kernel, sizeof(kernel), "%s %s %s", u.sysname, u.release, u.machine);
		t4_strlcpy(s->host, u.nodename, sizeof(s->host));
		t4_strlcpy(s->kernel, kernel, sizeof(s->kernel));
	}
	t4_strlcpy(s->version, T4_VERSION, sizeof(s->version));
	t4_strlcpy(s->cmdline, cmdline ? cmdline : "", sizeof(s->cmdline));
	s->start_ref_ns = start_ref_ns;
	s->start_real_ns = start_real_ns;
	s->period_ns = period_ns;
	s->flags = simulated ? T4_SESSION_SIMULATED : 0;
	s->session_id = random_session_id(s);
}

/* The domain packet, then one packet per event of d. */
static int put_domain(struct t4_ring *ring, struct t4_packet *p, const struct t4_domain *d,
		      bool per_socket)
{
	int rc;

	memset(p, 0, sizeof(*p));
	p->type = T4_PKT_DOMAIN;
	t4_domain_describe(d, &p->domain);
	p->domain.sched_id = t4_sched_id_of(d, per_socket);
	rc = t4_ring_put(ring, p);
	for (size_t e = 0; e < d->n && rc >= 0; e++) {
		memset(p, 0, sizeof(*p));
		p->type = T4_PKT_EVENT;
		t4_domain_describe_event(d, e, &p->event);
		rc = t4_ring_put(ring, p);
	}
	return rc;
}

int t4_put_metadata(struct t4_ring *ring, const struct t4_session_pkt *session,
		    const struct t4_domain_set *ds, bool per_socket)
{
	struct t4_packet *p = calloc(1, sizeof(*p));
	int rc;

	if (!p)
		return t4_err(ENOMEM, "out of memory");
	p->type = T4_PKT_SESSION;
	p->session = *session;
	rc = t4_ring_put(ring, p);
	for (size_t i = 0; i < ds->n && rc >= 0; i++)
		if (!ds->v[i].source.answer) /* a source describes its own */
			rc = put_domain(ring, p, &ds->v[i], per_socket);
	free(p);
	return rc;
}
