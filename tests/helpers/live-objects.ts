/**
 * Leak checks count native objects with the software device's doca_sim_live_objects. Real DOCA has no such counter:
 * a test that is about leaks is then skipped with this reason (never passed without having counted anything).
 */
import { liveObjects } from "../../mod.ts";

export const noLiveCounter: string | false = liveObjects() === undefined
  ? "this DOCA has no doca_sim_live_objects: leaks cannot be counted (software device only)"
  : false;
