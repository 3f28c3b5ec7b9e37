// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <string.h>

#include "maglevctl.h"

void help_main(FILE *f)
{
	fputs("Usage: maglevctl [-j] [-s SOCKET] [--expect-revision N] OBJECT COMMAND [ARGS...]\n"
	      "       maglevctl OBJECT [COMMAND] --help\n"
	      "\n"
	      "Objects and commands:\n"
	      "  vip add VIP [--encap ipip|gue] [--gue-port N] [--port-any] [CHECK OPTIONS]\n"
	      "          [--placement maglev|ring|rendezvous] [--vnodes N] [--balance-factor C]\n"
	      "          [--second-chance]\n"
	      "  vip set VIP [--encap ipip|gue] [--gue-port N] [CHECK OPTIONS]\n"
	      "          [--placement maglev|ring|rendezvous] [--vnodes N] [--balance-factor C]\n"
	      "          [--second-chance | --no-second-chance]\n"
	      "  vip del VIP\n"
	      "  vip list\n"
	      "  vip show VIP\n"
	      "  backend add VIP BACKEND [--weight N] [--drain] [--start-down]\n"
	      "  backend del VIP BACKEND [--force]\n"
	      "  backend set VIP BACKEND [--weight N] [--drain | --undrain]\n"
	      "  backend list [VIP]\n"
	      "  stats [VIP] [-w]        counters and rates (-w: refresh every second)\n"
	      "  top [VIP] [--by flow|source]  heaviest flows or sources of each VIP\n"
	      "  health [VIP]            health-check state of every backend\n"
	      "  table VIP [--dump]      slots and share per backend in the live table\n"
	      "  lookup VIP SRC:SPORT    which backend a client's flow goes to, and why\n"
	      "  save                    print the configuration as maglevctl commands\n"
	      "  restore [--no-flush] [--dry-run] [--allow-empty] [--force] [FILE]\n"
	      "                          (apply a save, all or nothing)\n"
	      "  status                  daemon version and status\n"
	      "  reload                  re-read maglevd's config file; exit 1 if refused\n"
	      "  announce [on|off]       announced VIPs and why; off: maintenance (all out)\n"
	      "  fleet status [--settle S]  every live balancer of the fleet, whether they agree\n"
	      "                          (exit 1: disagreeing longer than S seconds, default 10)\n"
	      "\n"
	      "VIP:     192.0.2.10:80/tcp  [2001:db8::10]:443/tcp  192.0.2.10:53/udp\n"
	      "         192.0.2.10:*/tcp (all ports; also --port-any)\n"
	      "BACKEND: 198.51.100.5  2001:db8::5  (no port: backends answer on the VIP's port)\n"
	      "\n"
	      "Options:\n"
	      "  -j, --json          JSON output\n"
	      "  -s, --socket PATH   control socket (default $MAGLEV_SOCKET, else\n"
	      "                      /run/maglev/maglevd.sock)\n"
	      "  --expect-revision N fleet mode: change etcd's desired state only if nothing\n"
	      "                      under the prefix changed after revision N\n"
	      "  -V, --version       print maglevctl's version and exit\n"
	      "  -h, --help          this help\n"
	      "\n"
	      "Exit status: 0 done, 1 rejected (nothing changed; reason on stderr),\n"
	      "2 usage error, 3 no daemon (nothing sent), 4 outcome unknown (sent, no answer).\n",
	      f);
}

static const struct {
	const char *object, *verb, *text;
} topics[] = {
	{"vip", "add",
	 "Usage: maglevctl vip add VIP [--encap ipip|gue] [--gue-port N] [--port-any]\n"
	 "                         [--check tcp|http|https|udp|dns|none] [--check-port N]\n"
	 "                         [--check-path PATH] [--check-host NAME] [--check-body TEXT]\n"
	 "                         [--check-ca-file PATH] [--check-tls-verify on|off]\n"
	 "                         [--check-insecure] [--check-payload TEXT]\n"
	 "                         [--check-expect TEXT] [--check-dns-name NAME]\n"
	 "                         [--check-status N] [--check-interval MS] [--check-timeout MS]\n"
	 "                         [--rise N] [--fall N] [--on-fail repick|drain]\n"
	 "                         [--placement maglev|ring|rendezvous] [--vnodes N]\n"
	 "                         [--balance-factor C|off] [--second-chance]\n"
	 "                         [--slow-start MS|default]\n"
	 "                         [--hot-threshold PCT|off|default]\n"
	 "Add a virtual service. VIP is ADDR:PORT/PROTO (PROTO tcp or udp, PORT 1..65535,\n"
	 "IPv6 in brackets). --port-any makes it match every port of the address; a port\n"
	 "given with it is where health checks go. Packets go to backends in IPIP\n"
	 "(default) or GUE (--encap gue, UDP port --gue-port, default 6080).\n"
	 "Health checks default to the config file's settings; the options override them\n"
	 "for this VIP. http and https send a GET of --check-path with Host (and SNI)\n"
	 "--check-host and want --check-status and, if given, --check-body in the body;\n"
	 "https verifies the certificate against --check-ca-file (default: the system's\n"
	 "CAs) unless --check-insecure. udp sends --check-payload and wants a reply holding\n"
	 "--check-expect (escapes \\n \\r \\t \\0 \\\\ \\xNN; no expect: any reply); dns\n"
	 "queries --check-dns-name (type A) and wants its id back with RCODE NOERROR.\n"
	 "An ICMP port unreachable or no reply within the timeout is a failure.\n"
	 "--on-fail drain: a backend failing its checks keeps its\n"
	 "established flows and takes no new ones; repick (default): its flows are\n"
	 "re-picked, as IPVS and Katran do. --placement chooses how the lookup table is filled "
	 "(see vip set).\n"
	 "--second-chance (GUE only: IPIP has no room to carry the previous owner): a\n"
	 "packet of an unknown flow whose slot changed owner recently carries the previous\n"
	 "owner, and the backend's decap program sends it there if no local socket claims\n"
	 "it and its --allow-src prefixes hold that owner (an open decap sends nothing\n"
	 "on, maglev-decap(8)): flows survive a balancer change and a table change\n"
	 "together.\n"
	 "Example:\n"
	 "  maglevctl vip add 192.0.2.10:80/tcp --check http --check-path /healthz\n"},
	{"vip", "set",
	 "Usage: maglevctl vip set VIP [--encap ipip|gue] [--gue-port N] [CHECK OPTIONS]\n"
	 "                             [--placement maglev|ring|rendezvous] [--vnodes N]\n"
	 "                             [--balance-factor C|off]\n"
	 "                             [--slow-start MS|default]\n"
	 "                             [--second-chance | --no-second-chance]\n"
	 "                             [--hot-threshold PCT|off|default]\n"
	 "Change a VIP in place: its backends, their flows and counters stay. --encap and\n"
	 "--gue-port as for vip add: established flows keep their backend and leave in\n"
	 "the new encapsulation. --second-chance / --no-second-chance as for vip add.\n"
	 "Check options (as for vip add) set the VIP's overrides;\n"
	 "the health checks follow from the next tick. Refused, changing nothing, when\n"
	 "the result is invalid (e.g. --check-timeout above the interval).\n"
	 "--placement changes how the VIP's lookup table is filled; the table is rebuilt\n"
	 "and swapped in one step. maglev (default): Maglev permutations, every backend\n"
	 "within one slot of its share. ring: consistent-hash ring with N points per\n"
	 "unit of weight (--vnodes 1..10000, default 256).\n"
	 "rendezvous: highest random weight, exact weights in expectation. ring and\n"
	 "rendezvous move only the slots of a removed backend; maglev balances best.\n"
	 "Same cost per packet for all three. See docs/maglev-table.md.\n"
	 "--balance-factor C (1.01..10; off by default, off turns it off) bounds loads:\n"
	 "a backend holding C times the mean of live flows or more takes no new flows;\n"
	 "they go to a seeded probe of other slots. Established flows never move.\n"
	 "--slow-start MS|default (0..86400000; default: the config's slow_start_ms): a\n"
	 "backend that joins the VIP, or returns to its table, reaches its weight over MS\n"
	 "in 4 steps, each one rebuild of this VIP's table; established flows never move.\n"
	 "--hot-threshold PCT (1..100): a flow or source above PCT% of this VIP's packets\n"
	 "is logged and counted (hot flows, maglevctl top); off: never for this VIP;\n"
	 "default: the config file's hot_flows_threshold.\n"
	 "Examples:\n"
	 "  maglevctl vip set 192.0.2.10:80/tcp --placement ring --vnodes 1000\n"
	 "  maglevctl vip set 192.0.2.10:80/tcp --balance-factor 1.25\n"
	 "  maglevctl vip set 192.0.2.10:80/tcp --encap gue --check http --check-path /up\n"},
	{"vip", "del",
	 "Usage: maglevctl vip del VIP\nDelete a VIP and all its backends, whatever flows they "
	 "carry\n(it ends the service; backend del refuses a backend that carries flows).\n"},
	{"vip", "list",
	 "Usage: maglevctl vip list\nList VIPs with backend counts and table generation.\n"},
	{"vip", "show",
	 "Usage: maglevctl vip show VIP\nShow a VIP's settings and backends (with the flags the "
	 "live datapath holds),\nand the table digest: equal on two balancers exactly when "
	 "every slot of the VIP\nsends to the same backend.\n"},
	{"backend", "add",
	 "Usage: maglevctl backend add VIP BACKEND [--weight N] [--drain] [--start-down]\n"
	 "Add a backend (an address; it answers on the VIP's port) to a VIP. Weight\n"
	 "0..65535, default 1; weight 0 takes no new flows. The table is rebuilt and\n"
	 "swapped in one step. When the VIP has a health check, a new backend starts\n"
	 "down and takes traffic only after its first passing check (a mistyped\n"
	 "address gets no flow); with --check none it is up at once. --start-down,\n"
	 "the default now, is still accepted. Example:\n"
	 "  maglevctl backend add 192.0.2.10:80/tcp 198.51.100.5 --weight 3\n"},
	{"backend", "del",
	 "Usage: maglevctl backend del VIP BACKEND [--force]\n"
	 "Remove a backend. Refused (exit 1, with its flow count) while it carries live\n"
	 "flows: they would be re-picked to other backends, which resets them. Drain it\n"
	 "first (backend set --drain) and delete it once backend list shows FLOWS 0.\n"
	 "  --force  delete it anyway: its flows are re-picked (reset)\n"},
	{"backend", "set",
	 "Usage: maglevctl backend set VIP BACKEND [--weight N] [--drain | --undrain]\n"
	 "Change a backend's weight, or drain it: a draining backend leaves the table (no\n"
	 "new flows) but keeps the flows it has until they end.\n"},
	{"backend", "list",
	 "Usage: maglevctl backend list [VIP]\nList backends: weight, state, datapath flags, "
	 "index, "
	 "generation,\nand the connection-table entries (flows) each holds.\n"},
	{"stats", NULL,
	 "Usage: maglevctl stats [VIP] [-w]\n"
	 "Packets, bytes and new flows per VIP and backend, with rates over the last\n"
	 "second, and the datapath's packet counters by reason. -w refreshes every second\n"
	 "until interrupted.\n"},
	{"top", NULL,
	 "Usage: maglevctl top [VIP] [--by flow|source] [-k N]\n"
	 "The heaviest flows (client 5-tuples) or sources of each VIP, from the datapath's\n"
	 "sampled hot-flow trackers: estimated packets and bits per second, share of the\n"
	 "VIP's packets, and the backend each lands on; the top N (default 10). Refreshes\n"
	 "every second on a terminal; one snapshot with -j or when not on a terminal.\n"
	 "Needs hot_flows on in maglevd.conf.\n"},
	{"health", NULL,
	 "Usage: maglevctl health [VIP]\n"
	 "Health-check state of every backend: check, last result, streaks, unknown checks,\n"
	 "last error. A check maglevd could not make (no socket, no encapsulation) is\n"
	 "unknown: it changes neither the streaks nor the state.\n"},
	{"table", NULL,
	 "Usage: maglevctl table VIP [--dump]\nSlots and share of the live lookup table per "
	 "backend "
	 "(read from the datapath).\n"
	 "  --dump   also list every run of consecutive slots and its backend\n"},
	{"lookup", NULL,
	 "Usage: maglevctl lookup VIP SRC:SPORT\n"
	 "Which backend the flow SRC:SPORT -> VIP goes to, answered from the live maps:\n"
	 "the connection table first, then the VIP's Maglev table. For an all-ports VIP\n"
	 "give the flow's destination port in VIP (ADDR:PORT/PROTO). Example:\n"
	 "  maglevctl lookup 192.0.2.10:80/tcp 203.0.113.7:40000\n"},
	{"save", NULL,
	 "Usage: maglevctl save\nPrint the configuration (VIPs, backends, weights, drain) as "
	 "maglevctl commands,\nin canonical order: balancers holding the same configuration "
	 "print the same\nlines, all but the first (its timestamp).\n"},
	{"restore", NULL,
	 "Usage: maglevctl restore [--no-flush] [--dry-run] [--allow-empty] [--force] [FILE]\n"
	 "Apply a file written by save (default: stdin). The whole file is one atomic\n"
	 "request: either every line is applied or nothing is. Without --no-flush the\n"
	 "file replaces the running configuration; with it, it is added to it.\n"
	 "  --dry-run      apply nothing: the daemon checks the whole file, and the\n"
	 "                 changes are printed as a diff of save lines ('-' removed,\n"
	 "                 '+' added; a changed backend shows as both)\n"
	 "  --allow-empty  restore a file without any vip or backend line, deleting\n"
	 "                 every VIP (refused otherwise: the file may be empty or cut\n"
	 "                 short)\n"
	 "  --force        drop backends that carry live flows too (refused otherwise,\n"
	 "                 as for backend del: their flows would be reset)\n"
	 "A file written by save ends with a '# end of maglevctl save' line; one that\n"
	 "starts like a save but lacks it was cut short and is refused.\n"},
	{"status", NULL,
	 "Usage: maglevctl status\nDaemon version, PID, uptime, interfaces, XDP mode, counts;\n"
	 "per interface the XDP mode and next-hop MAC, a warning while the public\n"
	 "default seed is in use, the slow-path module, health checks that could not\n"
	 "be made (unknown), reloads and the last one's time and result (why it\n"
	 "failed), each VIP's announce state, and for comparing balancers the tables\n"
	 "digest (all VIPs) and the seed fingerprint (identifies the seed, does not\n"
	 "reveal it); whether the datapath read back from the pinned maps holds what\n"
	 "maglevd wrote, or which VIPs differ and how.\n"},
	{"fleet", NULL,
	 "Usage: maglevctl fleet status [--settle SECONDS]\n"
	 "Fleet mode (fleet_etcd): every live balancer as each publishes its status in\n"
	 "etcd under a lease (PREFIX nodes/NODE, gone a few seconds after it dies):\n"
	 "node, applied revision, tables digest, seed fingerprint, etcd connection,\n"
	 "whether its datapath agrees with its registry (DATAPATH) and version, and\n"
	 "whether they agree (same revision, digest and fingerprint).\n"
	 "Exit 1 when they have disagreed for longer than SECONDS (default 10: a change\n"
	 "lands on the balancers one after the other), while a balancer's datapath\n"
	 "differs from its registry, or when no status could be read.\n"
	 "With health_scope fleet, one line per backend after them: each balancer's view\n"
	 "(up, down, none: not published yet, local-scope: does not vote), the fleet's\n"
	 "verdict (out when more than half of the voters see it down) and what this\n"
	 "balancer applied.\n"},
	{"reload", NULL,
	 "Usage: maglevctl reload\n"
	 "Have maglevd re-read its configuration file (as SIGHUP does) and wait for the\n"
	 "result: exit 0 when applied, 1 with the reason on stderr when refused (the\n"
	 "running configuration then stays) or when it failed part-way. systemctl reload\n"
	 "maglevd runs this (docs/maglevd.service).\n"},
	{"announce", NULL,
	 "Usage: maglevctl announce [on|off]\n"
	 "Without an argument: whether each VIP is announced (its route in the config's\n"
	 "announce_table, which the routing daemon exports) and why. off: maintenance,\n"
	 "every VIP of this balancer is withdrawn while it goes on forwarding what still\n"
	 "arrives; it lasts across restarts until announce on. Needs announce_table.\n"},
};

bool help_topic(FILE *f, const char *object, const char *verb)
{
	size_t i;
	bool any = false;

	for (i = 0; i < sizeof(topics) / sizeof(topics[0]); i++) {
		if (strcmp(topics[i].object, object))
			continue;
		if (verb && topics[i].verb && strcmp(topics[i].verb, verb))
			continue;
		fputs(topics[i].text, f);
		any = true;
	}
	return any;
}
