/* cli.h - the subcommands of the t410trace binary.
 *
 * Each subcommand is one file (cmd_<name>.c) with one entry point taking
 * its own argv (argv[0] is the subcommand name). Exit codes: 0 success,
 * 1 runtime failure, 2 bad usage or bad input (one-line message naming it).
 * Shared pieces: option parsing with exact messages (opts.c), where PMUs
 * come from (source.c, --sim and --sysfs-root), the workload's lifecycle
 * (child.c), record's options (record_opts.c) and what it says on stderr
 * (record_report.c).
 */
#ifndef T4_CLI_H
#define T4_CLI_H

#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "collector/collector.h"
#include "packets/packets.h"
#include "sched/sched.h"

int cmd_record(int argc, char **argv);
int cmd_decode(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_ctl(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_top(int argc, char **argv);

/* The live view (top.c), fed with snapshots by take (the control socket,
 * or record's own index); done (optional) says the recording ended. */
struct t4_live_snap;
struct top {
	int (*take)(void *ud, struct t4_live_snap *out);
	bool (*done)(void *ud);
	void *ud;
	uint64_t interval_ns;
	bool keep_signals; /* the caller handles SIGINT/SIGTERM (done() sees them) */
	FILE *out;         /* where it draws (NULL: stdout) */
	int in;            /* where keys come from (stdin: 0) */
	/* its state */
	bool tty, paused, per_kind, redraw;
	int sort;
	size_t n;
	uint64_t first_ns, plain_sig;
	bool plain_header; /* a plain header was printed (plain_sig its PMUs) */
};
/* Until q, a signal, done() (asked at least every TOP_DONE_MS) or a
 * failed take (its error returned); 1 when done() said so. */
#define TOP_DONE_MS 20
int cli_top_run(struct top *tp);

/* record --top's terminal (hold.c): the view on the controlling terminal;
 * what the command and record write to that terminal while it is up,
 * held and shown when it closes. */
struct cli_hold {
	bool on;              /* opened: the fields below are valid */
	int tty;              /* /dev/tty: the view draws here, keys from here */
	int master;           /* the pty put where stdout/stderr were the terminal */
	int saved[2];         /* record's stdout, stderr before (-1: left alone) */
	int out;              /* the terminal, as stdout or stderr had it */
	int spool;            /* what is held: an unlinked file */
	int wake[2];          /* close -> relay */
	bool holding, running;
	uint64_t max;           /* bytes held at most (T410TRACE_HOLD_MAX) */
	uint64_t held, dropped; /* bytes */
	int spool_errno;        /* why the spool took no more (0: the limit) */
	char last;              /* the last byte held */
	pthread_mutex_t lock;   /* holding, the spool, out, the counts */
	pthread_t thread;
	bool winch_set;         /* SIGWINCH is ours; old_winch to put back */
	struct sigaction old_winch;
};
/* The most bytes held: $T410TRACE_HOLD_MAX (a count of bytes in plain
 * decimal, as the launchers' variables: to see the limit at work without
 * 256 MiB of output), else 256 MiB; -EINVAL, said, for any other value. */
int cli_hold_limit(uint64_t *max);
/* Open the controlling terminal, to hold at most max bytes; -ENOTTY (with
 * a message) when record has none. */
int cli_hold_open_tty(struct cli_hold *h, uint64_t max);
/* Before the command forks: where stdout or stderr is that terminal, a pty
 * takes its place and what comes through it is held. */
int cli_hold_start(struct cli_hold *h);
/* After a SIGWINCH: the terminal's new size onto the pty (the command
 * asks its standard output); call it from the waiting loop. */
void cli_hold_follow(struct cli_hold *h);
/* The view has closed: record's stdout and stderr back, what was held
 * written to the terminal, the rest passed on as it comes. Again: no-op. */
void cli_hold_release(struct cli_hold *h);
/* After the command's end: released, the relay ended (its last writers
 * given a moment), everything closed. Accepts one never opened. */
void cli_hold_close(struct cli_hold *h);

/* An output file of decode or report (outfile.c): written under a
 * temporary name next to it and renamed when complete, never over the
 * log it reads nor any t410trace log, mode 0666 less the umask; a device
 * or a FIFO is written in place, a symbolic link's target replaced. */
struct cli_outfile {
	const char *input;   /* the log read ("-": standard input) */
	const char *output;  /* NULL or "-": standard output */
	const char *dest;    /* the file OUT names: OUT, or where its link points */
	char dest_buf[4096];
	bool in_place;       /* OUT is not a regular file: written, not replaced */
	char tmp[4096 + 16];
	FILE *f;             /* set by cli_outfile_open */
};
/* Refuse an OUT that is the input, a log or a read-only file (-EEXIST,
 * message set), and decide where it goes. */
int cli_outfile_check(struct cli_outfile *o, const char *input, const char *output);
int cli_outfile_open(struct cli_outfile *o);
/* -EINVAL (message set) when st, what OUT names, is a socket: no open()
 * takes one (ENXIO, "No such device or address", named nothing); record's
 * -o refuses it too. */
int cli_outfile_not_socket(const char *path, const struct stat *st);
/* Close; rename into place when rc >= 0, else remove. Returns rc, or the
 * closing error. */
int cli_outfile_close(struct cli_outfile *o, int rc);
bool cli_outfile_stdout(const struct cli_outfile *o);

/* Standard input that is no file (a pipe) copied into an unnamed file in
 * $TMPDIR that becomes standard input, to be read twice (spool.c); 0 or
 * -errno with the message set. */
int cli_spool_stdin(void);

/* The logs of decode and report (logs.c): files, and the *.t4t files of
 * a directory in name order. */
struct cli_logs {
	char **v;
	size_t n, cap;
	size_t dirs; /* directories given */
};
/* Add a file or a directory's logs; 0, or 2 after a message. */
int cli_logs_add(struct cli_logs *l, const char *sub, const char *arg);
void cli_logs_free(struct cli_logs *l);
/* Whether the logs are decoded merged, on one timeline: several, or a
 * directory's (a job's, whatever its number of nodes: the same columns
 * and times from one node as from two). */
bool cli_logs_merged(const struct cli_logs *l);
/* Open each log but standard input and close it again, before any output
 * is made: 0, or the exit status after a message naming the log. */
int cli_logs_check(const struct cli_logs *l, const char *sub);
/* Decode the logs into out: one alone, several merged on one timeline. */
struct t4_decode_opts;
struct t4_output;
int cli_logs_decode(const struct cli_logs *l, const struct t4_decode_opts *d,
		    struct t4_output *out);

/* The exit status of every subcommand whose standard output's reader
 * went away (`list | head`, `decode | head`, `record -o - | head`): 128 +
 * SIGPIPE, as if killed by it, quietly. */
#define CLI_EXIT_READER_GONE 141

/* Flush stdout at the end of a subcommand: rc, or CLI_EXIT_READER_GONE
 * quietly when the reader went away (EPIPE), or 1 with a message when it
 * could not be written (a full disk). */
int cli_stdout_done(int rc);

/* Exit code for "bad usage": print "t410trace SUB: msg" + hint, on one
 * line (control characters and bytes that are not UTF-8 as \xNN). */
int cli_usage_error(const char *sub, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Print "t410trace: msg" on one line of stderr, as cli_usage_error shows
 * what was typed: for a notice that quotes a path or a command. */
void cli_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* getopt_long that remembers which word it parses (opts.c), so that an
 * error names the option the user got wrong even inside "-qx". */
struct cli_getopt {
	int word;                    /* argv index of the word being parsed */
	const struct option *longs;
};
int cli_getopt(struct cli_getopt *g, int argc, char **argv, const char *shorts,
	       const struct option *longs);
/* For getopt's '?' or ':': print the one-line usage error; returns 2. */
int cli_opt_error(const char *sub, const struct cli_getopt *g, char **argv, int c);
/* "unknown option 'WORD'" for the commands that parse their few options
 * by hand (info, ctl), with "did you mean --X?" for a long option close to
 * one of names (spelled without their dashes), as cli_opt_error says it;
 * returns 2. */
int cli_unknown_option(const char *sub, const char *word, const char *const *names, size_t n);
/* A directory option's value (--sysfs-root, --proc-root, --pci-root): 0
 * with *out set, or 2 after a usage error for an empty one (which open()
 * would answer with ": No such file or directory", naming nothing). */
int cli_dir_arg(const char *sub, const char *opt, const char *arg, const char **out);

/* Where PMUs come from (source.c): real sysfs, --sysfs-root, --sim or both. */
struct cli_source {
	bool sim;
	uint64_t seed;
	bool drift_set;            /* --sim-drift given (else the default) */
	uint32_t drift_ppm, wander_ppm;
	uint64_t epoch_ns;         /* the simulator's epoch; 0: now */
	const char *sysfs_root;    /* NULL: the real sysfs */
	struct t4_sim *simulator;  /* set by cli_source_open with --sim */
	struct t4_pmu_set pmus;    /* set by cli_source_open */
};

/* --sim[=SEED]: 0, or 2 after a usage error. */
int cli_source_set_sim(const char *sub, struct cli_source *s, const char *arg);
/* Create the simulator if asked and discover the PMUs: the simulator's
 * own tree, or with --sysfs-root too that tree's Tegra410 PMUs backed by
 * it (t4_sim_attach; an error when it backs none). */
int cli_source_open(struct cli_source *s);
void cli_source_close(struct cli_source *s);

/* ---- record --virtual and the simulator's knobs (record_virtual.c) ---- */

/* Option codes of --virtual, --sim-drift PPM, --sim-wander PPM,
 * --sim-preempt PROB in record's option table. */
enum { CLI_VIRTUAL = 300, CLI_SIM_DRIFT, CLI_SIM_WANDER, CLI_SIM_PREEMPT };

struct cli_virtual {
	bool on;             /* --virtual */
	bool preempt_set;
	double preempt_prob; /* --sim-preempt */
};

/* What a live recording would have that virtual time refuses. */
struct cli_virtual_live {
	uint64_t duration_ns;
	bool command, paused, control;
};

struct t4_ring;
struct t4_sched_status;
struct t4_log_stats;
struct t4_status_pkt;

/* What record hands over to run in virtual time. */
struct cli_virtual_run {
	const struct cli_virtual *v;
	struct t4_domain_set *domains; /* opened on the simulator */
	struct t4_ring *ring;          /* the log's first ring, T4_RING_WAIT */
	uint64_t period_ns, duration_ns, seed;
	bool per_socket;
	const char *bookmark, *cmdline;
	const volatile sig_atomic_t *stop; /* record's signal count: Ctrl-C ends it */
	const struct t4_log *log;          /* its write error ends it */
	void (*on_trigger)(void *ud);      /* optional: after each trigger */
	void *ud;
};

/* One of the options above: 0, or 2 after a usage error. --virtual also
 * fixes the simulator's epoch (a seed then gives the same log). */
int cli_virtual_option(const char *sub, int opt, const char *arg, struct cli_virtual *v,
		       struct cli_source *src);
/* The options together: 0, or 2 after a one-line usage error. */
int cli_virtual_check(const char *sub, const struct cli_virtual *v, const struct cli_source *src,
		      const struct cli_virtual_live *live);
/* Metadata, then the recording, into run->ring; st gets the totals. */
int cli_virtual_record(const struct cli_virtual_run *run, struct t4_sched_status *st);
/* The final status packet of such a recording. */
void cli_virtual_final(const struct t4_sched_status *st, struct t4_status_pkt *fin);
/* The summary on stderr: simulated, virtual time, what it holds. */
void cli_virtual_summary(const char *output, const struct t4_domain_set *ds,
			 const struct t4_sched_status *st, const struct t4_log_stats *ls,
			 double seconds);

/* record's DRM source (drm.c): the workload's GPU clients (fdinfo). */
struct cli_drm {
	const char *proc_root; /* --proc-root DIR; NULL: /proc */
	bool off;              /* --no-drm */
	int *roots;            /* the processes of -p/-t */
	size_t n_roots;
	struct t4_drm *src;    /* set by cli_drm_open when the source runs */
};

struct cli_target;

/* Open the source when it applies (not --no-drm; with --sim only under
 * --proc-root) and append its domain to ds. The workload: the trees of
 * the processes of target's threads (-p/-t; their clients count from the
 * baseline), or the command's (cli_drm_workload names its root once it
 * runs), or else every process. */
int cli_drm_open(struct cli_drm *c, bool sim, bool has_command,
		 const struct cli_target *target, struct t4_domain_set *ds);
int cli_drm_start(struct cli_drm *c);             /* after the scheduler */
int cli_drm_workload(struct cli_drm *c, int pid); /* the command's PID */
void cli_drm_stop(struct cli_drm *c);             /* after the scheduler */
void cli_drm_summary(struct cli_drm *c);          /* one line on stderr */
void cli_drm_close(struct cli_drm *c);            /* after the scheduler's free */

/* Where `record` writes its log (output.c): FILE.partial-PID-XXXXXX/log
 * until the recording runs, then FILE, an existing FILE kept as FILE.old. */
struct cli_output {
	const char *path;   /* as given to -o */
	bool force;         /* --force: replace FILE, keep no FILE.old */
	bool in_place;      /* stdout, FIFO, device: written under its name */
	bool to_stdout;     /* -o - */
	bool exists;        /* FILE existed at the start */
	dev_t dev;          /* and was this file: all --force replaces */
	ino_t ino;
	bool published, kept_old, stranded;
	char dir[4096];     /* the private directory, FILE.partial-PID-XXXXXX */
	char partial[4200]; /* the log until published: dir/log (or, stranded,
			     * FILE.partial-PID) */
	char stranded_name[4096]; /* FILE.partial-PID */
	char old[4096];     /* FILE.old */
};

/* Decide where the log goes and make its private directory (reclaiming
 * those of killed runs); refuses a directory, a terminal on stdout, and an
 * existing FILE whose FILE.old exists too (unless force). */
int cli_output_prepare(struct cli_output *o, const char *path, bool force);
/* The path to open the log at. */
const char *cli_output_open_path(const struct cli_output *o);
/* Give the log its name (FILE kept as FILE.old first, said on stderr).
 * On failure the log stays under its partial name, which the message
 * gives. Once named or stranded, a call does nothing. */
int cli_output_publish(struct cli_output *o);
/* Remove the log and the private directory of a recording that never
 * published. */
void cli_output_drop(struct cli_output *o);
/* The name to show the user: FILE, "standard output", or the partial
 * name where the log was stranded. */
const char *cli_output_name(const struct cli_output *o);

/* perf's -C LIST, -p PID[,PID], -t TID[,TID] (target.c). */
struct cli_target {
	const char *cpus;     /* -C */
	const char *pids;     /* -p */
	const char *tids_arg; /* -t */
	int *tids;            /* the threads counted: -t's, and every thread
			       * of each -p process */
	size_t n_tids;
};
/* Resolve -p/-t into thread IDs ("-p 123: no such process"). */
int cli_target_resolve(struct cli_target *t);
/* Whether any thread counted is still alive (not exited or a zombie). */
bool cli_target_alive(const struct cli_target *t);
/* The processes of the threads counted, each once, as proc_root's
 * <tid>/status says (NULL: /proc): *out (free() it) and *n. */
int cli_target_processes(const struct cli_target *t, const char *proc_root, int **out,
			 size_t *n);
void cli_target_free(struct cli_target *t);

/* The job a recording runs in (job.c): what Slurm (srun, sbatch) or Open
 * MPI (mpirun) tell each task in its environment. */
struct cli_job {
	const char *launcher;   /* "Slurm", "Open MPI", or NULL: not in a job */
	char id[32];            /* SLURM_JOB_ID; "" none */
	char step[32];          /* SLURM_STEP_ID; "" none */
	char nodelist[256];     /* SLURM_JOB_NODELIST; "" none */
	char host[T4_NAME_MAX]; /* this host's name (uname) */
	int32_t rank;           /* SLURM_PROCID / OMPI_COMM_WORLD_RANK; -1 none */
	int32_t local_rank;     /* SLURM_LOCALID / OMPI_COMM_WORLD_LOCAL_RANK; -1 */
	int32_t tasks;          /* the step's tasks; -1 unknown */
	int32_t nodes;          /* the job's nodes (Open MPI: 2 = more than one); -1 */
};
/* Read the environment: 0, or -EINVAL (said) for a rank that is not a number
 * or a job or step ID longer than its field (31 bytes). */
int cli_job_detect(struct cli_job *j);
/* Whether this task records: the node's first (local rank 0, or no
 * launcher), or every one with --all-tasks. */
bool cli_job_records(const struct cli_job *j, bool all_tasks);
/* -o NAME with %h, %j, %t, %p and %% expanded into out (each value made
 * safe for a file name); -EINVAL (said) for an unknown or unavailable
 * expansion, or a name several nodes (or, with all_tasks, tasks) would
 * share. */
int cli_job_expand(const struct cli_job *j, const char *name, bool all_tasks, char *out,
		   size_t cap);
/* Create the directories of path (expanded from pattern) when an
 * expansion named them ('job%j/trace.t4t'); 0 or a negative errno, said.
 * created gets the first one this call made ("" none). */
int cli_job_make_dirs(const char *pattern, const char *path, char *created, size_t cap);
/* A recording that wrote nothing: remove the empty directories
 * cli_job_make_dirs made for path, up to created. */
void cli_job_drop_dirs(const char *path, const char *created);
/* The host packet (FORMAT.md 4.5b): the job, and the clock's sync state
 * read now (ref_ns: now on the log's reference clock). */
void cli_job_host_pkt(const struct cli_job *j, uint64_t ref_ns, struct t4_packet *p);

#define CLI_MAX_EVENT_ARGS 64

/* The options of `record` (record_opts.c). */
struct cli_record_opts {
	uint64_t period_ns;
	uint64_t duration_ns;
	const char *period_opt, *period_arg; /* as typed ("--period", "100h"); NULL: default */
	const char *duration_arg;            /* -d's as typed */
	const char *bookmark;
	const char *events[CLI_MAX_EVENT_ARGS];
	size_t n_events;
	const char *output;
	const char *control;
	struct cli_source src;
	struct cli_target target;
	struct cli_drm drm;
	bool paused, per_socket, quiet, progress, force;
	bool top;       /* --top: the live view instead of the progress line */
	const char *metrics_listen; /* --metrics-listen ADDR:PORT */
	bool all_cpus;  /* -a: also every task in the CPU and GPU activity */
	bool no_activity; /* --no-activity (old name --no-phases) */
	bool all_tasks; /* --all-tasks: record in every task of a job */
	enum t4_trigger_path trigger; /* --trigger */
	int zstd_level;
	unsigned log_format; /* --log-format: 0 = the current */
	uint32_t fsync_ms; /* 0: the log's default (1 s) */
	enum t4_log_backend backend;
	char **command; /* NULL-terminated, or NULL */
	struct cli_virtual virt; /* --virtual (record_virtual.c) */
};

/* Parse record's argv: 0, 1 for --help (printed; exit 0), or 2 after a
 * usage error. */
int cli_record_parse(int argc, char **argv, struct cli_record_opts *o);

/* What record says on stderr about a live recording (record_report.c). */
struct cli_record_summary {
	const struct t4_domain_set *domains;
	const char *output;  /* the log's name, as the user knows it */
	uint64_t period_ns;
	double seconds;      /* baseline to final trigger, about */
	bool simulated, log_failed;
	bool nothing_kept;   /* it failed before a chunk was there: nothing recorded */
	const char *fate;    /* ... and what of output: cli_record_fate() */
};
/* "BPF timers in the kernel" or "user-space threads". */
const char *cli_trigger_path_name(bool bpf);
/* One notice line when --trigger auto fell back to user space, and one
 * when the CPU and GPU activity asked for are (partly) left out. */
void cli_record_path_notice(struct t4_sched *s, bool quiet);
/* The progress line (final: ends it with a newline). */
void cli_record_progress(struct t4_sched *s, struct t4_log *log, uint64_t start_ref_ns,
			 bool final);
/* A --virtual recording's progress line, after `triggers` grid points of
 * `period_ns` of its `duration_ns` (final: ends it with a newline). */
void cli_record_progress_virtual(uint64_t triggers, uint64_t period_ns, uint64_t duration_ns,
				 struct t4_log *log, bool final);
void cli_record_summary(const struct cli_record_summary *in, const struct t4_sched_status *st,
			const struct t4_log_stats *ls);
/* What a log that stopped before its first chunk was on disk left of
 * out: "left as it was" (the user's older file), "not made", or, for
 * standard output, "got nothing". */
const char *cli_record_fate(const struct cli_output *out);
/* The line that says so. */
void cli_record_nothing_kept(const char *output, const char *fate);
/* The CPU and GPU activity' line (nothing when they did not run). */
void cli_record_activity_summary(const struct t4_sched_status *st);
/* The bookmark commands refused for lack of room (nothing when none). */
void cli_record_refusals(const struct t4_sched_status *st);

/* perf stat's answer (stat.c): every event's total over the log ix
 * indexes, summed over CPUs and threads, with its rate, grouped by what
 * the counters count (nothing when the log has no event). */
struct t4_index;
int cli_stat_print(FILE *f, const struct t4_index *ix);
/* What the log's counters count, one line into buf: "the command's tasks,
 * ...: software; system-wide: ucf". */
int cli_stat_scope(const struct t4_index *ix, char *buf, size_t cap);

/* The workload of `record` (child.c): record -> keeper (a child
 * subreaper that ends every descendant when the command or record ends)
 * -> COMMAND. */
struct cli_child {
	char **argv;           /* NULL-terminated */
	bool stdout_to_stderr; /* the log goes to stdout (-o -) */
	pid_t pid;             /* the command; 0: not running (never started,
				* or its status is in) */
	pid_t keeper;          /* 0 when none */
	int pidfd;             /* the command's; -1 without pidfd_open */
	int status;            /* wait status once reaped */
	int interrupts;        /* SIGINT/SIGTERM received while it ran */
	struct rlimit nofile;  /* RLIMIT_NOFILE for the command (rlim_cur 0: as
				* record's) */
	int go_fd, err_fd;     /* record's ends: release, exec result */
	int status_fd, life_fd; /* the keeper's reports; its life line */
	int child_go, child_err, child_status, child_life; /* the other ends
							    * (closed in record) */
};

/* Signal dispositions (child.c). cli_signals_start(), first in main: the
 * program ignores SIGPIPE (a reader gone is an error to clean up after,
 * not a death) and SIGXFSZ (past a file size limit, ulimit -f, a write
 * fails with EFBIG, said with the file's name, instead of a death that
 * leaves temporary outputs behind), and takes SIGCHLD back to its default
 * where its parent ignored it (then the kernel reaps children itself, and
 * record waited for ever for its command's status). Those three and SIGHUP
 * as they were at the start are what cli_signals_restore() gives a
 * command before it is exec'd: as if t410trace were not there (nohup's
 * SIGHUP stays ignored). */
void cli_signals_start(void);
void cli_signals_restore(void);
/* Whether sig was ignored when the program started (nohup's SIGHUP). */
bool cli_signal_ignored_at_start(int sig);

/* Notes the descriptors above 2 the program was started with, open
 * without close-on-exec (3>file, a make jobserver's pipe): record's
 * COMMAND gets them as they are, and none of record's own. First in main. */
void cli_inherited_fds_start(void);

void cli_child_init(struct cli_child *c, char **argv, bool stdout_to_stderr);
/* The RLIMIT_NOFILE the command gets (record raised its own). */
void cli_child_nofile(struct cli_child *c, const struct rlimit *rl);
/* Fork the keeper and, under it, the command, which waits for
 * cli_child_release before it execs. */
int cli_child_fork(struct cli_child *c);
/* Let it exec: 0 once exec worked, or a negative errno ("cannot run 'x':
 * No such file or directory") after reaping the child that could not. */
int cli_child_release(struct cli_child *c);
bool cli_child_running(const struct cli_child *c);
/* Reap it if it has exited. */
bool cli_child_exited(struct cli_child *c);
void cli_child_reap(struct cli_child *c);
/* Sleep until it exits, a signal arrives, or timeout_ns passes. */
void cli_child_nap(struct cli_child *c, uint64_t timeout_ns);
/* A SIGINT/SIGTERM for it: forward; the second time say that a third
 * kills it; the third time SIGKILL. */
void cli_child_interrupt(struct cli_child *c, int sig);
/* SIGTERM, then SIGKILL after 5 s; reaped. */
void cli_child_stop(struct cli_child *c);
/* Its exit code as a shell gives it (128 + signal when killed). */
int cli_child_exit_code(const struct cli_child *c);
/* "t410trace: 'x' was killed by signal N (...)" when it was. */
void cli_child_report(const struct cli_child *c);
/* Stop (SIGTERM) and reap it if it still runs; wait for the keeper to end
 * its descendants; close everything. */
void cli_child_free(struct cli_child *c);

#endif
