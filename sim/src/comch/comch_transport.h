/*
 * Comch socket transport of the software DOCA device: Unix SOCK_SEQPACKET sockets carrying small framed messages.
 *
 * Needs nothing from the DOCA object model; comch_*.c files build the DOCA semantics on top of it.
 * Every function is non-blocking and returns 0 / a byte count on success or a negative errno.
 */
#ifndef SIM_COMCH_TRANSPORT_H_
#define SIM_COMCH_TRANSPORT_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Distinguishes our frames from stray bytes of anything else that connects to the socket */
#define COMCH_FRAME_MAGIC 0x4d534344u /* "DCSM" little-endian */

/* Largest immediate data a producer can attach (reported as the consumer's max imm data cap) */
#define COMCH_MAX_IMM_DATA 32u

enum comch_frame_kind {
	COMCH_FRAME_HELLO = 1,		/* client -> server after connect: id = client pid */
	COMCH_FRAME_HELLO_ACK = 2,	/* server -> client: the server accepted, id = server pid */
	COMCH_FRAME_MSG = 3,		/* control message, payload = the user's bytes */
	COMCH_FRAME_CONSUMER_NEW = 4,	/* id = consumer id; carries the consumer's data socket (SCM_RIGHTS) */
	COMCH_FRAME_CONSUMER_GONE = 5,	/* id = consumer id */
	COMCH_FRAME_DISCONNECT = 6,	/* orderly close by either side */
	COMCH_FRAME_DATA = 7,		/* fast path only (consumer data socket): id = producer id */
};

struct comch_frame_hdr {
	uint32_t magic;
	uint8_t kind;
	uint8_t imm_len;   /* COMCH_FRAME_DATA only */
	uint16_t reserved; /* zero */
	uint32_t id;
	uint32_t payload_len;
};

/* A fast-path datagram: header, a fixed immediate-data slot, then the data bytes */
#define COMCH_DATA_PREFIX_LEN (sizeof(struct comch_frame_hdr) + COMCH_MAX_IMM_DATA)

/* Socket path, inside the runtime directory dir, of the server `name` behind the representor of PCI `rep_pci` */
int comch_server_path(char *out, size_t cap, const char *dir, const char *rep_pci, const char *name);

/* Replace any stale socket at path with a fresh non-blocking listening socket; returns the fd */
int comch_listen(const char *path);

/* Accept one pending connection (non-blocking fd) or -EAGAIN */
int comch_accept(int listen_fd);

/* Connect to a server socket; -ENOENT / -ECONNREFUSED while no server is listening there */
int comch_connect(const char *path);

/* Connected pair used as a consumer's data socket: sv[0] stays with the consumer, sv[1] goes to the peer */
int comch_data_socketpair(int sv[2]);

/* Send one frame; pass_fd >= 0 attaches that descriptor. -EAGAIN when the peer's queue is full */
int comch_send_frame(int fd, uint8_t kind, uint32_t id, const void *payload, uint32_t len, int pass_fd);

/*
 * Receive one frame into hdr + payload (at most cap bytes). Returns the payload length, -EAGAIN when nothing is
 * queued, -ECONNRESET on end of stream, -EPROTO for a malformed frame (bad size, magic, kind or truncated).
 * A descriptor received with a COMCH_FRAME_CONSUMER_NEW is stored in *recv_fd (else *recv_fd = -1; any other
 * descriptor is closed).
 */
ssize_t comch_recv_frame(int fd, struct comch_frame_hdr *hdr, void *payload, uint32_t cap, int *recv_fd);

/* Fast path: one producer datagram (imm_len <= COMCH_MAX_IMM_DATA) */
int comch_send_data(int fd, uint32_t producer_id, const uint8_t *imm, uint32_t imm_len, const void *data,
		    uint32_t len);

/*
 * Fast path: receive one producer datagram, writing the data bytes straight into dst (cap bytes of room).
 * Returns the data length; -EMSGSIZE when the data did not fit (the datagram is consumed), -EAGAIN, -ECONNRESET,
 * -EPROTO as for comch_recv_frame.
 */
ssize_t comch_recv_data(int fd, uint32_t *producer_id, uint8_t imm[COMCH_MAX_IMM_DATA], uint32_t *imm_len, void *dst,
			size_t cap);

#endif /* SIM_COMCH_TRANSPORT_H_ */
