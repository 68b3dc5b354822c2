// A host process for liveness tests: registers one tool, prints each invoke's callId, answers
// nothing. Its parent stops it with SIGSTOP; while stopped it answers no ping.
// usage: node silent-host.mjs <brainUrl> <token> <hostId> <secret> <contract JSON>
import { fileURLToPath } from "node:url";
import WebSocket from "ws";

// The test runner imports every file under test/: run only when started as a program.
if (process.argv[1] === fileURLToPath(import.meta.url)) main(...process.argv.slice(2));

function main(url, token, hostId, secret, contract) {
const ws = new WebSocket(url.replace(/^http/, "ws") + "/v1/hosts/connect");
ws.on("open", () => ws.send(JSON.stringify({ type: "register", ref: 1, protocol: "brain.host/0.2", token, hostId, secret, tools: [JSON.parse(contract)] })));
ws.on("message", (data) => {
  const f = JSON.parse(data.toString());
  if (f.type === "registered") console.log("registered");
  else if (f.type === "invoke") console.log(`invoked ${f.callId}`);
});
ws.on("close", (code) => {
  console.log(`closed ${code}`);
  process.exit(0);
});
}
