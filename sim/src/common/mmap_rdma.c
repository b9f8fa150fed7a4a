/*
 * RDMA memory keys (libdoca_common): doca_mmap_export_rdma and the import half of doca_mmap_create_from_export.
 *
 * An RDMA export is a random 64-bit key naming one started mmap of this process. A peer never reaches our memory
 * itself: its requests travel as frames (doca_rdma, rdma_io.c) and our own I/O thread resolves (key, address, length,
 * permission) here before touching anything. Each touch is bracketed by sim_rdma_access_begin/end under the read side
 * of a writer-preferring lock; stopping or destroying the mmap takes the write side, so once doca_mmap_stop/destroy
 * returns no access to that memory is under way or can start (revocation is a barrier, as on hardware after
 * deregistration).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "internal.h"

#define RDMA_DESC_MAGIC 0x414d4452u /* "RDMA" */
#define RDMA_DESC_VERSION 1
#define RDMA_ACCESS (DOCA_ACCESS_FLAG_RDMA_READ | DOCA_ACCESS_FLAG_RDMA_WRITE | DOCA_ACCESS_FLAG_RDMA_ATOMIC)

/* What crosses to the peer: no pointer of ours is trusted back, only the key is looked up */
struct rdma_export_desc {
	uint32_t magic;
	uint16_t version;
	uint16_t length;
	uint32_t permissions;
	uint32_t reserved;
	uint64_t key;
	uint64_t base;
	uint64_t len;
};

struct rdma_key_entry {
	uint64_t key;
	const void *owner; /* the mmap, or the sync event (sync_event.c), the key stands for */
	const struct doca_mmap *chain; /* an RDMA re-export of a PCI import: the bytes are in the exporter's process */
	uintptr_t base;
	size_t len;
	uint32_t permissions;
};

static pthread_rwlock_t keys_lock;
static pthread_once_t keys_once = PTHREAD_ONCE_INIT;
static struct rdma_key_entry *keys;
static size_t num_keys, cap_keys;

/* The chained write an I/O thread has begun (the bytes it receives go on to the exporter at its end) */
static __thread const struct doca_mmap *pending_chain;
static __thread uint64_t pending_addr;

static doca_error_t add_key(const void *owner, const struct doca_mmap *chain, uintptr_t base, size_t len,
			    uint32_t permissions, uint64_t *key);

static void keys_init(void)
{
	pthread_rwlockattr_t attr;
	pthread_rwlockattr_init(&attr);
	/* A destroy must not starve behind a stream of accesses */
	pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&keys_lock, &attr);
	pthread_rwlockattr_destroy(&attr);
}

static uint64_t new_key(void)
{
	uint64_t key = 0;
	while (key == 0)
		if (getrandom(&key, sizeof(key), 0) != sizeof(key))
			abort();
	return key;
}

doca_error_t doca_mmap_export_rdma(struct doca_mmap *mmap, const struct doca_dev *dev, const void **export_desc,
				   size_t *export_desc_len)
{
	struct rdma_export_desc *desc;
	bool dev_added = false;
	uint32_t rights;
	bool chain;

	if (mmap == NULL || dev == NULL || export_desc == NULL || export_desc_len == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	SIM_RETURN_IF_DEAD(mmap, magic, "mmap", DOCA_ERROR_INVALID_VALUE);
	/* A map of an RDMA peer's memory cannot be passed on; one of a PCI exporter's can (a memory chain) */
	if (mmap->rdma_remote)
		return sim_fail(DOCA_ERROR_NOT_PERMITTED, "%s: mmap was created from an RDMA export", __func__);
	chain = mmap->from_export;
	if (!mmap->started)
		return sim_fail(DOCA_ERROR_BAD_STATE, "%s: mmap not started", __func__);
	for (size_t i = 0; i < mmap->num_devs; i++)
		dev_added |= mmap->devs[i] == dev;
	if (!dev_added)
		return sim_fail(DOCA_ERROR_NOT_PERMITTED, "%s: device was not added to the mmap", __func__);
	rights = chain ? sim_chain_rdma_permissions(mmap->permissions) : mmap->permissions;
	if (chain && rights == 0)
		return sim_fail(DOCA_ERROR_NOT_PERMITTED,
				"%s: the PCI export grants no RDMA access (exporter permissions 0x%x)", __func__,
				mmap->permissions);
	if (chain) {
		/* the host's export must still be live now; each access checks it again */
		doca_error_t err = sim_chain_check(mmap, (uint64_t)(uintptr_t)mmap->base, mmap->len);
		if (err != DOCA_SUCCESS)
			return err;
	}
	desc = calloc(1, sizeof(*desc));
	if (desc == NULL)
		return DOCA_ERROR_NO_MEMORY;
	if (mmap->rdma_key == 0) {
		doca_error_t err = add_key(mmap, chain ? mmap : NULL, (uintptr_t)mmap->base, mmap->len, rights,
					   &mmap->rdma_key);
		if (err != DOCA_SUCCESS) {
			free(desc);
			return err;
		}
	}
	*desc = (struct rdma_export_desc){ RDMA_DESC_MAGIC, RDMA_DESC_VERSION, sizeof(*desc),
					   rights & (RDMA_ACCESS | DOCA_ACCESS_FLAG_LOCAL_READ_WRITE), 0,
					   mmap->rdma_key, (uint64_t)(uintptr_t)mmap->base, mmap->len };
	/* The descriptor lives until the mmap is destroyed, like the PCI ones (one slot per device) */
	for (size_t i = 0; i < mmap->num_devs; i++)
		if (mmap->devs[i] == dev) {
			free(mmap->export_descs[i]);
			mmap->export_descs[i] = desc;
		}
	mmap->exported = true;
	*export_desc = desc;
	*export_desc_len = sizeof(*desc);
	return DOCA_SUCCESS;
}

doca_error_t sim_rdma_register_key(const void *owner, uintptr_t base, size_t len, uint32_t permissions, uint64_t *key)
{
	return add_key(owner, NULL, base, len, permissions, key);
}

static doca_error_t add_key(const void *owner, const struct doca_mmap *chain, uintptr_t base, size_t len,
			    uint32_t permissions, uint64_t *key)
{
	pthread_once(&keys_once, keys_init);
	pthread_rwlock_wrlock(&keys_lock);
	if (num_keys == cap_keys) {
		size_t cap = cap_keys ? cap_keys * 2 : 16;
		struct rdma_key_entry *grown = realloc(keys, cap * sizeof(*grown));
		if (grown == NULL) {
			pthread_rwlock_unlock(&keys_lock);
			return DOCA_ERROR_NO_MEMORY;
		}
		keys = grown;
		cap_keys = cap;
	}
	*key = new_key();
	keys[num_keys++] = (struct rdma_key_entry){ *key, owner, chain, base, len, permissions };
	pthread_rwlock_unlock(&keys_lock);
	return DOCA_SUCCESS;
}

void sim_rdma_unregister_key(const void *owner)
{
	pthread_once(&keys_once, keys_init);
	pthread_rwlock_wrlock(&keys_lock);
	for (size_t i = 0; i < num_keys; i++)
		if (keys[i].owner == owner) {
			keys[i] = keys[--num_keys];
			break;
		}
	pthread_rwlock_unlock(&keys_lock);
}

void sim_rdma_unexport(struct doca_mmap *mmap)
{
	if (mmap->rdma_key == 0 || mmap->rdma_remote)
		return;
	sim_rdma_unregister_key(mmap);
	mmap->rdma_key = 0;
}

/* The live entry granting `need` on [addr, addr+len) under `key` (the read lock held), or NULL with *err set */
static const struct rdma_key_entry *find_key(uint64_t key, uint64_t addr, uint64_t len, uint32_t need,
					     doca_error_t *err)
{
	for (size_t i = 0; i < num_keys; i++) {
		const struct rdma_key_entry *e = &keys[i];
		if (e->key != key)
			continue;
		if (addr < e->base || len > e->len || addr - e->base > e->len - len)
			break;
		/* Before the permissions: a chain's rights never include ATOMIC (sim_chain_rdma_permissions), yet an atomic
		 * there is an operation the device does not offer, not one the exporter withheld */
		if (e->chain != NULL && (need & DOCA_ACCESS_FLAG_RDMA_ATOMIC) != 0) {
			*err = sim_fail(DOCA_ERROR_NOT_SUPPORTED, "RDMA atomic on a memory chain (host memory re-exported)");
			return NULL;
		}
		if ((e->permissions & need) != need) {
			*err = DOCA_ERROR_NOT_PERMITTED;
			return NULL;
		}
		return e;
	}
	*err = DOCA_ERROR_NOT_PERMITTED; /* unknown or revoked key, or a range outside the export */
	return NULL;
}

doca_error_t sim_rdma_access_begin(uint64_t key, uint64_t addr, uint64_t len, uint32_t need, void **local)
{
	const struct rdma_key_entry *e;
	doca_error_t err = DOCA_SUCCESS;

	pthread_once(&keys_once, keys_init);
	pthread_rwlock_rdlock(&keys_lock);
	e = find_key(key, addr, len, need, &err);
	if (e == NULL) {
		pthread_rwlock_unlock(&keys_lock);
		return err;
	}
	pending_chain = NULL;
	if (e->chain != NULL) {
		/* The bytes are the exporter's: staged through this thread's bounce buffer (mmap_chain.c) */
		bool read = (need & DOCA_ACCESS_FLAG_RDMA_READ) != 0;
		err = sim_chain_stage(e->chain, addr, len, read, local);
		if (err != DOCA_SUCCESS) {
			pthread_rwlock_unlock(&keys_lock);
			return err;
		}
		if (!read) {
			pending_chain = e->chain;
			pending_addr = addr;
		}
		return DOCA_SUCCESS;
	}
	*local = (void *)(uintptr_t)addr;
	return DOCA_SUCCESS; /* the read lock is held until sim_rdma_access_end */
}

void sim_rdma_access_end(void)
{
	pending_chain = NULL;
	pthread_rwlock_unlock(&keys_lock);
}

doca_error_t sim_rdma_access_end_written(size_t written)
{
	doca_error_t err = DOCA_SUCCESS;

	/* still under the key's read lock: a DPU map destroyed meanwhile waits for this copy, and the exporter's own
	 * revocation is checked by the copy itself (remote.c) */
	if (pending_chain != NULL)
		err = sim_chain_flush(pending_chain, pending_addr, written);
	sim_rdma_access_end();
	return err;
}

doca_error_t sim_rdma_access_check(uint64_t key, uint64_t addr, uint64_t len, uint32_t need)
{
	const struct rdma_key_entry *e;
	doca_error_t err = DOCA_SUCCESS;

	pthread_once(&keys_once, keys_init);
	pthread_rwlock_rdlock(&keys_lock);
	e = find_key(key, addr, len, need, &err);
	if (e != NULL && e->chain != NULL)
		err = sim_chain_check(e->chain, addr, len);
	pthread_rwlock_unlock(&keys_lock);
	return err;
}

bool sim_rdma_is_export_desc(const void *desc, size_t len)
{
	uint32_t magic;
	if (desc == NULL || len < sizeof(magic))
		return false;
	memcpy(&magic, desc, sizeof(magic));
	return magic == RDMA_DESC_MAGIC;
}

doca_error_t sim_rdma_import(const union doca_data *user_data, const void *export_desc, size_t len,
			     struct doca_dev *dev, struct doca_mmap **mmap)
{
	struct rdma_export_desc desc;
	struct doca_mmap *m;

	if (len != sizeof(desc))
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: RDMA descriptor length %zu, expected %zu", __func__, len,
				sizeof(desc));
	memcpy(&desc, export_desc, sizeof(desc));
	if (desc.version != RDMA_DESC_VERSION || desc.length != sizeof(desc) || desc.key == 0 || desc.len == 0 ||
	    desc.base + desc.len < desc.base)
		return sim_fail(DOCA_ERROR_INVALID_VALUE, "%s: not an RDMA export descriptor of this device", __func__);
	SIM_NEW_HANDLE_OR_RETURN(m);
	m->started = true;
	m->from_export = true;
	m->rdma_remote = true;
	m->rdma_key = desc.key;
	m->base = (void *)(uintptr_t)desc.base;
	m->len = desc.len;
	m->permissions = desc.permissions;
	m->export_index = -1;
	/* no process of ours to pin (the peer may be on another machine) and no registry, maps or memory file to hold:
	 * every descriptor is -1, so the destroy's detach closes nothing (a 0 left by calloc closed fd 0, whatever it
	 * had become, on every destroy) */
	m->remote.pidfd = m->remote.registry_fd = m->remote.maps_fd = m->remote.mem_fd = -1;
	m->devs[0] = dev;
	m->num_devs = 1;
	sim_dev_ref(dev);
	if (user_data != NULL)
		m->user_data = *user_data;
	*mmap = m;
	sim_live_inc(SIM_KIND_MMAP);
	return DOCA_SUCCESS;
}
