/*
 * Devices, representors, PCI address comparison, error names and the version of the software device.
 *
 * Usage: sim_devices host | dpu | config-error
 *   host/dpu      run with DOCA_SIM_SIDE set accordingly (and no DOCA_SIM_CONFIG): checks the default devices
 *   config-error  run with DOCA_SIM_CONFIG naming a broken file: doca_devinfo_create_list must fail with BAD_CONFIG
 */
#include <doca_dma.h>
#include <doca_version.h>

#include "sim_test_util.h"

static void check_errors_and_version(void)
{
	T_TRUE(strcmp(doca_error_get_name(DOCA_ERROR_NOT_PERMITTED), "DOCA_ERROR_NOT_PERMITTED") == 0);
	T_TRUE(strcmp(doca_error_get_name(DOCA_SUCCESS), "DOCA_SUCCESS") == 0);
	T_TRUE(strcmp(doca_error_get_name(DOCA_ERROR_SKIPPED), "DOCA_ERROR_SKIPPED") == 0);
	T_TRUE(DOCA_ERROR_BAD_CONFIG == 29 && DOCA_ERROR_IN_PROGRESS == 26 && DOCA_ERROR_IO_FAILED == 17);
	T_TRUE(strlen(doca_error_get_descr(DOCA_ERROR_AGAIN)) > 0);
	T_TRUE(strncmp(doca_version_runtime(), doca_version(), strlen(doca_version())) == 0);
	t_say("ok error names and version %s", doca_version_runtime());
}

static struct doca_dev *open_and_check(const char *pci, const char *ibdev)
{
	struct doca_devinfo **list;
	struct doca_dev *dev = NULL;
	uint32_t n = 0;
	char buf[DOCA_DEVINFO_IFACE_NAME_SIZE];
	uint8_t eq = 0;
	uint64_t max_size = 0;
	uint32_t list_len = 0;
	enum doca_pci_func_type type;
	uint32_t sf;

	T_OK(doca_devinfo_create_list(&list, &n));
	T_TRUE(n == 1);
	T_OK(doca_devinfo_get_pci_addr_str(list[0], buf));
	T_TRUE(strcmp(buf, pci) == 0);
	T_OK(doca_devinfo_is_equal_pci_addr(list[0], pci, &eq));
	T_TRUE(eq == 1);
	T_OK(doca_devinfo_is_equal_pci_addr(list[0], pci + 5, &eq)); /* "BB:DD.F" form */
	T_TRUE(eq == 1);
	T_OK(doca_devinfo_is_equal_pci_addr(list[0], "0000:FF:00.0", &eq));
	T_TRUE(eq == 0);
	T_EXPECT_ERR(doca_devinfo_is_equal_pci_addr(list[0], "not-a-pci", &eq), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_devinfo_get_ibdev_name(list[0], buf, DOCA_DEVINFO_IBDEV_NAME_SIZE));
	T_TRUE(strcmp(buf, ibdev) == 0);
	T_OK(doca_devinfo_get_iface_name(list[0], buf, sizeof(buf)));
	T_OK(doca_devinfo_get_pci_func_type(list[0], &type));
	T_TRUE(type == DOCA_PCI_FUNC_TYPE_PF);
	T_EXPECT_ERR(doca_devinfo_get_sf_index(list[0], &sf), DOCA_ERROR_NOT_SUPPORTED);
	T_OK(doca_dma_cap_task_memcpy_is_supported(list[0]));
	T_OK(doca_dma_cap_task_memcpy_get_max_buf_size(list[0], &max_size));
	T_TRUE(max_size == 2u * 1024 * 1024);
	T_OK(doca_dma_cap_task_memcpy_get_max_buf_list_len(list[0], &list_len));
	T_TRUE(list_len == 16);
	T_OK(doca_dev_open(list[0], &dev));
	T_OK(doca_devinfo_destroy_list(list));
	/* the devinfo stays valid through the open device */
	T_OK(doca_devinfo_get_pci_addr_str(doca_dev_as_devinfo(dev), buf));
	T_TRUE(strcmp(buf, pci) == 0);
	t_say("ok device %s (%s) with its default capabilities", pci, ibdev);
	return dev;
}

static int run_host(void)
{
	struct doca_dev *dev = open_and_check("0000:b1:00.1", "mlx5_0");
	struct doca_devinfo_rep **reps;
	uint32_t n;

	T_EXPECT_ERR(doca_devinfo_rep_create_list(dev, DOCA_DEVINFO_REP_FILTER_NET, &reps, &n), DOCA_ERROR_NOT_SUPPORTED);
	t_say("ok host device lists no representors");
	T_OK(doca_dev_close(dev));
	return 0;
}

static int run_dpu(void)
{
	struct doca_dev *dev = open_and_check("0000:03:00.1", "mlx5_1");
	struct doca_devinfo_rep **reps;
	struct doca_dev_rep *rep;
	char pci[DOCA_DEVINFO_REP_PCI_ADDR_SIZE], vuid[DOCA_DEVINFO_REP_VUID_SIZE];
	uint32_t n = 0;
	uint8_t eq = 0;

	T_OK(doca_devinfo_rep_create_list(dev, DOCA_DEVINFO_REP_FILTER_EMULATED, &reps, &n));
	T_TRUE(n == 0);
	T_OK(doca_devinfo_rep_destroy_list(reps));
	T_OK(doca_devinfo_rep_create_list(dev, DOCA_DEVINFO_REP_FILTER_NET, &reps, &n));
	T_TRUE(n == 1);
	T_OK(doca_devinfo_rep_get_pci_addr_str(reps[0], pci));
	T_TRUE(strcmp(pci, "0000:b1:00.1") == 0);
	T_OK(doca_devinfo_rep_is_equal_pci_addr(reps[0], "B1:00.1", &eq));
	T_TRUE(eq == 1);
	T_OK(doca_devinfo_rep_get_vuid(reps[0], vuid, sizeof(vuid)));
	T_TRUE(strlen(vuid) > 0);
	T_OK(doca_dev_rep_open(reps[0], &rep));
	T_OK(doca_devinfo_rep_destroy_list(reps));
	T_OK(doca_devinfo_rep_get_pci_addr_str(doca_dev_rep_as_devinfo(rep), pci));
	T_TRUE(strcmp(pci, "0000:b1:00.1") == 0);
	t_say("ok DPU representor of 0000:b1:00.1 (vuid %s)", vuid);
	T_OK(doca_dev_rep_close(rep));
	T_OK(doca_dev_close(dev));
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "host";
	int rc;

	check_errors_and_version();
	if (strcmp(mode, "config-error") == 0) {
		struct doca_devinfo **list;
		uint32_t n;

		T_EXPECT_ERR(doca_devinfo_create_list(&list, &n), DOCA_ERROR_BAD_CONFIG);
		t_say("ok broken DOCA_SIM_CONFIG: DOCA_ERROR_BAD_CONFIG");
		rc = 0;
	} else {
		rc = strcmp(mode, "dpu") == 0 ? run_dpu() : run_host();
	}
	T_TRUE(doca_sim_live_objects() == 0);
	t_say("describe: %s", doca_sim_describe());
	t_say("PASS sim_devices %s", mode);
	return rc;
}
