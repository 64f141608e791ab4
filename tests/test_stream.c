/* test_stream.c - logs through pipes (suite "stream"): the reader on
 * standard input ("-") gives exactly what it gives on a file, damage
 * included; `record` into a FIFO or `-o -` that this test leaves unread
 * until the recording has fired far more triggers than the pipe, the
 * writer and the rings can hold (a stalled consumer: drops are then
 * certain, however fast or loaded the machine) leaves an intact log, with
 * the rings dropping and counting, on both write backends; `info -` reads
 * a pipe.
 */
#include "packets_testutil.h"
#include "cli_testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>

/* ---- the reader on standard input ------------------------------------- */

/* Make stdin a pipe fed by a child writing buf in small pieces. */
static pid_t feed_stdin(const uint8_t *buf, size_t len)
{
	int fds[2];
	pid_t pid;

	cr_assert_eq(pipe(fds), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(fds[0]);
		for (size_t off = 0; off < len;) {
			size_t n = len - off < 3001 ? len - off : 3001;
			ssize_t w = write(fds[1], buf + off, n);
			if (w <= 0)
				_exit(1);
			off += (size_t)w;
		}
		_exit(0);
	}
	close(fds[1]);
	cr_assert_geq(dup2(fds[0], STDIN_FILENO), 0);
	close(fds[0]);
	return pid;
}

struct seen {
	size_t n;
	uint64_t sum; /* of every packet's type and first trigger-ish field */
	struct t4_reader_stats st;
	int rc;
};

static void read_all(struct t4_reader *r, struct seen *s)
{
	struct t4_packet p;

	memset(s, 0, sizeof(*s));
	while ((s->rc = t4_reader_next(r, &p)) > 0) {
		s->n++;
		s->sum = s->sum * 31 + p.type +
			 (p.type == T4_PKT_REF ? p.ref.trigger_id : 0) +
			 (p.type == T4_PKT_RET ? p.ret.counts[0] + p.ret.domain_id : 0);
	}
	t4_reader_stats(r, &s->st);
	t4_reader_close(r);
}

static void quiet(void *ud, uint64_t off, const char *msg)
{
	(void)ud;
	(void)off;
	(void)msg;
}

static void expect_same_through_stdin(const uint8_t *buf, size_t len, const char *what)
{
	struct t4_reader *r;
	struct seen mem, in;
	int status;

	cr_assert_eq(t4_reader_open_mem(&r, buf, len, quiet, NULL), 0, "%s", t4_errmsg());
	read_all(r, &mem);
	pid_t pid = feed_stdin(buf, len);
	cr_assert_eq(t4_reader_open(&r, "-", quiet, NULL), 0, "%s: %s", what, t4_errmsg());
	read_all(r, &in);
	waitpid(pid, &status, 0);
	cr_assert_eq(in.rc, mem.rc, "%s", what);
	cr_assert_eq(in.n, mem.n, "%s: %zu packets through stdin, %zu from memory", what, in.n,
		     mem.n);
	cr_assert_eq(in.sum, mem.sum, "%s", what);
	cr_assert_eq(in.st.chunks, mem.st.chunks, "%s", what);
	cr_assert_eq(in.st.damaged_chunks, mem.st.damaged_chunks, "%s", what);
	cr_assert_eq(in.st.truncated, mem.st.truncated, "%s", what);
	cr_assert_eq(in.st.skipped_bytes, mem.st.skipped_bytes, "%s", what);
	cr_assert_eq(in.st.next_recording, mem.st.next_recording, "%s", what);
	cr_assert_eq(in.st.file_bytes, len, "%s", what);
}

Test(stream, reader_reads_stdin_like_a_file, .timeout = 60)
{
	struct tu_log l;
	struct t4_packet *exp;
	size_t n_exp;
	uint8_t *copy;

	tu_log_init(&l);
	tu_realistic_log(&l, 6, 1000, 100, &exp, &n_exp);
	copy = malloc(l.len + 5000);
	cr_assert_not_null(copy);
	expect_same_through_stdin(l.buf, l.len, "intact");
	memcpy(copy, l.buf, l.len);
	copy[l.chunk_off[2] + 20] ^= 1;                     /* header: resync */
	copy[l.chunk_off[3] + 3] ^= 1;                      /* magic */
	copy[l.chunk_off[7] + T4_CHUNK_HDR_SIZE + 10] ^= 1; /* payload */
	expect_same_through_stdin(copy, l.len, "three damaged chunks");
	expect_same_through_stdin(l.buf, l.chunk_off[5] + 100, "truncated in a chunk");
	expect_same_through_stdin(l.buf, l.chunk_off[5] + 30, "truncated in a header");
	memcpy(copy, l.buf, l.len);
	memset(copy + l.len, 0x5a, 5000);
	expect_same_through_stdin(copy, l.len + 5000, "garbage after the end");
	memset(copy + l.chunk_off[1], 0x5a, l.chunk_off[9] - l.chunk_off[1]);
	expect_same_through_stdin(copy, l.len, "garbage over eight chunks");
	memcpy(copy, l.buf, l.len);
	copy[2] ^= 4; /* the first magic (issue 16.5) */
	memset(copy + l.chunk_off[0] + T4_CHUNK_HDR_SIZE, 0x5a, 100);
	expect_same_through_stdin(copy, l.len, "a damaged first chunk");
	free(copy);
	copy = malloc(2 * l.len);
	memcpy(copy, l.buf, l.len);
	memcpy(copy + l.len, l.buf, l.len); /* cat a a (issue 16.8) */
	expect_same_through_stdin(copy, 2 * l.len, "two recordings");
	struct t4_reader *r;
	struct seen mem;
	cr_assert_eq(t4_reader_open_mem(&r, copy, 2 * l.len, quiet, NULL), 0);
	read_all(r, &mem);
	cr_assert_eq(mem.st.next_recording, l.len);
	cr_assert_eq(mem.n, n_exp, "the first recording's packets only");
	free(copy);
	free(exp);
	tu_log_free(&l);
}

Test(stream, reader_stdin_refuses_what_is_not_a_log)
{
	static const uint8_t junk[] = "not a log at all";
	struct t4_reader *r;

	pid_t pid = feed_stdin(junk, sizeof(junk));
	cr_assert_eq(t4_reader_open(&r, "-", NULL, NULL), -EBADMSG);
	cr_assert_str_eq(t4_errmsg(), "standard input: not a t410trace log (bad magic)");
	waitpid(pid, NULL, 0);
	pid = feed_stdin(junk, 0);
	cr_assert_eq(t4_reader_open(&r, "-", NULL, NULL), -EBADMSG);
	cr_assert_str_eq(t4_errmsg(), "standard input: empty file, not a t410trace log");
	waitpid(pid, NULL, 0);
}

/* ---- record into a stalled pipe ------------------------------------------ */

/* The recording's command: once the recorder has fired STALL_TRIGGERS
 * triggers (3 s at 1 ms; what the pipe, the writer's two chunks and the
 * rings hold is about 1,000), it creates $T4_STALL_DONE and ends the
 * recording. The test reads nothing before that file exists. */
#define STALL_TRIGGERS "3000"
#define STALL_COMMAND                                                                  \
	"-- sh -c 'echo to-stdout; until \"$T4_BIN\" ctl status | "                  \
	"grep -Eq \"triggers=([3-9][0-9]{3}|[0-9]{5,}) \"; do sleep 0.05; done; " \
	"touch \"$T4_STALL_DONE\"'"

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* Wait (the recorder stalled on its output meanwhile) until the file at
 * done exists, then copy fd to path. */
static size_t stalled_copy(int fd, const char *path, const char *done)
{
	FILE *out = fopen(path, "wb");
	char buf[8192];
	size_t total = 0;
	ssize_t n;

	cr_assert_not_null(out);
	while (access(done, F_OK))
		sleep_ms(10);
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		cr_assert_gt(n, 0, "read: %s", strerror(errno));
		cr_assert_eq(fwrite(buf, 1, (size_t)n, out), (size_t)n);
		total += (size_t)n;
	}
	fclose(out);
	return total;
}

/* What `info --json` says about the copy: intact, and drops counted. */
static void expect_intact(struct run *r, const char *copy, size_t bytes, const char *rec_out)
{
	sh(r, "'%s' info --json '%s'", bin(), copy);
	cr_assert_eq(r->status, 0, "%s", r->out);
	cr_assert_eq(json_num(r->out, "damaged_chunks"), 0, "%s: %s", copy, r->out);
	cr_assert(strstr(r->out, "\"truncated\": false"), "%s", r->out);
	cr_assert(strstr(r->out, "\"status_present\": true"), "%s", r->out);
	cr_assert_eq(json_num(r->out, "bytes"), (long long)bytes);
	cr_assert_gt(json_num(r->out, "triggers"), 100, "%s", r->out);
	/* the stalled reader made the rings drop, and the log says how many */
	cr_assert_gt(json_num(r->out, "dropped"), 0, "no drops after " STALL_TRIGGERS
		     " triggers unread? %s", r->out);
	cr_assert(strstr(rec_out, "dropped"), "%s", rec_out);
}

/* Start `t410trace SUB ARGS` with its stdout and stderr (record's
 * summary) as given. */
static pid_t spawn_t4(const char *sub, const char *args, int out_fd, const char *err_path)
{
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		char cmd[PATH_MAX + 1024];
		int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (err < 0 || dup2(err, STDERR_FILENO) < 0)
			_exit(126);
		if (out_fd >= 0 && dup2(out_fd, STDOUT_FILENO) < 0)
			_exit(126);
		snprintf(cmd, sizeof(cmd), "exec '%s' %s %s", bin(), sub, args);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	return pid;
}

static void read_file(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	size_t n;

	cr_assert_not_null(f);
	n = fread(buf, 1, cap - 1, f);
	buf[n] = '\0';
	fclose(f);
}

/* dir/name into buf (PATH_MAX + 32 bytes). */
static const char *in_dir(char *buf, const struct run *r, const char *name)
{
	snprintf(buf, PATH_MAX + 32, "%s/%s", r->dir, name);
	return buf;
}

static void fifo_case(const char *backend)
{
	static struct run r;
	char fifo[PATH_MAX + 32], copy[PATH_MAX + 32], err[PATH_MAX + 32], done[PATH_MAX + 32];
	char args[PATH_MAX + 512], rec_out[4096];
	int status, fd;

	tmpdir(&r);
	in_dir(fifo, &r, "f");
	in_dir(copy, &r, "copy.t4t");
	in_dir(err, &r, "err");
	cr_assert_eq(setenv("T4_STALL_DONE", in_dir(done, &r, "done"), 1), 0);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	snprintf(args, sizeof(args), "--sim --period 1ms --backend %s -o '%s' " STALL_COMMAND,
		 backend, fifo);
	pid_t pid = spawn_t4("record", args, -1, err);
	fd = open(fifo, O_RDONLY);
	cr_assert_geq(fd, 0);
	size_t bytes = stalled_copy(fd, copy, done);
	close(fd);
	waitpid(pid, &status, 0);
	read_file(err, rec_out, sizeof(rec_out));
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s", rec_out);
	cr_assert(strstr(rec_out, "wrote "), "%s", rec_out);
	struct stat st;
	cr_assert_eq(stat(fifo, &st), 0);
	cr_assert(S_ISFIFO(st.st_mode), "the FIFO was replaced");
	expect_intact(&r, copy, bytes, rec_out);
	cleanup(&r);
}

Test(stream, slow_fifo_uring, .timeout = 120)
{
	fifo_case("uring");
}

Test(stream, slow_fifo_pwrite, .timeout = 120)
{
	fifo_case("pwrite");
}

/* Read fd (appending to buf, len bytes in it) until buf holds want or
 * fd ends; whether it holds want. */
static bool read_until(int fd, char *buf, size_t cap, size_t *len, const char *want)
{
	ssize_t n;

	while (!strstr(buf, want) && *len + 1 < cap &&
	       ((n = read(fd, buf + *len, cap - 1 - *len)) > 0 || (n < 0 && errno == EINTR)))
		if (n > 0)
			buf[*len += (size_t)n] = '\0';
	return strstr(buf, want) != NULL;
}

/* `record -o FIFO` (and `decode -o FIFO`) with no reader yet waited in
 * open(2) without a word (a hang, to the user); each says on stderr that
 * it waits for a reader, and writes once one opens the FIFO. The reader
 * opens it only after the notice (the program's stderr is a FIFO too): no
 * timing involved. `t410trace SUB ARGS -o r->dir/f`; what it wrote to f
 * in copy (PATH_MAX + 32 bytes). */
static void fifo_said_then_read(struct run *r, const char *sub, const char *args, char *copy)
{
	char fifo[PATH_MAX + 32], err[PATH_MAX + 32], said[8192] = "";
	char cmd[PATH_MAX + 512];
	size_t len = 0;
	int status, efd, fd;

	in_dir(fifo, r, "f");
	in_dir(copy, r, "copy");
	in_dir(err, r, "err");
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	cr_assert_eq(mkfifo(err, 0600), 0);
	snprintf(cmd, sizeof(cmd), "%s -o '%s'", args, fifo);
	pid_t pid = spawn_t4(sub, cmd, -1, err);
	efd = open(err, O_RDONLY);
	cr_assert_geq(efd, 0);
	bool noticed = read_until(efd, said, sizeof(said), &len, "waiting for a reader");
	if (!noticed)
		waitpid(pid, &status, 0);
	cr_assert(noticed, "no notice before its stderr ended: %s", said);
	cr_assert_not_null(strstr(said, "t410trace: notice: "), "%s", said);
	cr_assert_not_null(strstr(said, "/f: a FIFO no process reads yet; waiting for a reader to "
					"open it\n"), "%s", said);
	fd = open(fifo, O_RDONLY);
	cr_assert_geq(fd, 0);
	FILE *out = fopen(copy, "wb");
	char buf[8192];
	ssize_t n;
	cr_assert_not_null(out);
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		cr_assert(n > 0 || errno == EINTR, "%s", strerror(errno));
		if (n > 0)
			cr_assert_eq(fwrite(buf, 1, (size_t)n, out), (size_t)n);
	}
	fclose(out);
	close(fd);
	while ((n = read(efd, buf, sizeof(buf))) != 0) /* the rest (the summary) */
		cr_assert(n > 0 || errno == EINTR, "%s", strerror(errno));
	close(efd);
	waitpid(pid, &status, 0);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s", said);
}

Test(stream, a_fifo_without_a_reader_is_said_to_wait_for_one, .timeout = 120)
{
	static struct run r;
	char copy[PATH_MAX + 32];

	tmpdir(&r);
	fifo_said_then_read(&r, "record", "--sim --period 10ms --duration 100ms", copy);
	sh(&r, "'%s' info --json '%s'", bin(), copy);
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert(strstr(r.out, "\"truncated\": false"), "%s", r.out);
	cr_assert_gt(json_num(r.out, "triggers"), 5, "%s", r.out);
	/* decode -o FIFO: the same notice, then the CSV decode writes to a file */
	sh(&r, "cd '%s' && mv copy l.t4t && rm f err && '%s' decode l.t4t -f csv -o l.csv", r.dir,
	   bin());
	cr_assert_eq(r.status, 0, "%s", r.out);
	char args[PATH_MAX + 64];
	snprintf(args, sizeof(args), "'%s/l.t4t' -f csv", r.dir);
	fifo_said_then_read(&r, "decode", args, copy);
	sh(&r, "cd '%s' && cmp copy l.csv", r.dir);
	cr_assert_eq(r.status, 0, "%s", r.out);
	cleanup(&r);
}

/* Ctrl-C while record waits for the FIFO's reader: it said "f:
 * Interrupted system call" and exited 1, or, when the signal came between
 * the notice and the blocking open(2), waited on for ever; now it says it
 * was interrupted before it started, nothing recorded, and exits 130 as a
 * shell would (the SIGINT is sent as soon as the notice is read). */
Test(stream, interrupted_while_waiting_for_a_fifo_reader, .timeout = 60)
{
	struct run r;

	tmpdir(&r);
	sh(&r, "cd '%s' && mkfifo f e && { '%s' record --sim -d 1s -o f 2> e & rec=$!; exec 3< e; "
	       "head -n 1 <&3; kill -INT $rec; cat <&3; wait $rec; echo rc=$?; }", r.dir, bin());
	cr_assert(strstr(r.out, "t410trace: notice: f: a FIFO no process reads yet; waiting for a "
				"reader to open it\nt410trace: interrupted before the recording "
				"started; nothing recorded\nrc=130\n"), "%s", r.out);
	cr_assert_null(strstr(r.out, "Interrupted system call"), "%s", r.out);
	cleanup(&r);
}

/* Two writers on one FIFO: a second record (or a decode -o FIFO) wrote
 * its chunks among the first's, both exited 0, and the reader kept the
 * first log only up to where the second began. The later one is refused
 * (exit 1), the first log read whole. It starts once the reader has the
 * first's bytes: no timing. */
Test(stream, a_second_writer_of_a_fifo_is_refused, .timeout = 120)
{
	static struct run r;

	tmpdir(&r);
	sh_in_dir(&r, "mkfifo f; \"$B\" record -q --sim -d 1h --backend pwrite -o f 2> a.err & "
		  "a=$!; "
		  "cat f > got & c=$!; i=0; "
		  "while [ ! -s got ] && [ $i -lt 6000 ]; do sleep 0.01; i=$((i+1)); done; "
		  "\"$B\" record -q --sim -d 1s --backend pwrite -o f; echo rc=$?; "
		  "\"$B\" decode -f csv -o f got; echo rc=$?; "
		  "kill -TERM $a; wait $a; echo a=$?; wait $c; cat a.err; "
		  "\"$B\" info got > /dev/null && echo read-whole");
	cr_assert_str_eq(r.out, "t410trace: f: another t410trace writes this FIFO; refusing to "
				"interleave with it\nrc=1\n"
				"t410trace decode: f: another t410trace writes this FIFO; refusing "
				"to interleave with it\nrc=1\na=0\nread-whole\n");
	cleanup(&r);
}

/* -o - is standard output; `info -` reads the log from a pipe. */
Test(stream, stdout_to_a_slow_pipe_and_info_from_stdin, .timeout = 120)
{
	static struct run r, r2;
	char copy[PATH_MAX + 32], err[PATH_MAX + 32], done[PATH_MAX + 32], rec_out[4096];
	int fds[2], status;

	tmpdir(&r);
	in_dir(copy, &r, "copy.t4t");
	in_dir(err, &r, "err");
	cr_assert_eq(setenv("T4_STALL_DONE", in_dir(done, &r, "done"), 1), 0);
	cr_assert_eq(pipe(fds), 0);
	pid_t pid = spawn_t4("record", "--sim --period 1ms -o - " STALL_COMMAND, fds[1], err);
	close(fds[1]);
	size_t bytes = stalled_copy(fds[0], copy, done);
	close(fds[0]);
	waitpid(pid, &status, 0);
	read_file(err, rec_out, sizeof(rec_out));
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s", rec_out);
	cr_assert(strstr(rec_out, "to-stdout"), "the command's stdout goes to stderr: %s", rec_out);
	cr_assert(strstr(rec_out, "wrote standard output"), "%s", rec_out);
	expect_intact(&r, copy, bytes, rec_out);
	/* info on the pipe gives what info on the file gives */
	sh(&r2, "cat '%s' | '%s' info --json - | grep -o '\"[a-z_]*\": [0-9]*' | head -40 > '%s/a'; "
		"'%s' info --json '%s' | grep -o '\"[a-z_]*\": [0-9]*' | head -40 > '%s/b'; "
		"cmp '%s/a' '%s/b' && cat '%s/a'", copy, bin(), r.dir, bin(), copy, r.dir, r.dir, r.dir,
	   r.dir);
	cr_assert_eq(r2.status, 0, "%s", r2.out);
	cr_assert_eq(json_num(r2.out, "bytes"), (long long)bytes, "%s", r2.out);
	cr_assert_eq(json_num(r2.out, "damaged_chunks"), 0, "%s", r2.out);
	cleanup(&r);
}
