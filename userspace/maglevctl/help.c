// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <string.h>

#include "maglevctl.h"

void help_main(FILE *f)
{
	fputs("Usage: maglevctl [-j] [-s SOCKET] OBJECT COMMAND [ARGS...]\n"
	      "       maglevctl OBJECT [COMMAND] --help\n"
	      "\n"
	      "Objects and commands:\n"
	      "  vip add VIP [--encap ipip|gue] [--gue-port N] [--port-any] [CHECK OPTIONS]\n"
	      "  vip del VIP\n"
	      "  vip list\n"
	      "  vip show VIP\n"
	      "  backend add VIP BACKEND [--weight N] [--drain]\n"
	      "  backend del VIP BACKEND\n"
	      "  backend set VIP BACKEND [--weight N] [--drain | --undrain]\n"
	      "  backend list [VIP]\n"
	      "  stats [VIP] [-w]        counters and rates (-w: refresh every second)\n"
	      "  health [VIP]            health-check state of every backend\n"
	      "  table VIP [--dump]      slots and share per backend in the live table\n"
	      "  lookup VIP SRC:SPORT    which backend a client's flow goes to, and why\n"
	      "  save                    print the configuration as maglevctl commands\n"
	      "  restore [--no-flush] [FILE]  apply a saved configuration, all or nothing\n"
	      "  status                  daemon version and status\n"
	      "\n"
	      "VIP:     192.0.2.10:80/tcp  [2001:db8::10]:443/tcp  192.0.2.10:53/udp\n"
	      "         192.0.2.10:*/tcp (all ports; also --port-any)\n"
	      "BACKEND: 198.51.100.5  2001:db8::5  (no port: backends answer on the VIP's port)\n"
	      "\n"
	      "Options:\n"
	      "  -j, --json          JSON output\n"
	      "  -s, --socket PATH   control socket (default $MAGLEV_SOCKET, else\n"
	      "                      /run/maglev/maglevd.sock)\n"
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
	 "                         [--check tcp|http|none] [--check-port N] [--check-path PATH]\n"
	 "                         [--check-status N] [--check-interval MS] [--check-timeout MS]\n"
	 "                         [--rise N] [--fall N]\n"
	 "Add a virtual service. VIP is ADDR:PORT/PROTO (PROTO tcp or udp, PORT 1..65535,\n"
	 "IPv6 in brackets). --port-any makes it match every port of the address; a port\n"
	 "given with it is where health checks go. Packets go to backends in IPIP\n"
	 "(default) or GUE (--encap gue, UDP port --gue-port, default 6080).\n"
	 "Health checks default to the config file's settings; the options override them\n"
	 "for this VIP. Example:\n"
	 "  maglevctl vip add 192.0.2.10:80/tcp --check http --check-path /healthz\n"},
	{"vip", "del", "Usage: maglevctl vip del VIP\nDelete a VIP and all its backends.\n"},
	{"vip", "list",
	 "Usage: maglevctl vip list\nList VIPs with backend counts and table generation.\n"},
	{"vip", "show",
	 "Usage: maglevctl vip show VIP\nShow a VIP's settings and backends (with the flags the "
	 "live datapath holds).\n"},
	{"backend", "add",
	 "Usage: maglevctl backend add VIP BACKEND [--weight N] [--drain]\n"
	 "Add a backend (an address; it answers on the VIP's port) to a VIP. Weight\n"
	 "0..65535, default 1; weight 0 takes no new flows. The table is rebuilt and\n"
	 "swapped in one step. Example:\n"
	 "  maglevctl backend add 192.0.2.10:80/tcp 198.51.100.5 --weight 3\n"},
	{"backend", "del",
	 "Usage: maglevctl backend del VIP BACKEND\n"
	 "Remove a backend. Its established flows are re-picked; drain it first to let\n"
	 "them finish.\n"},
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
	{"health", NULL,
	 "Usage: maglevctl health [VIP]\nHealth-check state of every backend: check, last result, "
	 "streaks, last error.\n"},
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
	 "maglevctl commands.\n"},
	{"restore", NULL,
	 "Usage: maglevctl restore [--no-flush] [FILE]\n"
	 "Apply a file written by save (default: stdin). The whole file is one atomic\n"
	 "request: either every line is applied or nothing is. Without --no-flush the\n"
	 "file replaces the running configuration; with it, it is added to it.\n"},
	{"status", NULL,
	 "Usage: maglevctl status\nDaemon version, PID, uptime, interfaces, XDP mode, counts;\n"
	 "per interface the XDP mode and next-hop MAC, a warning while the public\n"
	 "default seed is in use, the slow-path module, the last reload's result.\n"},
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
