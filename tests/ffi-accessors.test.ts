/**
 * The symbol table reaches what a person exploring in the REPL calls (issue 20 §4): buffer lists, the fast path's
 * get_buf accessors, and DOCA 3.1's devinfo getters, which a DOCA 2.7 library does not have (bound as undefined
 * there, present on 3.x). Runs against whatever DOCA the suite loads (the 2.7 lane of CI included).
 */
import "./helpers/sim-env.ts";
import { test } from "node:test";
import assert from "node:assert/strict";
import { loadDoca } from "../mod.ts";
import { doca } from "../ffi/native/library.ts";

test("buffer lists, producer/consumer get_buf and the 3.1 devinfo getters resolve as this DOCA version has them", () => {
  const info = loadDoca();
  const d = doca();
  for (const name of ["doca_buf_chain_list", "doca_buf_unchain_list"] as const) assert.ok(d.has(name), name);
  for (const name of ["doca_comch_producer_task_send_get_buf", "doca_comch_consumer_task_post_recv_get_buf"] as const) {
    assert.ok(d.has(name), name);
  }
  const is27 = info.version.startsWith("2.7");
  for (const name of ["doca_devinfo_get_pci_func_type", "doca_devinfo_get_sf_index"] as const) {
    assert.equal(d.has(name), !is27, `${name} on DOCA ${info.version}`);
  }
});
