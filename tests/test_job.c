/* test_job.c - record launched by a cluster's scheduler, without one
 * (suite "job"): the variables Slurm and Open MPI give each task are set
 * by the test, as srun, sbatch and mpirun set them, and the real binary
 * records (--sim). Checked: the output name's expansions (%h, %j, %t, %p,
 * %%) and their refusals, values made safe for a file name (a host name
 * with '/' in a UTS namespace of its own), one recorder per node (local
 * rank 0; --all-tasks), the others running the command only. The real
 * cluster is test_cluster.c's.
 */
#include "cli_testutil.h"
#include "probe.h"
#include "tmpdir_testutil.h"

#include <dirent.h>
#include <sys/utsname.h>

/* Every variable job.c reads, unset: the test's own environment (a
 * `make check` inside an allocation) never leaks in. */
#define NO_JOB                                                                          \
	"env -u SLURM_JOB_ID -u SLURM_JOBID -u SLURM_STEP_ID -u SLURM_STEPID "         \
	"-u SLURM_JOB_NODELIST -u SLURM_NODELIST -u SLURM_PROCID -u SLURM_LOCALID "    \
	"-u SLURM_STEP_NUM_TASKS -u SLURM_NTASKS -u SLURM_NPROCS -u SLURM_JOB_NUM_NODES " \
	"-u SLURM_NNODES -u SLURM_STEP_NUM_NODES -u OMPI_COMM_WORLD_RANK "             \
	"-u OMPI_COMM_WORLD_LOCAL_RANK -u OMPI_COMM_WORLD_SIZE -u OMPI_COMM_WORLD_LOCAL_SIZE " \
	"-u T410TRACE_CONTROL "

/* pwrite: no io_uring warning where there is none (qemu-user) */
#define REC "'%s' record -q --sim --backend pwrite --duration 20ms"

/* The names in dir (not . and ..), sorted, each followed by '\n'. */
static void listing(const char *dir, char *out, size_t cap)
{
	struct dirent **ents;
	int n = scandir(dir, &ents, NULL, alphasort);
	size_t len = 0;

	cr_assert_geq(n, 0, "scandir %s", dir);
	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (strcmp(ents[i]->d_name, ".") && strcmp(ents[i]->d_name, ".."))
			len += snprintf(out + len, cap - len, "%s\n", ents[i]->d_name);
		free(ents[i]);
	}
	free(ents);
}

static void this_host(char *out, size_t cap)
{
	struct utsname u;

	cr_assert_eq(uname(&u), 0);
	cr_assert(u.nodename[0] && !strpbrk(u.nodename, "/ ") && u.nodename[0] != '.',
		  "this test expects a plain host name, not '%s'", u.nodename);
	snprintf(out, cap, "%s", u.nodename);
}

Test(job, expansions_name_the_log, .timeout = 60)
{
	struct run r;
	char host[256], want[PATH_MAX + 300], files[4096];
	const char *b = bin();

	this_host(host, sizeof(host));
	tmpdir(&r);
	sh(&r, "cd '%s' && " NO_JOB "SLURM_JOB_ID=4242 SLURM_PROCID=3 SLURM_LOCALID=0 "
	       "SLURM_JOB_NUM_NODES=1 " REC " -o 'job%%j/trace.%%h.%%t.%%%%.t4t' && "
	       "'%s' info --json 'job4242/trace.%s.3.%%.t4t' >/dev/null && echo ok",
	   r.dir, b, b, host);
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert_str_eq(r.out, "ok\n");
	/* a recording that fails to start leaves no directory it made, and
	 * keeps the ones that were there */
	sh(&r, "cd '%s' && " NO_JOB "SLURM_JOB_ID=4243 " REC " -e no_such_pmu/x/ "
	       "-o 'new%%j/deeper%%j/t.t4t'; echo rc=$?; ls", r.dir, b);
	cr_assert(strstr(r.out, "rc=2\n") && !strstr(r.out, "new4243"), "%s", r.out);
	sh(&r, "cd '%s' && mkdir kept4244 && " NO_JOB "SLURM_JOB_ID=4244 " REC " -e no_such_pmu/x/ "
	       "-o 'kept%%j/d%%j/t.t4t'; echo rc=$?; ls kept4244", r.dir, b);
	cr_assert(strstr(r.out, "rc=2\n") && !strstr(r.out, "d4244"), "%s", r.out);
	sh(&r, "cd '%s' && rmdir kept4244", r.dir);
	char sub[PATH_MAX + 16];
	snprintf(sub, sizeof(sub), "%s/job4242", r.dir);
	listing(sub, files, sizeof(files));
	snprintf(want, sizeof(want), "trace.%s.3.%%.t4t\n", host);
	cr_assert_str_eq(files, want, "the directory %%j named, then the log");
	/* %p: the recorder's own PID (the shell execs it: $$ is that PID) */
	sh(&r, "cd '%s' && exec " NO_JOB "sh -c 'echo $$; exec \"$0\" record -q --sim "
	       "--duration 20ms -o \"p%%p.t4t\"' '%s'", r.dir, b);
	cr_assert_eq(r.status, 0, "%s", r.out);
	long pid = strtol(r.out, NULL, 10);
	cr_assert_gt(pid, 0, "%s", r.out);
	snprintf(want, sizeof(want), "%s/p%ld.t4t", r.dir, pid);
	cr_assert_eq(access(want, F_OK), 0, "no %s", want);
	cleanup(&r);
}

/* Each refusal: exit 2, one line naming -o's value and the cause, and
 * nothing written. */
static void refused(struct run *r, const char *env, const char *name, const char *why)
{
	char files[4096];

	sh(r, "cd '%s' && " NO_JOB "%s " REC " -o '%s'", r->dir, env, bin(), name);
	cr_assert_eq(r->status, 2, "%s -o %s: exit %d: %s", env, name, r->status, r->out);
	cr_assert_eq(count_lines(r->out), 1, "%s", r->out);
	cr_assert(strstr(r->out, name) && strstr(r->out, why), "-o %s: '%s' wanted in: %s", name,
		  why, r->out);
	listing(r->dir, files, sizeof(files));
	cr_assert_str_eq(files, "", "a refused name wrote: %s", files);
}

Test(job, names_that_cannot_be_are_refused, .timeout = 60)
{
	struct run r;
	char files[4096];

	tmpdir(&r);
	refused(&r, "", "t.%q.t4t", "unknown expansion %q");
	refused(&r, "", "t.t4t%", "a lone %");
	refused(&r, "", "job%j.t4t", "SLURM_JOB_ID is not set");
	refused(&r, "SLURM_JOB_ID= SLURM_JOBID=", "job%j.t4t", "SLURM_JOB_ID is empty");
	refused(&r, "", "t.%t.t4t", "no task rank");
	/* a job ID longer than a log keeps: refused, not cut (two jobs' IDs
	 * cut alike would make one name of %j) */
	sh(&r, "cd '%s' && " NO_JOB "SLURM_JOB_ID=%s SLURM_PROCID=0 " REC " -o 'j%%j.t4t'", r.dir,
	   "1234567890123456789012345678901234567890", bin());
	cr_assert_eq(r.status, 2, "%s", r.out);
	cr_assert_str_eq(r.out, "t410trace: SLURM_JOB_ID: 40 bytes, more than the 31 a log keeps "
				"of it\n");
	/* only the directories an expansion names are made: one the name
	 * gives as it is (a typo) must exist, as it must without a '%' */
	sh(&r, "cd '%s' && " NO_JOB "SLURM_JOB_ID=7 " REC " -o 'typo/job%%j/t.t4t'", r.dir, bin());
	cr_assert_eq(r.status, 2, "%s", r.out);
	cr_assert_str_eq(r.out, "t410trace: -o 'typo/job7/t.t4t': cannot create the directory "
				"'typo/job7': No such file or directory\n");
	listing(r.dir, files, sizeof(files));
	cr_assert_str_eq(files, "", "made: %s", files);
	/* a launcher's variable that is not a number: named, not guessed */
	sh(&r, "cd '%s' && " NO_JOB "SLURM_JOB_ID=7 SLURM_PROCID=x " REC " -o t.t4t", r.dir, bin());
	cr_assert_eq(r.status, 2, "%s", r.out);
	cr_assert_str_eq(r.out, "t410trace: SLURM_PROCID=x: not a task number or count\n");
	/* nor is one in hex: the launchers write decimal, 0x10 is no rank 16 */
	sh(&r, "cd '%s' && " NO_JOB "SLURM_JOB_ID=7 SLURM_PROCID=0x10 " REC " -o t.t4t", r.dir, bin());
	cr_assert_eq(r.status, 2, "%s", r.out);
	cr_assert_str_eq(r.out, "t410trace: SLURM_PROCID=0x10: not a task number or count\n");
	sh(&r, "cd '%s' && " NO_JOB "OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_LOCAL_RANK=0X1 "
	       REC " -o t.t4t", r.dir, bin());
	cr_assert_eq(r.status, 2, "%s", r.out);
	cr_assert_str_eq(r.out, "t410trace: OMPI_COMM_WORLD_LOCAL_RANK=0X1: not a task number or "
				"count\n");
	/* several nodes would write one file */
	refused(&r, "SLURM_JOB_ID=7 SLURM_JOB_NUM_NODES=2 SLURM_JOB_NODELIST='n[1-2]'",
		"job%j.t4t", "several nodes (n[1-2])");
	refused(&r, "SLURM_JOB_ID=7 SLURM_NNODES=3", "t.%p.t4t", "put %h (host) or %t");
	refused(&r, "OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_SIZE=8 "
		    "OMPI_COMM_WORLD_LOCAL_SIZE=4", "t.t4t", "several nodes");
	/* --all-tasks: several tasks of one node would share it */
	sh(&r, "cd '%s' && " NO_JOB "SLURM_JOB_ID=7 SLURM_NTASKS=2 SLURM_JOB_NUM_NODES=1 "
	       "SLURM_PROCID=0 SLURM_LOCALID=0 " REC " --all-tasks -o 'j%%j.%%h.t4t'", r.dir, bin());
	cr_assert_eq(r.status, 2, "%s", r.out);
	cr_assert(strstr(r.out, "--all-tasks records in each of the job's 2 tasks"), "%s", r.out);
	cleanup(&r);
}

Test(job, values_are_made_safe_for_a_file_name, .timeout = 60)
{
	struct run r;
	char files[4096];

	tmpdir(&r);
	/* a job ID with '/' and a leading '.' stays one name in this directory */
	sh(&r, "cd '%s' && " NO_JOB "SLURM_JOB_ID='../x/y' " REC " -o '%%j.t4t'", r.dir, bin());
	cr_assert_eq(r.status, 0, "%s", r.out);
	listing(r.dir, files, sizeof(files));
	cr_assert_str_eq(files, "_._x_y.t4t\n");
	/* a job ID "-" makes no name '-': the log in a file, not on standard output */
	sh(&r, "cd '%s' && rm _._x_y.t4t && " NO_JOB "SLURM_JOB_ID=- " REC " -o '%%j' | wc -c",
	   r.dir, bin());
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert_str_eq(r.out, "0\n", "the log went to standard output");
	listing(r.dir, files, sizeof(files));
	cr_assert_str_eq(files, "_\n");
	cleanup(&r);
	/* a host name with '/', a space and a leading '.' (a UTS namespace of
	 * the test's own: this machine's name is not touched) */
	t4t_need_cmd("unshare");
	tmpdir(&r);
	sh(&r, "unshare --uts true");
	if (r.status)
		cr_skip_test("unshare --uts: %s (needs CAP_SYS_ADMIN)", r.out);
	sh(&r, "cd '%s' && unshare --uts sh -c 'printf %%s \"..a/b c\" > /proc/sys/kernel/hostname "
	       "&& exec \"$0\" record -q --sim --duration 20ms -o \"t.%%h.t4t\"' '%s'",
	   r.dir, bin());
	cr_assert_eq(r.status, 0, "%s", r.out);
	listing(r.dir, files, sizeof(files));
	cr_assert_str_eq(files, "t._.a_b_c.t4t\n");
	cleanup(&r);
}

Test(job, one_recorder_per_node, .timeout = 60)
{
	struct run r;
	char files[4096];
	const char *b = bin();

	tmpdir(&r);
	/* local rank 1: the command runs as it would alone (its exit code),
	 * nothing is recorded */
	sh(&r, "cd '%s' && " NO_JOB "SLURM_JOB_ID=9 SLURM_PROCID=1 SLURM_LOCALID=1 " REC
	       " -o 't.%%t.t4t' -- sh -c 'echo \"ran $SLURM_PROCID $T410TRACE_CONTROL\"; exit 5'",
	   r.dir, b);
	cr_assert_eq(r.status, 5, "%s", r.out);
	cr_assert_str_eq(r.out, "ran 1 \n", "the command ran, without a recorder's socket");
	listing(r.dir, files, sizeof(files));
	cr_assert_str_eq(files, "");
	sh(&r, "cd '%s' && " NO_JOB "SLURM_JOB_ID=9 SLURM_LOCALID=1 " REC " -o t.t4t -- "
	       "no-such-command-t4", r.dir, b);
	cr_assert_eq(r.status, 127, "%s", r.out);
	cr_assert(strstr(r.out, "cannot run 'no-such-command-t4'"), "%s", r.out);
	/* there but not executable: 126, as a shell says it */
	sh(&r, "cd '%s' && : > not-exec && " NO_JOB "SLURM_JOB_ID=9 SLURM_LOCALID=1 " REC
	       " -o t.t4t -- ./not-exec", r.dir, b);
	cr_assert_eq(r.status, 126, "%s", r.out);
	cr_assert(strstr(r.out, "cannot run './not-exec': Permission denied"), "%s", r.out);
	sh(&r, "rm '%s/not-exec'", r.dir);
	/* no command: nothing to do, said unless -q */
	sh(&r, "cd '%s' && " NO_JOB "SLURM_JOB_ID=9 SLURM_LOCALID=2 '%s' record --sim "
	       "--duration 20ms -o t.t4t", r.dir, b);
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert(strstr(r.out, "not recording in this task (local rank 2 of Slurm's job 9"),
		  "%s", r.out);
	/* a job ID with a line break and an escape sequence: one line, escaped */
	sh(&r, "cd '%s' && " NO_JOB "SLURM_JOB_ID=\"$(printf '9\\n\\033[2J')\" SLURM_LOCALID=2 "
	       "'%s' record --sim --duration 20ms -o t.t4t", r.dir, b);
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert(count_lines(r.out) == 1 && strstr(r.out, "of Slurm's job 9\\x0a\\x1b[2J on "),
		  "%s", r.out);
	/* mpirun's local rank, which wins over the batch step's SLURM_LOCALID */
	sh(&r, "cd '%s' && " NO_JOB "SLURM_JOB_ID=9 SLURM_LOCALID=0 OMPI_COMM_WORLD_RANK=5 "
	       "OMPI_COMM_WORLD_LOCAL_RANK=1 " REC " -o t.t4t", r.dir, b);
	cr_assert_eq(r.status, 0, "%s", r.out);
	listing(r.dir, files, sizeof(files));
	cr_assert_str_eq(files, "");
	/* local rank 0 (Slurm or Open MPI), and --all-tasks, record */
	sh(&r, "cd '%s' && " NO_JOB "SLURM_JOB_ID=9 SLURM_PROCID=0 SLURM_LOCALID=0 " REC
	       " -o 's.%%t.t4t' && " NO_JOB "OMPI_COMM_WORLD_RANK=4 OMPI_COMM_WORLD_LOCAL_RANK=0 "
	       REC " -o 'o.%%t.t4t' && " NO_JOB "SLURM_JOB_ID=9 SLURM_PROCID=1 SLURM_LOCALID=1 "
	       "SLURM_NTASKS=2 " REC " --all-tasks -o 'a.%%t.t4t'", r.dir, b, b, b);
	cr_assert_eq(r.status, 0, "%s", r.out);
	listing(r.dir, files, sizeof(files));
	cr_assert_str_eq(files, "a.1.t4t\no.4.t4t\ns.0.t4t\n");
	cleanup(&r);
}

/* The host packets (FORMAT.md 4.5b): the job as the launcher gave it and
 * the clock's sync state, at the start, every second and at the end;
 * `info` shows them, `decode` reads past them; a log without them (virtual
 * time) says none. */
Test(job, the_log_holds_the_job_and_the_clock_sync, .timeout = 60)
{
	struct run r;
	char host[256], want[400];
	const char *b = bin();

	this_host(host, sizeof(host));
	tmpdir(&r);
	sh(&r, "cd '%s' && " NO_JOB "SLURM_JOB_ID=314 SLURM_STEP_ID=2 SLURM_PROCID=6 "
	       "SLURM_LOCALID=0 SLURM_JOB_NODELIST='n[1-3],\"x\"' '%s' record -q --sim "
	       "--duration 1200ms -o 'j%%j.t4t' && '%s' info --json j314.t4t", r.dir, b, b);
	cr_assert_eq(r.status, 0, "%s", r.out);
	snprintf(want, sizeof(want), "\"job\": {\"id\": \"314\", \"step\": \"2\", \"nodelist\": "
		 "\"n[1-3],\\\"x\\\"\", \"host\": \"%s\", \"rank\": 6}", host);
	cr_assert(strstr(r.out, want), "%s wanted in %s", want, r.out);
	/* the start, the end, and one a second in between: the recording
	 * lasts 1.2 s after the first, so the one due 1 s later is in */
	long long samples = json_num(r.out, "samples");
	cr_assert_geq(samples, 3, "%lld host packets in 1.2 s", samples);
	cr_assert(strstr(r.out, "\"synchronised\": true") || strstr(r.out, "\"synchronised\": false") ||
		  strstr(r.out, "\"synchronised\": null"), "%s", r.out);
	sh(&r, "cd '%s' && '%s' info j314.t4t && '%s' decode --format jsonl -o j.jsonl j314.t4t",
	   r.dir, b, b);
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert(strstr(r.out, "job              314, step 2, task rank 6, nodes n[1-3],\"x\"\n"),
		  "%s", r.out);
	cr_assert(strstr(r.out, "clock sync       "), "%s", r.out);
	cr_assert(!strstr(r.out, "warning"), "%s", r.out);
	/* a job without a task rank (SLURM_PROCID unset): none, not -1 */
	sh(&r, "cd '%s' && " NO_JOB "SLURM_JOB_ID=316 '%s' record -q --sim --duration 10ms -o "
	       "'j%%j.t4t' && '%s' info j316.t4t", r.dir, b, b);
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert(strstr(r.out, "job              316, step -, task rank -, nodes -\n"), "%s", r.out);
	/* a job ID of control characters, escaped: shown whole, to its last byte */
	sh(&r, "cd '%s' && " NO_JOB "SLURM_JOB_ID=\"7$(printf '\\t%%.0s' $(seq 20))8\" SLURM_PROCID=0 "
	       "'%s' record -q --sim --duration 10ms -o j.t4t && '%s' info j.t4t", r.dir, b, b);
	cr_assert_eq(r.status, 0, "%s", r.out);
	snprintf(want, sizeof(want), "job              7");
	for (int i = 0; i < 20; i++)
		strcat(want, "\\x09");
	strcat(want, "8, step -, task rank 0");
	cr_assert(strstr(r.out, want), "%s wanted in %s", want, r.out);
	/* a node list longer than the log keeps (a big job's): cut where "..."
	 * says, the recording made all the same */
	sh(&r, "cd '%s' && " NO_JOB "SLURM_JOB_ID=315 SLURM_PROCID=0 SLURM_JOB_NODELIST=n$(printf "
	       "',%%04d' $(seq 100)) '%s' record -q --sim --duration 10ms -o 'j%%j.t4t' && "
	       "'%s' info --json j315.t4t", r.dir, b, b);
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert(strstr(r.out, ",0049,0050,...\", \"host\""), "%s", r.out);
	/* virtual time: the same log for a seed, so no host packet */
	sh(&r, "cd '%s' && " NO_JOB "'%s' record -q --sim=1 --virtual --duration 50ms -o v.t4t && "
	       "'%s' info --json v.t4t", r.dir, b, b);
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert(strstr(r.out, "\"job\": null, \"clock_sync\": null"), "%s", r.out);
	cleanup(&r);
}

/* Not this node's recorder, record execs COMMAND as if it were not there:
 * with the signal dispositions record found (it ignores SIGPIPE and
 * SIGXFSZ itself, and the command inherited them ignored). */
Test(job, a_task_that_does_not_record_gets_the_signals_it_had, .timeout = 60)
{
	const char *b = bin();
	struct run r;

	tmpdir(&r);
	sh(&r, "cd '%s' && grep SigIgn /proc/self/status && " NO_JOB "SLURM_JOB_ID=9 "
	       "SLURM_PROCID=1 SLURM_LOCALID=1 " REC " -o t.t4t -- grep SigIgn /proc/self/status",
	   r.dir, b);
	cr_assert_eq(r.status, 0, "%s", r.out);
	const char *l2 = strchr(r.out, '\n') + 1;
	cr_assert(!strncmp(r.out, "SigIgn:", 7) && !strncmp(r.out, l2, (size_t)(l2 - r.out)),
		  "%s", r.out);
	cleanup(&r);
}
