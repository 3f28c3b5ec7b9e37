// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "model/be_state.h"

#define BE_STATE_NAME(e, name) [e] = name,
static const char *const names[BE_STATE_MAX] = {BE_STATES(BE_STATE_NAME)};
#undef BE_STATE_NAME

enum be_state be_state(const struct be *b)
{
	if (!b->up)
		return b->damped_up ? BE_SUPPRESSED : b->held ? BE_HELD : BE_DOWN;
	if (b->drain)
		return BE_DRAIN;
	if (!b->weight)
		return BE_QUIESCED;
	return b->ramp_step ? BE_RAMPING : BE_UP;
}

const char *be_state_name(const struct be *b)
{
	return names[be_state(b)];
}

const char *be_state_str(enum be_state s)
{
	return s < BE_STATE_MAX ? names[s] : "unknown";
}
