/* test_pci.c - PCI root port mapping through the NVIDIA DVSEC: binary
 * config-space fixtures generated here reproduce rows of seed 000's example
 * output, plus devices that must be skipped (short config space, other
 * vendors' DVSECs, a looping capability list). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_testutil.h"
#include "collector/collector.h"
#include "sysfs_testutil.h"
#include "tmpdir_testutil.h"
#include "util/util.h"

enum shape { NV_FIRST, NV_THIRD, SHORT, OTHER_ID, LOOP };

struct dev {
	const char *bdf;
	uint8_t bus, segment, rp, rc, socket;
	enum shape shape;
};

/* Seed 000 rows (Bus, Segment, RP, RC, Socket) and devices to skip. */
static const struct dev devs[] = {
	{ "0001:00:00.0", 0x00, 0x01, 0, 0, 0, NV_FIRST },
	{ "0002:80:00.0", 0x80, 0x02, 1, 1, 0, NV_THIRD },
	{ "0005:40:00.0", 0x40, 0x05, 1, 4, 0, NV_FIRST },
	{ "0005:c0:00.0", 0xc0, 0x05, 2, 4, 0, NV_THIRD },
	{ "000a:e0:00.0", 0xe0, 0x0a, 3, 1, 1, NV_FIRST },
	{ "000e:00:00.0", 0x00, 0x0e, 0, 5, 1, NV_THIRD },
	{ "0000:01:00.0", 0, 0, 0, 0, 0, SHORT },
	{ "0000:02:00.0", 0, 0, 0, 0, 0, OTHER_ID },
	{ "0000:03:00.0", 0, 0, 0, 0, 0, LOOP },
};

static void ext_cap(uint8_t *cfg, unsigned off, uint16_t id, unsigned next)
{
	t4_put_le32(cfg + off, id | (1u << 16) | ((uint32_t)next << 20));
}

static void dvsec(uint8_t *cfg, unsigned off, unsigned next, uint16_t vendor, uint16_t dvsec_id,
		  const struct dev *d)
{
	ext_cap(cfg, off, 0x0023, next);
	t4_put_le32(cfg + off + 4, vendor | (0x14u << 20)); /* rev 0, length 0x14 */
	t4_put_le16(cfg + off + 8, dvsec_id);
	cfg[off + 0xc] = d->bus;
	cfg[off + 0xd] = d->segment;
	cfg[off + 0xe] = d->rp;
	cfg[off + 0xf] = d->rc;
	cfg[off + 0x10] = d->socket;
}

static void write_dev(const char *root, const struct dev *d)
{
	uint8_t cfg[4096] = { 0 };
	size_t len = sizeof(cfg);
	char path[256];
	FILE *f;

	t4_put_le16(cfg, 0x10de);
	switch (d->shape) {
	case NV_FIRST:
		dvsec(cfg, 0x100, 0, 0x10de, 4, d);
		break;
	case NV_THIRD: /* AER, then another vendor's DVSEC, then ours */
		ext_cap(cfg, 0x100, 0x0001, 0x148);
		dvsec(cfg, 0x148, 0x200, 0x1af4, 4, d);
		dvsec(cfg, 0x200, 0, 0x10de, 4, d);
		break;
	case SHORT:
		len = 256;
		break;
	case OTHER_ID:
		dvsec(cfg, 0x100, 0, 0x10de, 5, d);
		break;
	case LOOP:
		ext_cap(cfg, 0x100, 0x0001, 0x100);
		break;
	}
	snprintf(path, sizeof(path), "%s/%s", root, d->bdf);
	cr_assert_eq(t4_mkdirs(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/%s/config", root, d->bdf);
	f = fopen(path, "wb");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(cfg, 1, len, f), len);
	fclose(f);
}

/* A new directory (PATH_MAX bytes) with the devices' config files. */
static void make_tree(char *dir)
{
	t4t_tmpdir(dir, PATH_MAX, "t4pci");
	for (size_t i = 0; i < sizeof(devs) / sizeof(devs[0]); i++)
		write_dev(dir, &devs[i]);
}

Test(pci, scan_seed000_rows)
{
	char dir[PATH_MAX];
	struct t4_pci_port *v;
	size_t n;

	make_tree(dir);
	cr_assert_eq(t4_pci_scan(dir, &v, &n), 0, "%s", t4_errmsg());
	cr_assert_eq(n, 6);
	for (size_t i = 0; i < n; i++) { /* sorted by BDF = table order */
		cr_expect_str_eq(v[i].bdf, devs[i].bdf);
		cr_expect_eq(v[i].bus, devs[i].bus);
		cr_expect_eq(v[i].segment, devs[i].segment);
		cr_expect_eq(v[i].rp, devs[i].rp);
		cr_expect_eq(v[i].rc, devs[i].rc);
		cr_expect_eq(v[i].socket, devs[i].socket);
	}
	free(v);
	t4_rmtree(dir);
}

Test(pci, scan_errors_and_empty)
{
	char dir[PATH_MAX];
	struct t4_pci_port *v = (void *)1;
	size_t n = 9;

	cr_expect_lt(t4_pci_scan("/nonexistent/pci", &v, &n), 0);
	cr_expect_str_eq(t4_errmsg(), "/nonexistent/pci: No such file or directory");
	cr_expect_null(v);
	cr_expect_eq(n, 0);
	t4t_tmpdir(dir, sizeof(dir), "t4pcie");
	cr_expect_eq(t4_pci_scan(dir, &v, &n), 0);
	cr_expect_eq(n, 0);
	free(v);
	t4_rmtree(dir);
	/* the real machine: must not fail (no NVIDIA root ports expected here) */
	cr_expect_eq(t4_pci_scan(NULL, &v, &n), 0, "%s", t4_errmsg());
	free(v);
}

/* A FIFO at a device's config in a --pci-root tree is skipped as a file
 * without a DVSEC, where the scan waited for ever for a writer. */
Test(pci, a_fifo_config_is_skipped, .timeout = 30)
{
	char dir[PATH_MAX], path[PATH_MAX + 32];
	struct t4_pci_port *v;
	size_t n = 9;

	t4t_tmpdir(dir, sizeof(dir), "t4pcie");
	snprintf(path, sizeof(path), "%s/0000:00:01.0", dir);
	cr_assert_eq(t4_mkdirs(path, 0755), 0);
	strcat(path, "/config");
	cr_assert_eq(mkfifo(path, 0600), 0, "%s", strerror(errno));
	cr_assert_eq(t4_pci_scan(dir, &v, &n), 0, "%s", t4_errmsg());
	cr_expect_eq(n, 0);
	free(v);
	t4_rmtree(dir);
}

Test(pci, cli_list_pci)
{
	char dir[PATH_MAX];
	static char out[8192];
	int rc;

	cli_bin(); /* skips before the tree is made */
	make_tree(dir);
	rc = cli_t4(out, sizeof(out), "list --pci-root '%s'", dir);
	cr_expect_eq(rc, 0, "%s", out);
	cr_expect_not_null(strstr(out, "BDF            Segment Bus Socket RC  RP  PCIE PMU and root-port filter\n"), "%s", out);
	cr_expect_not_null(strstr(out, "0005:c0:00.0   05      c0  0      4   2   nvidia_pcie_pmu_0_rc_4/src_rp_mask=0x4/\n"), "%s", out);
	cr_expect_not_null(strstr(out, "000a:e0:00.0   0a      e0  1      1   3   nvidia_pcie_pmu_1_rc_1/src_rp_mask=0x8/\n"), "%s", out);
	cr_assert_eq(cli_t4(out, sizeof(out), "list --json --pci-root '%s'", dir), 0);
	cr_expect_not_null(strstr(out, "{\"bdf\":\"0002:80:00.0\",\"segment\":2,\"bus\":128,\"socket\":0,\"rc\":1,\"rp\":1}"), "%s", out);
	cr_expect_eq(cli_t4(out, sizeof(out), "list --pci --sim"), 2);
	t4_rmtree(dir);
}
