/*
 * PCI addresses of the software device: the canonical form (DDDD:BB:DD.F, lower case) and comparison. Used by the
 * configuration (to store them), the devices and the export registry; depends on nothing else of the device.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static bool hex_run(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

bool sim_pci_canonical(const char *in, char out[DOCA_DEVINFO_PCI_ADDR_SIZE])
{
	char domain[5] = "0000";
	const char *bdf;
	size_t len;

	if (in == NULL)
		return false;
	len = strlen(in);
	if (len == 12 && in[4] == ':') { /* DDDD:BB:DD.F */
		if (!hex_run(in, 4))
			return false;
		memcpy(domain, in, 4);
		bdf = in + 5;
	} else if (len == 7) { /* BB:DD.F */
		bdf = in;
	} else {
		return false;
	}
	if (!hex_run(bdf, 2) || bdf[2] != ':' || !hex_run(bdf + 3, 2) || bdf[5] != '.' || !hex_run(bdf + 6, 1))
		return false;
	snprintf(out, DOCA_DEVINFO_PCI_ADDR_SIZE, "%.4s:%.7s", domain, bdf);
	for (size_t i = 0; out[i] != '\0'; i++)
		out[i] = (char)tolower((unsigned char)out[i]);
	return true;
}

bool sim_pci_equal(const char *a, const char *b)
{
	char ca[DOCA_DEVINFO_PCI_ADDR_SIZE], cb[DOCA_DEVINFO_PCI_ADDR_SIZE];

	return sim_pci_canonical(a, ca) && sim_pci_canonical(b, cb) && strcmp(ca, cb) == 0;
}

