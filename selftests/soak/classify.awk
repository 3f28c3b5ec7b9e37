# The soak's judge of broken connections (selftests/soak/soak.sh): reads the
# fault log (FAULTS, "MS KIND ARGS...") and then events ("CLIENT VIP SC" and
# longconn's "event MS KIND conn I TUPLE backend NAME"), and prints each
# event with its class: an explanation, or "UNEXPLAINED". The allowed causes
# (issue 33): the connection's backend died or was deleted (drained; on a
# balancer whose swaps were held, or whose maglevd was down, when it resumed), or its
# VIP has no second chance and its table changed, or the change was older
# than the second-chance window (SC_MS) with none since. Connections that never opened
# (refused, timeout) are allowed only while a backend dies or a route moves,
# for SETTLE_MS after it (plus the client's 5 s connect timeout).
# A connection's first answer ("first") must come from a backend usable at
# some time in the SETTLE_MS before it, unless a balancer could not change
# its datapath then (swaps held, maglevd killed): else NEW-FLOW-TO-DEAD.
# Variables: SC_MS, SETTLE_MS.
function add(arr, key, t) { arr[key] = arr[key] " " t }
# any time of list in [lo, hi]
function within(list, lo, hi,    n, a, i) {
	n = split(list, a, " ")
	for (i = 1; i <= n; i++)
		if (a[i] >= lo && a[i] <= hi)
			return 1
	return 0
}
# The last time of list at or before t, 0 if none.
function last_before(list, t,    n, a, i, m) {
	n = split(list, a, " ")
	m = 0
	for (i = 1; i <= n; i++)
		if (a[i] <= t && a[i] > m)
			m = a[i]
	return m
}
# The first time of list after t, 0 if none.
function first_after(list, t,    n, a, i, m) {
	n = split(list, a, " ")
	m = 0
	for (i = 1; i <= n; i++)
		if (a[i] > t && (!m || a[i] < m))
			m = a[i]
	return m
}
# Whether backend b is in VIP v's desired state, not drained, at time t.
function usable_at(v, b, t,    j) {
	for (j = nst[v]; j >= 1 && stt[v, j] > t; j--)
		;
	return j >= 1 && index("," stb[v, j] ",", "," b ":") && !match("," stb[v, j] ",", "," b ":[0-9]+:1,")
}
# Whether a deletion (drain) of backend b of VIP v reached a balancer in
# [T - 10 s, T + 1 s] because that balancer applied it late: its swaps were
# held, or its maglevd down, when it was written, and it resumed then (a flow
# it opened on b meanwhile, by its last table, breaks at that resume).
function gone_resumed(v, b, T,    n, a, i, k, r) {
	n = split(gone[v SUBSEP b], a, " ")
	for (i = 1; i <= n; i++) {
		if (a[i] > T + 1000)
			continue
		for (k in stops) {
			if (last_before(stops[k], a[i]) <= last_before(resumes[k], a[i]))
				continue # running: it applied the deletion then
			r = first_after(resumes[k], a[i])
			if (r && r >= T - 10000 && r <= T + 1000 && !usable_at(v, b, r))
				return 1
		}
	}
	return 0
}
# Whether backend b of VIP v took the new flow of time T by design: usable
# (in the VIP, not drained, not stopped) at some time in [T - SETTLE_MS, T].
function first_ok(v, b, T,    lo, j, d, u, k) {
	lo = T - SETTLE_MS
	# a balancer that cannot change its datapath (swaps held, maglevd
	# killed) forwards by its last table, by design: each balancer apart
	# (one's restart does not end another's hold)
	for (k in stops) {
		d = last_before(stops[k], T)
		u = last_before(resumes[k], T)
		if (d > u || (u && u >= lo))
			return 1
	}
	d = last_before(downs[b], T)
	u = last_before(ups[b], T)
	if (d > u && d < lo)
		return 0 # stopped since before the settling interval
	for (j = nst[v]; j >= 1 && stt[v, j] > T; j--)
		;
	for (; j >= 1; j--) {
		if (index("," stb[v, j] ",", "," b ":") && !match("," stb[v, j] ",", "," b ":[0-9]+:1,"))
			return 1
		if (stt[v, j] < lo)
			break
	}
	return j < 1 # before the first state written: nothing known
}
FNR == NR {
	t = $1
	if ($2 == "bedown" || $2 == "beup") {
		add(died, $3, t)
		if ($2 == "bedown")
			add(downs, $3, t)
		else
			add(ups, $3, t)
		# a health change changes the tables of the VIPs that have it
		for (v in bes)
			if (index("," bes[v] ",", "," $3 ":"))
				add(changed, v, t)
		if ($2 == "bedown")
			add(anydown, "x", t)
	} else if ($2 == "table") {
		v = $3
		nb = $5
		sub(/^bes=/, "", nb)
		if (v in bes) {
			n = split(bes[v], old, ",")
			for (i = 1; i <= n; i++) {
				split(old[i], f, ":")
				if (!index("," nb ",", "," f[1] ":") || index("," nb ",", "," f[1] ":" f[2] ":1"))
					add(gone, v SUBSEP f[1], t)
			}
			n = split(nb, cur, ",")
			for (i = 1; i <= n; i++) {
				split(cur[i], f, ":")
				if (f[3] == 1)
					add(gone, v SUBSEP f[1], t)
			}
			add(changed, v, t)
		}
		bes[v] = nb
		nst[v]++
		stt[v, nst[v]] = t
		stb[v, nst[v]] = nb
	} else if ($2 ~ /^(annoff|annon|birdrestart|lbkill|lbstart|connlost|hold|unhold)$/) {
		if ($2 == "hold" || $2 == "lbkill")
			add(stops, $3, t)
		if ($2 == "unhold" || $2 == "lbstart")
			add(resumes, $3, t)
		add(moved, "x", t)
	}
	next
}
{
	client = $1; v = $2; sc = $3
	T = $5; kind = $6; be = $11
	cls = "UNEXPLAINED"
	if (kind == "first") {
		cls = first_ok(v, be, T) ? "new" : "NEW-FLOW-TO-DEAD"
	} else if (kind == "lost") {
		cls = "lost"
	} else if (kind == "refused" || kind == "timeout" || be == "-") {
		lo = T - SETTLE_MS - 6000
		if (within(anydown["x"], lo, T))
			cls = "connect-failed: a backend died"
		else if (within(changed[v], lo, T))
			cls = "connect-failed: table change"
		else if (within(moved["x"], T - 12000, T))
			cls = "connect-failed: route change"
	} else if (within(died[be], T - 10000, T + 1000)) {
		cls = "backend died"
	} else if (within(gone[v SUBSEP be], T - 10000, T + 1000)) {
		cls = "backend deleted or drained"
	} else if (gone_resumed(v, be, T)) {
		cls = "backend deleted or drained, applied when a held or restarted balancer resumed"
	} else if (!sc && within(changed[v], T - 60000, T + 1000)) {
		cls = "table changed, no second chance"
	} else if (sc && within(changed[v], T - SC_MS - 60000, T - SC_MS) && !within(changed[v], T - SC_MS, T + 1000)) {
		cls = "table changed outside the second-chance window"
	}
	print cls "\t" $0
}
