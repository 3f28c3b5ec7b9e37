/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Connection table access (layout and hash: include/maglev_conn.h). Every
 * step is an inlined array access: no helper call, no lock, no clock.
 */
#ifndef MAGLEV_XDP_CONN_H
#define MAGLEV_XDP_CONN_H

#include "xdp_maps.h"

/* A way holds the flow's key but fails its check: torn, or another CPU is
 * rewriting this flow's entry. Nothing may be written over it.
 */
#define MAGLEV_CONN_WAY_BUSY (-2)

/* Every line of bucket b loaded at once, before the tag compare: in a table
 * larger than the cache each is a miss, and the matching way's key and value
 * lines were otherwise fetched only once the tag line had arrived. The
 * values are not used: volatile keeps the loads.
 */
static __always_inline void maglev_conn_bucket_touch(const struct maglev_conn_bucket *b)
{
	const volatile __u64 *w = (const volatile __u64 *)b;
	int i;

#pragma unroll
	for (i = 0; i < (int)(sizeof(*b) / 8); i += 8)
		(void)w[i];
	(void)w[sizeof(*b) / 8 - 1];
}

/* The flow's bucket (NULL: no table) and *way, the way holding the flow
 * (-1: none, MAGLEV_CONN_WAY_BUSY). *hp gets the key's hash for the check
 * word and the tag. The way's value is copied once into *c and validated
 * there; another CPU may refill the way at any moment, so the caller uses
 * only *c (its key is not filled in) and never reads the way again.
 */
static __always_inline struct maglev_conn_bucket *
maglev_conn_find(const struct maglev_flow_key *k, __u64 *hp, int *way, struct maglev_conn_slot *c)
{
	struct maglev_conn_params *p;
	struct maglev_conn_bucket *b;
	__u32 zero = 0, idx, tag;
	__u64 h;
	int i, j;

	*way = -1;
	p = bpf_map_lookup_elem(&maglev_connkey, &zero);
	if (!p)
		return NULL;
	h = maglev_conn_hash(k, p->seed);
	idx = (__u32)h & p->mask;
	b = bpf_map_lookup_elem(&maglev_conns, &idx);
	if (!b)
		return NULL;
	*hp = h;
	maglev_conn_bucket_touch(b);
	tag = maglev_conn_tag(h);
#pragma unroll
	for (i = 0; i < MAGLEV_CONN_WAYS; i++) {
		struct maglev_conn_slot *s = &b->slot[i];
		const volatile __u64 *src = (const volatile __u64 *)&s->conn;

		if (b->tag[i] != tag || !maglev_conn_key_eq(&s->key, k))
			continue;
			/* Volatile: each word is read exactly once, into the copy. */
#pragma unroll
		for (j = 0; j < MAGLEV_CONN_VALUE_WORDS; j++)
			((__u64 *)&c->conn)[j] = src[j];
		if (maglev_conn_check(h, c) == c->check) {
			*way = i;
			break;
		}
		*way = MAGLEV_CONN_WAY_BUSY;
	}
	return b;
}

/* A way whose flow has not proven itself (MAGLEV_CONN_PROVEN_NS): a UDP
 * flow never seen in a later time slot, a TCP flow younger than that (its
 * last_seen_ns is when it was written, or closed). Read unvalidated, like
 * the rest of the victim choice.
 */
static __always_inline int maglev_conn_unproven(const struct maglev_conn_bucket *b, int i,
						__u64 now)
{
	const struct maglev_conn_slot *s = &b->slot[i];

	if (!(b->ref[i] & MAGLEV_CONN_REF_SEEN))
		return 1;
	return s->key.proto == IPPROTO_TCP &&
	       (__s64)(now - s->conn.last_seen_ns) < (__s64)MAGLEV_CONN_PROVEN_NS;
}

/* Way for a new flow: an empty one, else a closed flow's whose time is up
 * (maglev_tcp_closed_ns after its last packet), else the first whose flow has sent
 * nothing since it was written (one-packet flows: scans, floods, SYNs not
 * yet answered), else the first unproven (two packets in a row from a
 * spoofed source are not enough), else the first not used since the reference bits were last
 * cleared (not recently used), else, every way in recent use, clear the
 * recent bits and take the way the tag names. Clearing only then keeps a
 * flow that is sending safe from any number of one-packet flows passing
 * through its bucket; and when four sending flows fill a bucket, the new
 * flow that had to evict one of them is the first to go again, so one
 * flood loses the bucket one flow, not all.
 */
static __always_inline __u32 maglev_conn_victim(struct maglev_conn_bucket *b, __u32 tag, __u64 now)
{
	int i, closing = -1;

#pragma unroll
	for (i = 0; i < MAGLEV_CONN_WAYS; i++)
		if (!b->tag[i])
			return i;
			/* A closed connection's way, once its time is up (only the first
			 * closing way is looked at: one clock read). Read unvalidated: a torn
			 * value only changes which flow is evicted.
			 */
#pragma unroll
	for (i = 0; i < MAGLEV_CONN_WAYS; i++)
		if (closing < 0 && (b->slot[i].flags & MAGLEV_CONN_F_CLOSING))
			closing = i;
	if (closing >= 0 && (__s64)(bpf_ktime_get_coarse_ns() -
				    b->slot[closing & (MAGLEV_CONN_WAYS - 1)].conn.last_seen_ns) >
				    (__s64)maglev_tcp_closed_ns)
		return closing;
#pragma unroll
	for (i = 0; i < MAGLEV_CONN_WAYS; i++)
		if (!b->ref[i])
			return i;
#pragma unroll
	for (i = 0; i < MAGLEV_CONN_WAYS; i++)
		if (maglev_conn_unproven(b, i, now))
			return i;
#pragma unroll
	for (i = 0; i < MAGLEV_CONN_WAYS; i++)
		if (!(b->ref[i] & MAGLEV_CONN_REF_RECENT))
			return i;
	*(maglev_conn_word *)b->ref &= ~(MAGLEV_CONN_REF_RECENT * 0x01010101U);
	return tag & (MAGLEV_CONN_WAYS - 1);
}

#endif /* MAGLEV_XDP_CONN_H */
