// `brain-tools [dir] [--out <file>]`: run after the build of a package that exports Brain tools.
// Exit codes: 0 written; 2 a problem with the package (the message names the file and export);
// 1 anything unexpected.
import { relative } from "node:path";
import { BrainToolsError } from "./package.ts";
import { publishTools } from "./publish.ts";

const USAGE = `usage: brain-tools [<package dir>] [--out <file>]

Run it after your build, in the folder of the package you publish (the one with package.json).
It reads the package's public modules (package.json "exports", or "main") in the built JavaScript,
finds every exported tool declared with tool({ ..., run }), writes brain-tools.json beside the build
(each tool's executable reference and contract), and records the reference on each tool's factory
in the built files, so \`import { myTool } from "your-package"\` gives myTool.executable.

  --out <file>   where to write the manifest (default: brain-tools.json in the folder of the
                 package's main entry, e.g. dist/brain-tools.json)

Needs ts-morph (npm install --save-dev ts-morph).`;

async function main(argv: string[]): Promise<number> {
  let dir: string | undefined;
  let out: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--help" || a === "-h") {
      console.log(USAGE);
      return 0;
    } else if (a === "--out") {
      out = argv[++i];
      if (out === undefined) throw new BrainToolsError("--out needs a file name");
    } else if (a.startsWith("--out=")) out = a.slice("--out=".length);
    else if (a.startsWith("-")) throw new BrainToolsError(`unknown option ${a}\n${USAGE}`);
    else if (dir === undefined) dir = a;
    else throw new BrainToolsError(`one package folder at a time (got ${dir} and ${a})`);
  }
  const { manifest, manifestPath, notes } = await publishTools(dir ?? process.cwd(), out === undefined ? {} : { out });
  for (const note of notes) console.error(`brain-tools: note: ${note}`);
  console.log(`brain-tools: ${manifest.package}@${manifest.version}: ${manifest.tools.length} tool${manifest.tools.length === 1 ? "" : "s"} in ${relative(process.cwd(), manifestPath) || manifestPath}`);
  for (const { contract, executable } of manifest.tools) {
    const specifier = executable.module === "." ? executable.package : `${executable.package}${executable.module.slice(1)}`;
    console.log(`  ${contract.name}: import { ${executable.export === "default" ? "default as ..." : executable.export} } from "${specifier}" (digest ${contract.digest.slice(0, 12)})`);
  }
  return 0;
}

let code: number;
try {
  code = await main(process.argv.slice(2));
} catch (e) {
  if (e instanceof BrainToolsError) {
    console.error(`brain-tools: ${e.message}`);
    code = 2;
  } else {
    console.error("brain-tools: unexpected failure:", e);
    code = 1;
  }
}
// The package's modules were imported in this process; whatever they left running is not ours to wait for.
process.exit(code);
