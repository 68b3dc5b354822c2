// A process that appends to a SqliteStore and says which records were acknowledged, for
// sqlite-log.test.ts to kill with SIGKILL. MODE=hold: append COUNT records, print "acked COUNT",
// then block the event loop so the log's rows are never written into the tables before the kill.
// MODE=stream: append one record after another for ever, printing each acknowledged sequence.
import { SqliteStore } from "../../src/journal/sqlite.ts";

const store = new SqliteStore(process.env.FILE!);
const record = (sequence: number) => ({ sessionId: "ses_killed", sequence, at: Date.now(), type: "tool.returned" as const, data: { callId: "ses_killed:1", n: sequence } });
if (process.env.MODE === "hold") {
  const count = Number(process.env.COUNT);
  // One after another (the tables get some of them meanwhile), then the last ten in one group
  // commit, acknowledged in the same tick as the print and the block: those are only in the log.
  for (let i = 1; i <= count - 10; i++) await store.append(record(i));
  await Promise.all(Array.from({ length: 10 }, (_, k) => store.append(record(count - 9 + k))));
  process.stdout.write(`acked ${count}\n`);
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); // until SIGKILL
} else {
  for (let i = 1; ; i++) {
    await store.append(record(i));
    process.stdout.write(`${i}\n`);
  }
}
