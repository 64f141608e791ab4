/* cmd_list.c - `t410trace list`: what can be counted here (PMUs grouped by
 * Tegra410 kind and socket, their events with unit and description,
 * filters and bit ranges), the derived metrics of every kind (--metrics),
 * what an event string resolves to (--resolve), and which PCIE RC / root
 * port a PCI device sits on (--pci). A GLOB filters like `perf list
 * PATTERN`: PMUs whose name (or kind) matches are shown whole, otherwise
 * only the events whose name or pmu/event/ matches (metrics: by name or
 * kind); one that matches nothing is an error naming the closest name.
 *
 * Trade-offs: a thin presenter over the collector API (discovery, kinds,
 * event parser, PCI scan); it computes nothing itself, so what `list
 * --resolve` prints is exactly what `record` would open and what `list
 * --metrics` prints is the formula table the decoder compiles. Text output
 * is for people, --json for scripts (config values as hex strings: JSON
 * numbers lose bits above 2^53).
 */
#include "cli.h"
#include "collector/collector.h"
#include "util/util.h"

#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct list_opts {
	struct cli_source src;
	const char *resolve;
	const char *pci_root;
	const char *glob; /* GLOB: NULL lists everything */
	bool json, pci, metrics;
};

static const char usage_text[] =
	"usage: t410trace list [--sim[=SEED]] [--sysfs-root DIR] [--json] [GLOB]\n"
	"       t410trace list --metrics [--json] [GLOB]\n"
	"       t410trace list [--sim[=SEED]] [--sysfs-root DIR] [--json] --resolve SPEC\n"
	"       t410trace list --pci [--pci-root DIR] [--json]\n\n"
	"Lists the PMUs that can be counted: Tegra410 PMUs grouped by kind and\n"
	"socket, then the others, each with its perf type, cpumask, events (unit\n"
	"and description where the catalog has them) and filters (format fields\n"
	"with their bit ranges). GLOB (fnmatch, any case) keeps the PMUs whose\n"
	"name or kind matches and the events whose name or pmu/event/ matches, as\n"
	"`perf list PATTERN` does; a kind by its label or by its name in info and\n"
	"decode ('CMEM latency' or cmem_lat).\n\n"
	"  --sim[=SEED]      list a simulated Tegra410 (34 PMU instances)\n"
	"  --sysfs-root DIR  read PMUs from DIR instead of " T4_SYSFS_DEFAULT " (with\n"
	"                    --sim: DIR's Tegra410 PMUs, backed by the simulator)\n"
	"  --json            one JSON object instead of text\n"
	"  --metrics         every derived metric `decode` computes, per PMU kind: its\n"
	"                    formula, unit and what it means (GLOB: by name or kind)\n"
	"  --resolve SPEC    print what an event string expands to: for each\n"
	"                    counter its PMU, type, config/config1/config2, CPU\n"
	"  --pci             map PCI root ports to socket, RC and root port\n"
	"                    (NVIDIA DVSEC), to choose src_rp_mask / src_bdf\n"
	"  --pci-root DIR    read PCI devices from DIR (default /sys/bus/pci/devices)\n"
	"  --help            this text\n\n"
	"examples:\n"
	"  t410trace list --sim\n"
	"  t410trace list --sim 'mem_*'\n"
	"  t410trace list --metrics '*latency*'\n"
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
		{ "metrics", no_argument, NULL, 'm' },
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
	while ((c = cli_getopt(&g, argc, argv, ":h", longopts)) != -1) {
		switch (c) {
		case 's':
			if (cli_source_set_sim("list", &o->src, optarg))
				return 2;
			break;
		case 'r':
			if (cli_dir_arg("list", "--sysfs-root", optarg, &o->src.sysfs_root))
				return 2;
			break;
		case 'j': o->json = true; break;
		case 'm': o->metrics = true; break;
		case 'R': o->resolve = optarg; break;
		case 'p': o->pci = true; break;
		case 'P':
			if (cli_dir_arg("list", "--pci-root", optarg, &o->pci_root))
				return 2;
			o->pci = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return cli_opt_error("list", &g, argv, c);
		}
	}
	if (optind < argc)
		o->glob = argv[optind++];
	if (optind < argc)
		return cli_usage_error("list", "%s: unexpected argument (one GLOB at most)", argv[optind]);
	if (o->pci && (o->resolve || o->src.sim || o->src.sysfs_root || o->metrics || o->glob))
		return cli_usage_error("list", "--pci lists PCI devices; it takes no --resolve, --metrics, "
				       "GLOB, --sim or --sysfs-root");
	if (o->resolve && (o->metrics || o->glob))
		return cli_usage_error("list", "--resolve %s: it takes no --metrics or GLOB", o->resolve);
	if (o->metrics && (o->src.sim || o->src.sysfs_root))
		return cli_usage_error("list", "--metrics lists the formulas of every kind; it takes no "
				       "--sim or --sysfs-root");
	return -1; /* go on */
}

/* ---- text for the terminal ---------------------------------------------- */

/* A name or value read from sysfs may hold any bytes but '/' (a crafted
 * --sysfs-root, a driver's bug): shown as every output shows names
 * (util/text.c), so it can neither drive the terminal nor forge a line. */
#define SAFE_CAP (4 * 256 + 1) /* the longest field, cpumask[256], escaped */
typedef char safe_buf[SAFE_CAP];

static const char *safe(const char *s, char *buf)
{
	return t4_text(s, T4_TEXT_CONTROL, buf, SAFE_CAP);
}

/* A PMU, event or filter name as -e takes it (quoted where the syntax
 * would split it), safe for the terminal; in buf. */
static const char *as_typed(const char *name, char *buf)
{
	char q[2 * T4_SPEC_MAX + 3];
	const char *s = safe(t4_events_quote(q, sizeof(q), name) ? q : name, buf);

	if (s == q) /* clean: safe() gave q itself back */
		snprintf(buf, SAFE_CAP, "%s", q);
	return s == q ? buf : s;
}

/* ---- what GLOB selects ------------------------------------------------ */

static bool glob_hit(const char *glob, const char *s)
{
	return fnmatch(glob, s, FNM_CASEFOLD) == 0;
}

/* A kind's name as info, decode (--pmu, JSONL "kind") and the log write
 * it: "cmem_lat" for the label "CMEM latency". */
#define KIND_NAME_(id, num, name, t410) [id] = name,
static const char *const kind_names[] = { T4_DOMAIN_KINDS(KIND_NAME_) };
#undef KIND_NAME_

static const char *kind_name(enum t4_domain_kind id)
{
	return (size_t)id < sizeof(kind_names) / sizeof(kind_names[0]) ? kind_names[id] : "";
}

/* Does GLOB match a kind: its label or its name? */
static bool kind_hit(const char *glob, enum t4_domain_kind id, const char *label)
{
	return glob_hit(glob, label) || glob_hit(glob, kind_name(id));
}

/* A PMU shown whole: no GLOB, or its name or kind matches. */
static bool pmu_whole(const struct list_opts *o, const struct t4_pmu *p)
{
	return !o->glob || glob_hit(o->glob, p->name) ||
	       (p->kind && kind_hit(o->glob, p->kind->id, p->kind->label));
}

static bool event_shown(const struct list_opts *o, const struct t4_pmu *p, const char *ev)
{
	char full[2 * T4_NAME_MAX + 4];

	snprintf(full, sizeof(full), "%s/%s/", p->name, ev);
	return pmu_whole(o, p) || glob_hit(o->glob, ev) || glob_hit(o->glob, full);
}

/* A software event by its name or perf's short alias ("cs"). */
static bool sw_shown(const struct list_opts *o, const struct t4_pmu *p,
		     const struct t4_sw_event *sw)
{
	return event_shown(o, p, sw->name) || (sw->alt && event_shown(o, p, sw->alt));
}

/* The i-th event of p by name: its sysfs aliases and the catalog's events
 * sysfs lacks, then the software events known by name and their short
 * aliases; NULL past the last. */
static const char *pmu_event_at(const struct t4_pmu *p, size_t i)
{
	const struct t4_sw_event *sw;
	const char *ev = t4_pmu_event_name(p, i);
	size_t n = 0;

	if (ev)
		return ev;
	while (t4_pmu_event_name(p, n))
		n++;
	i -= n;
	if (strcmp(p->name, "software") || !(sw = t4_software_event(i / 2)))
		return NULL;
	return i % 2 == 0 ? sw->name : sw->alt ? sw->alt : sw->name;
}

static bool pmu_shown(const struct list_opts *o, const struct t4_pmu *p)
{
	const char *ev;

	if (pmu_whole(o, p))
		return true;
	for (size_t i = 0; (ev = pmu_event_at(p, i)); i++)
		if (event_shown(o, p, ev))
			return true;
	return false;
}

/* Names GLOB is compared with, for "did you mean": PMUs, their kinds, then
 * events (--metrics: kinds and metrics). */
struct names {
	const char **v;
	size_t n;
};

static int add_name(struct names *nm, size_t *cap, const char *s)
{
	if (nm->n == *cap) {
		size_t ncap = *cap ? 2 * *cap : 64;
		const char **v = realloc(nm->v, ncap * sizeof(*v));
		if (!v)
			return t4_err(ENOMEM, "out of memory");
		nm->v = v;
		*cap = ncap;
	}
	nm->v[nm->n++] = s;
	return 0;
}

/* Names compared in any case, as GLOB matches them. */
struct lowered {
	char (*v)[T4_NAME_MAX + 1];
};

static const char *lowered_at(const void *src, size_t i)
{
	return ((const struct lowered *)src)->v[i];
}

static void lower_into(char *dst, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len && i < T4_NAME_MAX; i++)
		dst[i] = (char)((s[i] >= 'A' && s[i] <= 'Z') ? s[i] - 'A' + 'a' : s[i]);
	dst[i] = '\0';
}

/* The name closest to GLOB, in any case and its '*'s at either end aside
 * ("*rd_byts*" is close to rd_bytes, "ucff" to the kind UCF); NULL when
 * none is close (or out of memory: then no hint). */
static const char *closest(const char *glob, const struct names *nm)
{
	char core[T4_NAME_MAX + 1];
	struct lowered lw = { calloc(nm->n + 1, sizeof(*lw.v)) };
	size_t b = strspn(glob, "*"), len = strlen(glob + b);
	const char *s;

	if (!lw.v)
		return NULL;
	while (len && glob[b + len - 1] == '*')
		len--;
	lower_into(core, glob + b, len);
	for (size_t i = 0; i < nm->n; i++)
		lower_into(lw.v[i], nm->v[i], strlen(nm->v[i]));
	s = core[0] ? t4_suggest(core, &lw, nm->n, lowered_at) : NULL;
	s = s ? nm->v[(size_t)((const char(*)[T4_NAME_MAX + 1])s - lw.v)] : NULL;
	free(lw.v);
	return s;
}

/* "GLOB: no PMU or event matches (did you mean X?)", exit 2. */
static int no_match(const char *glob, const char *what, const struct names *nm)
{
	char h[T4_NAME_MAX + 32];
	safe_buf g, m;

	fprintf(stderr, "t410trace: list %s: no %s matches%s\n", safe(glob, g), what,
		safe(t4_did_you_mean(h, sizeof(h), closest(glob, nm)), m));
	return 2;
}

static int pmus_no_match(const struct list_opts *o, const struct t4_pmu_set *set)
{
	struct names nm = { 0 };
	size_t cap = 0;
	const char *ev;
	int rc = 0;

	for (size_t i = 0; i < set->n && rc == 0; i++) {
		rc = add_name(&nm, &cap, set->pmus[i].name);
		if (rc == 0 && set->pmus[i].kind) /* a kind matches too */
			rc = add_name(&nm, &cap, set->pmus[i].kind->label);
		if (rc == 0 && set->pmus[i].kind)
			rc = add_name(&nm, &cap, kind_name(set->pmus[i].kind->id));
		for (size_t k = 0; rc == 0 && (ev = pmu_event_at(&set->pmus[i], k)); k++)
			rc = add_name(&nm, &cap, ev);
	}
	rc = rc < 0 ? t4_report(rc) : no_match(o->glob, "PMU or event", &nm);
	free(nm.v);
	return rc;
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

/* The PMUs GLOB selects, in listing order; *n of them. */
static const struct t4_pmu **sorted_pmus(const struct list_opts *o, const struct t4_pmu_set *set,
					 size_t *n)
{
	const struct t4_pmu **v = calloc(set->n + 1, sizeof(*v));

	*n = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; i < set->n; i++)
		if (pmu_shown(o, &set->pmus[i]))
			v[(*n)++] = &set->pmus[i];
	qsort(v, *n, sizeof(*v), pmu_order);
	return v;
}

/* "  [unit]  description" after an event's terms. */
static void print_event_about(const char *unit, const char *desc)
{
	if (unit && *unit)
		printf("  [%s]", unit);
	if (desc)
		printf("  %s", desc);
}

/* Events known by name rather than from sysfs aliases. */
static void print_builtin_events(const struct list_opts *o, const struct t4_pmu *p)
{
	const struct t4_sw_event *sw;
	bool header = false;

	if (!strcmp(p->name, "tracepoint")) {
		if (pmu_whole(o, p))
			printf("    events: subsys:name, e.g. sched:sched_switch (see <tracefs>/events)  [hits]\n");
		return;
	}
	if (strcmp(p->name, "software"))
		return;
	for (size_t i = 0; (sw = t4_software_event(i)); i++) {
		if (!sw_shown(o, p, sw))
			continue;
		if (!header)
			printf("    events (by name):\n");
		header = true;
		printf("      %-22s config=0x%llx%s%s", sw->name, (unsigned long long)sw->config,
		       sw->alt ? ", also " : "", sw->alt ? sw->alt : "");
		print_event_about(sw->unit, sw->desc);
		putchar('\n');
	}
}

/* "[clock]" after the kind's clock event. */
static void print_clock_mark(const struct t4_pmu *p, const char *name)
{
	if (p->kind && !strcmp(name, p->kind->clock_event))
		printf("  [clock]");
	putchar('\n');
}

static void print_alias(const struct t4_pmu *p, const struct t4_alias *a)
{
	safe_buf n, t, u;

	printf("      %-22s %s", as_typed(a->name, n), safe(a->terms, t));
	if (a->scale != 1.0)
		printf("  (scale %g)", a->scale);
	print_event_about(safe(t4_alias_unit(p, a), u), t4_alias_desc(p, a));
	print_clock_mark(p, a->name);
}

/* The catalog's events p takes by name without a sysfs alias. */
static void print_catalog_events(const struct list_opts *o, const struct t4_pmu *p)
{
	bool header = false;

	for (size_t i = 0; p->kind && i < p->kind->n_events; i++) {
		const struct t4_kind_event *ke = &p->kind->events[i];

		if (!t4_catalog_event(p, ke->name) || !event_shown(o, p, ke->name))
			continue;
		if (!header)
			printf("    events from the catalog (no sysfs alias of the Tegra410 driver):\n");
		header = true;
		printf("      %-22s event=0x%llx", ke->name, (unsigned long long)ke->config);
		print_event_about(ke->unit, ke->desc);
		print_clock_mark(p, ke->name);
	}
}

/* How a PMU was recognised, where its name does not say it. */
static void print_naming(const struct t4_pmu *p)
{
	static const char *const by[] = {
		[T4_NAMING_GENERIC] = "named by the generic arm_cspmu driver",
		[T4_NAMING_OTHER] = "named by another driver",
	};

	if (p->family[0])
		printf("    an NVIDIA PMU that is no Tegra410 kind (%s), known by its identifier\n",
		       p->family);
	if (!p->kind || p->naming == T4_NAMING_TEGRA410)
		return;
	printf("    a Tegra410 %s, known by its identifier; %s: socket %d by its CPUs", p->kind->label,
	       by[p->naming], p->socket);
	if (p->instance >= 0)
		printf(", RC %d by order", p->instance);
	putchar('\n');
}

static void print_pmu_text(const struct list_opts *o, const struct t4_pmu *p)
{
	bool whole = pmu_whole(o, p), header = false;
	char spec[96];
	safe_buf a, b;

	printf("  %s\n    type %u, cpumask %s", as_typed(p->name, a), p->type,
	       p->cpumask[0] ? safe(p->cpumask, b) : "(none: per CPU)");
	if (p->associated_cpus[0])
		printf(", associated_cpus %s", safe(p->associated_cpus, a));
	if (p->identifier[0])
		printf(", identifier %s", safe(p->identifier, a));
	if (p->peer[0])
		printf(", peer %s", safe(p->peer, a));
	putchar('\n');
	print_naming(p);
	print_builtin_events(o, p);
	for (size_t i = 0; i < p->n_aliases; i++) {
		if (!event_shown(o, p, p->aliases[i].name) || t4_catalog_event(p, p->aliases[i].name))
			continue;
		if (!header)
			printf("    events:\n");
		header = true;
		print_alias(p, &p->aliases[i]);
	}
	print_catalog_events(o, p);
	if (p->n_formats && whole)
		printf("    filters:\n");
	for (size_t i = 0; i < p->n_formats && whole; i++)
		printf("      %-22s %s\n", as_typed(p->formats[i].name, a),
		       t4_format_str(&p->formats[i], spec, sizeof(spec)));
}

static void print_text(const struct list_opts *o, const struct t4_pmu_set *set,
		       const struct t4_pmu **v, size_t n)
{
	const struct t4_kind *kind = NULL;
	int socket = -2;
	char layout[512], safe_layout[4 * sizeof(layout)], safe_root[4 * sizeof(set->root)];
	const char *root = t4_text(set->root, T4_TEXT_CONTROL, safe_root, sizeof(safe_root));
	safe_buf glob;

	if (o->glob)
		printf("%zu of %zu PMUs under %s match '%s'%s\n", n, set->n, root,
		       safe(o->glob, glob), set->simulated ? " (simulated Tegra410)" : "");
	else
		printf("%zu PMUs under %s%s\n", set->n, root,
		       set->simulated ? " (simulated Tegra410)" : "");
	printf("sysfs layout: %s\n", t4_text(t4_pmus_layout(set, layout, sizeof(layout)),
					    T4_TEXT_CONTROL, safe_layout, sizeof(safe_layout)));
	for (size_t i = 0; i < n; i++) {
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
		print_pmu_text(o, p);
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

/* ,"description":"..." or ,"description":null */
static void json_desc(const char *desc)
{
	printf(",\"description\":");
	if (desc)
		t4_json_str(stdout, desc);
	else
		printf("null");
}

/* One object of a PMU's "events" array; from: "sysfs", "catalog" or
 * "builtin". */
static void json_event(bool *any, const char *name, const char *terms, double scale,
		       const char *unit, const char *desc, const char *from)
{
	printf("%s{", *any ? "," : "");
	*any = true;
	json_kv_str("name", name, true);
	json_kv_str("terms", terms, true);
	printf("\"scale\":%.17g,", scale);
	json_kv_str("unit", unit, false);
	json_desc(desc);
	printf(",\"from\":\"%s\"}", from);
}

static const char *const namings[] = {
	[T4_NAMING_NONE] = "",
	[T4_NAMING_TEGRA410] = "tegra410",
	[T4_NAMING_GENERIC] = "generic",
	[T4_NAMING_OTHER] = "other",
};

static void print_pmu_json(const struct list_opts *o, const struct t4_pmu *p)
{
	const struct t4_sw_event *sw;
	bool any = false;
	char spec[96], terms[64];

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
	json_kv_str("naming", namings[p->naming], true);
	json_kv_str("family", p->family, true);
	printf("\"simulated\":%s,\"events\":[", p->simulated ? "true" : "false");
	for (size_t i = 0; i < p->n_aliases; i++) {
		const struct t4_alias *a = &p->aliases[i];

		if (event_shown(o, p, a->name) && !t4_catalog_event(p, a->name))
			json_event(&any, a->name, a->terms, a->scale, t4_alias_unit(p, a),
				   t4_alias_desc(p, a), "sysfs");
	}
	for (size_t i = 0; p->kind && i < p->kind->n_events; i++) {
		const struct t4_kind_event *ke = &p->kind->events[i];

		if (!t4_catalog_event(p, ke->name) || !event_shown(o, p, ke->name))
			continue;
		snprintf(terms, sizeof(terms), "event=0x%llx", (unsigned long long)ke->config);
		json_event(&any, ke->name, terms, 1, ke->unit, ke->desc, "catalog");
	}
	/* software events are known by name, not in sysfs */
	for (size_t i = 0; !strcmp(p->name, "software") && (sw = t4_software_event(i)); i++) {
		if (!sw_shown(o, p, sw))
			continue;
		snprintf(terms, sizeof(terms), "config=0x%llx", (unsigned long long)sw->config);
		json_event(&any, sw->name, terms, 1, sw->unit, sw->desc, "builtin");
	}
	printf("],\"formats\":[");
	for (size_t i = 0; i < p->n_formats && pmu_whole(o, p); i++) {
		printf("%s{", i ? "," : "");
		json_kv_str("name", p->formats[i].name, true);
		json_kv_str("spec", t4_format_str(&p->formats[i], spec, sizeof(spec)), false);
		putchar('}');
	}
	printf("]}");
}

static void print_json(const struct list_opts *o, const struct t4_pmu_set *set,
		       const struct t4_pmu **v, size_t n)
{
	printf("{");
	json_kv_str("root", set->root, true);
	printf("\"simulated\":%s,\"pmus\":[", set->simulated ? "true" : "false");
	char layout[512];

	for (size_t i = 0; i < n; i++) {
		if (i)
			putchar(',');
		print_pmu_json(o, v[i]);
	}
	printf("],");
	json_kv_str("layout", t4_pmus_layout(set, layout, sizeof(layout)), false);
	printf("}\n");
}

/* ---- --metrics -------------------------------------------------------- */

static bool metric_shown(const struct list_opts *o, const struct t4_metric_set *ms,
			 const struct t4_formula *f)
{
	return !o->glob || glob_hit(o->glob, f->name) || kind_hit(o->glob, ms->id, ms->label);
}

static void print_metric_text(const struct t4_formula *f)
{
	printf("  %s = %s  [%s]%s\n      %s\n", f->name, f->expr, f->unit,
	       f->per_task ? "  (per-task counting only)" : "", f->desc);
}

static void print_metric_json(const struct t4_metric_set *ms, const struct t4_formula *f,
			      bool comma)
{
	printf("%s{", comma ? "," : "");
	json_kv_str("kind", ms->label, true);
	json_kv_str("name", f->name, true);
	json_kv_str("unit", f->unit, true);
	json_kv_str("formula", f->expr, true);
	json_kv_str("description", f->desc, true);
	printf("\"headline\":%s,\"per_task\":%s,\"pattern\":%s}", f->brief ? "true" : "false",
	       f->per_task ? "true" : "false", ms->pattern ? "true" : "false");
}

/* Every metric GLOB selects, or an error naming the closest metric. */
static int list_metrics(const struct list_opts *o)
{
	struct t4_metric_set ms;
	struct names nm = { 0 };
	size_t cap = 0, shown = 0;
	int rc = 0;

	for (size_t i = 0; t4_metric_set_at(i, &ms) && rc == 0; i++) {
		rc = add_name(&nm, &cap, ms.label); /* a kind matches too */
		if (rc == 0)
			rc = add_name(&nm, &cap, kind_name(ms.id));
		for (size_t k = 0; k < ms.n && rc == 0; k++) {
			shown += metric_shown(o, &ms, &ms.formulas[k]);
			rc = add_name(&nm, &cap, ms.formulas[k].name);
		}
	}
	if (rc < 0 || !shown) {
		rc = rc < 0 ? t4_report(rc) : no_match(o->glob, "metric", &nm);
		free(nm.v);
		return rc;
	}
	free(nm.v);
	if (o->json)
		printf("{\"metrics\":[");
	else
		printf("Derived metrics, per PMU kind: `decode` computes them per interval, per phase\n"
		       "and per bin; a metric whose events were not recorded is absent.\n"
		       "Units of the events: `t410trace list`.\n");
	shown = 0;
	for (size_t i = 0; t4_metric_set_at(i, &ms); i++) {
		bool header = false;
		for (size_t k = 0; k < ms.n; k++) {
			const struct t4_formula *f = &ms.formulas[k];
			if (!metric_shown(o, &ms, f))
				continue;
			if (o->json) {
				print_metric_json(&ms, f, shown++ > 0);
				continue;
			}
			if (!header)
				printf("\n%s%s\n", ms.label,
				       ms.pattern ? " (one per client and engine found)" : "");
			header = true;
			print_metric_text(f);
		}
	}
	if (o->json)
		printf("]}\n");
	return 0;
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
	struct t4_domain_set ds;
	int rc = t4_events_parse(&l, set, spec);

	/* grouped as record groups them, so its refusals are ours too */
	if (rc >= 0 && (rc = t4_domains_build(&ds, &l)) >= 0)
		t4_domains_free(&ds);
	if (rc < 0) {
		t4_evlist_free(&l);
		return t4_report(rc);
	}
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
			safe_buf a, b;

			printf("%s  type=%u config=0x%llx config1=0x%llx config2=0x%llx cpu=%d  %s",
			       safe(c->pmu->name, a), c->type, (unsigned long long)c->config,
			       (unsigned long long)c->config1, (unsigned long long)c->config2,
			       c->cpu, safe(c->spec, b));
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
	size_t n = 0;
	int rc = parse_opts(argc, argv, &o);

	if (rc >= 0)
		return rc;
	if (o.pci)
		return cli_stdout_done(list_pci(&o));
	if (o.metrics)
		return cli_stdout_done(list_metrics(&o));
	rc = cli_source_open(&o.src);
	if (rc < 0) {
		rc = t4_report(rc);
		goto cleanup;
	}
	if (o.resolve) {
		rc = resolve(&o.src.pmus, o.resolve, o.json);
		goto cleanup;
	}
	v = sorted_pmus(&o, &o.src.pmus, &n);
	if (!v) {
		rc = t4_report(t4_err(ENOMEM, "out of memory"));
		goto cleanup;
	}
	if (o.glob && !n) {
		rc = pmus_no_match(&o, &o.src.pmus);
		goto cleanup;
	}
	if (o.json)
		print_json(&o, &o.src.pmus, v, n);
	else
		print_text(&o, &o.src.pmus, v, n);
	rc = 0;
cleanup:
	free(v);
	cli_source_close(&o.src);
	return cli_stdout_done(rc);
}
