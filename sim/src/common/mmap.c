/*
 * Memory maps: configuration, start/stop, PCI export (through the registry) and import from an export descriptor.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "accessors.h"
#include "registry.h"

/* Every bit enum doca_access_flag defines */
#define ACCESS_FLAGS_ALL 0x7fu
#define PCI_ACCESS (DOCA_ACCESS_FLAG_PCI_READ_ONLY | DOCA_ACCESS_FLAG_PCI_READ_WRITE)

doca_error_t doca_mmap_create(struct doca_mmap **mmap)
{
	struct doca_mmap *m;

	if (mmap == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	SIM_NEW_HANDLE_OR_RETURN(m);
	m->permissions = DOCA_ACCESS_FLAG_LOCAL_READ_WRITE;
	m->export_index = -1;
	*mmap = m;
	sim_live_inc(SIM_KIND_MMAP);
	return DOCA_SUCCESS;
}

/* Revoke the export and free the descriptors: the part of stop shared with destroy */
static void unexport(struct doca_mmap *mmap)
{
	/* An mmap inherited through fork() names its parent's entry: the parent revokes its own */
	if (mmap->export_index >= 0 && mmap->export_pid == getpid())
		sim_registry_revoke(mmap->export_index);
	mmap->export_index = -1;
	mmap->exported = false;
	sim_rdma_unexport(mmap);
	for (size_t i = 0; i < SIM_MMAP_MAX_DEVS; i++) {
		free(mmap->export_descs[i]);
		mmap->export_descs[i] = NULL;
	}
}

doca_error_t doca_mmap_destroy(struct doca_mmap *mmap)
{
	SIM_RETURN_IF_NULL_OR_DEAD(mmap, magic, "mmap");
	if (mmap->live_bufs > 0) {
		sim_strict_report(SIM_RULE_DESTROY_WITH_CHILDREN, __func__, "mmap", mmap,
				  "%zu bufs still point into it: returned DOCA_ERROR_NOT_PERMITTED", mmap->live_bufs);
		return sim_fail(DOCA_ERROR_NOT_PERMITTED, "%s: %zu bufs still point into the mmap", __func__,
				mmap->live_bufs);
	}
	unexport(mmap);
	if (mmap->from_export)
		sim_registry_detach(&mmap->remote);
	else if (mmap->started && mmap->free_cb != NULL)
		mmap->free_cb(mmap->base, mmap->len, mmap->free_cb_opaque);
	if (mmap->has_dmabuf)
		close(mmap->dmabuf_fd);
	for (size_t i = 0; i < mmap->num_devs; i++)
		sim_dev_unref(mmap->devs[i]);
	sim_release(mmap, &mmap->magic);
	sim_live_dec(SIM_KIND_MMAP);
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_start(struct doca_mmap *mmap)
{
	SIM_RETURN_IF_NULL_OR_DEAD(mmap, magic, "mmap");
	if (mmap->from_export)
		return sim_fail(DOCA_ERROR_NOT_PERMITTED, "%s: mmap was created from an export", __func__);
	if (mmap->started)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s: already started", __func__);
	if (mmap->base == NULL || mmap->len == 0)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: no memory range set", __func__);
	mmap->started = true;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_stop(struct doca_mmap *mmap)
{
	SIM_RETURN_IF_NULL_OR_DEAD(mmap, magic, "mmap");
	/* An mmap created from an export may be stopped too: its header says NOT_PERMITTED, but NVIDIA's 3.3 RDMA
	 * samples stop their remote mmap before destroying it and count a failure as an error, so DOCA allows it */
	if (mmap->from_export) {
		/* its RDMA re-export (a memory chain) ends here: the peer's next access is refused */
		unexport(mmap);
		mmap->started = false;
		return DOCA_SUCCESS;
	}
	if (!mmap->started)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s: not started", __func__);
	if (mmap->live_bufs > 0)
		return sim_fail(DOCA_ERROR_NOT_PERMITTED, "%s: %zu bufs still point into the mmap", __func__,
				mmap->live_bufs);
	unexport(mmap);
	mmap->started = false;
	return DOCA_SUCCESS;
}

static int find_dev(const struct doca_mmap *mmap, const struct doca_dev *dev)
{
	for (size_t i = 0; i < mmap->num_devs; i++)
		if (mmap->devs[i] == dev)
			return (int)i;
	return -1;
}

doca_error_t doca_mmap_add_dev(struct doca_mmap *mmap, struct doca_dev *dev)
{
	if (mmap == NULL || dev == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	SIM_RETURN_IF_DEAD(mmap, magic, "mmap", DOCA_ERROR_INVALID_VALUE);
	if (mmap->started || mmap->from_export)
		return sim_fail(DOCA_ERROR_NOT_PERMITTED, "%s: mmap is started or imported", __func__);
	if (find_dev(mmap, dev) >= 0)
		return DOCA_ERROR_ALREADY_EXIST;
	if (mmap->num_devs == SIM_MMAP_MAX_DEVS)
		return DOCA_ERROR_NO_MEMORY;
	mmap->devs[mmap->num_devs++] = dev;
	sim_dev_ref(dev);
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_rm_dev(struct doca_mmap *mmap, struct doca_dev *dev)
{
	int at;

	if (mmap == NULL || dev == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	SIM_RETURN_IF_DEAD(mmap, magic, "mmap", DOCA_ERROR_INVALID_VALUE);
	if (mmap->started || mmap->from_export)
		return sim_fail(DOCA_ERROR_NOT_PERMITTED, "%s: mmap is started or imported", __func__);
	at = find_dev(mmap, dev);
	if (at < 0)
		return DOCA_ERROR_NOT_FOUND;
	memmove(&mmap->devs[at], &mmap->devs[at + 1], (mmap->num_devs - (size_t)at - 1) * sizeof(mmap->devs[0]));
	mmap->num_devs--;
	sim_dev_unref(dev);
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_set_memrange(struct doca_mmap *mmap, void *addr, size_t len)
{
	doca_error_t err;

	if (mmap == NULL || addr == NULL || len == 0 || (uintptr_t)addr + len < (uintptr_t)addr)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: invalid range", __func__);
	SIM_RETURN_IF_DEAD(mmap, magic, "mmap", DOCA_ERROR_INVALID_VALUE);
	err = sim_mmap_range_settable(mmap, __func__);
	if (err != DOCA_SUCCESS)
		return err;
	mmap->base = addr;
	mmap->len = len;
	return DOCA_SUCCESS;
}

doca_error_t sim_mmap_range_settable(const struct doca_mmap *mmap, const char *func)
{
	if (mmap->started)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s: mmap is started", func);
	if (mmap->base != NULL)
		return sim_fail(DOCA_ERROR_NOT_PERMITTED, "%s: range already set", func);
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_get_memrange(const struct doca_mmap *mmap, void **addr, size_t *len)
{
	if (mmap == NULL || addr == NULL || len == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	SIM_RETURN_IF_DEAD(mmap, magic, "mmap", DOCA_ERROR_INVALID_VALUE);
	if (mmap->base == NULL)
		return DOCA_ERROR_BAD_STATE;
	*addr = mmap->base;
	*len = mmap->len;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_set_permissions(struct doca_mmap *mmap, uint32_t access_mask)
{
	if (mmap == NULL || (access_mask & ~ACCESS_FLAGS_ALL) != 0 || (access_mask & PCI_ACCESS) == PCI_ACCESS)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: invalid access mask 0x%x", __func__, access_mask);
	SIM_RETURN_IF_DEAD(mmap, magic, "mmap", DOCA_ERROR_INVALID_VALUE);
	if (mmap->started)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s: mmap is started", __func__);
	mmap->permissions = access_mask;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_enable_thread_safety(struct doca_mmap *mmap)
{
	SIM_RETURN_IF_NULL_OR_DEAD(mmap, magic, "mmap");
	/* NVIDIA's storage programs enable it on maps created from an export too, which are started from the outset */
	if (mmap->started && !mmap->from_export)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s: mmap is started", __func__);
	mmap->thread_safe = true;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_set_free_cb(struct doca_mmap *mmap, doca_mmap_memrange_free_cb_t *free_cb, void *opaque)
{
	SIM_RETURN_IF_NULL_OR_DEAD(mmap, magic, "mmap");
	if (mmap->started)
		return DOCA_ERROR_BAD_STATE;
	mmap->free_cb = free_cb;
	mmap->free_cb_opaque = opaque;
	return DOCA_SUCCESS;
}

SIM_LIVE_GETTER(doca_mmap_get_user_data, const struct doca_mmap, mmap, "mmap", union doca_data, user_data,
	mmap->user_data)

doca_error_t doca_mmap_set_user_data(struct doca_mmap *mmap, union doca_data user_data)
{
	SIM_RETURN_IF_NULL_OR_DEAD(mmap, magic, "mmap");
	if (mmap->started)
		return DOCA_ERROR_BAD_STATE;
	mmap->user_data = user_data;
	return DOCA_SUCCESS;
}

SIM_LIVE_GETTER(doca_mmap_get_max_num_devices, const struct doca_mmap, mmap, "mmap", uint32_t, max_num_devices,
	SIM_MMAP_MAX_DEVS)

doca_error_t doca_mmap_set_max_num_devices(struct doca_mmap *mmap, uint32_t max_num_devices)
{
	if (mmap == NULL || max_num_devices == 0 || max_num_devices > SIM_MMAP_MAX_DEVS)
		return DOCA_ERROR_INVALID_VALUE;
	SIM_RETURN_IF_DEAD(mmap, magic, "mmap", DOCA_ERROR_INVALID_VALUE);
	if (mmap->started)
		return DOCA_ERROR_NOT_PERMITTED;
	return DOCA_SUCCESS;
}

SIM_LIVE_GETTER(doca_mmap_get_num_bufs, const struct doca_mmap, mmap, "mmap", uint32_t, num_bufs,
	(uint32_t)mmap->live_bufs)

SIM_LIVE_GETTER(doca_mmap_get_exported, const struct doca_mmap, mmap, "mmap", uint8_t, exported, mmap->exported)

SIM_LIVE_GETTER(doca_mmap_get_from_export, const struct doca_mmap, mmap, "mmap", uint8_t, from_export,
	mmap->from_export)

SIM_GETTER(doca_mmap_cap_is_export_pci_supported, const struct doca_devinfo, devinfo, uint8_t, mmap_export, 1)

SIM_GETTER(doca_mmap_cap_is_create_from_export_pci_supported, const struct doca_devinfo, devinfo, uint8_t, from_export,
	1)

/* ---- export / import ---- */

doca_error_t doca_mmap_export_pci(struct doca_mmap *mmap, const struct doca_dev *dev, const void **export_desc,
				  size_t *export_desc_len)
{
	struct sim_export_desc *desc;
	doca_error_t err;
	int at;

	if (mmap == NULL || dev == NULL || export_desc == NULL || export_desc_len == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	SIM_RETURN_IF_DEAD(mmap, magic, "mmap", DOCA_ERROR_INVALID_VALUE);
	if (!mmap->started && !mmap->from_export)
		sim_strict_report(SIM_RULE_EXPORT_NOT_STARTED, __func__, "mmap", mmap,
				  "returned DOCA_ERROR_NOT_PERMITTED");
	if (mmap->from_export || !mmap->started)
		return sim_fail(DOCA_ERROR_NOT_PERMITTED, "%s: mmap is imported or not started", __func__);
	at = find_dev(mmap, dev);
	if (at < 0)
		return sim_fail(DOCA_ERROR_NOT_FOUND, "%s: device was not added to the mmap", __func__);
	if ((mmap->permissions & PCI_ACCESS) == 0)
		return sim_fail(DOCA_ERROR_NOT_PERMITTED, "%s: mmap has no PCI access permission", __func__);
	if (mmap->export_index >= 0 && mmap->export_pid != getpid()) {
		/* exported by the parent of this forked process: export it afresh from our own registry */
		mmap->export_index = -1;
		for (size_t i = 0; i < SIM_MMAP_MAX_DEVS; i++) {
			free(mmap->export_descs[i]);
			mmap->export_descs[i] = NULL;
		}
	}
	if (mmap->export_index < 0)
		err = sim_registry_publish((uint64_t)(uintptr_t)mmap->base, mmap->len, mmap->permissions,
					   dev->info->pci_addr, &mmap->export_index, (uint8_t[SIM_EXPORT_KEY_LEN]){0});
	else
		err = sim_registry_add_pci(mmap->export_index, dev->info->pci_addr);
	if (err != DOCA_SUCCESS)
		return err;
	mmap->export_pid = getpid();
	desc = mmap->export_descs[at];
	if (desc == NULL) {
		desc = calloc(1, sizeof(*desc));
		if (desc == NULL)
			return DOCA_ERROR_NO_MEMORY;
		mmap->export_descs[at] = desc;
	}
	sim_registry_describe(mmap->export_index, dev->info->pci_addr, desc);
	mmap->exported = true;
	*export_desc = desc;
	*export_desc_len = sizeof(*desc);
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_create_from_export(const union doca_data *user_data, const void *export_desc,
					  size_t export_desc_len, struct doca_dev *dev, struct doca_mmap **mmap)
{
	struct sim_export_desc desc;
	struct doca_mmap *m;
	doca_error_t err;

	if (export_desc == NULL || dev == NULL || mmap == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (sim_rdma_is_export_desc(export_desc, export_desc_len))
		return sim_rdma_import(user_data, export_desc, export_desc_len, dev, mmap);
	if (export_desc_len != sizeof(desc))
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: descriptor length %zu, expected %zu", __func__,
				export_desc_len, sizeof(desc));
	memcpy(&desc, export_desc, sizeof(desc));
	if (desc.magic != SIM_DESC_MAGIC || desc.version != SIM_DESC_VERSION || desc.length != sizeof(desc) ||
	    desc.pci[sizeof(desc.pci) - 1] != '\0' || desc.len == 0 || desc.base + desc.len < desc.base)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: not an export descriptor of this device", __func__);
	if (!sim_dev_can_reach(dev->info, desc.pci, desc.pid == getpid()))
		return sim_fail(DOCA_ERROR_NOT_PERMITTED, "%s: device %s cannot reach exporter device %s", __func__,
				dev->info->pci_addr, desc.pci);
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return DOCA_ERROR_NO_MEMORY;
	/* Proves that the process the descriptor names exported exactly this, and still does (registry.h) */
	err = sim_registry_attach(&desc, &m->remote);
	if (err != DOCA_SUCCESS) {
		free(m);
		return err;
	}
	m->magic = SIM_MAGIC_LIVE;
	m->started = true;
	m->from_export = true;
	m->base = (void *)(uintptr_t)desc.base;
	m->len = desc.len;
	m->permissions = desc.permissions;
	m->export_index = -1;
	m->devs[0] = dev;
	m->num_devs = 1;
	sim_dev_ref(dev);
	if (user_data != NULL)
		m->user_data = *user_data;
	m->remote.pid = desc.pid;
	m->remote.nonce = desc.nonce;
	m->remote.index = desc.index;
	memcpy(m->remote.key, desc.key, sizeof(desc.key));
	memcpy(m->remote.exporter_pci, desc.pci, sizeof(m->remote.exporter_pci) - 1);
	*mmap = m;
	sim_live_inc(SIM_KIND_MMAP);
	return DOCA_SUCCESS;
}
