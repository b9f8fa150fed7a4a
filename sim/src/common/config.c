/*
 * Device configuration of the software device: which devices this process sees (DOCA_SIM_SIDE picks host or dpu),
 * from built-in defaults or from the JSON file named by DOCA_SIM_CONFIG (schema in sim/README.md).
 * The table is built once per process and never freed, so devinfo pointers outlive their lists like in DOCA.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "json.h"

#define MAX_DEVICES 16
#define MAX_REPS 16
#define MAX_CONFIG_SIZE (1 << 20)
/* Below this a Comch message cannot carry DMA Copy's EXPORT_DESCRIPTOR (a header and an 88-byte export descriptor),
 * and the failure would surface later as a protocol error blamed on the peer */
#define MIN_COMCH_MSG_SIZE 256u

/* The devices of one side of the link */
struct device_table {
	struct doca_devinfo devs[MAX_DEVICES];
	struct doca_devinfo *ptrs[MAX_DEVICES];
	struct doca_devinfo_rep reps[MAX_DEVICES][MAX_REPS];
	size_t count;
};

static struct device_table own;  /* this process's side: what doca_devinfo_create_list lists */
static struct device_table peer; /* the other side: only consulted to decide who may reach whose exports */
static doca_error_t config_status = DOCA_SUCCESS;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;

enum sim_side sim_side(void)
{
	static int side = -1;

	if (side < 0) {
		const char *env = getenv("DOCA_SIM_SIDE");

		side = (env != NULL && strcasecmp(env, "dpu") == 0) ? SIM_SIDE_DPU : SIM_SIDE_HOST;
		if (env != NULL && *env != '\0' && strcasecmp(env, "dpu") != 0 && strcasecmp(env, "host") != 0)
			sim_log(SIM_LOG_ALWAYS, "DOCA_SIM_SIDE=%s is neither host nor dpu; using host", env);
	}
	return (enum sim_side)side;
}

static void default_caps(struct sim_caps *caps, enum sim_side side)
{
	caps->dma_memcpy_supported = true;
	caps->dma_max_buf_size = 2u * 1024 * 1024;
	caps->dma_max_buf_list_len = 16;
	caps->dma_max_num_tasks = 65536;
	caps->comch_server_supported = (side == SIM_SIDE_DPU);
	caps->comch_client_supported = (side == SIM_SIDE_HOST);
	caps->comch_max_msg_size = 4080;
	caps->comch_max_name_len = 120;
	caps->comch_max_clients = 512;
	caps->comch_max_recv_queue_size = 8192;
	caps->comch_max_send_tasks = 8192;
	caps->comch_max_buf_size = 2u * 1024 * 1024;
}

static struct doca_devinfo *add_device(struct device_table *table, enum sim_side side, const char *pci,
				       const char *ibdev, const char *iface)
{
	struct doca_devinfo *info = &table->devs[table->count];

	memset(info, 0, sizeof(*info));
	sim_pci_canonical(pci, info->pci_addr);
	snprintf(info->ibdev_name, sizeof(info->ibdev_name), "%s", ibdev);
	snprintf(info->iface_name, sizeof(info->iface_name), "%s", iface);
	info->side = side;
	info->func_type = DOCA_PCI_FUNC_TYPE_PF;
	info->reps = table->reps[table->count];
	default_caps(&info->caps, side);
	table->ptrs[table->count] = info;
	table->count++;
	return info;
}

static void add_rep(struct doca_devinfo *owner, const char *pci, const char *vuid, uint32_t filter_bits)
{
	struct doca_devinfo_rep *rep = &owner->reps[owner->num_reps++];

	memset(rep, 0, sizeof(*rep));
	sim_pci_canonical(pci, rep->pci_addr);
	snprintf(rep->vuid, sizeof(rep->vuid), "%s", vuid);
	rep->func_type = DOCA_PCI_FUNC_TYPE_PF;
	rep->filter_bits = filter_bits;
	rep->owner = owner;
}

static void load_defaults(struct device_table *table, enum sim_side side)
{
	if (side == SIM_SIDE_HOST) {
		add_device(table, side, "0000:b1:00.1", "mlx5_0", "enp177s0f1np1");
	} else {
		struct doca_devinfo *dpu = add_device(table, side, "0000:03:00.1", "mlx5_1", "p1");

		add_rep(dpu, "0000:b1:00.1", "MT0000SIM0001PF1", DOCA_DEVINFO_REP_FILTER_NET);
	}
}

/* ---- JSON configuration ---- */

static doca_error_t bad(const char *path, const char *what, const char *detail)
{
	sim_log(SIM_LOG_ALWAYS, "DOCA_SIM_CONFIG %s: %s%s%s", path, what, detail ? ": " : "", detail ? detail : "");
	return DOCA_ERROR_BAD_CONFIG;
}

static doca_error_t read_string(const char *path, const struct json_value *obj, const char *key, bool required,
				char *out, size_t cap, const char *fallback)
{
	const struct json_value *v = json_get(obj, key);
	char what[96];

	if (v == NULL) {
		if (required) {
			snprintf(what, sizeof(what), "missing \"%s\"", key);
			return bad(path, what, NULL);
		}
		snprintf(out, cap, "%s", fallback);
		return DOCA_SUCCESS;
	}
	if (v->type != JSON_STRING || strlen(v->string) >= cap) {
		snprintf(what, sizeof(what), "\"%s\" must be a string shorter than %zu characters", key, cap);
		return bad(path, what, NULL);
	}
	snprintf(out, cap, "%s", v->string);
	return DOCA_SUCCESS;
}

static doca_error_t read_pci(const char *path, const struct json_value *obj, char out[DOCA_DEVINFO_PCI_ADDR_SIZE])
{
	char raw[64];
	doca_error_t err = read_string(path, obj, "pci", true, raw, sizeof(raw), NULL);

	if (err != DOCA_SUCCESS)
		return err;
	if (!sim_pci_canonical(raw, out))
		return bad(path, "\"pci\" is not a PCI address like 0000:b1:00.1", raw);
	return DOCA_SUCCESS;
}

static doca_error_t read_func_type(const char *path, const struct json_value *obj, enum doca_pci_func_type *out)
{
	char raw[8];
	doca_error_t err = read_string(path, obj, "func_type", false, raw, sizeof(raw), "pf");

	if (err != DOCA_SUCCESS)
		return err;
	if (strcasecmp(raw, "pf") == 0)
		*out = DOCA_PCI_FUNC_TYPE_PF;
	else if (strcasecmp(raw, "vf") == 0)
		*out = DOCA_PCI_FUNC_TYPE_VF;
	else if (strcasecmp(raw, "sf") == 0)
		*out = DOCA_PCI_FUNC_TYPE_SF;
	else
		return bad(path, "\"func_type\" must be pf, vf or sf", raw);
	return DOCA_SUCCESS;
}

static doca_error_t read_uint(const char *path, const struct json_value *obj, const char *key, uint64_t max,
			      uint64_t *out)
{
	const struct json_value *v = json_get(obj, key);
	char what[96];

	if (v == NULL)
		return DOCA_SUCCESS; /* keep the default */
	if (v->type != JSON_NUMBER || v->number < 0 || v->number > (double)max || v->number != (double)(uint64_t)v->number) {
		snprintf(what, sizeof(what), "\"%s\" must be an integer between 0 and %llu", key, (unsigned long long)max);
		return bad(path, what, NULL);
	}
	*out = (uint64_t)v->number;
	return DOCA_SUCCESS;
}

static doca_error_t read_bool(const char *path, const struct json_value *obj, const char *key, bool *out)
{
	const struct json_value *v = json_get(obj, key);
	char what[96];

	if (v == NULL)
		return DOCA_SUCCESS;
	if (v->type != JSON_BOOL) {
		snprintf(what, sizeof(what), "\"%s\" must be true or false", key);
		return bad(path, what, NULL);
	}
	*out = v->boolean;
	return DOCA_SUCCESS;
}

static doca_error_t read_caps(const char *path, const struct json_value *obj, struct sim_caps *caps)
{
	const struct json_value *c = json_get(obj, "caps");
	uint64_t u;
	doca_error_t err = DOCA_SUCCESS;

	if (c == NULL)
		return DOCA_SUCCESS;
	if (c->type != JSON_OBJECT)
		return bad(path, "\"caps\" must be an object", NULL);
#define CAP_U(key, field, max) \
	do { \
		u = caps->field; \
		DOCA_ERROR_PROPAGATE(err, read_uint(path, c, key, max, &u)); \
		caps->field = u; \
	} while (0)
	DOCA_ERROR_PROPAGATE(err, read_bool(path, c, "dma_memcpy", &caps->dma_memcpy_supported));
	CAP_U("dma_max_buf_size", dma_max_buf_size, (1ull << 40));
	CAP_U("dma_max_buf_list_len", dma_max_buf_list_len, 1024);
	CAP_U("dma_max_num_tasks", dma_max_num_tasks, 1u << 24);
	DOCA_ERROR_PROPAGATE(err, read_bool(path, c, "comch_server", &caps->comch_server_supported));
	DOCA_ERROR_PROPAGATE(err, read_bool(path, c, "comch_client", &caps->comch_client_supported));
	CAP_U("comch_max_msg_size", comch_max_msg_size, 1u << 20);
	CAP_U("comch_max_name_len", comch_max_name_len, 4096);
	CAP_U("comch_max_clients", comch_max_clients, 1u << 16);
	CAP_U("comch_max_recv_queue_size", comch_max_recv_queue_size, 1u << 20);
	CAP_U("comch_max_send_tasks", comch_max_send_tasks, 1u << 20);
	CAP_U("comch_max_buf_size", comch_max_buf_size, 1u << 30);
#undef CAP_U
	if (err != DOCA_SUCCESS)
		return err;
	/* Values DOCA itself would never report: refuse them here, naming the key, rather than fail later (each key is
	 * its field's name) */
#define CAP_AT_LEAST_1(field) \
	do { \
		if (caps->field == 0) \
			return bad(path, "\"" #field "\" must be at least 1", NULL); \
	} while (0)
	CAP_AT_LEAST_1(dma_max_buf_size);
	CAP_AT_LEAST_1(dma_max_buf_list_len);
	CAP_AT_LEAST_1(dma_max_num_tasks);
	if (caps->comch_max_msg_size < MIN_COMCH_MSG_SIZE)
		return bad(path, "\"comch_max_msg_size\" must be at least 256 (a DMA Copy export descriptor message)", NULL);
	if (caps->comch_max_name_len < 2)
		return bad(path, "\"comch_max_name_len\" must be at least 2 (one character and the NUL)", NULL);
	CAP_AT_LEAST_1(comch_max_clients);
	CAP_AT_LEAST_1(comch_max_recv_queue_size);
	CAP_AT_LEAST_1(comch_max_send_tasks);
	CAP_AT_LEAST_1(comch_max_buf_size);
#undef CAP_AT_LEAST_1
	return DOCA_SUCCESS;
}

static doca_error_t read_reps(const char *path, const struct json_value *dev, struct doca_devinfo *owner)
{
	const struct json_value *reps = json_get(dev, "representors");

	if (reps == NULL)
		return DOCA_SUCCESS;
	if (reps->type != JSON_ARRAY)
		return bad(path, "\"representors\" must be an array", NULL);
	if (reps->count > MAX_REPS)
		return bad(path, "too many representors (at most 16 per device)", NULL);
	for (size_t i = 0; i < reps->count; i++) {
		const struct json_value *r = &reps->children[i];
		struct doca_devinfo_rep *rep = &owner->reps[owner->num_reps];
		char filter[16];
		doca_error_t err;

		if (r->type != JSON_OBJECT)
			return bad(path, "each representor must be an object", NULL);
		memset(rep, 0, sizeof(*rep));
		err = read_pci(path, r, rep->pci_addr);
		if (err == DOCA_SUCCESS)
			err = read_string(path, r, "vuid", false, rep->vuid, sizeof(rep->vuid), "MT0000SIMREP");
		if (err == DOCA_SUCCESS)
			err = read_func_type(path, r, &rep->func_type);
		if (err == DOCA_SUCCESS)
			err = read_string(path, r, "filter", false, filter, sizeof(filter), "net");
		if (err != DOCA_SUCCESS)
			return err;
		if (strcasecmp(filter, "net") == 0)
			rep->filter_bits = DOCA_DEVINFO_REP_FILTER_NET;
		else if (strcasecmp(filter, "emulated") == 0)
			rep->filter_bits = DOCA_DEVINFO_REP_FILTER_EMULATED;
		else
			return bad(path, "representor \"filter\" must be net or emulated", filter);
		rep->owner = owner;
		owner->num_reps++;
	}
	return DOCA_SUCCESS;
}

/* The configuration file's text (NUL-terminated, no NUL inside), or NULL after logging why. Only a regular file is
 * read: opened without blocking, so a FIFO or a device is refused at once instead of hanging the first DOCA call. */
static char *read_config_text(const char *path)
{
	struct stat st = {0};
	char *text;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0) {
		bad(path, "cannot open the file", strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		bad(path, S_ISFIFO(st.st_mode)  ? "is a FIFO, not a regular file"
			  : S_ISDIR(st.st_mode) ? "is a directory, not a regular file"
						: "is not a regular file",
		    NULL);
		close(fd);
		return NULL;
	}
	if (st.st_size > MAX_CONFIG_SIZE) {
		bad(path, "is larger than 1 MiB", NULL);
		close(fd);
		return NULL;
	}
	text = calloc(1, (size_t)st.st_size + 1);
	while (text != NULL && got < (size_t)st.st_size) {
		ssize_t n = read(fd, text + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (text == NULL || got != (size_t)st.st_size) {
		bad(path, "cannot read the file", NULL);
		free(text);
		return NULL;
	}
	if (strlen(text) != got) {
		char where[32];

		snprintf(where, sizeof(where), "at byte %zu", strlen(text));
		bad(path, "invalid JSON: a NUL byte in the file", where);
		free(text);
		return NULL;
	}
	return text;
}

/* Load one side's section; a missing section is an error only for the process's own side */
static doca_error_t load_json(const char *path, enum sim_side side, struct device_table *table, bool required)
{
	const char *side_name = side == SIM_SIDE_DPU ? "dpu" : "host";
	char errbuf[256];
	struct json_value *root;
	const struct json_value *section, *devices;
	doca_error_t err = DOCA_SUCCESS;
	char *text = read_config_text(path);

	if (text == NULL)
		return DOCA_ERROR_BAD_CONFIG;
	root = json_parse(text, errbuf, sizeof(errbuf));
	free(text);
	if (root == NULL)
		return bad(path, "invalid JSON", errbuf);
	section = json_get(root, side_name);
	if (!required && root->type == JSON_OBJECT && section == NULL) {
		json_free(root);
		return DOCA_SUCCESS;
	}
	if (root->type != JSON_OBJECT || section == NULL || section->type != JSON_OBJECT) {
		json_free(root);
		return bad(path, side == SIM_SIDE_DPU ? "needs an object \"dpu\"" : "needs an object \"host\"", NULL);
	}
	devices = json_get(section, "devices");
	if (devices == NULL || devices->type != JSON_ARRAY || devices->count > MAX_DEVICES) {
		json_free(root);
		return bad(path, "\"devices\" must be an array of at most 16 devices", side_name);
	}
	for (size_t i = 0; i < devices->count && err == DOCA_SUCCESS; i++) {
		const struct json_value *d = &devices->children[i];
		struct doca_devinfo *info;
		char pci[DOCA_DEVINFO_PCI_ADDR_SIZE];
		char ibdev[DOCA_DEVINFO_IBDEV_NAME_SIZE];
		char iface[DOCA_DEVINFO_IFACE_NAME_SIZE];
		uint64_t sf_index = 0;

		if (d->type != JSON_OBJECT) {
			err = bad(path, "each device must be an object", NULL);
			break;
		}
		err = read_pci(path, d, pci);
		if (err == DOCA_SUCCESS)
			err = read_string(path, d, "ibdev", false, ibdev, sizeof(ibdev), "mlx5_sim");
		if (err == DOCA_SUCCESS)
			err = read_string(path, d, "iface", false, iface, sizeof(iface), "");
		if (err != DOCA_SUCCESS)
			break;
		for (size_t j = 0; j < table->count; j++)
			if (strcmp(table->devs[j].pci_addr, pci) == 0)
				err = bad(path, "two devices with the same PCI address", pci);
		if (err != DOCA_SUCCESS)
			break;
		info = add_device(table, side, pci, ibdev, iface);
		err = read_func_type(path, d, &info->func_type);
		if (err == DOCA_SUCCESS)
			err = read_uint(path, d, "sf_index", UINT32_MAX, &sf_index);
		info->sf_index = (uint32_t)sf_index;
		if (err == DOCA_SUCCESS)
			err = read_caps(path, d, &info->caps);
		if (err == DOCA_SUCCESS)
			err = read_reps(path, d, info);
	}
	json_free(root);
	return err;
}

static void load_config(void)
{
	const char *path = getenv("DOCA_SIM_CONFIG");
	enum sim_side side = sim_side();
	enum sim_side other = side == SIM_SIDE_HOST ? SIM_SIDE_DPU : SIM_SIDE_HOST;

	if (path == NULL || *path == '\0') {
		load_defaults(&own, side);
		load_defaults(&peer, other);
		return;
	}
	config_status = load_json(path, side, &own, true);
	if (config_status == DOCA_SUCCESS)
		config_status = load_json(path, other, &peer, false);
	if (config_status != DOCA_SUCCESS) {
		own.count = 0;
		peer.count = 0;
	}
}

doca_error_t sim_devices(struct doca_devinfo ***devinfos, size_t *count)
{
	pthread_once(&config_once, load_config);
	*devinfos = own.ptrs;
	*count = own.count;
	return config_status;
}

doca_error_t sim_peer_devices(struct doca_devinfo ***devinfos, size_t *count)
{
	pthread_once(&config_once, load_config);
	*devinfos = peer.ptrs;
	*count = peer.count;
	return config_status;
}
