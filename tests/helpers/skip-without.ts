/**
 * The skip reason of a test file for one DOCA library: real DOCA installed without it, or the DOCA 2.7 flavour of
 * the software device, which has no libdoca_compress nor libdoca_sha.
 */
import { loadDoca } from "../../mod.ts";

/** false when this DOCA has libdoca_`library`, else the reason to skip: "this DOCA has no libdoca_`library`". */
export function skipWithout(library: "compress" | "sha"): string | false {
  return loadDoca().files[library] ? false : `this DOCA has no libdoca_${library}`;
}
