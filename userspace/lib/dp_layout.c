// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The pinned map layout across upgrades. A new release may change a map's
 * key or value (a field added to the backend entry, say); libbpf then refuses
 * to adopt the pinned map and the program does not load, and deleting the pin
 * dir by hand stops forwarding and loses the connection table. Instead each
 * pinned map is compared with the one the new object declares: its type,
 * sizes, flags and entry count, and the BTF layout of key and value (member
 * names, offsets and types, so a change of meaning is made visible by renaming
 * the member). A map that matches is adopted with its contents; one that does
 * not is created fresh and left unpinned, so the running program keeps
 * forwarding from the old one while maglevd fills the new one; once the new
 * program has taken over the links, the fresh maps replace the old pins.
 * Maps that only make sense together (the connection table and its hash seed)
 * are renewed together.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "dp_layout.h"

/* Maps renewed together: the connection table is unreadable without the
 * hash seed it was filled with.
 */
static const char *const layout_groups[][2] = {
	{"maglev_conns", "maglev_connkey"},
};

/* FNV-1a over the layout description. */
static void mix(uint64_t *h, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--) {
		*h ^= *c++;
		*h *= 0x100000001b3ULL;
	}
}

static void mix_u32(uint64_t *h, uint32_t v)
{
	mix(h, &v, sizeof(v));
}

static void mix_str(uint64_t *h, const char *s)
{
	mix(h, s ? s : "", s ? strlen(s) + 1 : 1);
}

/* The layout of type id: kinds, sizes, member names and offsets, element
 * counts; typedefs and qualifiers are looked through (a renamed typedef is
 * not a layout change). depth bounds self-referencing types.
 */
static void mix_type(uint64_t *h, const struct btf *btf, uint32_t id, int depth)
{
	const struct btf_type *t;
	int i, n;

	if (depth > 16)
		return;
	n = btf__resolve_type(btf, id);
	if (n > 0)
		id = (uint32_t)n;
	t = btf__type_by_id(btf, id);
	if (!t) {
		mix_u32(h, 0xffffffff);
		return;
	}
	mix_u32(h, btf_kind(t));
	switch (btf_kind(t)) {
	case BTF_KIND_INT:
		mix_u32(h, t->size);
		mix_u32(h, *(const uint32_t *)(t + 1));
		break;
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
		mix_u32(h, t->size);
		break;
	case BTF_KIND_ARRAY:
		mix_u32(h, btf_array(t)->nelems);
		mix_type(h, btf, btf_array(t)->type, depth + 1);
		break;
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION: {
		const struct btf_member *m = btf_members(t);

		mix_u32(h, t->size);
		n = btf_vlen(t);
		for (i = 0; i < n; i++, m++) {
			mix_str(h, btf__name_by_offset(btf, m->name_off));
			mix_u32(h, btf_member_bit_offset(t, i));
			mix_u32(h, btf_member_bitfield_size(t, i));
			mix_type(h, btf, m->type, depth + 1);
		}
		break;
	}
	case BTF_KIND_PTR:
		mix_u32(h, 8);
		break;
	default:
		mix_u32(h, t->size);
		break;
	}
}

/* Layout hash of a map's key and value from BTF; 0 when there is none. */
static uint64_t btf_layout(const struct btf *btf, uint32_t key_id, uint32_t value_id)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	if (!btf || (!key_id && !value_id))
		return 0;
	mix_type(&h, btf, key_id, 0);
	mix_type(&h, btf, value_id, 0);
	return h ? h : 1;
}

static void why(struct maglev_layout_map *m, const char *fmt, unsigned long long a,
		unsigned long long b)
{
	snprintf(m->why, sizeof(m->why), fmt, a, b);
}

/*
 * An inner map of a pinned array-of-maps against the inner map the object
 * declares. -1: the outer map holds no inner map (nothing to keep).
 */
static int inner_compatible(int outer_fd, uint32_t outer_max, const struct bpf_map *want,
			    struct maglev_layout_map *m)
{
	struct bpf_map_info info = {};
	uint32_t len = sizeof(info), i, id;
	int fd, ok = -1;

	for (i = 0; i < outer_max; i++) {
		if (bpf_map_lookup_elem(outer_fd, &i, &id))
			continue;
		fd = bpf_map_get_fd_by_id(id);
		if (fd < 0)
			continue;
		ok = !bpf_obj_get_info_by_fd(fd, &info, &len);
		close(fd);
		break;
	}
	if (ok < 0 || !want)
		return ok;
	if (!ok) {
		snprintf(m->why, sizeof(m->why), "inner map unreadable");
		return 0;
	}
	if (info.value_size != bpf_map__value_size(want)) {
		why(m, "inner value size %llu -> %llu", info.value_size, bpf_map__value_size(want));
		return 0;
	}
	if (info.key_size != bpf_map__key_size(want) ||
	    info.max_entries != bpf_map__max_entries(want) ||
	    info.type != (uint32_t)bpf_map__type(want)) {
		why(m, "inner map type %llu -> %llu", info.type, bpf_map__type(want));
		return 0;
	}
	return 1;
}

/* Whether the map pinned at path can be adopted by map; m->why says why not. */
static bool pinned_compatible(const struct btf *obtf, const struct bpf_map *map, const char *path,
			      bool any_size, struct maglev_layout_map *m)
{
	struct bpf_map_info info = {};
	uint32_t len = sizeof(info);
	struct btf *pbtf = NULL;
	uint64_t have, want;
	bool ok = false;
	int fd;

	fd = bpf_obj_get(path);
	if (fd < 0) {
		snprintf(m->why, sizeof(m->why), "pin unreadable: %s", strerror(errno));
		return false;
	}
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		snprintf(m->why, sizeof(m->why), "map info: %s", strerror(errno));
		goto out;
	}
	if (info.type != (uint32_t)bpf_map__type(map)) {
		why(m, "map type %llu -> %llu", info.type, bpf_map__type(map));
		goto out;
	}
	if (info.key_size != bpf_map__key_size(map)) {
		why(m, "key size %llu -> %llu", info.key_size, bpf_map__key_size(map));
		goto out;
	}
	if (info.value_size != bpf_map__value_size(map)) {
		why(m, "value size %llu -> %llu", info.value_size, bpf_map__value_size(map));
		goto out;
	}
	if (info.map_flags != bpf_map__map_flags(map)) {
		why(m, "map flags %#llx -> %#llx", info.map_flags, bpf_map__map_flags(map));
		goto out;
	}
	if (!any_size && info.max_entries != bpf_map__max_entries(map)) {
		why(m, "entries %llu -> %llu", info.max_entries, bpf_map__max_entries(map));
		goto out;
	}
	if (bpf_map__type(map) == BPF_MAP_TYPE_ARRAY_OF_MAPS ||
	    bpf_map__type(map) == BPF_MAP_TYPE_HASH_OF_MAPS) {
		int r = inner_compatible(fd, info.max_entries,
					 bpf_map__inner_map((struct bpf_map *)map), m);

		/* An empty outer map keeps nothing: renew it, whose inner map
		 * template (which the verifier checks against) may differ.
		 */
		if (r < 0)
			snprintf(m->why, sizeof(m->why), "empty map of maps");
		if (r <= 0)
			goto out;
	}
	if (info.btf_id && obtf) {
		pbtf = btf__load_from_kernel_by_id(info.btf_id);
		if (!pbtf) {
			snprintf(m->why, sizeof(m->why), "BTF of the pinned map unreadable");
			goto out;
		}
		have = btf_layout(pbtf, info.btf_key_type_id, info.btf_value_type_id);
		want = btf_layout(obtf, bpf_map__btf_key_type_id(map),
				  bpf_map__btf_value_type_id(map));
		if (have && want && have != want) {
			snprintf(m->why, sizeof(m->why), "key or value layout changed (BTF)");
			goto out;
		}
	}
	ok = true;
out:
	btf__free(pbtf);
	close(fd);
	return ok;
}

static struct maglev_layout_map *plan_find(struct maglev_layout_plan *p, const char *name)
{
	int i;

	for (i = 0; i < p->n; i++)
		if (!strcmp(p->maps[i].name, name))
			return &p->maps[i];
	return NULL;
}

int maglev_layout_plan(struct bpf_object *obj, const char *dir, const char *any_size_map,
		       struct maglev_layout_plan *p, char *err, size_t errlen)
{
	struct bpf_map *map;
	char path[PATH_MAX];
	size_t g;
	int i;

	memset(p, 0, sizeof(*p));
	bpf_object__for_each_map(map, obj)
	{
		struct maglev_layout_map *m;

		if (bpf_map__is_internal(map))
			continue;
		if (p->n == MAGLEV_LAYOUT_MAX_MAPS) {
			snprintf(err, errlen, "more than %d maps", MAGLEV_LAYOUT_MAX_MAPS);
			return -E2BIG;
		}
		m = &p->maps[p->n++];
		snprintf(m->name, sizeof(m->name), "%s", bpf_map__name(map));
		snprintf(path, sizeof(path), "%s/%s", dir, m->name);
		if (access(path, F_OK))
			continue; /* not pinned yet: created and pinned as usual */
		m->pinned = true;
		m->fresh = !pinned_compatible(bpf_object__btf(obj), map, path,
					      !strcmp(m->name, any_size_map), m);
	}
	for (g = 0; g < sizeof(layout_groups) / sizeof(layout_groups[0]); g++) {
		struct maglev_layout_map *a = plan_find(p, layout_groups[g][0]),
					 *b = plan_find(p, layout_groups[g][1]);

		if (!a || !b || a->fresh == b->fresh)
			continue;
		if (a->pinned && !a->fresh)
			a->fresh = true,
			snprintf(a->why, sizeof(a->why), "renewed with %s", b->name);
		if (b->pinned && !b->fresh)
			b->fresh = true,
			snprintf(b->why, sizeof(b->why), "renewed with %s", a->name);
	}
	for (i = 0; i < p->n; i++)
		p->nfresh += p->maps[i].fresh;
	return 0;
}

int maglev_layout_describe(const struct maglev_layout_plan *p, char *buf, size_t len)
{
	size_t off = 0;
	int i;

	if (len)
		buf[0] = '\0';
	for (i = 0; i < p->n && off < len; i++) {
		int w;

		if (!p->maps[i].fresh)
			continue;
		w = snprintf(buf + off, len - off, "%s%s (%s)", off ? ", " : "", p->maps[i].name,
			     p->maps[i].why);
		if (w < 0)
			break;
		off += (size_t)w;
	}
	return p->nfresh;
}

/* Every pinned XDP link in dir to prog: an interface the configuration no
 * longer names still forwards, from the new maps.
 */
static int update_links(const char *dir, int prog_fd, char *err, size_t errlen)
{
	struct dirent *e;
	char path[PATH_MAX];
	DIR *d = opendir(dir);
	int ret = 0;

	if (!d) {
		snprintf(err, errlen, "read pin dir %s: %s", dir, strerror(errno));
		return -errno;
	}
	while ((e = readdir(d))) {
		int fd;

		if (strncmp(e->d_name, "link_xdp_", 9))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		fd = bpf_obj_get(path);
		if (fd < 0)
			continue;
		if (bpf_link_update(fd, prog_fd, NULL) && errno != ENOLINK && !ret) {
			ret = -errno;
			snprintf(err, errlen, "update pinned link %s: %s", path, strerror(errno));
		}
		close(fd);
	}
	closedir(d);
	return ret;
}

int maglev_layout_commit(struct bpf_object *obj, const char *dir, int prog_fd,
			 struct maglev_layout_plan *p, char *err, size_t errlen)
{
	char path[PATH_MAX];
	int i, ret;

	if (!p->nfresh)
		return 0;
	ret = update_links(dir, prog_fd, err, errlen);
	if (ret)
		return ret;
	for (i = 0; i < p->n; i++) {
		struct bpf_map *map;

		if (!p->maps[i].fresh)
			continue;
		map = bpf_object__find_map_by_name(obj, p->maps[i].name);
		snprintf(path, sizeof(path), "%s/%s", dir, p->maps[i].name);
		if (!map || (unlink(path) && errno != ENOENT)) {
			snprintf(err, errlen, "replace pin %s: %s", path,
				 map ? strerror(errno) : "no such map");
			return map ? -errno : -ENOENT;
		}
		ret = bpf_map__pin(map, path);
		if (ret) {
			snprintf(err, errlen, "pin %s: %s", path, strerror(-ret));
			return ret;
		}
		p->maps[i].fresh = false;
		p->nfresh--;
	}
	return 0;
}
