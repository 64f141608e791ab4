/* thread.c - starting the recorder's helper threads one way: every signal
 * blocked while the thread is made, so it inherits a full mask and signals
 * reach the main thread only; named for top and perf (util.h).
 */
#include "util.h"

#include <signal.h>
#include <string.h>

int t4_thread_start(pthread_t *t, void *(*fn)(void *), void *arg, const char *name,
		    const char *what)
{
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		return t4_err(rc, "cannot start the %s: %s", what, strerror(rc));
	pthread_setname_np(*t, name);
	return 0;
}
