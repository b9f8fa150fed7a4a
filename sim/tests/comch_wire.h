/*
 * The Comch wire format of the software device (sim/COMCH.md), restated on purpose for the programs that speak it
 * raw (comch_raw_peer.c, comch_flood.c, sim/fuzz/fuzz_comch_frames.c): written from the document, not taken from
 * sim/src, so a change of the format that the document does not follow fails them.
 */
#ifndef COMCH_WIRE_H_
#define COMCH_WIRE_H_

#include <stdint.h>

#define COMCH_WIRE_MAGIC 0x4d534344u

/* Every frame starts with this header; payload_len bytes follow */
struct wire_hdr {
	uint32_t magic;
	uint8_t kind;
	uint8_t imm_len;
	uint16_t reserved;
	uint32_t id;
	uint32_t payload_len;
};

/* The payload of a HELLO frame */
struct wire_hello {
	uint32_t version;
	uint32_t pid;
	uint32_t max_msg_size;
};

#endif /* COMCH_WIRE_H_ */
