/* probe.c - the probe page: how a libt410trace call that takes the uprobe
 * learns at once whether it will be logged (control.h).
 *
 * A uprobe cannot return anything to the app it interrupts (writing to the
 * app's memory from BPF needs CAP_SYS_ADMIN and is forbidden under kernel
 * lockdown; changing its registers is not allowed either), so the answer
 * is decided before the call: the recorder lends credits in one page of
 * shared memory, each standing for a place it reserved (a bookmark queue
 * slot, room in the kernel's ring), and a call is made only with one. All
 * processes of the workload share the page (the same memfd), so the
 * counters are atomics on shared memory, lock-free, seq_cst where the
 * recorder's close must meet a call's claim:
 *
 *   call:     busy += 1; closed? -> busy -= 1, -ESHUTDOWN
 *             credit -= 1 (had none? give it back, busy -= 1, -EBUSY)
 *             ... the probe call ...; busy -= 1
 *   recorder: closed = 1; wait until busy == 0; drain a last time
 *
 * Either the call sees `closed`, or the recorder sees its `busy`: a call
 * that got a credit has made its probe call before the recorder's last
 * drain, or the recorder waited T4_PROBE_CLOSE_WAIT_MS for it (a thread
 * stopped in the middle of a call at the very end: said in the docs).
 *
 * A recorder killed (SIGKILL) never closes its page, and the calls that
 * still found credits returned 0 for bookmarks nobody logs. So the page
 * also says whether the recorder lives, with no syscall per call: its
 * drain thread holds a process-shared robust mutex in the page for the
 * recording's life (t4_probe_hold), and when that thread dies the kernel
 * (its robust-futex list, walked at every thread's exit) sets
 * FUTEX_OWNER_DIED in the mutex's futex word. A call reads that word
 * (t4_probe_stopped) and closes the page when it is set. It never locks
 * the mutex: no lock is held by an app (a fork copies none), the death
 * stays in the word for every process to see, whatever PID namespace it
 * is in, and the library needs no libc's mutex layout, only the futex
 * word's kernel ABI (linux/futex.h) at the offset the recorder wrote.
 * A recorder that dies after a call read the word still loses that call
 * (as one killed just after a reply on the socket).
 *
 * The page is the app's memory too: a buggy app that scribbles on it can
 * only lose its own bookmarks (the recorder never trusts the counters for
 * its own accounting: it counts what it lent and what arrived), and the
 * recorder only tries the mutex, never waits on it.
 */
#include "control.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PAGE_BYTES 4096

_Static_assert(sizeof(struct t4_probe_page) <= PAGE_BYTES, "the probe page fits a page");

/* The mutex whose holder's death the kernel marks (t4_probe_hold). A
 * failure leaves it unusable: t4_probe_hold then says nothing. */
static void init_alive(struct t4_probe_page *page)
{
	pthread_mutexattr_t a;

	if (pthread_mutexattr_init(&a) != 0)
		return;
	if (pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED) == 0 &&
	    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST) == 0)
		(void)pthread_mutex_init(&page->alive, &a);
	pthread_mutexattr_destroy(&a);
}

/* The page's size sealed (best effort: a kernel without seals leaves it
 * unsealed, and the library then keeps the socket): every process of the
 * workload maps it, and one page truncated under them all, by anyone who
 * can reach the memfd (/proc/PID/fd of any of them), would be a SIGBUS at
 * each one's next call. */
static void seal_size(int fd)
{
	(void)fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
}

/* Whether fd's size is sealed: a page that may shrink is no page to map. */
static bool size_sealed(int fd)
{
	int seals = fcntl(fd, F_GET_SEALS);

	return seals >= 0 && (seals & F_SEAL_SHRINK);
}

int t4_probe_page_create(struct t4_probe_page **page, int *fd)
{
	void *m;

	*page = NULL;
	*fd = memfd_create("t410trace-probe", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (*fd < 0)
		return t4_err(errno, "probe page: memfd_create: %s", strerror(errno));
	if (ftruncate(*fd, PAGE_BYTES) < 0 ||
	    (m = mmap(NULL, PAGE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0)) == MAP_FAILED) {
		int e = errno;
		close(*fd);
		*fd = -1;
		return t4_err(e, "probe page: %s", strerror(e));
	}
	seal_size(*fd);
	*page = m;
	init_alive(*page);
	atomic_store(&(*page)->magic, T4_PROBE_MAGIC);
	return 0;
}

struct t4_probe_page *t4_probe_page_map(int fd)
{
	struct t4_probe_page *p;
	struct stat st;
	void *m;

	/* a whole page that stays whole, or touching it past the file's end
	 * is a SIGBUS */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < PAGE_BYTES ||
	    !size_sealed(fd))
		return NULL;
	m = mmap(NULL, PAGE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return NULL;
	p = m;
	if (atomic_load(&p->magic) != T4_PROBE_MAGIC) {
		munmap(m, PAGE_BYTES);
		return NULL;
	}
	return p;
}

void t4_probe_page_unmap(struct t4_probe_page *page)
{
	if (page)
		munmap(page, PAGE_BYTES);
}

void t4_probe_grant(struct t4_probe_page *page, int64_t n)
{
	atomic_fetch_add(&page->credit, n);
}

/* Where the futex word of `alive` is in the page: glibc's mutex starts
 * with it (__data.__lock). Another libc: 0, nothing said. */
static uint32_t alive_word_at(void)
{
#if defined(__GLIBC__)
	return (uint32_t)(offsetof(struct t4_probe_page, alive) +
			  offsetof(pthread_mutex_t, __data.__lock));
#else
	return 0;
#endif
}

static _Atomic uint32_t *word_at(struct t4_probe_page *page, uint32_t at)
{
	return (_Atomic uint32_t *)(void *)((char *)page + at);
}

void t4_probe_hold(struct t4_probe_page *page)
{
	uint32_t at = alive_word_at();
	struct robust_list_head *head;
	size_t len;
	int rc;

	/* without the kernel walking this thread's robust list at its death
	 * (qemu-user answers ENOSYS) the word would never say it */
	if (!at || syscall(SYS_get_robust_list, 0, &head, &len) < 0 || !head)
		return;
	rc = pthread_mutex_trylock(&page->alive); /* an app may hold it: never wait */
	if (rc == EOWNERDEAD)
		rc = pthread_mutex_consistent(&page->alive);
	if (rc != 0)
		return;
	/* the word holds this thread's TID while it holds the mutex: where
	 * it does not, the layout is not the one assumed above */
	if ((atomic_load(word_at(page, at)) & FUTEX_TID_MASK) != (uint32_t)syscall(SYS_gettid)) {
		pthread_mutex_unlock(&page->alive);
		return;
	}
	atomic_store(&page->alive_at, at);
}

void t4_probe_close(struct t4_probe_page *page)
{
	struct timespec t0, t;

	atomic_store(&page->closed, 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (atomic_load(&page->busy) > 0) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 >=
		    T4_PROBE_CLOSE_WAIT_MS)
			break;
		sched_yield(); /* a call under way: microseconds */
	}
	/* the recording is over: the end of this thread or process is no
	 * death to report (EPERM when this thread does not hold it) */
	if (atomic_load(&page->alive_at))
		(void)pthread_mutex_unlock(&page->alive);
}

bool t4_probe_stopped(struct t4_probe_page *page)
{
	uint32_t at = atomic_load(&page->alive_at);

	if (atomic_load(&page->closed))
		return true;
	/* an offset the app scribbled is ignored, never followed */
	if (at == 0 || at > PAGE_BYTES - sizeof(uint32_t) || at % sizeof(uint32_t) ||
	    !(atomic_load(word_at(page, at)) & FUTEX_OWNER_DIED))
		return false;
	atomic_store(&page->closed, 1);
	return true;
}

int t4_probe_claim(struct t4_probe_page *page, bool trigger, bool *wake)
{
	int64_t had;

	atomic_fetch_add(&page->busy, 1);
	if (atomic_load(&page->closed)) {
		atomic_fetch_sub(&page->busy, 1);
		return -ESHUTDOWN;
	}
	had = atomic_fetch_sub(&page->credit, 1);
	if (had <= 0) {
		atomic_fetch_add(&page->credit, 1);
		atomic_fetch_add(&page->refused, 1);
		if (trigger)
			atomic_fetch_add(&page->refused_triggers, 1);
		atomic_fetch_sub(&page->busy, 1);
		return -EBUSY;
	}
	*wake = had <= T4_PROBE_LOW;
	return 0;
}

void t4_probe_done(struct t4_probe_page *page)
{
	atomic_fetch_sub(&page->busy, 1);
}
