// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>

#include "core/log.h"
#include "health/damping.h"
#include "health/settle.h"
#include "model/admit.h"

/* Whether b of v has a timed change due at now; do it if apply. */
static bool due(const struct daemon *d, const struct vip *v, struct be *b, uint64_t now, bool apply)
{
	char vname[CTL_ADDR_STRLEN], bname[CTL_ADDR_STRLEN];
	uint32_t step;

	if (b->suppressed && damping_penalty(&d->cfg, b, now) < d->cfg.damping_reuse) {
		if (!apply)
			return true;
		damping_reuse(&d->cfg, b, now);
		damping_log(d, v, b, "reused", now);
		if (!b->damped_up)
			return true;
		/* Its checks pass: up now, with its slots if it is still held. */
		b->damped_up = false;
		b->up = true;
		if (b->held)
			b->held = false;
		else
			admit_ramp_start(v, b, admit_slow_start_ms(v, &d->cfg), now);
		return true;
	}
	if (b->held && !b->up && now >= b->held_until) {
		if (!apply)
			return true;
		b->held = false;
		ctl_format_vip(&v->key, vname, sizeof(vname));
		ctl_format_addr(&b->addr, bname, sizeof(bname));
		log_info("settle: backend %s of %s down for settle_ms %llu: its slots are "
			 "reassigned",
			 bname, vname, (unsigned long long)d->cfg.settle_ms);
		return true;
	}
	if (!b->ramp_start)
		return false;
	step = admit_ramp_step(b, admit_slow_start_ms(v, &d->cfg), now);
	if (step == b->ramp_step && step)
		return false;
	if (!apply)
		return true;
	b->ramp_step = step;
	if (!step)
		b->ramp_start = 0;
	ctl_format_vip(&v->key, vname, sizeof(vname));
	ctl_format_addr(&b->addr, bname, sizeof(bname));
	log_info("slow start: backend %s of %s at step %u of %u (weight %u)", bname, vname,
		 step ? step : ADMIT_RAMP_STEPS, ADMIT_RAMP_STEPS, b->weight);
	return true;
}

/*
 * When b's next timed change is due (CLOCK_MONOTONIC ms; 0: none, or
 * damping's reuse, which the tick looks at): the end of its hold, its next
 * ramp step.
 */
static uint64_t next_due(const struct daemon *d, const struct vip *v, const struct be *b)
{
	uint64_t ss;

	if (b->held && !b->up)
		return b->held_until;
	if (!b->ramp_start || !b->ramp_step)
		return 0;
	ss = admit_slow_start_ms(v, &d->cfg);
	/* Step k lasts until (k x slow_start_ms) / STEPS, rounded up (admit_ramp_step). */
	return b->ramp_start + (b->ramp_step * ss + ADMIT_RAMP_STEPS - 1) / ADMIT_RAMP_STEPS;
}

static void on_due(struct daemon *d, struct ev_source *src, uint32_t events)
{
	uint64_t n;

	(void)events;
	if (read(src->fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		log_debug("settle: timer read: %s", strerror(errno));
	settle_tick(d);
}

/*
 * A timer at the next change due, rather than the next 100 ms tick: the
 * tick's phase is each balancer's own, and in a fleet every balancer steps
 * at the instant the fleet's times give (health/admission.h).
 */
static void arm(struct daemon *d)
{
	static struct ev_source src = {.fd = -1, .cb = on_due};
	static bool failed;
	struct itimerspec its = {0};
	uint64_t due = 0, t, now = mono_ms();
	uint32_t id, i;

	for (id = 0; id < MAGLEV_MAX_VIPS; id++) {
		const struct vip *v = d->reg->vips[id];

		for (i = 0; v && i < v->nbe; i++) {
			t = next_due(d, v, &v->bes[i]);
			if (t && (!due || t < due))
				due = t;
		}
	}
	if (src.fd < 0 && !failed) {
		src.fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
		if (src.fd < 0 || ev_add(d, &src, EPOLLIN)) {
			log_warn("settle: no timer (%s): timed changes wait for the 100 ms tick",
				 strerror(errno));
			if (src.fd >= 0)
				close(src.fd);
			src.fd = -1;
			failed = true;
		}
	}
	if (src.fd < 0)
		return;
	if (due) {
		/* Absolute, and never 0 (that would disarm it). */
		due = due > now ? due : now + 1;
		its.it_value.tv_sec = (time_t)(due / 1000);
		its.it_value.tv_nsec = (long)(due % 1000) * 1000000L;
	}
	if (timerfd_settime(src.fd, TFD_TIMER_ABSTIME, &its, NULL))
		log_debug("settle: timer: %s", strerror(errno));
}

void settle_tick(struct daemon *d)
{
	struct registry *next = NULL;
	uint64_t now = mono_ms();
	uint32_t id, i, n = 0;
	char err[300];

	for (id = 0; id < MAGLEV_MAX_VIPS; id++) {
		struct vip *v = d->reg->vips[id], *nv;

		for (i = 0; v && i < v->nbe; i++) {
			if (!due(d, v, &v->bes[i], now, false))
				continue;
			if (!next)
				next = registry_clone(d->reg);
			if (!next) {
				log_err("settle: out of memory");
				return;
			}
			nv = next->vips[id];
			due(d, nv, &nv->bes[i], now, true);
			nv->dirty = true;
			n++;
		}
	}
	if (next && daemon_commit(d, next, COMMIT_SRC_HEALTH, err, sizeof(err)))
		log_err("settle: applying %u timed changes: %s", n, err);
	arm(d);
}
