/* pci.c - PCI root port -> socket / RC / root-port mapping through the
 * NVIDIA DVSEC (seed 000): each Tegra410 root port carries a Designated
 * Vendor-Specific Extended Capability (ext cap ID 0x23) with vendor 0x10de
 * and DVSEC ID 4 whose bytes 0xc..0x10 hold bus, segment, RP, RC, socket.
 *
 * Trade-offs: reads the binary `config` file of every device directly
 * instead of running lspci/setpci (no dependency, fixture-able: the root
 * directory is a parameter). Devices whose config space is short (256
 * bytes, no extended space) or unreadable are skipped silently: most PCI
 * devices are not NVIDIA root ports. The capability walk is bounded so a
 * looping list in a corrupt file cannot hang us.
 */
#include "collector.h"
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PCI_DEFAULT "/sys/bus/pci/devices"
#define CFG_SIZE 4096
#define EXT_CAP_START 0x100
#define EXT_CAP_DVSEC 0x0023
#define NV_VENDOR 0x10de
#define NV_DVSEC_ID 4

/* Read up to CFG_SIZE bytes of config space; the length read or -errno. */
static ssize_t read_config(const char *path, uint8_t *buf)
{
	/* O_NONBLOCK: a FIFO planted in a --pci-root tree reads as empty
	 * instead of blocking for ever (a regular file ignores it) */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	ssize_t len = 0;

	if (fd < 0)
		return -errno;
	while (len < CFG_SIZE) {
		ssize_t n = read(fd, buf + len, (size_t)(CFG_SIZE - len));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
	}
	close(fd);
	return len;
}

/* Offset of the NVIDIA DVSEC in cfg, or 0 when there is none. */
static unsigned find_dvsec(const uint8_t *cfg, size_t len)
{
	unsigned off = EXT_CAP_START;

	for (int hops = 0; hops < (CFG_SIZE - EXT_CAP_START) / 4; hops++) {
		uint32_t hdr;

		if (off < EXT_CAP_START || off + 0x11 > len)
			return 0;
		hdr = t4_get_le32(cfg + off);
		if (hdr == 0 || hdr == 0xffffffffu)
			return 0;
		if ((hdr & 0xffff) == EXT_CAP_DVSEC &&
		    (t4_get_le32(cfg + off + 4) & 0xffff) == NV_VENDOR &&
		    t4_get_le16(cfg + off + 8) == NV_DVSEC_ID)
			return off;
		off = (hdr >> 20) & 0xffc;
		if (off == 0)
			return 0;
	}
	return 0;
}

static int port_cmp(const void *a, const void *b)
{
	return strcmp(((const struct t4_pci_port *)a)->bdf, ((const struct t4_pci_port *)b)->bdf);
}

static int add_port(struct t4_pci_port **v, size_t *n, size_t *cap, const char *bdf,
		    const uint8_t *d)
{
	struct t4_pci_port *p;

	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		p = realloc(*v, ncap * sizeof(*p));
		if (!p)
			return t4_err(ENOMEM, "out of memory");
		*v = p;
		*cap = ncap;
	}
	p = &(*v)[(*n)++];
	memset(p, 0, sizeof(*p));
	snprintf(p->bdf, sizeof(p->bdf), "%.15s", bdf);
	p->bus = d[0xc];
	p->segment = d[0xd];
	p->rp = d[0xe];
	p->rc = d[0xf];
	p->socket = d[0x10];
	return 0;
}

int t4_pci_scan(const char *pci_root, struct t4_pci_port **out, size_t *n_out)
{
	struct t4_pci_port *v = NULL;
	size_t n = 0, cap = 0;
	uint8_t *cfg;
	struct dirent *e;
	DIR *d;
	int rc = 0;

	*out = NULL;
	*n_out = 0;
	if (!pci_root)
		pci_root = PCI_DEFAULT;
	d = opendir(pci_root);
	if (!d)
		return t4_err(errno, "%s: %s", pci_root, strerror(errno));
	cfg = malloc(CFG_SIZE);
	if (!cfg) {
		closedir(d);
		return t4_err(ENOMEM, "out of memory");
	}
	while (rc >= 0 && (e = readdir(d))) {
		char path[1024];
		ssize_t len;
		unsigned off;

		if (e->d_name[0] == '.' || strlen(e->d_name) >= sizeof(v->bdf))
			continue;
		snprintf(path, sizeof(path), "%s/%s/config", pci_root, e->d_name);
		len = read_config(path, cfg);
		if (len <= 0 || !(off = find_dvsec(cfg, (size_t)len)))
			continue;
		rc = add_port(&v, &n, &cap, e->d_name, cfg + off);
	}
	closedir(d);
	free(cfg);
	if (rc < 0) {
		free(v);
		return rc;
	}
	if (n)
		qsort(v, n, sizeof(*v), port_cmp);
	*out = v;
	*n_out = n;
	return 0;
}
