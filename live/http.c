/* http.c - `record --metrics-listen ADDR:PORT`: Prometheus's /metrics over
 * HTTP, served by libmicrohttpd on threads of its own, never on the
 * trigger path.
 *
 * Each scrape is answered from the endpoint's last view (view.c: the
 * totals of a snapshot of the recorder's index, and the metrics over the
 * interval since the one before); a new snapshot is taken when the last is
 * older than T4_LIVE_HTTP_MIN_MS, so a scraper hammering the port costs the
 * recorder at most two snapshots a second. libmicrohttpd's own polling
 * thread serves every connection without blocking on any: a stalled or
 * malformed client holds only its connection, which times out; at most
 * HTTP_MAX_CONN at once. Only GET (and HEAD) of /metrics; anything else is
 * 404 or 405.
 *
 * libmicrohttpd's timeout counts idle time only, so a client trickling a
 * byte a second (slowloris) would hold its connection for hours and 256 of
 * them the endpoint. A reaper thread therefore shuts down (shutdown(2),
 * libmicrohttpd then closes it on its own thread) every connection that
 * has not sent a whole request for HTTP_TIMEOUT_S, counted from its
 * connection, its last request or its last answer. The fd is checked
 * against the peer seen at connection (getpeername) before, so a number
 * reused after a close the reaper did not see yet is never touched.
 * Under pressure (HTTP_PRESSURE_CONN connections or more) the time allowed
 * drops to HTTP_PRESSURE_MS: 256 stalled connections from one host would
 * otherwise keep every scrape waiting in the kernel's queue for up to
 * HTTP_TIMEOUT_S (9 s measured), close to Prometheus's scrape timeout.
 */
#include "live.h"
#include "util/util.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define HTTP_MAX_CONN 256
#define HTTP_TIMEOUT_S 10
#define HTTP_REAP_MS 500 /* how often the reaper looks */
#define HTTP_PRESSURE_CONN (HTTP_MAX_CONN / 2)
#define HTTP_PRESSURE_MS 1000

/* A connection, for the reaper (its socket context). */
struct http_conn {
	int fd;
	struct sockaddr_storage peer; /* as at connection */
	socklen_t peer_len;
	uint64_t request_ms;          /* connected, its last request or answer */
	bool shut;                    /* shut down already */
	struct http_conn *prev, *next;
};

struct t4_live_http {
	struct MHD_Daemon *mhd;
	struct t4_live *live;
	void (*health)(void *ud, struct t4_live_health *h);
	void *ud;
	unsigned port;
	pthread_mutex_t lock; /* the view and the cached text */
	struct t4_live_view *view;
	uint64_t taken_ms;
	char *text;
	size_t len;
	pthread_mutex_t conn_lock; /* conns, stop */
	pthread_cond_t wake;
	pthread_t reaper;
	bool reaping, stop;
	struct http_conn *conns;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The exposition text, refreshed when the last is too old (lock held). */
static int refresh(struct t4_live_http *h)
{
	struct t4_live_health hl = { 0 };
	struct t4_live_snap s;
	const struct t4_live_row *rows;
	size_t n, len;
	char *text;
	int rc;

	if (h->text && now_ms() - h->taken_ms < T4_LIVE_HTTP_MIN_MS)
		return 0;
	h->health(h->ud, &hl);
	if ((rc = t4_live_take(h->live, &hl, &s)) < 0)
		return rc;
	if ((rc = t4_live_view_update(h->view, &s, &rows, &n)) < 0 ||
	    (rc = t4_live_prometheus(t4_live_view_snap(h->view), rows, n, &text, &len)) < 0) {
		t4_live_snap_free(&s);
		return rc;
	}
	free(h->text);
	h->text = text;
	h->len = len;
	h->taken_ms = now_ms();
	return 0;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type,
			     const char *body, size_t len, bool copy)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		len, (void *)body, copy ? MHD_RESPMEM_MUST_COPY : MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ok;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ok = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ok;
}

/* c sent a whole request, or had its answer: the reaper's clock restarts. */
static void mark_request(struct t4_live_http *h, struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct http_conn *hc = ci ? ci->socket_context : NULL;

	if (!hc)
		return;
	pthread_mutex_lock(&h->conn_lock);
	hc->request_ms = now_ms();
	pthread_mutex_unlock(&h->conn_lock);
}

/* A request is over (answered, or its connection gone). */
static void on_completed(void *cls, struct MHD_Connection *c, void **state,
			 enum MHD_RequestTerminationCode toe)
{
	(void)state;
	(void)toe;
	mark_request(cls, c);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *data,
				  size_t *data_size, void **state)
{
	struct t4_live_http *h = cls;
	static const char text_type[] = "text/plain; version=0.0.4; charset=utf-8";
	enum MHD_Result ok;

	(void)version;
	(void)data;
	if (!*state) { /* the headers: answer once the request is whole */
		mark_request(h, c);
		*state = h;
		return MHD_YES;
	}
	if (*data_size) { /* a body nobody asked for: drop it */
		*data_size = 0;
		return MHD_YES;
	}
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", "GET /metrics\n", 13,
			     false);
	if (strcmp(url, "/metrics"))
		return reply(c, MHD_HTTP_NOT_FOUND, "text/plain", "GET /metrics\n", 13, false);
	pthread_mutex_lock(&h->lock);
	if (refresh(h) < 0) {
		pthread_mutex_unlock(&h->lock);
		const char *m = t4_errmsg();
		return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain", m, strlen(m), true);
	}
	ok = reply(c, MHD_HTTP_OK, text_type, h->text, h->len, true);
	pthread_mutex_unlock(&h->lock);
	return ok;
}

/* %-escapes decoded as libmicrohttpd does, except that a %00 leaves the
 * URL empty: "/metrics%00x" would otherwise read as /metrics (404 now). */
static size_t unescape(void *cls, struct MHD_Connection *c, char *s)
{
	size_t n = MHD_http_unescape(s);

	(void)cls;
	(void)c;
	if (strlen(s) != n) {
		s[0] = '\0';
		n = 0;
	}
	return n;
}

/* libmicrohttpd's thread: a connection starts (listed for the reaper) or
 * closes (unlisted before its fd is closed). */
static void on_connection(void *cls, struct MHD_Connection *c, void **ctx,
			  enum MHD_ConnectionNotificationCode code)
{
	struct t4_live_http *h = cls;
	struct http_conn *hc = *ctx;
	const union MHD_ConnectionInfo *ci;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		if (!ci || !(hc = calloc(1, sizeof(*hc))))
			return; /* not reaped: its idle timeout still holds */
		hc->fd = ci->connect_fd;
		hc->peer_len = sizeof(hc->peer);
		if (getpeername(hc->fd, (struct sockaddr *)&hc->peer, &hc->peer_len) < 0) {
			free(hc);
			return;
		}
		hc->request_ms = now_ms();
		pthread_mutex_lock(&h->conn_lock);
		hc->next = h->conns;
		if (h->conns)
			h->conns->prev = hc;
		h->conns = hc;
		pthread_mutex_unlock(&h->conn_lock);
		*ctx = hc;
		return;
	}
	if (!hc)
		return;
	pthread_mutex_lock(&h->conn_lock);
	if (hc->prev)
		hc->prev->next = hc->next;
	else
		h->conns = hc->next;
	if (hc->next)
		hc->next->prev = hc->prev;
	pthread_mutex_unlock(&h->conn_lock);
	free(hc);
	*ctx = NULL;
}

/* hc's fd still the connection it was (conn_lock held). */
static bool same_peer(const struct http_conn *hc)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	return getpeername(hc->fd, (struct sockaddr *)&ss, &len) == 0 && len == hc->peer_len &&
	       !memcmp(&ss, &hc->peer, len);
}

/* How long a connection may go without a whole request now (conn_lock
 * held): HTTP_TIMEOUT_S, or HTTP_PRESSURE_MS when many are open. */
static uint64_t allowed_ms(const struct t4_live_http *h)
{
	unsigned open = 0;

	for (const struct http_conn *hc = h->conns; hc; hc = hc->next)
		open += !hc->shut;
	return open >= HTTP_PRESSURE_CONN ? HTTP_PRESSURE_MS : HTTP_TIMEOUT_S * 1000u;
}

/* Shut down the connections without a whole request for allowed_ms(). */
static void *reap(void *arg)
{
	struct t4_live_http *h = arg;
	struct timespec at;

	pthread_mutex_lock(&h->conn_lock);
	while (!h->stop) {
		uint64_t now = now_ms(), allowed = allowed_ms(h);

		for (struct http_conn *hc = h->conns; hc; hc = hc->next)
			if (!hc->shut && now - hc->request_ms >= allowed && same_peer(hc)) {
				shutdown(hc->fd, SHUT_RDWR);
				hc->shut = true;
			}
		clock_gettime(CLOCK_MONOTONIC, &at);
		at.tv_nsec += HTTP_REAP_MS * 1000000L;
		at.tv_sec += at.tv_nsec / 1000000000L;
		at.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&h->wake, &h->conn_lock, &at);
	}
	pthread_mutex_unlock(&h->conn_lock);
	return NULL;
}

/* "HOST:PORT", "[V6]:PORT" or ":PORT" into a socket address. */
static int parse_addr(const char *addr, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[128];
	const char *colon = strrchr(addr, ':');
	char *end;
	unsigned long port;

	if (!colon || colon - addr >= (long)sizeof(host))
		return t4_err(EINVAL, "--metrics-listen %s: use ADDR:PORT (127.0.0.1:9400, [::1]:9400,"
			      " :9400)", addr);
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	/* digits only: strtoul also takes blanks and a sign ("-0", " 80") */
	if (!isdigit((unsigned char)colon[1]) || *end || errno || port > 65535)
		return t4_err(EINVAL, "--metrics-listen %s: the port is not a number from 0 to 65535",
			      addr);
	snprintf(host, sizeof(host), "%.*s", (int)(colon - addr), addr);
	memset(ss, 0, sizeof(*ss));
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
		host[strlen(host) - 1] = '\0';
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, host + 1, &a6->sin6_addr) != 1)
			return t4_err(EINVAL, "--metrics-listen %s: not an IPv6 address", addr);
		*len = sizeof(*a6);
		return 0;
	}
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	a4->sin_family = AF_INET;
	a4->sin_port = htons((uint16_t)port);
	if (!host[0])
		a4->sin_addr.s_addr = htonl(INADDR_ANY);
	else if (inet_pton(AF_INET, host, &a4->sin_addr) != 1)
		return t4_err(EINVAL, "--metrics-listen %s: '%s' is not an IPv4 address", addr, host);
	*len = sizeof(*a4);
	return 0;
}

/* A listening socket on the address: errors said here, not by the
 * library (a port in use names the address). */
static int listen_on(const char *addr, unsigned *port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1, rc;

	if ((rc = parse_addr(addr, &ss, &len)) < 0)
		return rc;
	if ((fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0)
		return t4_err(errno, "--metrics-listen %s: %s", addr, strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 64) < 0) {
		rc = t4_err(errno, "--metrics-listen %s: %s", addr, strerror(errno));
		close(fd);
		return rc;
	}
	len = sizeof(ss);
	getsockname(fd, (struct sockaddr *)&ss, &len);
	*port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
					       : ((struct sockaddr_in *)&ss)->sin_port);
	return fd;
}

int t4_live_http_start(struct t4_live_http **out, const char *addr, struct t4_live *l,
		       void (*health)(void *ud, struct t4_live_health *h), void *ud)
{
	struct t4_live_http *h = calloc(1, sizeof(*h));
	int fd, rc;

	if (!h)
		return t4_err(ENOMEM, "out of memory");
	if ((rc = t4_live_view_new(&h->view)) < 0 || (fd = rc = listen_on(addr, &h->port)) < 0) {
		t4_live_view_free(h->view);
		free(h);
		return rc;
	}
	h->live = l;
	h->health = health;
	h->ud = ud;
	pthread_mutex_init(&h->lock, NULL);
	pthread_mutex_init(&h->conn_lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&h->wake, &ca);
	pthread_condattr_destroy(&ca);
	/* MHD_USE_ITC: its thread is woken to stop. Without, it learnt of a
	 * stop from its listening socket, which it does not watch while at
	 * HTTP_MAX_CONN: the recorder's exit waited up to HTTP_TIMEOUT_S for
	 * the first of 256 stalled connections to time out. */
	h->mhd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL_LINUX_ONLY |
					  MHD_USE_ITC,
				  0, NULL, NULL, on_request, h, MHD_OPTION_LISTEN_SOCKET, fd,
				  MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTP_MAX_CONN,
				  MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_TIMEOUT_S,
				  MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
				  MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
				  MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL,
				  MHD_OPTION_END);
	if (!h->mhd) {
		close(fd);
		rc = t4_err(EIO, "--metrics-listen %s: the HTTP server did not start", addr);
		goto fail;
	}
	if ((rc = t4_thread_start(&h->reaper, reap, h, "t4-http-reap", "HTTP reaper")) < 0) {
		MHD_stop_daemon(h->mhd);
		goto fail;
	}
	h->reaping = true;
	*out = h;
	return 0;
fail:
	pthread_cond_destroy(&h->wake);
	pthread_mutex_destroy(&h->conn_lock);
	pthread_mutex_destroy(&h->lock);
	t4_live_view_free(h->view);
	free(h);
	return rc;
}

unsigned t4_live_http_port(const struct t4_live_http *h)
{
	return h->port;
}

void t4_live_http_stop(struct t4_live_http *h)
{
	if (!h)
		return;
	if (h->reaping) { /* first: it must not shut down fds the daemon closes */
		pthread_mutex_lock(&h->conn_lock);
		h->stop = true;
		pthread_cond_signal(&h->wake);
		pthread_mutex_unlock(&h->conn_lock);
		pthread_join(h->reaper, NULL);
	}
	MHD_stop_daemon(h->mhd); /* joins its thread; the socket goes with it */
	pthread_cond_destroy(&h->wake);
	pthread_mutex_destroy(&h->conn_lock);
	pthread_mutex_destroy(&h->lock);
	t4_live_view_free(h->view);
	free(h->text);
	free(h);
}
