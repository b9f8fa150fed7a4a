/**
 * A doca-ts-speaking DPU that attacks the host (issue 9 §3), against a real `dma-copy --side host`:
 *   reason-spam   answers the direction, then sends a FAILURE_REASON every 100 ms for 60 s and never anything else
 *   escape        refuses with a FAILURE_REASON full of terminal escapes, CR and a forged "error:" line
 *   huge          announces an 8 GiB file and a 1 GiB max chunk; reports the WINDOW the host answers with
 *   repeat        answers the direction, then repeats its DIRECTION answer every 100 ms for 60 s
 * Prints one JSON line on stdout: {window?: {slotCount, slotSize}, sent}.
 *
 *   args: MODE
 */
import process from "node:process";
import { ComchServer, Device, ProgressEngine } from "../../mod.ts";
import { decodeMessage, encodeDirection, encodeExtParams, encodeFailureReason, encodeStatus, MsgType } from "../../tasks/wire/protocol.ts";

const [mode] = process.argv.slice(2);
const device = Device.open("0000:03:00.1");
const pe = new ProgressEngine();
const rep = device.openRepresentor("0000:b1:00.1");
const server = ComchServer.start({ device, rep, name: "dma copy server", pe });
process.stderr.write("hostile DPU listening\n");
const conn = await server.accept({ timeoutMs: 30_000 });
const out: { window?: { slotCount: number; slotSize: string }; sent: number; error?: string } = { sent: 0 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

try {
  const dir = decodeMessage(await conn.recv({ timeoutMs: 30_000 }));
  if (dir.type !== MsgType.DIRECTION) throw new Error("expected DIRECTION");
  if (mode === "escape") {
    await conn.send(encodeFailureReason("\x1b[2J\x1b[31mEVIL\rerror: the copy succeeded\n\u202eforged"));
    await conn.send(encodeStatus(false));
  } else if (mode === "huge") {
    await conn.send(encodeDirection({ fileInHost: false, fileSize: 8n << 30n, docaTs: true }));
    await conn.send(encodeExtParams(1000, 1n << 30n));
    const win = decodeMessage(await conn.recv({ timeoutMs: 30_000 }));
    if (win.type === MsgType.WINDOW) out.window = { slotCount: win.slotCount, slotSize: String(win.slotSize) };
  } else {
    const answer = encodeDirection({ fileInHost: false, fileSize: 1000, docaTs: true });
    await conn.send(answer);
    const spam = mode === "reason-spam" ? encodeFailureReason("still thinking") : answer;
    const until = Date.now() + 60_000;
    while (Date.now() < until && conn.connected) {
      await conn.send(spam);
      out.sent++;
      await sleep(100);
    }
  }
} catch (e) {
  out.error = String(e);
}
process.stdout.write(JSON.stringify(out) + "\n");
await sleep(200);
process.exit(0);
