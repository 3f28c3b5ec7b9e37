// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * maglev-decap: the backend side's loader for bpf/maglev_decap.bpf.c. It
 * attaches the program (embedded as a skeleton) to an interface, pins its
 * maps so a later call reconfigures or reads them, and sets strict mode
 * (include/maglev_decap.h): the outer sources allowed (the balancers'
 * prefixes) and the outer destinations that are this host's. See
 * maglev-decap(8).
 *
 * A configuration is parsed whole before anything changes, so a bad argument
 * changes nothing. New entries are added before stale ones go and the flags
 * are written last, so a reconfiguration never drops what both the old and
 * the new configuration accept.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpffs.h"
#include "maglev_decap.h"
#include "maglev_maps.h"
#include "maglev_decap.skel.h"

#define PIN_BASE "/sys/fs/bpf/maglev-decap"

static const char *const counter_names[MAGLEV_DECAP_MAX] = {
	[MAGLEV_DECAP_DONE] = "decapsulated",
	[MAGLEV_DECAP_PASS] = "passed",
	[MAGLEV_DECAP_DROP_ECN] = "drop_ecn",
	[MAGLEV_DECAP_SC_LOCAL] = "sc_local",
	[MAGLEV_DECAP_SC_SYN] = "sc_syn",
	[MAGLEV_DECAP_SC_COOKIE] = "sc_cookie",
	[MAGLEV_DECAP_SC_REDIRECT] = "sc_redirect",
	[MAGLEV_DECAP_SC_ONCE] = "sc_once",
	[MAGLEV_DECAP_SC_NO_REDIRECT] = "sc_no_redirect",
	[MAGLEV_DECAP_DROP_SRC] = "drop_src",
	[MAGLEV_DECAP_DROP_DST] = "drop_dst",
	[MAGLEV_DECAP_SC_NO_PORTS] = "sc_no_ports",
	[MAGLEV_DECAP_SC_NOT_ALLOWED] = "sc_not_allowed",
};

/* The maps as pinned, by the program's own names. */
static const char *const pinned_maps[] = {"maglev_decap_cfg", "maglev_dcp_src", "maglev_dcp_dst",
					  "maglev_decap_cnt"};

struct conf {
	int gue_port; /* -1: leave as is */
	int open;     /* --open: strict off, lists emptied */
	int nsrc, ndst, have_src, have_dst;
	struct maglev_decap_prefix src[MAGLEV_DECAP_MAX_PREFIXES];
	struct maglev_decap_addr dst[MAGLEV_DECAP_MAX_ADDRS];
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: maglev-decap COMMAND DEV [options]\n"
		"Backend-side decapsulation of what maglevd sends (IPIP, GUE).\n"
		"\n"
		"Commands:\n"
		"  attach DEV [options]  load the program, attach it to DEV, pin its maps, "
		"configure\n"
		"  set DEV [options]     change the configuration of the program on DEV\n"
		"  show DEV              configuration and counters\n"
		"  detach DEV            detach the program and remove its pins\n"
		"\n"
		"Options:\n"
		"  --allow-src PREFIX    strict source: decapsulate only from this prefix (IPv4 "
		"or\n"
		"                        IPv6, repeatable; the balancers' outer source prefixes, "
		"and\n"
		"                        the backends' with second chance); replaces the list\n"
		"  --own-dst ADDR|auto   strict destination: decapsulate only packets to this "
		"address\n"
		"                        (repeatable; auto: DEV's addresses); replaces the list\n"
		"  --open                no strict checks: decapsulate from anyone, and send no\n"
		"                        second-chance packet on (attach needs this or "
		"--allow-src)\n"
		"  --gue-port PORT       GUE port to decapsulate (default %d)\n"
		"  --mode native|generic XDP mode for attach (default native)\n"
		"  --pin DIR             pin dir (default " PIN_BASE "/DEV; DEV@netns-INODE\n"
		"                        outside the host's network namespace)\n"
		"  -h, --help            this help\n"
		"\n"
		"Without --allow-src and --own-dst the program is open: any host that reaches DEV\n"
		"can deliver packets with any inner source, so attach refuses to start so unless\n"
		"told --open (or the pinned maps are already strict). Second chance sends a "
		"packet\n"
		"on only to a previous owner inside an --allow-src prefix: never when open.\n"
		"See maglev-decap(8).\n",
		MAGLEV_GUE_PORT_DEFAULT);
}

static int die(const char *fmt, const char *a)
{
	fprintf(stderr, "maglev-decap: ");
	fprintf(stderr, fmt, a);
	fputc('\n', stderr);
	return 1;
}

/* "ADDR[/LEN]" into an LPM key (IPv4 mapped). 0 or -1. */
static int parse_prefix(const char *s, struct maglev_decap_prefix *k)
{
	char buf[INET6_ADDRSTRLEN + 8], *slash, *end;
	long plen = -1;
	struct in_addr a4;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (slash) {
		*slash = 0;
		errno = 0;
		plen = strtol(slash + 1, &end, 10);
		if (errno || end == slash + 1 || *end || plen < 0)
			return -1;
	}
	memset(k, 0, sizeof(*k));
	if (inet_pton(AF_INET, buf, &a4) == 1) {
		if (plen > 32)
			return -1;
		maglev_decap_v4mapped(k->addr, a4.s_addr);
		k->prefixlen = 96 + (uint32_t)(plen < 0 ? 32 : plen);
	} else if (inet_pton(AF_INET6, buf, k->addr) == 1) {
		if (plen > 128)
			return -1;
		k->prefixlen = (uint32_t)(plen < 0 ? 128 : plen);
	} else {
		return -1;
	}
	/* Host bits cleared, as the trie compares only prefixlen bits. */
	for (uint32_t bit = k->prefixlen; bit < 128; bit++)
		((uint8_t *)k->addr)[bit / 8] &= (uint8_t) ~(0x80 >> (bit % 8));
	return 0;
}

/* DEV's addresses into c->dst. 0 or -1. */
static int own_addrs(const char *dev, struct conf *c)
{
	struct ifaddrs *ifa, *i;
	int n = 0;

	if (getifaddrs(&ifa))
		return -1;
	for (i = ifa; i; i = i->ifa_next) {
		struct maglev_decap_addr *a;

		if (!i->ifa_addr || strcmp(i->ifa_name, dev))
			continue;
		if (i->ifa_addr->sa_family != AF_INET && i->ifa_addr->sa_family != AF_INET6)
			continue;
		if (c->ndst == MAGLEV_DECAP_MAX_ADDRS)
			break;
		a = &c->dst[c->ndst++];
		if (i->ifa_addr->sa_family == AF_INET)
			maglev_decap_v4mapped(a->addr,
					      ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr);
		else
			memcpy(a->addr, &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, 16);
		n++;
	}
	freeifaddrs(ifa);
	return n ? 0 : -1;
}

static int parse_addr(const char *s, struct maglev_decap_addr *a)
{
	struct in_addr a4;

	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, s, &a4) == 1) {
		maglev_decap_v4mapped(a->addr, a4.s_addr);
		return 0;
	}
	return inet_pton(AF_INET6, s, a->addr) == 1 ? 0 : -1;
}

/* Make the map's keys exactly keys[0..n): add, then delete the rest. */
static int sync_keys(int fd, const void *keys, int n, size_t ksz)
{
	unsigned char cur[sizeof(struct maglev_decap_prefix)], next[sizeof(cur)];
	unsigned char stale[MAGLEV_DECAP_MAX_PREFIXES][sizeof(cur)];
	uint8_t one = 1;
	int i, j, nstale = 0, r;

	for (i = 0; i < n; i++)
		if (bpf_map_update_elem(fd, (const char *)keys + i * ksz, &one, 0))
			return -errno;
	for (r = bpf_map_get_next_key(fd, NULL, next); !r;
	     r = bpf_map_get_next_key(fd, cur, next)) {
		memcpy(cur, next, ksz);
		for (j = 0; j < n; j++)
			if (!memcmp(cur, (const char *)keys + j * ksz, ksz))
				break;
		if (j == n && nstale < MAGLEV_DECAP_MAX_PREFIXES)
			memcpy(stale[nstale++], cur, ksz);
	}
	for (i = 0; i < nstale; i++)
		if (bpf_map_delete_elem(fd, stale[i]) && errno != ENOENT)
			return -errno;
	return 0;
}

/*
 * The default pin dir: PIN_BASE/DEV in the host's network namespace (pid
 * 1's), and PIN_BASE/DEV@netns-INODE in any other, so that two namespaces'
 * eth0 (which share the host's bpffs) never share pins.
 */
static void default_pin(const char *dev, char *buf, size_t len)
{
	struct stat self, init;

	/* Not known to be the host's (pid 1's namespace unreadable): suffixed. */
	if (!stat("/proc/self/ns/net", &self) &&
	    (stat("/proc/1/ns/net", &init) || self.st_ino != init.st_ino))
		snprintf(buf, len, "%s/%s@netns-%llu", PIN_BASE, dev,
			 (unsigned long long)self.st_ino);
	else
		snprintf(buf, len, "%s/%s", PIN_BASE, dev);
}

/* pin/name into path (PATH_MAX); -1 if too long. */
static int pin_path(char *path, const char *pin, const char *name)
{
	int n = snprintf(path, PATH_MAX, "%s/%s", pin, name);

	return n < 0 || n >= PATH_MAX ? -1 : 0;
}

static int pinned_fd(const char *pin, const char *name)
{
	char path[PATH_MAX];

	if (pin_path(path, pin, name))
		return -1;
	return bpf_obj_get(path);
}

static int apply(const char *pin, const struct conf *c)
{
	int cfg = pinned_fd(pin, "maglev_decap_cfg"), src = pinned_fd(pin, "maglev_dcp_src");
	int dst = pinned_fd(pin, "maglev_dcp_dst"), r = 0;
	struct maglev_decap_config v = {};
	uint32_t zero = 0;

	if (cfg < 0 || src < 0 || dst < 0) {
		r = die("no decap program pinned in %s (attach it first)", pin);
		goto out;
	}
	if (bpf_map_lookup_elem(cfg, &zero, &v)) {
		r = die("cannot read %s/maglev_decap_cfg", pin);
		goto out;
	}
	if (c->gue_port >= 0)
		v.gue_port = htons((uint16_t)c->gue_port);
	if (c->open) {
		v.flags = 0;
		/* Flags first: nothing is dropped while the lists empty. */
		if (bpf_map_update_elem(cfg, &zero, &v, 0) ||
		    sync_keys(src, NULL, 0, sizeof(c->src[0])) ||
		    sync_keys(dst, NULL, 0, sizeof(c->dst[0])))
			r = die("cannot write the maps in %s", pin);
		goto out;
	}
	if ((c->have_src && sync_keys(src, c->src, c->nsrc, sizeof(c->src[0]))) ||
	    (c->have_dst && sync_keys(dst, c->dst, c->ndst, sizeof(c->dst[0])))) {
		r = die("cannot write the maps in %s", pin);
		goto out;
	}
	if (c->have_src)
		v.flags |= MAGLEV_DECAP_F_STRICT_SRC;
	if (c->have_dst)
		v.flags |= MAGLEV_DECAP_F_STRICT_DST;
	if (bpf_map_update_elem(cfg, &zero, &v, 0))
		r = die("cannot write %s/maglev_decap_cfg", pin);
	if (!r && !(v.flags & MAGLEV_DECAP_F_STRICT_SRC))
		fprintf(stderr,
			"maglev-decap: warning: no --allow-src: packets are decapsulated from "
			"any source (open relay) and second chance sends nothing on, see "
			"maglev-decap(8)\n");
out:
	if (cfg >= 0)
		close(cfg);
	if (src >= 0)
		close(src);
	if (dst >= 0)
		close(dst);
	return r;
}

/* Whether the maps pinned in pin already say strict source (a re-attach). */
static bool pinned_strict_src(const char *pin)
{
	struct maglev_decap_config v = {};
	int fd = pinned_fd(pin, "maglev_decap_cfg");
	uint32_t zero = 0;
	bool strict;

	if (fd < 0)
		return false;
	strict = !bpf_map_lookup_elem(fd, &zero, &v) && (v.flags & MAGLEV_DECAP_F_STRICT_SRC);
	close(fd);
	return strict;
}

static int attach(const char *dev, const char *pin, int mode, const struct conf *c)
{
	struct maglev_decap *skel;
	char path[PATH_MAX];
	int ifindex = (int)if_nametoindex(dev), r;
	bool mounted;
	size_t i;

	if (!ifindex)
		return die("no interface %s", dev);
	/* An open relay only when asked for: see maglev-decap(8). */
	if (!c->open && !c->have_src && !pinned_strict_src(pin))
		return die("attach %s: name the balancers' outer sources (--allow-src PREFIX), or "
			   "--open to decapsulate from anyone",
			   dev);
	/* The same bpffs handling as maglevd: mount one where none is. */
	if (maglev_bpffs_ensure(pin, &mounted, path, sizeof(path)))
		return die("%s", path);
	if (mounted)
		fprintf(stderr,
			"maglev-decap: no bpffs was mounted at " MAGLEV_BPFFS_ROOT
			": mounted one for pin dir %s\n",
			pin);
	if (!strncmp(pin, PIN_BASE "/", strlen(PIN_BASE) + 1) && mkdir(PIN_BASE, 0700) &&
	    errno != EEXIST)
		return die("cannot create " PIN_BASE ": %s", strerror(errno));
	if (mkdir(pin, 0700) && errno != EEXIST)
		return die("cannot create the pin dir %s", pin);
	skel = maglev_decap__open();
	if (!skel)
		return die("cannot open the decap program: %s", strerror(errno));
	/* Pinned maps are adopted: re-attaching keeps the configuration. */
	for (i = 0; i < sizeof(pinned_maps) / sizeof(pinned_maps[0]); i++) {
		struct bpf_map *m = bpf_object__find_map_by_name(skel->obj, pinned_maps[i]);

		if (!m || pin_path(path, pin, pinned_maps[i]) || bpf_map__set_pin_path(m, path)) {
			maglev_decap__destroy(skel);
			return die("cannot set the pin path of %s", pinned_maps[i]);
		}
	}
	if (maglev_decap__load(skel)) {
		maglev_decap__destroy(skel);
		return die("cannot load the decap program (maps in %s from another version?)", pin);
	}
	r = bpf_xdp_attach(ifindex, bpf_program__fd(skel->progs.maglev_decap),
			   mode ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE, NULL);
	maglev_decap__destroy(skel); /* the attachment and the pins hold it */
	if (r)
		return die("cannot attach to %s", dev);
	return apply(pin, c);
}

static int show(const char *dev, const char *pin)
{
	int cfg = pinned_fd(pin, "maglev_decap_cfg"), src = pinned_fd(pin, "maglev_dcp_src");
	int dst = pinned_fd(pin, "maglev_dcp_dst"), cnt = pinned_fd(pin, "maglev_decap_cnt");
	int ncpu = libbpf_num_possible_cpus(), r = 0, ifindex = (int)if_nametoindex(dev);
	struct maglev_decap_prefix pk, pn;
	struct maglev_decap_addr ak, an;
	struct maglev_decap_config v = {};
	char buf[INET6_ADDRSTRLEN];
	uint32_t zero = 0, id = 0, k;
	uint64_t vals[512];

	if (cfg < 0 || src < 0 || dst < 0 || cnt < 0 || ncpu <= 0 || ncpu > 512) {
		r = die("no decap program pinned in %s", pin);
		goto out;
	}
	if (ifindex)
		bpf_xdp_query_id(ifindex, 0, &id);
	printf("dev %s prog_id %u\n", dev, id);
	bpf_map_lookup_elem(cfg, &zero, &v);
	printf("gue_port %u\n", v.gue_port ? ntohs(v.gue_port) : MAGLEV_GUE_PORT_DEFAULT);
	printf("strict_src %s\n", v.flags & MAGLEV_DECAP_F_STRICT_SRC ? "yes" : "no");
	printf("strict_dst %s\n", v.flags & MAGLEV_DECAP_F_STRICT_DST ? "yes" : "no");
	for (int e = bpf_map_get_next_key(src, NULL, &pn); !e;
	     e = bpf_map_get_next_key(src, &pk, &pn)) {
		pk = pn;
		if (!pk.addr[0] && !pk.addr[1] && pk.addr[2] == htonl(0xffff) && pk.prefixlen >= 96)
			printf("allow_src %s/%u\n",
			       inet_ntop(AF_INET, &pk.addr[3], buf, sizeof(buf)),
			       pk.prefixlen - 96);
		else
			printf("allow_src %s/%u\n", inet_ntop(AF_INET6, pk.addr, buf, sizeof(buf)),
			       pk.prefixlen);
	}
	for (int e = bpf_map_get_next_key(dst, NULL, &an); !e;
	     e = bpf_map_get_next_key(dst, &ak, &an)) {
		ak = an;
		if (!ak.addr[0] && !ak.addr[1] && ak.addr[2] == htonl(0xffff))
			printf("own_dst %s\n", inet_ntop(AF_INET, &ak.addr[3], buf, sizeof(buf)));
		else
			printf("own_dst %s\n", inet_ntop(AF_INET6, ak.addr, buf, sizeof(buf)));
	}
	for (k = 0; k < MAGLEV_DECAP_MAX; k++) {
		uint64_t sum = 0;

		if (bpf_map_lookup_elem(cnt, &k, vals))
			continue;
		for (int c = 0; c < ncpu; c++)
			sum += vals[c];
		printf("%s %llu\n", counter_names[k], (unsigned long long)sum);
	}
out:
	if (cfg >= 0)
		close(cfg);
	if (src >= 0)
		close(src);
	if (dst >= 0)
		close(dst);
	if (cnt >= 0)
		close(cnt);
	return r;
}

static int detach(const char *dev, const char *pin)
{
	int ifindex = (int)if_nametoindex(dev), r = 0;
	char path[PATH_MAX];
	size_t i;

	if (!ifindex)
		return die("no interface %s", dev);
	if (bpf_xdp_detach(ifindex, 0, NULL))
		r = die("cannot detach from %s", dev);
	for (i = 0; i < sizeof(pinned_maps) / sizeof(pinned_maps[0]); i++) {
		if (!pin_path(path, pin, pinned_maps[i]))
			unlink(path);
	}
	rmdir(pin);
	return r;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {{"allow-src", required_argument, NULL, 's'},
					     {"own-dst", required_argument, NULL, 'd'},
					     {"open", no_argument, NULL, 'o'},
					     {"gue-port", required_argument, NULL, 'g'},
					     {"mode", required_argument, NULL, 'm'},
					     {"pin", required_argument, NULL, 'p'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	static struct conf c = {.gue_port = -1};
	const char *cmd, *dev, *pin = NULL;
	char pinbuf[PATH_MAX], *end;
	int o, mode = 0, own_auto = 0;
	long port;

	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
	if (argc < 3 || argv[2][0] == '-') {
		usage(stderr);
		return 2;
	}
	cmd = argv[1];
	dev = argv[2];
	optind = 3;
	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (o) {
		case 's':
			if (c.nsrc == MAGLEV_DECAP_MAX_PREFIXES)
				return die("too many --allow-src (the limit is %s)", "256");
			if (parse_prefix(optarg, &c.src[c.nsrc++]))
				return die("--allow-src: not an IPv4 or IPv6 prefix: %s", optarg);
			c.have_src = 1;
			break;
		case 'd':
			c.have_dst = 1;
			if (!strcmp(optarg, "auto")) {
				own_auto = 1;
				break;
			}
			if (c.ndst == MAGLEV_DECAP_MAX_ADDRS)
				return die("too many --own-dst (the limit is %s)", "256");
			if (parse_addr(optarg, &c.dst[c.ndst++]))
				return die("--own-dst: not an IPv4 or IPv6 address: %s", optarg);
			break;
		case 'o':
			c.open = 1;
			break;
		case 'g':
			errno = 0;
			port = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || port < 1 || port > 65535)
				return die("--gue-port: not a port (1..65535): %s", optarg);
			c.gue_port = (int)port;
			break;
		case 'm':
			if (strcmp(optarg, "native") && strcmp(optarg, "generic"))
				return die("--mode: native or generic, not %s", optarg);
			mode = !strcmp(optarg, "generic");
			break;
		case 'p':
			pin = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc)
		return die("unexpected argument: %s", argv[optind]);
	if (c.open && (c.have_src || c.have_dst))
		return die("%s", "--open contradicts --allow-src and --own-dst");
	if (strlen(dev) >= IF_NAMESIZE || strchr(dev, '/'))
		return die("not an interface name: %s", dev);
	if (own_auto && own_addrs(dev, &c))
		return die("--own-dst auto: %s has no IPv4 or IPv6 address", dev);
	if (!pin) {
		default_pin(dev, pinbuf, sizeof(pinbuf));
		pin = pinbuf;
	}
	if (!strcmp(cmd, "attach"))
		return attach(dev, pin, mode, &c);
	if (!strcmp(cmd, "set"))
		return apply(pin, &c);
	if (!strcmp(cmd, "show"))
		return show(dev, pin);
	if (!strcmp(cmd, "detach"))
		return detach(dev, pin);
	return die("unknown command: %s (attach, set, show, detach)", cmd);
}
