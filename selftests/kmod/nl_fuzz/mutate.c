// SPDX-License-Identifier: GPL-2.0-only
/*
 * Malformed messages: random requests for any command, known or not, with
 * their netlink, genetlink or attribute headers broken; and mutations
 * (bit flips, inserted, deleted and interesting bytes, attribute lengths and
 * types, attributes of other requests) of the client's own requests.
 */
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>

#include "capture.h"
#include "mutate.h"

/* A random request for any command, known or not. */
static struct nlmsghdr *fz_any_request(FIXTURE_DATA(fz) * self)
{
	uint8_t cmd = fz_pct(&self->g, 80) ? (uint8_t)(1 + fz_r(&self->g, MAGLEV_CMD_MAX))
					   : (uint8_t)FZ_PICK(&self->g, 0, MAGLEV_CMD_MAX + 1,
							      MAGLEV_CMD_MAX + 2, 0x7f, 0x80, 0xff);

	return fz_random_request(&self->g, self->buf, self->s.family, cmd);
}

/*
 * Header-level garbage: no header at all, nlmsg_len beyond the datagram or
 * below a header, half a genetlink header, unknown commands, wrong versions,
 * reserved bits, odd flags, bytes left over after the attributes, and
 * attribute headers that lie about their length.
 */
size_t fz_bad_header(FIXTURE_DATA(fz) * self)
{
	struct fz_gen *g = &self->g;
	struct nlmsghdr *nlh = fz_any_request(self);
	struct genlmsghdr *gh = mnl_nlmsg_get_payload(nlh);
	size_t len = nlh->nlmsg_len, hdr = NLMSG_HDRLEN + GENL_HDRLEN;

	switch (fz_r(g, 10)) {
	case 0: /* shorter than a netlink header */
		len = fz_r(g, NLMSG_HDRLEN);
		fz_rand_bytes(g, self->buf, len);
		break;
	case 1: /* claims more than was sent */
		nlh->nlmsg_len = (uint32_t)(len + FZ_PICK(g, 1, 4, 100, 65536, 0x7fffffff,
							  0xffffffff - len));
		break;
	case 2: /* claims less than a netlink header */
		nlh->nlmsg_len = (uint32_t)fz_r(g, NLMSG_HDRLEN);
		break;
	case 3: /* part of the genetlink header */
		nlh->nlmsg_len = NLMSG_HDRLEN + (uint32_t)fz_r(g, GENL_HDRLEN);
		len = nlh->nlmsg_len;
		break;
	case 4: /* unknown command */
		gh->cmd = (uint8_t)FZ_PICK(g, 0, MAGLEV_CMD_MAX + 1, 0x40, 0xff,
					   MAGLEV_CMD_MAX + 1 + fz_r(g, 255 - MAGLEV_CMD_MAX));
		break;
	case 5: /* genetlink version and reserved field */
		gh->version = (uint8_t)kmod_rand(&g->rs);
		if (fz_pct(g, 50))
			gh->reserved = (uint16_t)kmod_rand(&g->rs);
		break;
	case 6: /* any flags */
		nlh->nlmsg_flags = (uint16_t)kmod_rand(&g->rs);
		break;
	case 7: /* 1-3 bytes after the last attribute, or a bare attribute header */
		len += fz_r(g, 4) + 1;
		fz_rand_bytes(g, self->buf + nlh->nlmsg_len, len - nlh->nlmsg_len);
		nlh->nlmsg_len = (uint32_t)len;
		break;
	case 8: /* an attribute header that lies about its length */
		if (len >= hdr + 4) {
			struct nlattr *a = (struct nlattr *)(self->buf + hdr);

			a->nla_len = (uint16_t)FZ_PICK(g, 0, 1, 3, 4, a->nla_len + 1,
						       a->nla_len + 4, len - hdr + 1, 0xffff);
		}
		break;
	default: /* random bytes after the genetlink header */
		len = hdr + fz_r(g, 200);
		fz_rand_bytes(g, self->buf + hdr, len - hdr);
		nlh->nlmsg_len = (uint32_t)len;
		break;
	}
	return len;
}

/* Offsets of the top-level attributes of a message (well-formed ones only). */
static int fz_attr_offsets(const uint8_t *msg, size_t len, size_t *off, int max)
{
	size_t o = NLMSG_HDRLEN + GENL_HDRLEN;
	int n = 0;

	while (n < max && o + 4 <= len) {
		const struct nlattr *a = (const struct nlattr *)(msg + o);

		if (a->nla_len < 4 || o + a->nla_len > len)
			break;
		off[n++] = o;
		o += (a->nla_len + 3) & ~3u;
	}
	return n;
}

size_t fz_mutate(FIXTURE_DATA(fz) * self, size_t len)
{
	struct fz_gen *g = &self->g;
	uint8_t *m = self->buf;
	size_t lo = NLMSG_HDRLEN, off[64], k, n;
	int nattr = fz_attr_offsets(m, len, off, 64);
	struct nlattr *a = nattr ? (struct nlattr *)(m + off[fz_r(g, nattr)]) : NULL;

	switch (fz_r(g, 10)) {
	case 0: /* flip bits */
		for (k = 1 + fz_r(g, 4); k-- && len > lo;)
			m[lo + fz_r(g, len - lo)] ^= (uint8_t)(1u << fz_r(g, 8));
		break;
	case 1: /* interesting bytes */
		for (k = 1 + fz_r(g, 3); k-- && len > lo;)
			m[lo + fz_r(g, len - lo)] = (uint8_t)FZ_PICK(g, 0, 0xff, 0x7f, 0x80, 1);
		break;
	case 2: /* insert bytes */
		n = 1 + fz_r(g, 8);
		if (len + n < FZ_BUF && len > lo) {
			k = lo + fz_r(g, len - lo + 1);
			memmove(m + k + n, m + k, len - k);
			fz_rand_bytes(g, m + k, n);
			len += n;
		}
		break;
	case 3: /* delete bytes */
		n = 1 + fz_r(g, 8);
		if (len > lo + n) {
			k = lo + fz_r(g, len - lo - n + 1);
			memmove(m + k, m + k + n, len - k - n);
			len -= n;
		}
		break;
	case 4: /* truncate */
		if (len > lo)
			len = lo + fz_r(g, len - lo);
		break;
	case 5: /* an attribute's length or type */
		if (a) {
			if (fz_pct(g, 50))
				a->nla_len =
					(uint16_t)FZ_PICK(g, 0, 3, 4, 5, a->nla_len - 1,
							  a->nla_len + 1, a->nla_len + 8, 0xffff);
			else
				a->nla_type = (uint16_t)FZ_PICK(g, a->nla_type ^ NLA_F_NESTED,
								a->nla_type ^ NLA_F_NET_BYTEORDER,
								0, MAGLEV_A_MAX + 1,
								1 + fz_r(g, MAGLEV_A_MAX));
		}
		break;
	case 6: /* duplicate an attribute at the end */
		if (a && len + ((a->nla_len + 3) & ~3u) < FZ_BUF) {
			n = (a->nla_len + 3) & ~3u;
			memcpy(m + len, a, n);
			len += n;
		}
		break;
	case 7: /* attributes of another captured request appended */
		k = fz_r(g, g_cap.n);
		n = g_cap.len[k] - (NLMSG_HDRLEN + GENL_HDRLEN);
		if (len + n < FZ_BUF) {
			memcpy(m + len, g_cap.msg[k] + NLMSG_HDRLEN + GENL_HDRLEN, n);
			len += n;
		}
		break;
	case 8: /* a value word at its boundary */
		if (a && a->nla_len >= 8) {
			uint32_t v =
				(uint32_t)FZ_PICK(g, 0, 0xffffffff, MAGLEV_GENL_BACKEND_MAX + 1,
						  MAGLEV_GENL_TABLE_MAX, 0x80000000);

			memcpy((uint8_t *)a + 4, &v, 4);
		}
		break;
	default: /* the genetlink header */
		m[lo + fz_r(g, GENL_HDRLEN)] = (uint8_t)kmod_rand(&g->rs);
		break;
	}
	return len;
}
