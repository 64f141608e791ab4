/* test_fuzz_replay.c - every fuzz harness over its saved corpus and crash
 * inputs (suite "fuzz_replay"), so a crash once fixed stays fixed and the
 * harnesses' own checks (one-line messages, round trips, bounded reads)
 * keep holding in every `make check`, with its sanitizers under SAN=1.
 *
 * The harnesses are built with tools/fuzz/replay.c instead of libFuzzer
 * (Makefile: $(OUT)/fuzz/replay_NAME); inputs live in tools/fuzz/corpus/
 * NAME (minimized libFuzzer corpora) and tools/fuzz/crashes/NAME (the
 * inputs of the bugs docs/FUZZING.md lists). A few seconds in all.
 */
#include "cli_testutil.h"

static void replay(const char *name)
{
	const char *out = getenv("T4_OUT");
	struct run r;
	char want[128];

	if (!out)
		cr_skip_test("T4_OUT not set (run through make check)");
	sh(&r, "'%s/fuzz/replay_%s' tools/fuzz/corpus/%s tools/fuzz/crashes/%s", out, name, name,
	   name);
	cr_assert_eq(r.status, 0, "replay_%s: %s", name, r.out);
	snprintf(want, sizeof(want), " inputs from tools/fuzz/corpus/%s\n", name);
	const char *line = strstr(r.out, want);
	cr_assert_not_null(line, "%s", r.out);
	snprintf(want, sizeof(want), " inputs from tools/fuzz/crashes/%s\n", name);
	cr_assert_not_null(strstr(r.out, want), "%s", r.out);
	cr_assert_null(strstr(r.out, "replayed 0 inputs"), "an empty corpus: %s", r.out);
}

Test(fuzz_replay, reader, .timeout = 120) { replay("reader"); }
Test(fuzz_replay, codec, .timeout = 120) { replay("codec"); }
Test(fuzz_replay, events, .timeout = 120) { replay("events"); }
Test(fuzz_replay, pmu, .timeout = 120) { replay("pmu"); }
Test(fuzz_replay, control, .timeout = 120) { replay("control"); }
Test(fuzz_replay, parse, .timeout = 120) { replay("parse"); }
Test(fuzz_replay, decode, .timeout = 240) { replay("decode"); }
Test(fuzz_replay, drm, .timeout = 120) { replay("drm"); }
Test(fuzz_replay, live, .timeout = 120) { replay("live"); }
