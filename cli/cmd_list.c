/* cmd_list.c - `t410trace list`: what can be counted here (PMUs grouped by
 * Tegra410 kind and socket, their events, filters and bit ranges), what an
 * event string resolves to (--resolve), and which PCIE RC / root port a PCI
 * device sits on (--pci).
 *
 * Trade-offs: a thin presenter over the collector API (discovery, kinds,
 * event parser, PCI scan); it computes nothing itself, so what `list
 * --resolve` prints is exactly what `record` would open. Text output is for
 * people, --json for scripts (config values as hex strings: JSON numbers
 * lose bits above 2^53).
 */
#include "cli.h"
#include "collector/collector.h"
#include "util/util.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct list_opts {
	struct cli_source src;
	const char *resolve;
	const char *pci_root;
	bool json, pci;
};

static const char usage_text[] =
	"usage: t410trace list [--sim[=SEED]] [--sysfs-root DIR] [--json]\n"
	"                      [--resolve SPEC] [--pci [--pci-root DIR]]\n\n"
	"Lists the PMUs that can be counted: Tegra410 PMUs grouped by kind and\n"
	"socket, then the others, each with its perf type, cpumask, events and\n"
	"filters (format fields with their bit ranges).\n\n"
	"  --sim[=SEED]      list a simulated Tegra410 (34 PMU instances)\n"
	"  --sysfs-root DIR  read PMUs from DIR instead of " T4_SYSFS_DEFAULT "\n"
	"  --json            one JSON object instead of text\n"
	"  --resolve SPEC    print what an event string expands to: for each\n"
	"                    counter its PMU, type, config/config1/config2, CPU\n"
	"  --pci             map PCI root ports to socket, RC and root port\n"
	"                    (NVIDIA DVSEC), to choose src_rp_mask / src_bdf\n"
	"  --pci-root DIR    read PCI devices from DIR (default /sys/bus/pci/devices)\n"
	"  --help            this text\n\n"
	"examples:\n"
	"  t410trace list --sim\n"
	"  t410trace list --sim --resolve 'nvidia_pcie_pmu_0_rc_4/event=0x4,src_bdf=0x0180,src_bdf_en=0x1/'\n"
	"  t410trace list --resolve 'cpu-clock,msr/tsc/'\n"
	"Event syntax: docs/EVENTS.md.\n";

/* ---- options ---------------------------------------------------------- */

static int parse_opts(int argc, char **argv, struct list_opts *o)
{
	static const struct option longopts[] = {
		{ "sim", optional_argument, NULL, 's' },
		{ "sysfs-root", required_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'j' },
		{ "resolve", required_argument, NULL, 'R' },
		{ "pci", no_argument, NULL, 'p' },
		{ "pci-root", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct cli_getopt g;
	int c;

	optind = 0; /* GNU: full reset, argv[0] is the subcommand */
	opterr = 0;
	while ((c = cli_getopt(&g, argc, argv, "+:h", longopts)) != -1) {
		switch (c) {
		case 's':
			if (cli_source_set_sim("list", &o->src, optarg))
				return 2;
			break;
		case 'r': o->src.sysfs_root = optarg; break;
		case 'j': o->json = true; break;
		case 'R': o->resolve = optarg; break;
		case 'p': o->pci = true; break;
		case 'P': o->pci = true; o->pci_root = optarg; break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return cli_opt_error("list", &g, argv, c);
		}
	}
	if (optind < argc)
		return cli_usage_error("list", "%s: unexpected argument", argv[optind]);
	if (cli_source_check("list", &o->src))
		return 2;
	if (o->pci && (o->resolve || o->src.sim || o->src.sysfs_root))
		return cli_usage_error("list", "--pci lists PCI devices; it takes no --resolve, --sim or --sysfs-root");
	return -1; /* go on */
}

/* ---- PMU listing ------------------------------------------------------ */

static size_t kind_rank(const struct t4_kind *k)
{
	size_t n;
	const struct t4_kind *all = t4_kinds(&n);

	return k ? (size_t)(k - all) : n;
}

static int pmu_order(const void *a, const void *b)
{
	const struct t4_pmu *x = *(const struct t4_pmu *const *)a;
	const struct t4_pmu *y = *(const struct t4_pmu *const *)b;
	size_t kx = kind_rank(x->kind), ky = kind_rank(y->kind);

	if (kx != ky)
		return kx < ky ? -1 : 1;
	if (x->socket != y->socket)
		return x->socket < y->socket ? -1 : 1;
	if (x->instance != y->instance)
		return x->instance < y->instance ? -1 : 1;
	return strcmp(x->name, y->name);
}

static const struct t4_pmu **sorted_pmus(const struct t4_pmu_set *set)
{
	const struct t4_pmu **v = calloc(set->n + 1, sizeof(*v));

	if (!v)
		return NULL;
	for (size_t i = 0; i < set->n; i++)
		v[i] = &set->pmus[i];
	qsort(v, set->n, sizeof(*v), pmu_order);
	return v;
}

/* Events known by name rather than from sysfs aliases. */
static void print_builtin_events(const struct t4_pmu *p)
{
	const char *name, *alt;
	uint64_t config;

	if (!strcmp(p->name, "tracepoint")) {
		printf("    events: subsys:name, e.g. sched:sched_switch (see <tracefs>/events)\n");
		return;
	}
	if (strcmp(p->name, "software"))
		return;
	printf("    events (by name):\n");
	for (size_t i = 0; (name = t4_software_event(i, &alt, &config)); i++)
		printf("      %-22s config=0x%llx%s%s\n", name, (unsigned long long)config,
		       alt ? ", also " : "", alt ? alt : "");
}

static void print_pmu_text(const struct t4_pmu *p)
{
	char spec[96];

	printf("  %s\n    type %u, cpumask %s", p->name, p->type, p->cpumask[0] ? p->cpumask : "(none: per CPU)");
	if (p->associated_cpus[0])
		printf(", associated_cpus %s", p->associated_cpus);
	if (p->identifier[0])
		printf(", identifier %s", p->identifier);
	if (p->peer[0])
		printf(", peer %s", p->peer);
	putchar('\n');
	print_builtin_events(p);
	if (p->n_aliases)
		printf("    events:\n");
	for (size_t i = 0; i < p->n_aliases; i++) {
		const struct t4_alias *a = &p->aliases[i];
		printf("      %-22s %s", a->name, a->terms);
		if (a->scale != 1.0 || a->unit[0])
			printf("  (scale %g%s%s)", a->scale, a->unit[0] ? ", unit " : "", a->unit);
		if (p->kind && !strcmp(a->name, p->kind->clock_event))
			printf("  [clock]");
		putchar('\n');
	}
	if (p->n_formats)
		printf("    filters:\n");
	for (size_t i = 0; i < p->n_formats; i++)
		printf("      %-22s %s\n", p->formats[i].name,
		       t4_format_str(&p->formats[i], spec, sizeof(spec)));
}

static void print_text(const struct t4_pmu_set *set, const struct t4_pmu **v)
{
	const struct t4_kind *kind = NULL;
	int socket = -2;

	printf("%zu PMUs under %s%s\n", set->n, set->root,
	       set->simulated ? " (simulated Tegra410)" : "");
	for (size_t i = 0; i < set->n; i++) {
		const struct t4_pmu *p = v[i];
		if (i == 0 || p->kind != kind || (p->kind && p->socket != socket)) {
			if (p->kind)
				printf("\n%s, socket %d%s\n", p->kind->label, p->socket,
				       set->simulated ? " (simulated)" : "");
			else
				printf("\nOther PMUs\n");
			kind = p->kind;
			socket = p->socket;
		}
		print_pmu_text(p);
	}
}

static void json_kv_str(const char *key, const char *val, bool comma)
{
	t4_json_str(stdout, key);
	putchar(':');
	t4_json_str(stdout, val);
	if (comma)
		putchar(',');
}

static void print_pmu_json(const struct t4_pmu *p)
{
	char spec[96];

	putchar('{');
	json_kv_str("name", p->name, true);
	printf("\"kind\":");
	if (p->kind)
		t4_json_str(stdout, p->kind->label);
	else
		printf("null");
	printf(",\"socket\":%d,\"instance\":%d,\"type\":%u,\"cpu\":%d,", p->socket, p->instance,
	       p->type, p->cpu);
	json_kv_str("cpumask", p->cpumask, true);
	json_kv_str("associated_cpus", p->associated_cpus, true);
	json_kv_str("identifier", p->identifier, true);
	json_kv_str("peer", p->peer, true);
	printf("\"simulated\":%s,\"events\":[", p->simulated ? "true" : "false");
	for (size_t i = 0; i < p->n_aliases; i++) {
		const struct t4_alias *a = &p->aliases[i];
		printf("%s{", i ? "," : "");
		json_kv_str("name", a->name, true);
		json_kv_str("terms", a->terms, true);
		printf("\"scale\":%.17g,", a->scale);
		json_kv_str("unit", a->unit, false);
		putchar('}');
	}
	if (!strcmp(p->name, "software")) { /* events known by name, not in sysfs */
		const char *name, *alt;
		uint64_t config;
		for (size_t i = 0; (name = t4_software_event(i, &alt, &config)); i++) {
			printf("%s{", i || p->n_aliases ? "," : "");
			json_kv_str("name", name, true);
			printf("\"terms\":\"config=0x%llx\",\"scale\":1,", (unsigned long long)config);
			json_kv_str("unit", config <= 1 ? "ns" : "", false);
			putchar('}');
		}
	}
	printf("],\"formats\":[");
	for (size_t i = 0; i < p->n_formats; i++) {
		printf("%s{", i ? "," : "");
		json_kv_str("name", p->formats[i].name, true);
		json_kv_str("spec", t4_format_str(&p->formats[i], spec, sizeof(spec)), false);
		putchar('}');
	}
	printf("]}");
}

static void print_json(const struct t4_pmu_set *set, const struct t4_pmu **v)
{
	printf("{");
	json_kv_str("root", set->root, true);
	printf("\"simulated\":%s,\"pmus\":[", set->simulated ? "true" : "false");
	for (size_t i = 0; i < set->n; i++) {
		if (i)
			putchar(',');
		print_pmu_json(v[i]);
	}
	printf("]}\n");
}

/* ---- --resolve -------------------------------------------------------- */

static void print_counter_json(const struct t4_counter *c)
{
	printf("{");
	json_kv_str("pmu", c->pmu->name, true);
	json_kv_str("name", c->name, true);
	json_kv_str("spec", c->spec, true);
	printf("\"type\":%u,\"config\":\"0x%llx\",\"config1\":\"0x%llx\",\"config2\":\"0x%llx\","
	       "\"cpu\":%d,\"group\":%d,\"is_clock\":%s,\"scale\":%.17g,",
	       c->type, (unsigned long long)c->config, (unsigned long long)c->config1,
	       (unsigned long long)c->config2, c->cpu, c->group, c->is_clock ? "true" : "false",
	       c->scale);
	json_kv_str("unit", c->unit, false);
	putchar('}');
}

static int resolve(const struct t4_pmu_set *set, const char *spec, bool json)
{
	struct t4_evlist l = { 0 };
	int rc = t4_events_parse(&l, set, spec);

	if (rc < 0)
		return t4_report(rc);
	if (json) {
		printf("{\"simulated\":%s,\"counters\":[", set->simulated ? "true" : "false");
		for (size_t i = 0; i < l.n; i++) {
			if (i)
				putchar(',');
			print_counter_json(&l.v[i]);
		}
		printf("]}\n");
	} else {
		if (set->simulated)
			printf("# simulated Tegra410\n");
		for (size_t i = 0; i < l.n; i++) {
			const struct t4_counter *c = &l.v[i];
			printf("%s  type=%u config=0x%llx config1=0x%llx config2=0x%llx cpu=%d  %s",
			       c->pmu->name, c->type, (unsigned long long)c->config,
			       (unsigned long long)c->config1, (unsigned long long)c->config2,
			       c->cpu, c->spec);
			if (c->group >= 0)
				printf("  group=%d", c->group);
			if (c->is_clock)
				printf("  clock");
			putchar('\n');
		}
	}
	t4_evlist_free(&l);
	return 0;
}

/* ---- --pci ------------------------------------------------------------ */

static int list_pci(const struct list_opts *o)
{
	struct t4_pci_port *v;
	size_t n;
	int rc = t4_pci_scan(o->pci_root, &v, &n);

	if (rc < 0)
		return t4_report(rc);
	if (o->json) {
		printf("{\"ports\":[");
		for (size_t i = 0; i < n; i++) {
			printf("%s{", i ? "," : "");
			json_kv_str("bdf", v[i].bdf, true);
			printf("\"segment\":%u,\"bus\":%u,\"socket\":%u,\"rc\":%u,\"rp\":%u}",
			       v[i].segment, v[i].bus, v[i].socket, v[i].rc, v[i].rp);
		}
		printf("]}\n");
	} else if (n == 0) {
		printf("no NVIDIA root ports (DVSEC vendor 10de, ID 4) under %s\n",
		       o->pci_root ? o->pci_root : "/sys/bus/pci/devices");
	} else {
		printf("%-14s %-7s %-3s %-6s %-3s %-3s %s\n", "BDF", "Segment", "Bus", "Socket",
		       "RC", "RP", "PCIE PMU and root-port filter");
		for (size_t i = 0; i < n; i++)
			printf("%-14s %02x      %02x  %-6u %-3u %-3u nvidia_pcie_pmu_%u_rc_%u/src_rp_mask=0x%x/\n",
			       v[i].bdf, v[i].segment, v[i].bus, v[i].socket, v[i].rc, v[i].rp,
			       v[i].socket, v[i].rc, v[i].rp < 8 ? 1u << v[i].rp : 0);
	}
	free(v);
	return 0;
}

/* ---- entry ------------------------------------------------------------- */

int cmd_list(int argc, char **argv)
{
	struct list_opts o = { 0 };
	const struct t4_pmu **v = NULL;
	int rc = parse_opts(argc, argv, &o);

	if (rc >= 0)
		return rc;
	if (o.pci)
		return list_pci(&o);
	rc = cli_source_open(&o.src);
	if (rc < 0) {
		rc = t4_report(rc);
		goto cleanup;
	}
	if (o.resolve) {
		rc = resolve(&o.src.pmus, o.resolve, o.json);
		goto cleanup;
	}
	v = sorted_pmus(&o.src.pmus);
	if (!v) {
		rc = t4_report(t4_err(ENOMEM, "out of memory"));
		goto cleanup;
	}
	if (o.json)
		print_json(&o.src.pmus, v);
	else
		print_text(&o.src.pmus, v);
	rc = 0;
cleanup:
	free(v);
	cli_source_close(&o.src);
	return cli_stdout_done(rc);
}
