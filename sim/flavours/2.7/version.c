/*
 * doca_version_runtime for the DOCA 2.7 flavour (replaces sim/src/common/version.c): the release whose names this build
 * exports, marked as the simulator.
 */
#include <doca_version.h>

#include "internal.h"

const char *doca_version_runtime(void)
{
	return "2.7.0-sim";
}
