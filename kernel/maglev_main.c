// SPDX-License-Identifier: GPL-2.0-only
/*
 * maglev_slowpath: the kernel half of maglev-lb's data plane. It forwards
 * what the XDP program cannot (reassembled fragments, IPv4 options, IPv6
 * extension headers) with the same flow hash and Maglev tables, configured
 * by maglevd over generic netlink. Module and namespace lifetimes live here.
 */
#include <linux/module.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>

#include "maglev.h"

unsigned int maglev_net_id __read_mostly;

static int __net_init maglev_net_init(struct net *net)
{
	return maglev_net_setup(maglev_pernet(net));
}

/* Unhook before the core's grace period, so exit frees with no reader left. */
static void __net_exit maglev_net_pre_exit(struct net *net)
{
	struct maglev_net *mn = maglev_pernet(net);

	mutex_lock(&mn->lock);
	if (mn->hooks_on) {
		maglev_hooks_disable(net);
		mn->hooks_on = false;
	}
	mutex_unlock(&mn->lock);
}

static void __net_exit maglev_net_exit(struct net *net)
{
	maglev_net_teardown(maglev_pernet(net));
}

static struct pernet_operations maglev_net_ops = {
	.init = maglev_net_init,
	.pre_exit = maglev_net_pre_exit,
	.exit = maglev_net_exit,
	.id = &maglev_net_id,
	.size = sizeof(struct maglev_net),
};

static int __init maglev_init(void)
{
	int err;

	err = register_pernet_subsys(&maglev_net_ops);
	if (err)
		return err;
	err = maglev_genl_register();
	if (err)
		unregister_pernet_subsys(&maglev_net_ops);
	return err;
}

static void __exit maglev_exit(void)
{
	/* No new configuration, then no hooks, then no pending RCU callbacks. */
	maglev_genl_unregister();
	unregister_pernet_subsys(&maglev_net_ops);
	rcu_barrier();
}

module_init(maglev_init);
module_exit(maglev_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("maglev-lb slow path: Maglev forwarding of defragmented VIP traffic");
MODULE_ALIAS_GENL_FAMILY(MAGLEV_GENL_NAME);
