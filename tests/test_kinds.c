/* test_kinds.c - the Tegra410 kinds table: recognition by name and
 * identifier, events, defaults and formulas consistent with each other and
 * with seed 000. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <string.h>

#include "collector/collector.h"

Test(kinds, seven_kinds_in_table_order)
{
	static const char *labels[] = { "UCF", "PCIE", "PCIE-TGT", "CMEM latency",
					"NVLink-C2C", "NV-CLink", "NV-DLink" };
	size_t n;
	const struct t4_kind *k = t4_kinds(&n);

	cr_assert_eq(n, 7);
	for (size_t i = 0; i < n; i++) {
		cr_expect_str_eq(k[i].label, labels[i]);
		cr_expect_str_eq(k[i].clock_event, "cycles");
		cr_expect_eq(t4_kind_by_id(k[i].id), &k[i]);
		cr_expect_not_null(t4_kind_event(&k[i], "cycles"));
	}
	cr_expect_null(t4_kind_by_id(T4_DOM_SOFTWARE));
}

Test(kinds, recognition_by_name)
{
	int s, rc;

	cr_expect_eq(t4_kind_of("nvidia_pcie_tgt_pmu_1_rc_5", NULL)->id, T4_DOM_PCIE_TGT);
	cr_expect_eq(t4_kind_of("nvidia_pcie_pmu_1_rc_5", NULL)->id, T4_DOM_PCIE);
	cr_expect_eq(t4_kind_of("nvidia_ucf_pmu_0", NULL)->id, T4_DOM_UCF);
	cr_expect_eq(t4_kind_of("nvidia_cmem_latency_pmu_1", NULL)->id, T4_DOM_CMEM_LAT);
	cr_expect_eq(t4_kind_of("nvidia_nvlink_c2c_pmu_0", NULL)->id, T4_DOM_NVLINK_C2C);
	cr_expect_eq(t4_kind_of("nvidia_nvclink_pmu_0", NULL)->id, T4_DOM_NVCLINK);
	cr_expect_eq(t4_kind_of("nvidia_nvdlink_pmu_1", NULL)->id, T4_DOM_NVDLINK);
	cr_expect_null(t4_kind_of("nvidia_pcie_pmu_0", NULL));	    /* no _rc_ */
	cr_expect_null(t4_kind_of("nvidia_ucf_pmu_0_rc_1", NULL)); /* trailing */
	cr_expect_null(t4_kind_of("nvidia_ucf_pmu_", NULL));
	cr_expect_null(t4_kind_of("software", NULL));
	cr_expect_null(t4_kind_of("nvidia_ucf_pmu_x", "NVDA9999"));
	t4_kind_ids(t4_kind_of("nvidia_pcie_tgt_pmu_1_rc_5", NULL), "nvidia_pcie_tgt_pmu_1_rc_5", &s, &rc);
	cr_expect_eq(s, 1);
	cr_expect_eq(rc, 5);
	t4_kind_ids(t4_kind_of("nvidia_ucf_pmu_12", NULL), "nvidia_ucf_pmu_12", &s, &rc);
	cr_expect_eq(s, 12);
	cr_expect_eq(rc, -1);
}

Test(kinds, recognition_by_identifier)
{
	int s, rc;
	const struct t4_kind *k = t4_kind_of("nv_cmem_lat_3", "NVDA2021");

	cr_assert_not_null(k);
	cr_expect_eq(k->id, T4_DOM_CMEM_LAT);
	/* not the kind's name: socket and RC come from the set (t4_kinds_recognise) */
	cr_expect_eq(t4_kind_ids(k, "nv_cmem_lat_3", &s, &rc), -1);
	cr_expect_eq(s, -1);
	cr_expect_eq(t4_kind_of("x", "NVDA2023")->id, T4_DOM_NVLINK_C2C);
	cr_expect_eq(t4_kind_of("x", "NVDA2022")->id, T4_DOM_NVCLINK);
	cr_expect_eq(t4_kind_of("x", "NVDA2020")->id, T4_DOM_NVDLINK);
	cr_expect_eq(t4_kind_of("x", "nvda2020")->id, T4_DOM_NVDLINK);
	/* the identifier (hardware, firmware) wins over a name (a driver's
	 * choice) when both are given */
	cr_expect_eq(t4_kind_of("nvidia_ucf_pmu_0", "NVDA2020")->id, T4_DOM_NVDLINK);
}

/* The arm_cspmu PMUs' identifier is the PMIIDR ("%x"): the Tegra410 UCF,
 * PCIE and PCIE-TGT under any name, in any hex spelling; Grace's SCF and
 * PCIE share the product IDs (0x2cf, 0x103) but not variant and revision,
 * as the kernel's own table tells them apart. */
Test(kinds, recognition_by_pmiidr)
{
	cr_expect_eq(t4_kind_of("nvidia_uncore_pmu_3", "2cf2036b")->id, T4_DOM_UCF);
	cr_expect_eq(t4_kind_of("nvidia_scf_pmu_1", "0x2CF2036B")->id, T4_DOM_UCF);
	cr_expect_eq(t4_kind_of("nvidia_uncore_pmu_0", "1030136b")->id, T4_DOM_PCIE);
	cr_expect_eq(t4_kind_of("nvidia_uncore_pmu_9", "1070036b")->id, T4_DOM_PCIE_TGT);
	cr_expect_null(t4_kind_of("nvidia_scf_pmu_0", "2cf0036b"));	/* Grace SCF */
	cr_expect_null(t4_kind_of("nvidia_pcie_pmu_0", "1030036b"));	/* Grace PCIE */
	cr_expect_null(t4_kind_of("nvidia_uncore_pmu_2", "2cf1036b")); /* another variant */
	cr_expect_null(t4_kind_of("nvidia_uncore_pmu_2", "12cf2036b")); /* 33 bits */
	cr_expect_null(t4_kind_of("nvidia_uncore_pmu_2", "2cf2036b "));
	cr_expect_null(t4_kind_of("nvidia_uncore_pmu_2", ""));
	cr_expect(t4_identifier_eq("0x00ab", "AB"));
	cr_expect(!t4_identifier_eq("0x", "0"));
	cr_expect(!t4_identifier_eq("NVDA2021", "NVDA2023"));
}

Test(kinds, event_ids_from_facts)
{
	cr_expect_eq(t4_kind_event(t4_kind_by_id(T4_DOM_UCF), "cycles")->config, 0x100000000ull);
	cr_expect_eq(t4_kind_event(t4_kind_by_id(T4_DOM_UCF), "slc_access_atomic")->config, 0x184);
	cr_expect_eq(t4_kind_event(t4_kind_by_id(T4_DOM_PCIE), "rd_cum_outs")->config, 0x4);
	cr_expect_eq(t4_kind_event(t4_kind_by_id(T4_DOM_PCIE_TGT), "cycles")->config, 0x4);
	cr_expect_eq(t4_kind_event(t4_kind_by_id(T4_DOM_CMEM_LAT), "rd_cum_outs")->config, 0x2);
	cr_expect_eq(t4_kind_event(t4_kind_by_id(T4_DOM_NVLINK_C2C), "out_wr_req")->config, 0x8);
	cr_expect_eq(t4_kind_event(t4_kind_by_id(T4_DOM_NVCLINK), "out_rd_req")->config, 0x6);
	cr_expect_null(t4_kind_event(t4_kind_by_id(T4_DOM_NVCLINK), "in_wr_req"));
	cr_expect_null(t4_kind_event(t4_kind_by_id(T4_DOM_NVDLINK), "out_rd_req"));
	cr_expect_eq(t4_kind_by_id(T4_DOM_UCF)->n_events, 20);
	cr_expect_eq(t4_kind_by_id(T4_DOM_NVLINK_C2C)->n_events, 9);
	cr_expect_eq(t4_kind_by_id(T4_DOM_NVCLINK)->n_events, 5);
	cr_expect_eq(t4_kind_by_id(T4_DOM_NVDLINK)->n_events, 3);
}

static bool in_defaults(const struct t4_kind *k, const char *name, size_t len)
{
	for (const char *const *d = k->defaults; *d; d++)
		if (strlen(*d) == len && !strncmp(*d, name, len))
			return true;
	return false;
}

/* Every identifier in every formula is a default event or elapsed_ns; every
 * default is an event of the kind. */
Test(kinds, formulas_use_default_events_only)
{
	size_t n;
	const struct t4_kind *k = t4_kinds(&n);

	for (size_t i = 0; i < n; i++) {
		cr_expect_gt(k[i].n_formulas, 0);
		for (const char *const *d = k[i].defaults; *d; d++)
			cr_expect_not_null(t4_kind_event(&k[i], *d), "%s: %s", k[i].label, *d);
		for (size_t f = 0; f < k[i].n_formulas; f++) {
			const char *p = k[i].formulas[f].expr;
			while (*p) {
				size_t len = 0;
				if (!isalpha((unsigned char)*p) && *p != '_') {
					cr_expect(strchr("0123456789.+-*/() ", *p) != NULL,
						  "%s: bad char in %s", k[i].label, k[i].formulas[f].expr);
					p++;
					continue;
				}
				while (isalnum((unsigned char)p[len]) || p[len] == '_')
					len++;
				cr_expect(in_defaults(&k[i], p, len) || !strncmp(p, "elapsed_ns", len),
					  "%s: %.*s in %s", k[i].label, (int)len, p, k[i].formulas[f].expr);
				p += len;
			}
		}
	}
}

static const struct t4_formula *formula(enum t4_domain_kind id, const char *name)
{
	const struct t4_kind *k = t4_kind_by_id(id);

	for (size_t i = 0; i < k->n_formulas; i++)
		if (!strcmp(k->formulas[i].name, name))
			return &k->formulas[i];
	return NULL;
}

/* Seed 000: bandwidth, request rate, latency and frequency per kind. */
Test(kinds, seed000_formulas_present)
{
	static const struct {
		enum t4_domain_kind id;
		const char *name, *unit, *expr;
	} want[] = {
		{ T4_DOM_UCF, "slc_read_bw", "GB/s", "slc_bytes_rd / elapsed_ns" },
		{ T4_DOM_UCF, "mem_write_bw", "GB/s", "mem_bytes_wr / elapsed_ns" },
		{ T4_DOM_UCF, "mem_read_req_rate", "req/cycle", "mem_access_rd / cycles" },
		{ T4_DOM_UCF, "slc_write_req_rate", "req/cycle", "slc_access_wr / cycles" },
		{ T4_DOM_PCIE, "rd_bw", "GB/s", "rd_bytes / elapsed_ns" },
		{ T4_DOM_PCIE, "wr_req_rate", "req/cycle", "wr_req / cycles" },
		{ T4_DOM_PCIE, "pcie_freq", "GHz", "cycles / elapsed_ns" },
		{ T4_DOM_PCIE, "rd_latency_cycles", "cycles", "rd_cum_outs / rd_req" },
		{ T4_DOM_PCIE, "rd_latency_ns", "ns", "(rd_cum_outs / rd_req) / (cycles / elapsed_ns)" },
		{ T4_DOM_PCIE_TGT, "wr_bw", "GB/s", "wr_bytes / elapsed_ns" },
		{ T4_DOM_PCIE_TGT, "rd_req_rate", "req/cycle", "rd_req / cycles" },
		{ T4_DOM_CMEM_LAT, "cmem_freq", "GHz", "cycles / elapsed_ns" },
		{ T4_DOM_CMEM_LAT, "rd_latency_ns", "ns", "(rd_cum_outs / rd_req) / (cycles / elapsed_ns)" },
		{ T4_DOM_NVLINK_C2C, "out_wr_latency_ns", "ns",
		  "(out_wr_cum_outs / out_wr_req) / (cycles / elapsed_ns)" },
		{ T4_DOM_NVLINK_C2C, "in_wr_latency_cycles", "cycles", "in_wr_cum_outs / in_wr_req" },
		{ T4_DOM_NVCLINK, "out_rd_latency_ns", "ns",
		  "(out_rd_cum_outs / out_rd_req) / (cycles / elapsed_ns)" },
		{ T4_DOM_NVCLINK, "clink_freq", "GHz", "cycles / elapsed_ns" },
		{ T4_DOM_NVDLINK, "in_rd_latency_ns", "ns",
		  "(in_rd_cum_outs / in_rd_req) / (cycles / elapsed_ns)" },
		{ T4_DOM_NVDLINK, "dlink_freq", "GHz", "cycles / elapsed_ns" },
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct t4_formula *f = formula(want[i].id, want[i].name);
		cr_assert_not_null(f, "%s", want[i].name);
		cr_expect_str_eq(f->unit, want[i].unit);
		cr_expect_str_eq(f->expr, want[i].expr);
	}
	cr_expect_null(formula(T4_DOM_NVCLINK, "in_wr_latency_ns"));
}
