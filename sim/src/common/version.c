/*
 * doca_version_runtime: the DOCA API version this software device implements, marked as the simulator.
 */
#include <doca_version.h>

#include "internal.h"

const char *doca_version_runtime(void)
{
	return DOCA_VERSION_STRING "-sim";
}
