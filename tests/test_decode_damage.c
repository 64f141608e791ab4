/* test_decode_damage.c - what the decoder keeps of the damage it is told
 * of (t4_decoder_damage: the reader's warnings, each with the byte offset
 * of the log where it found the damage), and where the user sees it: the
 * decoder's damage statistics, and decode's summary (stdout, or -o's file:
 * the warnings on standard error scroll away).
 */
#include "cli_testutil.h"
#include "decode_synth.h"
#include "probe.h"

/* The first damage's offset and message are kept, whatever follows; every
 * one is counted. */
Test(decode_damage, the_first_offset_and_message_are_kept)
{
	struct sy y;
	struct keep k = { 0 };
	struct t4_decoder *dec;
	struct t4_decode_opts o = { 0 };

	sy_one_domain(&y, 200, 5);
	sy_build(&y);
	cr_assert_eq(t4_decoder_new(&dec, &o, &keep_ops, &k), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_decoder_damage_stats(dec)->first_msg[0], '\0', "none yet");
	for (size_t i = 0; i < y.n_pk; i++) {
		if (i == y.n_pk / 3)
			t4_decoder_damage(dec, 81920, "chunk at offset 81920: payload CRC mismatch");
		if (i == 2 * y.n_pk / 3)
			t4_decoder_damage(dec, 163840, "chunk at offset 163840: bad magic");
		cr_assert_eq(t4_decoder_feed(dec, &y.pk[i]), 0, "%s", t4_errmsg());
	}
	t4_decoder_damage(dec, 999999, NULL); /* no message: none kept, still counted */
	cr_assert_eq(t4_decoder_finish(dec, NULL), 0, "%s", t4_errmsg());
	const struct t4_dec_damage *dm = t4_decoder_damage_stats(dec);
	cr_assert_eq(dm->events, 3);
	cr_assert_eq(dm->first_offset, 81920);
	cr_assert_str_eq(dm->first_msg, "chunk at offset 81920: payload CRC mismatch");
	t4_decoder_free(dec);
	free(k.v);
	sy_free(&y);
}

/* `decode`'s summary names the first damage with its offset and the
 * reader's message (the one its first warning gave), and how many more;
 * its damage line is info's. */
Test(decode_damage, the_summary_says_where_and_what, .timeout = 120)
{
	const char *bin = cli_bin();
	char writer[PATH_MAX], out[1 << 16], warn[512], want[700];
	char *dir, *w, *nl;

	if (!t4t_have_cmds("python3 zstd"))
		cr_skip_test("needs python3 zstd (tools/t4write.py writes the log)");
	cr_assert_not_null(cli_repo_file("tools/t4write.py", writer));
	dir = cli_tmpdir("t4dmg");
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && python3 '%s' d.t4 --triggers 900 "
			     "--seed 3 --chunk-packets 200 --damage 1 --damage 3 2>&1", dir, writer),
		     0, "%s", out);
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' decode d.t4 2>err >sum; "
			     "cat err", dir, bin), 0, "%s", out);
	/* the first warning: "t410trace: warning: d.t4: chunk at offset N: ..."
	 * (naming the log, as info does; it named none) */
	w = strstr(out, "warning: d.t4: chunk at offset ");
	cr_assert_not_null(w, "no damage warning naming the log:\n%s", out);
	w += strlen("warning: d.t4: ");
	snprintf(warn, sizeof(warn), "%.*s", (int)((nl = strchr(w, '\n')) ? nl - w : 400), w);
	snprintf(want, sizeof(want), "    first at byte %lld: %s (and 1 more)\n",
		 atoll(w + strlen("chunk at offset ")), warn);
	cr_assert_eq(cli_run(out, sizeof(out), "cat '%s/sum'", dir), 0);
	cr_assert(strstr(out, want), "want '%s' in the summary:\n%s", want, out);
	cr_assert(strstr(out, "2 damaged chunks"), "%s", out);
	/* info's damage line, word for word and byte for byte (the summary
	 * said "bytes skipped" without how many) */
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' info d.t4 2>/dev/null | "
			     "sed -n 's/^  damage  *//p' > i.txt && grep -c \"^  damage  *$(cat i.txt)$\" "
			     "sum && grep -c ' bytes unreadable$' i.txt", dir, bin),
		     0, "%s", out);
	cr_assert_str_eq(out, "1\n1\n");
	t4_rmtree(dir);
	free(dir);
}
