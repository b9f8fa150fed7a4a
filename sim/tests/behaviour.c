/*
 * The software device behaves as DOCA documents: one check per row of sim/behaviour.tsv whose "check" column names
 * it. Each check prints "ok <id>: <what>"; tests/sim-behaviour.test.ts runs this program and checks that every id
 * listed in the table was printed.
 *
 *   behaviour            every check (the comch ones fork a DPU-side server process)
 *   behaviour order N    N DMA tasks on one context, prints "order <ids...>" and "calls <progress calls that did work>"
 *                        (run with DOCA_SIM_SHUFFLE=SEED to see the seeded order)
 */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <doca_comch.h>
#include <doca_dma.h>
#include <doca_version.h>

#include "sim_test_util.h"

#define LEN 4096

/* ---- DMA fixtures ---- */

struct dma_fixture {
	struct doca_dev *dev;
	uint8_t *src, *dst;
	struct doca_mmap *src_mmap, *dst_mmap;
	struct doca_buf_inventory *inv;
	struct doca_pe *pe;
	struct doca_dma *dma[2];
};

struct results {
	int ok, failed, order[64], n;
	doca_error_t last_status;
};

static void on_ok(struct doca_dma_task_memcpy *task, union doca_data tud, union doca_data cud)
{
	struct results *r = cud.ptr;

	r->ok++;
	r->last_status = DOCA_SUCCESS;
	if (r->n < 64)
		r->order[r->n++] = (int)tud.u64;
	doca_task_free(doca_dma_task_memcpy_as_task(task));
}

static void on_err(struct doca_dma_task_memcpy *task, union doca_data tud, union doca_data cud)
{
	struct results *r = cud.ptr;

	r->failed++;
	r->last_status = doca_task_get_status(doca_dma_task_memcpy_as_task(task));
	if (r->n < 64)
		r->order[r->n++] = (int)tud.u64;
	doca_task_free(doca_dma_task_memcpy_as_task(task));
}

static void dma_setup(struct dma_fixture *f, struct results *r, int num_ctx)
{
	f->dev = t_open_first_dev();
	f->src = calloc(1, LEN);
	f->dst = calloc(1, LEN);
	T_TRUE(f->src && f->dst);
	t_fill(f->src, LEN, 3);
	f->src_mmap = t_mmap(f->dev, f->src, LEN, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	f->dst_mmap = t_mmap(f->dev, f->dst, LEN, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	T_OK(doca_buf_inventory_create(256, &f->inv));
	T_OK(doca_buf_inventory_start(f->inv));
	T_OK(doca_pe_create(&f->pe));
	for (int i = 0; i < num_ctx; i++) {
		T_OK(doca_dma_create(f->dev, &f->dma[i]));
		T_OK(doca_dma_task_memcpy_set_conf(f->dma[i], on_ok, on_err, 64));
		T_OK(doca_ctx_set_user_data(doca_dma_as_ctx(f->dma[i]), (union doca_data){.ptr = &r[i]}));
		T_OK(doca_pe_connect_ctx(f->pe, doca_dma_as_ctx(f->dma[i])));
		T_OK(doca_ctx_start(doca_dma_as_ctx(f->dma[i])));
	}
}

static void dma_teardown(struct dma_fixture *f, int num_ctx)
{
	for (int i = 0; i < num_ctx; i++) {
		T_OK(doca_ctx_stop(doca_dma_as_ctx(f->dma[i])));
		T_OK(doca_dma_destroy(f->dma[i]));
	}
	T_OK(doca_pe_destroy(f->pe));
	T_OK(doca_buf_inventory_destroy(f->inv));
	T_OK(doca_mmap_destroy(f->src_mmap));
	T_OK(doca_mmap_destroy(f->dst_mmap));
	T_OK(doca_dev_close(f->dev));
	free(f->src);
	free(f->dst);
}

/* The end of a one-context check: the buffers of its copy go back, then everything dma_setup made */
static void dma_teardown_after_copy(struct dma_fixture *f, struct doca_buf *sb, struct doca_buf *db)
{
	T_OK(doca_buf_dec_refcount(sb, NULL));
	T_OK(doca_buf_dec_refcount(db, NULL));
	dma_teardown(f, 1);
}

/* A 64-byte copy task from src+off to dst+off (bufs released by the caller through the returned pointers) */
static struct doca_dma_task_memcpy *copy_task(struct dma_fixture *f, int ctx, size_t off, size_t len, uint64_t id,
					      struct doca_buf **sb, struct doca_buf **db)
{
	struct doca_dma_task_memcpy *t;

	T_OK(doca_buf_inventory_buf_get_by_data(f->inv, f->src_mmap, f->src + off, len, sb));
	T_OK(doca_buf_inventory_buf_get_by_addr(f->inv, f->dst_mmap, f->dst + off, 64, db));
	T_OK(doca_dma_task_memcpy_alloc_init(f->dma[ctx], *sb, *db, (union doca_data){.u64 = id}, &t));
	return t;
}

/* Submits t (doca_task_submit: no validation) and expects it to fail at completion with DOCA_ERROR_INVALID_VALUE,
 * no byte copied */
static void expect_fails_at_completion(struct dma_fixture *f, struct results *r, struct doca_dma_task_memcpy *t)
{
	T_OK(doca_task_submit(doca_dma_task_memcpy_as_task(t)));
	t_progress_until(f->pe, &r->failed);
	T_TRUE(r->last_status == DOCA_ERROR_INVALID_VALUE && f->dst[0] == 0);
}

/* ---- checks ---- */

static void check_progress_one_ctx(void)
{
	struct dma_fixture f;
	struct results r[2] = {0};
	struct doca_buf *sb[2], *db[2];

	dma_setup(&f, r, 2);
	for (int i = 0; i < 2; i++)
		T_OK(doca_task_submit(doca_dma_task_memcpy_as_task(copy_task(&f, i, (size_t)i * 64, 64, 1, &sb[i], &db[i]))));
	T_TRUE(doca_pe_progress(f.pe) == 1);
	T_TRUE(r[0].ok + r[1].ok == 1); /* one context's work per call */
	T_TRUE(doca_pe_progress(f.pe) == 1);
	T_TRUE(r[0].ok == 1 && r[1].ok == 1);
	T_TRUE(doca_pe_progress(f.pe) == 0);
	for (int i = 0; i < 2; i++) {
		T_OK(doca_buf_dec_refcount(sb[i], NULL));
		T_OK(doca_buf_dec_refcount(db[i], NULL));
	}
	dma_teardown(&f, 2);
	t_say("ok progress-one-ctx: two contexts with a completion each need two doca_pe_progress calls");
}

static void check_submit_no_validate(void)
{
	struct dma_fixture f;
	struct results r = {0};
	struct doca_buf *sb, *db;
	struct doca_dma_task_memcpy *t;

	dma_setup(&f, &r, 1);
	/* 128 bytes into a 64-byte destination: invalid */
	t = copy_task(&f, 0, 0, 128, 7, &sb, &db);
	T_EXPECT_ERR(doca_task_try_submit(doca_dma_task_memcpy_as_task(t)), DOCA_ERROR_INVALID_VALUE);
	expect_fails_at_completion(&f, &r, t); /* DOCA: submit does not validate */
	dma_teardown_after_copy(&f, sb, db);
	t_say("ok submit-no-validate: doca_task_submit accepts an invalid task, it fails at completion; "
	      "doca_task_try_submit refuses it");
}

static void check_set_data_always_success(void)
{
	struct dma_fixture f;
	struct results r = {0};
	struct doca_buf *sb, *db, *b;
	struct doca_dma_task_memcpy *t;

	dma_setup(&f, &r, 1);
	t = copy_task(&f, 0, 0, 64, 1, &sb, &db);
	/* out of range: DOCA_SUCCESS (undefined behaviour on DOCA); the task using it fails, no byte moves */
	T_OK(doca_buf_set_data(sb, f.src + 32, 64));
	T_OK(doca_buf_set_data_len(db, 100));
	expect_fails_at_completion(&f, &r, t);
	T_OK(doca_buf_inventory_buf_get_by_args(f.inv, f.src_mmap, f.src, 16, f.src + 8, 16, &b));
	T_OK(doca_buf_dec_refcount(b, NULL));
	/* a buffer outside the mmap is documented: INVALID_VALUE */
	T_EXPECT_ERR(doca_buf_inventory_buf_get_by_addr(f.inv, f.src_mmap, f.src + LEN - 8, 16, &b),
		     DOCA_ERROR_INVALID_VALUE);
	dma_teardown_after_copy(&f, sb, db);
	t_say("ok set-data-success: set_data, set_data_len and get_by_args return DOCA_SUCCESS for data outside the "
	      "buffer; a task using it fails with DOCA_ERROR_INVALID_VALUE");
}

static void check_dma_destroy_in_use(void)
{
	struct dma_fixture f;
	struct results r = {0};
	struct doca_buf *sb, *db;
	int idle = 0;
	enum doca_ctx_states state;

	dma_setup(&f, &r, 1);
	T_OK(doca_task_submit(doca_dma_task_memcpy_as_task(copy_task(&f, 0, 0, 64, 1, &sb, &db))));
	T_EXPECT_ERR(doca_ctx_stop(doca_dma_as_ctx(f.dma[0])), DOCA_ERROR_IN_PROGRESS);
	T_EXPECT_ERR(doca_dma_destroy(f.dma[0]), DOCA_ERROR_IN_USE);
	T_EXPECT_ERR(doca_pe_destroy(f.pe), DOCA_ERROR_IN_USE);
	while (!idle) {
		doca_pe_progress(f.pe);
		T_OK(doca_ctx_get_state(doca_dma_as_ctx(f.dma[0]), &state));
		idle = state == DOCA_CTX_STATE_IDLE;
	}
	T_OK(doca_ctx_stop(doca_dma_as_ctx(f.dma[0]))); /* idle: a no-op */
	dma_teardown_after_copy(&f, sb, db);
	t_say("ok dma-destroy-in-use: doca_dma_destroy of a stopping context is DOCA_ERROR_IN_USE, "
	      "doca_pe_destroy with a context DOCA_ERROR_IN_USE");
}

static void check_dev_open_refcount(void)
{
	struct doca_devinfo **list;
	struct doca_dev *a, *b;
	struct doca_mmap *mmap;
	uint32_t n;

	T_OK(doca_devinfo_create_list(&list, &n));
	T_OK(doca_dev_open(list[0], &a));
	T_OK(doca_dev_open(list[0], &b));
	T_TRUE(a == b);
	T_OK(doca_devinfo_destroy_list(list));
	T_OK(doca_dev_close(a));
	T_OK(doca_mmap_create(&mmap)); /* still open through the second reference */
	T_OK(doca_mmap_add_dev(mmap, b));
	T_OK(doca_mmap_destroy(mmap));
	T_OK(doca_dev_close(b));
	T_OK(doca_dev_close(NULL));
	T_TRUE(doca_sim_live_objects() == 0);
	t_say("ok dev-open-refcount: opening an open device returns it with one more reference");
}

static void check_inventory_and_mmap_rules(void)
{
	struct doca_dev *dev = t_open_first_dev();
	struct doca_buf_inventory *inv;
	struct doca_mmap *mmap;
	static uint8_t mem[64];

	T_OK(doca_buf_inventory_create(1, &inv));
	T_EXPECT_ERR(doca_buf_inventory_set_user_data(inv, (union doca_data){.u64 = 1}), DOCA_ERROR_BAD_STATE);
	T_OK(doca_buf_inventory_start(inv));
	T_OK(doca_buf_inventory_set_user_data(inv, (union doca_data){.u64 = 1}));
	T_OK(doca_buf_inventory_destroy(inv));
	mmap = t_mmap(dev, mem, sizeof(mem), DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	T_EXPECT_ERR(doca_mmap_set_max_num_devices(mmap, 2), DOCA_ERROR_NOT_PERMITTED);
	T_OK(doca_mmap_destroy(mmap));
	T_OK(doca_dev_close(dev));
	t_say("ok inventory-mmap-rules: doca_buf_inventory_set_user_data is BAD_STATE before start, "
	      "doca_mmap_set_max_num_devices NOT_PERMITTED after start");
}

static void check_errors_and_version(void)
{
	T_TRUE(DOCA_ERROR_DEVICE_FATAL_ERROR == 31);
	T_TRUE(strcmp(doca_error_get_name(DOCA_ERROR_DEVICE_FATAL_ERROR), "DOCA_ERROR_DEVICE_FATAL_ERROR") == 0);
	T_TRUE(strlen(doca_error_get_descr(DOCA_ERROR_DEVICE_FATAL_ERROR)) > 0);
	T_TRUE(strcmp(doca_error_get_name((doca_error_t)1000), "unrecognized error code") == 0);
	t_say("ok error-codes: DOCA_ERROR_DEVICE_FATAL_ERROR = 31 has a name and description; unknown codes are "
	      "\"unrecognized error code\"");
	T_TRUE(DOCA_VERSION_EXACT == DOCA_VERSION_CALC_EXACT(DOCA_VERSION_MAJOR, DOCA_VERSION_MINOR,
							      DOCA_VERSION_PATCH));
	T_TRUE(DOCA_VERSION_OFFICIAL == DOCA_VERSION_CALC(3, 3, 0));
	T_TRUE(DOCA_VERSION_EQ_CURRENT(3, 3, 0) && DOCA_VERSION_LTE_CURRENT(3, 0, 0));
	T_TRUE(strcmp(doca_version(), DOCA_VERSION_STRING) == 0);
	T_TRUE(strncmp(doca_version_runtime(), DOCA_VERSION_STRING, strlen(DOCA_VERSION_STRING)) == 0);
	t_say("ok version-macros: DOCA_VERSION_MAJOR/MINOR/PATCH/STRING, _CALC(_EXACT), _EXACT, _OFFICIAL");
}

/* ---- comch: a DPU-side server process and this host-side client ---- */

#define COMCH_NAME "behaviour"
#define USER_MAGIC 0x5eedull

static struct {
	struct doca_comch_server *server;
	struct doca_comch_connection *conn;
	int connected, sends_done, disconnected;
} S;

static void s_send_done(struct doca_comch_task_send *task, union doca_data tud, union doca_data cud)
{
	(void)tud;
	(void)cud;
	S.sends_done++;
	doca_task_free(doca_comch_task_send_as_task(task));
}

static void s_send(const char *text)
{
	struct doca_comch_task_send *task;

	T_OK(doca_comch_server_task_send_alloc_init(S.server, S.conn, text, (uint32_t)strlen(text), &task));
	T_OK(doca_task_submit(doca_comch_task_send_as_task(task)));
}

static void s_connect(struct doca_comch_event_connection_status_changed *event, struct doca_comch_connection *conn,
		      uint8_t ok)
{
	(void)event;
	(void)ok;
	S.conn = conn;
	S.connected = 1;
	s_send("first"); /* right away: the client reads it together with the handshake's answer */
}

static void s_disconnect(struct doca_comch_event_connection_status_changed *event, struct doca_comch_connection *conn,
			 uint8_t ok)
{
	(void)event;
	(void)conn;
	(void)ok;
	S.disconnected = 1;
}

static void s_recv(struct doca_comch_event_msg_recv *event, uint8_t *buf, uint32_t len,
		   struct doca_comch_connection *conn)
{
	(void)event;
	(void)buf;
	(void)len;
	(void)conn;
}

static int server_main(void)
{
	struct doca_dev *dev = t_open_first_dev();
	struct doca_devinfo_rep **reps;
	struct doca_dev_rep *rep;
	struct doca_pe *pe;
	uint32_t n;
	doca_error_t err;

	T_OK(doca_devinfo_rep_create_list(dev, DOCA_DEVINFO_REP_FILTER_NET, &reps, &n));
	T_OK(doca_dev_rep_open(reps[0], &rep));
	T_OK(doca_devinfo_rep_destroy_list(reps));
	T_OK(doca_pe_create(&pe));
	T_OK(doca_comch_server_create(dev, rep, COMCH_NAME, &S.server));
	T_OK(doca_comch_server_task_send_set_conf(S.server, s_send_done, s_send_done, 16));
	T_OK(doca_comch_server_event_msg_recv_register(S.server, s_recv));
	T_OK(doca_comch_server_event_connection_status_changed_register(S.server, s_connect, s_disconnect));
	T_OK(doca_pe_connect_ctx(pe, doca_comch_server_as_ctx(S.server)));
	T_OK(doca_ctx_start(doca_comch_server_as_ctx(S.server)));
	t_progress_until(pe, &S.connected);
	s_send("second");
	/* sends in flight: the documented "call disconnect again later" */
	T_EXPECT_ERR(doca_comch_server_disconnect(S.server, S.conn), DOCA_ERROR_AGAIN);
	{
		double deadline = t_now() + 10;

		while ((err = doca_comch_server_disconnect(S.server, S.conn)) == DOCA_ERROR_AGAIN) {
			doca_pe_progress(pe);
			T_TRUE(t_now() < deadline);
		}
	}
	T_OK(err);
	T_TRUE(S.sends_done == 2);
	t_say("ok disconnect-again: doca_comch_server_disconnect returns DOCA_ERROR_AGAIN while sends are in flight, "
	      "then DOCA_SUCCESS");
	T_OK(doca_ctx_stop(doca_comch_server_as_ctx(S.server)));
	{
		enum doca_ctx_states state = DOCA_CTX_STATE_STOPPING;

		while (state != DOCA_CTX_STATE_IDLE) {
			doca_pe_progress(pe);
			T_OK(doca_ctx_get_state(doca_comch_server_as_ctx(S.server), &state));
		}
	}
	T_OK(doca_comch_server_destroy(S.server));
	T_OK(doca_pe_destroy(pe));
	T_OK(doca_dev_rep_close(rep));
	T_OK(doca_dev_close(dev));
	return 0;
}

static struct {
	int messages, without_user_data, idle;
} C;

static void c_recv(struct doca_comch_event_msg_recv *event, uint8_t *buf, uint32_t len,
		   struct doca_comch_connection *conn)
{
	(void)event;
	(void)buf;
	(void)len;
	/* secure_channel's crash: this callback ran before the program could set the connection's user data */
	if (doca_comch_connection_get_user_data(conn).u64 != USER_MAGIC)
		C.without_user_data++;
	C.messages++;
}

T_IDLE_FLAG_CB(c_state, C.idle)

static void client_send_done(struct doca_comch_task_send *task, union doca_data tud, union doca_data cud)
{
	(void)tud;
	(void)cud;
	doca_task_free(doca_comch_task_send_as_task(task));
}

static void check_comch(void)
{
	struct doca_dev *dev;
	struct doca_comch_client *client;
	struct doca_comch_connection *conn;
	struct doca_pe *pe;
	enum doca_ctx_states state = DOCA_CTX_STATE_IDLE;
	double deadline = t_now() + 20;
	int status = 0;
	pid_t server;

	fflush(stdout);
	server = fork();
	T_TRUE(server >= 0);
	if (server == 0) {
		setenv("DOCA_SIM_SIDE", "dpu", 1);
		exit(server_main());
	}
	dev = t_open_first_dev();
	T_OK(doca_pe_create(&pe));
	T_OK(doca_comch_client_create(dev, COMCH_NAME, &client));
	T_OK(doca_comch_client_task_send_set_conf(client, client_send_done, client_send_done, 4));
	T_OK(doca_comch_client_event_msg_recv_register(client, c_recv));
	T_OK(doca_ctx_set_state_changed_cb(doca_comch_client_as_ctx(client), c_state));
	T_OK(doca_pe_connect_ctx(pe, doca_comch_client_as_ctx(client)));
	T_EXPECT_ERR(doca_ctx_start(doca_comch_client_as_ctx(client)), DOCA_ERROR_IN_PROGRESS);
	/* NVIDIA's comch_utils pattern: progress until RUNNING, then set the connection's user data */
	while (state != DOCA_CTX_STATE_RUNNING) {
		doca_pe_progress(pe);
		T_OK(doca_ctx_get_state(doca_comch_client_as_ctx(client), &state));
		T_TRUE(t_now() < deadline);
	}
	T_OK(doca_comch_client_get_connection(client, &conn));
	T_OK(doca_comch_connection_set_user_data(conn, (union doca_data){.u64 = USER_MAGIC}));
	while (!C.idle) { /* the server disconnects after its two messages: the client goes back to IDLE */
		doca_pe_progress(pe);
		T_TRUE(t_now() < deadline);
	}
	T_TRUE(waitpid(server, &status, 0) == server);
	T_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	T_TRUE(C.messages == 2 && C.without_user_data == 0);
	t_say("ok progress-state-first: a client polling doca_pe_progress until RUNNING sets the connection's user "
	      "data before the first message event (2 messages, none without user data)");
	T_OK(doca_comch_client_destroy(client));
	T_OK(doca_pe_destroy(pe));
	T_OK(doca_dev_close(dev));
}

/* ---- order of completions within one context (DOCA_SIM_SHUFFLE) ---- */

static int order_main(int num)
{
	struct dma_fixture f;
	struct results r = {0};
	struct doca_buf *sb[64], *db[64];
	int calls = 0;

	T_TRUE(num > 0 && num <= 32);
	dma_setup(&f, &r, 1);
	for (int i = 0; i < num; i++)
		T_OK(doca_task_submit(
			doca_dma_task_memcpy_as_task(copy_task(&f, 0, (size_t)i * 64, 64, (uint64_t)i, &sb[i], &db[i]))));
	while (r.ok < num) {
		calls += doca_pe_progress(f.pe);
		T_TRUE(calls < 10 * num);
	}
	printf("order");
	for (int i = 0; i < r.n; i++)
		printf(" %d", r.order[i]);
	printf("\ncalls %d\n", calls);
	T_TRUE(memcmp(f.src, f.dst, (size_t)num * 64) == 0);
	for (int i = 0; i < num; i++) {
		T_OK(doca_buf_dec_refcount(sb[i], NULL));
		T_OK(doca_buf_dec_refcount(db[i], NULL));
	}
	dma_teardown(&f, 1);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "order") == 0)
		return order_main(atoi(argv[2]));
	setenv("DOCA_SIM_SIDE", "host", 1);
	check_comch(); /* first: it forks, and the child must not inherit open objects */
	check_progress_one_ctx();
	check_submit_no_validate();
	check_set_data_always_success();
	check_dma_destroy_in_use();
	check_dev_open_refcount();
	check_inventory_and_mmap_rules();
	check_errors_and_version();
	T_TRUE(doca_sim_live_objects() == 0);
	t_say("PASS behaviour");
	return 0;
}
