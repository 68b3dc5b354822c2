// Entry of the child process bench section 15 runs its OTLP/HTTP receiver in (tracing.ts): a
// collector's receiver reduced to what costs the exporter, in a process of its own as a collector
// is in production, so reading the spans is not charged to the runtime's CPU. It reads each POST
// and answers 200 with an empty ExportTraceServiceResponse in the request's encoding, without
// decoding the spans. Prints {"port"} once it listens; on "end" on stdin, one JSON line of what it
// received and the CPU it spent, then exits.
import { createServer } from "node:http";
import { createInterface } from "node:readline";

let requests = 0;
let bytes = 0;
const server = createServer((req, res) => {
  req.on("data", (c: Buffer) => (bytes += c.length));
  req.on("end", () => {
    requests++;
    const protobuf = (req.headers["content-type"] ?? "").startsWith("application/x-protobuf");
    if (protobuf) res.writeHead(200, { "content-type": "application/x-protobuf", "content-length": 0 }).end();
    else res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
});
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  console.log(JSON.stringify({ port: typeof address === "object" && address !== null ? address.port : 0 }));
});
// The bench gone (its stdin closed) without an "end": nothing more will come.
createInterface({ input: process.stdin }).on("close", () => process.exit(0)).on("line", (line) => {
  if (line.trim() !== "end") return;
  const cpu = process.cpuUsage();
  console.log(JSON.stringify({ requests, bytes, cpuSeconds: (cpu.user + cpu.system) / 1e6 }));
  server.closeAllConnections();
  server.close();
});
