/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The balancer's maps. Layouts are in include/maglev_maps.h; names stay under
 * 16 characters so the kernel's map name is the pin name.
 */
#ifndef MAGLEV_XDP_MAPS_H
#define MAGLEV_XDP_MAPS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "maglev_maps.h"
#include "maglev_conn.h"
#include "maglev_second.h"
#include "xdp_consts.h"
#include "xdp_cfg_maps.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAGLEV_VIP_KEYS);
	__type(key, struct maglev_vip_key);
	__type(value, struct maglev_vip_info);
} maglev_vips SEC(".maps");

/* Inlined cache in front of maglev_vips (include/maglev_conn.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAGLEV_VIP_CACHE_SIZE);
	__type(key, __u32);
	__type(value, struct maglev_vip_cache_slot);
} maglev_vipcache SEC(".maps");

/* Per-address filter (see struct maglev_vip_addr): the first lookup, and
 * for non-VIP traffic the only one; inlined, no hashing.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAGLEV_VIP_FILTER_SIZE);
	__type(key, __u32);
	__type(value, struct maglev_vip_addr);
} maglev_vaddrs SEC(".maps");

/* Exact VIP addresses (key: a maglev_vip_key with port and proto 0) to the
 * number of VIP keys using them. The filter above can collide; what the
 * balancer answers itself (echo) must be for a real VIP address. Rare path,
 * so a hash lookup is fine.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAGLEV_VIP_KEYS);
	__type(key, struct maglev_vip_key);
	__type(value, __u32);
} maglev_vipaddrs SEC(".maps");

/* Generation of the VIP map, bumped by userspace after every change: a
 * connection entry's cached VIP is valid while its vip_gen matches.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} maglev_vipgen SEC(".maps");

/* One inner map per VIP, swapped whole by userspace (atomic per VIP). The
 * table is the single value of a one-element array: array elements are
 * 8-byte aligned, so a u32-per-element array would not be one flat u32[] in
 * memory. BPF_F_MMAPABLE lets userspace fill a new table with one memcpy.
 * The value is a struct maglev_table (include/maglev_second.h): the slot
 * owners and the previous owners, so one swap replaces both. Declared as
 * the flat array it is: clang gives BTF only a forward declaration of a
 * struct seen through a pointer alone, which libbpf cannot size.
 */
_Static_assert(sizeof(struct maglev_table) == 2 * MAGLEV_TABLE_SIZE * sizeof(__u32),
	       "struct maglev_table is two flat arrays");

struct maglev_table_inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u32[2 * MAGLEV_TABLE_SIZE]);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, MAGLEV_MAX_VIPS);
	__type(key, __u32);
	__array(values, struct maglev_table_inner);
} maglev_tables SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAGLEV_MAX_BACKENDS);
	__type(key, __u32);
	__type(value, struct maglev_backend);
} maglev_backends SEC(".maps");

/* Connection table: buckets of MAGLEV_CONN_WAYS flows (include/maglev_conn.h),
 * an array so that every access is inlined; the library sizes it at load.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAGLEV_CONN_TABLE_SIZE / MAGLEV_CONN_WAYS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct maglev_conn_bucket);
} maglev_conns SEC(".maps");

/* Hash seed and bucket mask of maglev_conns (pinned with it). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct maglev_conn_params);
} maglev_connkey SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MAGLEV_MAX_VIPS);
	__type(key, __u32);
	__type(value, struct maglev_vip_stats);
} maglev_vipstat SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MAGLEV_MAX_BACKENDS);
	__type(key, __u32);
	__type(value, struct maglev_backend_stats);
} maglev_bestat SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MAGLEV_REASON_MAX);
	__type(key, __u32);
	__type(value, __u64);
} maglev_reasons SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MAGLEV_CTR_MAX);
	__type(key, __u32);
	__type(value, __u64);
} maglev_ctrs SEC(".maps");

/* Bounded loads: over-cap marks by backend index, written by maglevd, and
 * new flows spilled per VIP (include/maglev_maps.h).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAGLEV_MAX_BACKENDS);
	__type(key, __u32);
	__type(value, __u32);
} maglev_overcap SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MAGLEV_MAX_VIPS);
	__type(key, __u32);
	__type(value, __u64);
} maglev_vipspill SEC(".maps");

/* New-flow rate limiter state, one window per CPU. */
struct maglev_ratelim {
	__u64 window_start_ns;
	__u64 inserts;
#ifdef MAGLEV_LAYOUT_VARIANT
	__u64 variant; /* the upgrade test's other layout: another size */
#endif
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct maglev_ratelim);
} maglev_ratelim SEC(".maps");

/* Set by the library before load (maglev_dp_opts.tcp_closed_ns). */
const volatile __u64 maglev_tcp_closed_ns = MAGLEV_TCP_CLOSED_NS_DEFAULT;

#endif /* MAGLEV_XDP_MAPS_H */
