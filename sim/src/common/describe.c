/*
 * doca_sim_describe (doca_sim.h): one line naming this process's side, devices and live objects. Apart from diag.c so
 * that logging depends on nothing, and the configuration (which logs) does not depend on its own describer.
 */
#include <stdio.h>

#include <doca_sim.h>

#include "internal.h"

const char *doca_sim_describe(void)
{
	static char text[1024];
	struct doca_devinfo **devs = NULL;
	size_t count = 0;
	size_t used;

	used = (size_t)snprintf(text, sizeof(text), "side=%s", sim_side() == SIM_SIDE_DPU ? "dpu" : "host");
	if (sim_devices(&devs, &count) == DOCA_SUCCESS) {
		for (size_t i = 0; i < count && used < sizeof(text); i++) {
			used += (size_t)snprintf(text + used, sizeof(text) - used, " dev=%s(%s,reps=%zu)", devs[i]->pci_addr,
						 devs[i]->ibdev_name, devs[i]->num_reps);
		}
	} else if (used < sizeof(text)) {
		used += (size_t)snprintf(text + used, sizeof(text) - used, " devices=bad-config");
	}
	for (int kind = 0; kind < SIM_KIND_COUNT_ && used < sizeof(text); kind++)
		used += (size_t)snprintf(text + used, sizeof(text) - used, " %s=%llu", sim_live_kind_name((enum sim_kind)kind),
					 (unsigned long long)sim_live_count((enum sim_kind)kind));
	return text;
}
