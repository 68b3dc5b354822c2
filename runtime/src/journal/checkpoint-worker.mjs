// The SQLite journal's checkpointer, on its own thread and connection (see sqlite.ts). Plain
// JavaScript, like the component workers, because worker threads do not run the tsx loader.
// PASSIVE checkpoints never block the writer; this thread takes the cost of copying WAL frames
// into the database file and of its fsync, which would otherwise land inside some commit.
import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";

const db = new Database(workerData.file, { timeout: 1000 });
const checkpoint = () => {
  try {
    db.pragma("wal_checkpoint(PASSIVE)");
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
