// The SQLite journal's checkpointer, on its own thread and connection (see sqlite.ts). Plain
// JavaScript, like the component workers, because worker threads do not run the tsx loader.
// PASSIVE checkpoints never block the writer; this thread takes the cost of copying WAL frames
// into the database file and of its fsync, which would otherwise land inside some commit.
//
// Under steady writes a PASSIVE checkpoint never catches up with the last frame (commits arrive
// while it copies and syncs), and SQLite starts the WAL over from its beginning only when a commit
// finds every frame copied: the WAL grew by a page per commit for as long as the writes went on
// (~80 MB/s for one sequential caller), every commit extending the file (the file system's block
// allocation was ~5 µs of each commit), and a crash left all of it to replay. So once the WAL holds
// more than `restartFrames`, a RESTART follows the PASSIVE one: it takes the writer lock, copies
// the few frames written meanwhile (and syncs), waits up to RESTART_WAIT_MS for readers of the
// WAL, and the next commit starts the WAL over, writing into blocks the file already has. The
// writer waits for the lock that long at most, once per such checkpoint.
import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";

const BUSY_MS = 1000;
/** How long a RESTART waits for the writer lock and for readers (an operator's long query) before giving up for now. */
const RESTART_WAIT_MS = 20;

const db = new Database(workerData.file, { timeout: BUSY_MS });
const checkpoint = () => {
  try {
    const [passive] = db.pragma("wal_checkpoint(PASSIVE)");
    if (passive === undefined || passive.log <= workerData.restartFrames) return;
    db.pragma(`busy_timeout = ${RESTART_WAIT_MS}`);
    try {
      db.pragma("wal_checkpoint(RESTART)");
    } finally {
      db.pragma(`busy_timeout = ${BUSY_MS}`);
    }
  } catch {
    // Busy or the file went away: the next tick tries again; durability never depends on it.
  }
};
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.on("message", (m) => {
  if (m !== "close") return;
  clearInterval(timer);
  checkpoint();
  db.close();
  parentPort.close();
});
parentPort.postMessage("ready");
