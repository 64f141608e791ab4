/* fuzz_parse.c - libFuzzer harness for number and duration parsing
 * (util/parse.c): t4_parse_u64, t4_parse_duration, and the formatters
 * whose output must parse back.
 *
 * Checks: a duration parses to 1 ns .. 1e18 ns or fails with a one-line
 * message; t4_fmt_duration of any parsed value parses back to within
 * 0.5 %; an offset is a duration or zero; t4_parse_u64 agrees with
 * strtoull (base 10, or 16 after 0x) on what it accepts; t4_parse_decimal
 * takes digits only.
 */
#include "fuzz_common.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

static void check_duration(const char *s)
{
	uint64_t ns = 0, back = 0;
	char buf[64];
	int rc = t4_parse_duration(s, &ns);

	fuzz_check_rc(rc, "t4_parse_duration");
	if (rc < 0)
		return;
	FUZZ_CHECK(rc == 0, "rc %d", rc);
	FUZZ_CHECK(ns >= 1 && ns <= 1000000000000000000ull, "'%s' -> %llu ns", s,
		   (unsigned long long)ns);
	t4_fmt_duration(ns, buf, sizeof(buf));
	FUZZ_CHECK(t4_parse_duration(buf, &back) == 0, "'%s' (%llu ns) printed as '%s': %s",
		   s, (unsigned long long)ns, buf, t4_errmsg());
	FUZZ_CHECK((double)(back > ns ? back - ns : ns - back) <= 0.005 * (double)ns,
		   "%llu ns printed as '%s' reads back as %llu ns", (unsigned long long)ns, buf,
		   (unsigned long long)back);
}

/* An offset (decode --from/--to) is what a duration is, or zero (or the
 * 1 ns that 0.5ns to 1ns round to: a duration is at least 1 ns before
 * rounding). */
static void check_offset(const char *s)
{
	uint64_t ns = 0, as_duration = 0;
	int rc = t4_parse_offset(s, &ns);

	fuzz_check_rc(rc, "t4_parse_offset");
	if (rc < 0)
		return;
	FUZZ_CHECK(ns <= 1000000000000000000ull, "'%s' -> %llu ns", s, (unsigned long long)ns);
	FUZZ_CHECK(ns <= 1 || (t4_parse_duration(s, &as_duration) == 0 && as_duration == ns),
		   "offset '%s' -> %llu ns, as a duration %llu", s, (unsigned long long)ns,
		   (unsigned long long)as_duration);
}

static void check_u64(const char *s)
{
	uint64_t v = 0;
	int rc = t4_parse_u64(s, &v);
	char *end;

	FUZZ_CHECK(rc == 0 || rc == -EINVAL || rc == -ERANGE, "rc %d", rc);
	if (rc == 0) { /* decimal, or hex after 0x: never octal, never a blank or a sign */
		bool hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');

		errno = 0;
		FUZZ_CHECK(strtoull(s, &end, hex ? 16 : 10) == v && !*end && isdigit((unsigned char)*s),
			   "'%s' -> %llu", s, (unsigned long long)v);
	}
}

/* t4_parse_decimal (T410TRACE_HOLD_MAX, the launchers' numbers): accepted
 * exactly when s is digits only and fits, with strtoull's base-10 value. */
static void check_decimal(const char *s)
{
	uint64_t v = 0;
	int rc = t4_parse_decimal(s, &v);
	bool digits = *s && strspn(s, "0123456789") == strlen(s);

	fuzz_check_rc(rc, "t4_parse_decimal");
	FUZZ_CHECK(rc == 0 || rc == -EINVAL || rc == -ERANGE, "rc %d", rc);
	FUZZ_CHECK(rc != 0 || (digits && strtoull(s, NULL, 10) == v), "'%s' -> %llu", s,
		   (unsigned long long)v);
	FUZZ_CHECK(rc != -EINVAL || !digits, "'%s' refused", s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	char *s, buf[32];

	if (len > 512)
		return 0;
	s = fuzz_str(data, len);
	check_duration(s);
	check_offset(s);
	check_u64(s);
	check_decimal(s);
	if (len >= 8) { /* the byte formatter never overflows its buffer */
		uint64_t v;
		memcpy(&v, data, sizeof(v));
		t4_fmt_bytes(v, buf, sizeof(buf));
		t4_fmt_duration(v, buf, sizeof(buf));
		FUZZ_CHECK(strlen(buf) < sizeof(buf), "overflow");
	}
	free(s);
	return 0;
}
