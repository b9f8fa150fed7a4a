/*
 * Devices and representors of the software device: listing, opening, properties (PCI addresses: pci.c).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "accessors.h"

bool sim_dev_can_reach(const struct doca_devinfo *importer, const char *exporter_pci, bool same_process)
{
	struct doca_devinfo **peers;
	size_t num_peers = 0;

	if (same_process && sim_pci_equal(importer->pci_addr, exporter_pci))
		return true;
	for (size_t i = 0; i < importer->num_reps; i++)
		if (sim_pci_equal(importer->reps[i].pci_addr, exporter_pci))
			return true;
	/* Host side: the exporter is a DPU device that represents this host function */
	if (importer->side == SIM_SIDE_HOST && sim_peer_devices(&peers, &num_peers) == DOCA_SUCCESS) {
		for (size_t i = 0; i < num_peers; i++) {
			if (!sim_pci_equal(peers[i]->pci_addr, exporter_pci))
				continue;
			for (size_t r = 0; r < peers[i]->num_reps; r++)
				if (sim_pci_equal(peers[i]->reps[r].pci_addr, importer->pci_addr))
					return true;
		}
	}
	return false;
}

/* Copy a NUL-terminated property into a caller buffer of `size` bytes */
static doca_error_t copy_prop(char *out, uint32_t size, const char *value)
{
	if (out == NULL || strlen(value) + 1 > size)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "property buffer too small for \"%s\"", value);
	memcpy(out, value, strlen(value) + 1);
	return DOCA_SUCCESS;
}

/* ---- local devices ---- */

doca_error_t doca_devinfo_create_list(struct doca_devinfo ***dev_list, uint32_t *nb_devs)
{
	struct doca_devinfo **all, **list;
	size_t count;
	doca_error_t err;

	if (dev_list == NULL || nb_devs == NULL)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: NULL argument", __func__);
	err = sim_devices(&all, &count);
	if (err != DOCA_SUCCESS)
		return err;
	/* One extra NULL slot: the list is NULL-terminated like DOCA's */
	list = calloc(count + 1, sizeof(*list));
	if (list == NULL)
		return DOCA_ERROR_NO_MEMORY;
	memcpy(list, all, count * sizeof(*list));
	*dev_list = list;
	*nb_devs = (uint32_t)count;
	sim_live_inc(SIM_KIND_DEVINFO_LIST);
	return DOCA_SUCCESS;
}

/* The destroy of a list that create_list allocated: INVALID_VALUE for NULL, else freed and uncounted */
static doca_error_t destroy_list(void *list, enum sim_kind kind)
{
	if (list == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	free(list);
	sim_live_dec(kind);
	return DOCA_SUCCESS;
}

doca_error_t doca_devinfo_destroy_list(struct doca_devinfo **dev_list)
{
	return destroy_list(dev_list, SIM_KIND_DEVINFO_LIST);
}

/* Devices currently open, one handle per devinfo: DOCA reference-counts doca_dev_open of an open device */
#define MAX_OPEN_DEVS 64
static struct doca_dev *open_devs[MAX_OPEN_DEVS];
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;

doca_error_t doca_dev_open(struct doca_devinfo *devinfo, struct doca_dev **dev)
{
	struct doca_dev *d = NULL;
	size_t i, free_slot = MAX_OPEN_DEVS;

	if (devinfo == NULL || dev == NULL)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: NULL argument", __func__);
	pthread_mutex_lock(&open_lock);
	for (i = 0; i < MAX_OPEN_DEVS; i++) {
		if (open_devs[i] != NULL && open_devs[i]->info == devinfo) {
			d = open_devs[i];
			break;
		}
		if (open_devs[i] == NULL && free_slot == MAX_OPEN_DEVS)
			free_slot = i;
	}
	if (d != NULL) {
		d->opens++;
		pthread_mutex_unlock(&open_lock);
		*dev = d;
		return DOCA_SUCCESS;
	}
	d = calloc(1, sizeof(*d));
	if (d == NULL) {
		pthread_mutex_unlock(&open_lock);
		return DOCA_ERROR_NO_MEMORY;
	}
	d->info = devinfo;
	d->opens = 1;
	if (free_slot < MAX_OPEN_DEVS)
		open_devs[free_slot] = d;
	pthread_mutex_unlock(&open_lock);
	*dev = d;
	sim_live_inc(SIM_KIND_DEV);
	return DOCA_SUCCESS;
}

doca_error_t doca_dev_close(struct doca_dev *dev)
{
	/* DOCA documents no INVALID_VALUE here, and NVIDIA's DMA samples close an already closed (NULL) device in their
	 * teardown: accept it as a no-op */
	if (dev == NULL)
		return DOCA_SUCCESS;
	pthread_mutex_lock(&open_lock);
	if (dev->opens > 1) {
		/* another doca_dev_open of the same device still holds it */
		dev->opens--;
		pthread_mutex_unlock(&open_lock);
		return DOCA_SUCCESS;
	}
	if (dev->refs > 0) {
		pthread_mutex_unlock(&open_lock);
		return sim_fail(DOCA_ERROR_IN_USE, "%s: device still used by %u mmaps/contexts", __func__, dev->refs);
	}
	for (size_t i = 0; i < MAX_OPEN_DEVS; i++)
		if (open_devs[i] == dev)
			open_devs[i] = NULL;
	pthread_mutex_unlock(&open_lock);
	free(dev);
	sim_live_dec(SIM_KIND_DEV);
	return DOCA_SUCCESS;
}

void sim_dev_ref(struct doca_dev *dev)
{
	if (dev != NULL)
		dev->refs++;
}

void sim_dev_unref(struct doca_dev *dev)
{
	if (dev != NULL && dev->refs > 0)
		dev->refs--;
}

SIM_VALUE_GETTER(struct doca_devinfo *, doca_dev_as_devinfo, const struct doca_dev, dev, NULL, dev->info)

doca_error_t doca_devinfo_get_pci_addr_str(const struct doca_devinfo *devinfo, char *pci_addr_str)
{
	if (devinfo == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	return copy_prop(pci_addr_str, DOCA_DEVINFO_PCI_ADDR_SIZE, devinfo->pci_addr);
}

/* *is_equal = whether pci_addr_str, in any form DOCA accepts, names the address have (NULL: no device given) */
static doca_error_t pci_addr_is_equal(const char *have, const char *pci_addr_str, uint8_t *is_equal, const char *func)
{
	char canonical[DOCA_DEVINFO_PCI_ADDR_SIZE];

	if (have == NULL || is_equal == NULL || !sim_pci_canonical(pci_addr_str, canonical))
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: invalid input", func);
	*is_equal = strcmp(have, canonical) == 0;
	return DOCA_SUCCESS;
}

doca_error_t doca_devinfo_is_equal_pci_addr(const struct doca_devinfo *devinfo, const char *pci_addr_str,
					    uint8_t *is_equal)
{
	return pci_addr_is_equal(devinfo == NULL ? NULL : devinfo->pci_addr, pci_addr_str, is_equal, __func__);
}

doca_error_t doca_devinfo_get_iface_name(const struct doca_devinfo *devinfo, char *iface_name, uint32_t size)
{
	if (devinfo == NULL || size < DOCA_DEVINFO_IFACE_NAME_SIZE)
		return DOCA_ERROR_INVALID_VALUE;
	return copy_prop(iface_name, size, devinfo->iface_name);
}

doca_error_t doca_devinfo_get_ibdev_name(const struct doca_devinfo *devinfo, char *ibdev_name, uint32_t size)
{
	if (devinfo == NULL || size < DOCA_DEVINFO_IBDEV_NAME_SIZE)
		return DOCA_ERROR_INVALID_VALUE;
	return copy_prop(ibdev_name, size, devinfo->ibdev_name);
}

SIM_GETTER(doca_devinfo_get_pci_func_type, const struct doca_devinfo, devinfo, enum doca_pci_func_type, pci_func_type,
	devinfo->func_type)

doca_error_t doca_devinfo_get_sf_index(const struct doca_devinfo *devinfo, uint32_t *sf_index)
{
	if (devinfo == NULL || sf_index == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (devinfo->func_type != DOCA_PCI_FUNC_TYPE_SF)
		return sim_fail(DOCA_ERROR_NOT_SUPPORTED, "%s: %s is not a sub-function", __func__, devinfo->pci_addr);
	*sf_index = devinfo->sf_index;
	return DOCA_SUCCESS;
}

static doca_error_t rep_filter_supported(const struct doca_devinfo *devinfo, uint32_t bits, uint8_t *out)
{
	if (devinfo == NULL || out == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*out = 0;
	for (size_t i = 0; i < devinfo->num_reps; i++)
		if (bits == 0 || (devinfo->reps[i].filter_bits & bits))
			*out = 1;
	/* A DPU device can list representors even while none exist */
	if (bits == 0 && devinfo->side == SIM_SIDE_DPU)
		*out = 1;
	return DOCA_SUCCESS;
}

doca_error_t doca_devinfo_rep_cap_is_filter_all_supported(const struct doca_devinfo *devinfo, uint8_t *supported)
{
	return rep_filter_supported(devinfo, 0, supported);
}

doca_error_t doca_devinfo_rep_cap_is_filter_net_supported(const struct doca_devinfo *devinfo, uint8_t *supported)
{
	if (devinfo != NULL && supported != NULL && devinfo->side == SIM_SIDE_DPU) {
		*supported = 1;
		return DOCA_SUCCESS;
	}
	return rep_filter_supported(devinfo, DOCA_DEVINFO_REP_FILTER_NET, supported);
}

doca_error_t doca_devinfo_rep_cap_is_filter_emulated_supported(const struct doca_devinfo *devinfo, uint8_t *supported)
{
	return rep_filter_supported(devinfo, DOCA_DEVINFO_REP_FILTER_EMULATED, supported);
}

/* ---- representors ---- */

doca_error_t doca_devinfo_rep_create_list(struct doca_dev *dev, int filter, struct doca_devinfo_rep ***dev_list_rep,
					  uint32_t *nb_devs_rep)
{
	struct doca_devinfo_rep **list;
	struct doca_devinfo *info;
	uint32_t n = 0;

	if (dev == NULL || dev_list_rep == NULL || nb_devs_rep == NULL)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: NULL argument", __func__);
	info = dev->info;
	if (info->side != SIM_SIDE_DPU)
		return sim_fail(DOCA_ERROR_NOT_SUPPORTED, "%s: %s is a host device without representors", __func__,
				info->pci_addr);
	list = calloc(info->num_reps + 1, sizeof(*list));
	if (list == NULL)
		return DOCA_ERROR_NO_MEMORY;
	for (size_t i = 0; i < info->num_reps; i++)
		if (filter == DOCA_DEVINFO_REP_FILTER_ALL || (info->reps[i].filter_bits & (uint32_t)filter))
			list[n++] = &info->reps[i];
	*dev_list_rep = list;
	*nb_devs_rep = n;
	sim_live_inc(SIM_KIND_DEVINFO_REP_LIST);
	return DOCA_SUCCESS;
}

doca_error_t doca_devinfo_rep_destroy_list(struct doca_devinfo_rep **dev_list_rep)
{
	return destroy_list(dev_list_rep, SIM_KIND_DEVINFO_REP_LIST);
}

doca_error_t doca_dev_rep_open(struct doca_devinfo_rep *devinfo, struct doca_dev_rep **dev_rep)
{
	struct doca_dev_rep *r;

	if (devinfo == NULL || dev_rep == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return DOCA_ERROR_NO_MEMORY;
	r->info = devinfo;
	*dev_rep = r;
	sim_live_inc(SIM_KIND_DEV_REP);
	return DOCA_SUCCESS;
}

doca_error_t doca_dev_rep_close(struct doca_dev_rep *dev)
{
	if (dev == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (dev->refs > 0)
		return sim_fail(DOCA_ERROR_IN_USE, "%s: representor still used by %u contexts", __func__, dev->refs);
	free(dev);
	sim_live_dec(SIM_KIND_DEV_REP);
	return DOCA_SUCCESS;
}

SIM_VALUE_GETTER(struct doca_devinfo_rep *, doca_dev_rep_as_devinfo, struct doca_dev_rep, dev_rep, NULL, dev_rep->info)

doca_error_t doca_devinfo_rep_get_vuid(const struct doca_devinfo_rep *devinfo_rep, char *rep_vuid, uint32_t size)
{
	if (devinfo_rep == NULL || size < DOCA_DEVINFO_REP_VUID_SIZE)
		return DOCA_ERROR_INVALID_VALUE;
	return copy_prop(rep_vuid, size, devinfo_rep->vuid);
}

doca_error_t doca_devinfo_rep_get_pci_addr_str(const struct doca_devinfo_rep *devinfo_rep, char *pci_addr_str)
{
	if (devinfo_rep == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	return copy_prop(pci_addr_str, DOCA_DEVINFO_REP_PCI_ADDR_SIZE, devinfo_rep->pci_addr);
}

SIM_GETTER(doca_devinfo_rep_get_pci_func_type, const struct doca_devinfo_rep, devinfo_rep, enum doca_pci_func_type,
	pci_func_type, devinfo_rep->func_type)

doca_error_t doca_devinfo_rep_is_equal_pci_addr(const struct doca_devinfo_rep *devinfo_rep, const char *pci_addr_str,
						uint8_t *is_equal)
{
	return pci_addr_is_equal(devinfo_rep == NULL ? NULL : devinfo_rep->pci_addr, pci_addr_str, is_equal, __func__);
}

doca_error_t sim_cap_u64(const struct doca_devinfo *devinfo, bool available, uint64_t value, uint64_t *out)
{
	if (devinfo == NULL || out == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (!available)
		return DOCA_ERROR_NOT_SUPPORTED;
	*out = value;
	return DOCA_SUCCESS;
}

doca_error_t sim_cap_u32(const struct doca_devinfo *devinfo, bool available, uint32_t value, uint32_t *out)
{
	uint64_t wide;
	doca_error_t err = sim_cap_u64(devinfo, available, value, out == NULL ? NULL : &wide);

	if (err == DOCA_SUCCESS)
		*out = (uint32_t)wide;
	return err;
}
