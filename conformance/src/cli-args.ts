/** `brain-conformance`'s options: the table its parser and its --help are made from. */
interface Option {
  flag: string;
  value: string;
  help: string;
}

const OPTIONS: readonly Option[] = [
  { flag: "--subject", value: "<subject>", help: "what to check (required): node, deno, command:\"<shell command>\" (your host), component:<file.wasm>, http, http-command:\"<shell command>\" (your HTTP tools), packaged-node, packaged-deno, mcp, mcp:\"<shell command>\" (your MCP stdio server), mcp-http, mcp-http:\"<shell command or URL>\" (your MCP Streamable HTTP server)" },
  { flag: "--only", value: "<pattern>", help: "run the scenarios whose name contains it or matches it as a glob ('deadline-*')" },
  { flag: "--report", value: "<file.json>", help: "also write the results as JSON (contract/conformance-report.schema.json)" },
  { flag: "--expected-failures", value: "<file.json>", help: "a JSON array of scenario names your binding is known to fail; a listed one that passes fails the run (stale)" },
  { flag: "--scenarios", value: "<dir>", help: "another scenario folder (default: the package's scenarios/)" },
  { flag: "--tools", value: "<a,b,…>", help: "the catalogue tools your subject implements, for a component or HTTP tools (they advertise nothing); scenarios needing others are n/a (default: all)" },
  { flag: "--connect-timeout", value: "<ms>", help: "time for the subject to register (or listen) after each start (default 20000)" },
  { flag: "--scenario-timeout", value: "<ms>", help: "time per scenario (default 15000)" },
  { flag: "--max-emitted-bytes", value: "<n>", help: "the runtime's emission budget per activation (default 100000)" },
];

/** A command line brain-conformance cannot take: exit code 2 and this message. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** The options given, by flag without its dashes (`subject`, `scenario-timeout`, ...). */
export type ConformanceArgs =
  | { help: true; list?: undefined }
  | { help: false; list: true; values: Record<string, string> }
  | { help: false; list?: undefined; values: Record<string, string> & { subject: string } };

const BY_FLAG = new Map(OPTIONS.map((o) => [o.flag, o]));

/** Parses `--flag value` / `--flag=value`; an unknown flag, a missing value or no --subject is a UsageError. */
export function parseConformanceArgs(args: readonly string[]): ConformanceArgs {
  const values: Record<string, string> = {};
  let list = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--help" || arg === "-h") return { help: true };
    if (arg === "--list") {
      list = true;
      continue;
    }
    const eq = arg.indexOf("=");
    const name = arg.startsWith("--") && eq > 0 ? arg.slice(0, eq) : arg;
    const option = BY_FLAG.get(name);
    if (option === undefined) {
      throw new UsageError(arg.startsWith("-") ? `unknown option ${name} (brain-conformance --help lists the options)` : `unexpected argument ${JSON.stringify(arg)} (options are --flag value; brain-conformance --help lists them)`);
    }
    if (name.slice(2) in values) throw new UsageError(`${name} is given twice`);
    const value = eq > 0 && arg.startsWith("--") ? arg.slice(eq + 1) : args[++i];
    if (value === undefined || value === "") throw new UsageError(`${name} needs a value: ${name} ${option.value}`);
    values[name.slice(2)] = value;
  }
  if (list) return { help: false, list: true, values };
  if (values.subject === undefined) throw new UsageError("--subject is required, e.g. brain-conformance --subject node (brain-conformance --help lists the subjects)");
  return { help: false, values: values as Record<string, string> & { subject: string } };
}

/** `brain-conformance --help`. */
export function conformanceHelp(): string {
  const left = OPTIONS.map((o) => `${o.flag} ${o.value}`);
  const width = Math.max(...left.map((l) => l.length));
  return `usage: brain-conformance --subject <subject> [options]

Starts a Brain runtime on a free loopback port, starts your subject with BRAIN_URL, BRAIN_TOKEN,
BRAIN_HOST_ID and BRAIN_HOST_SECRET in its environment, waits for it to register, runs every
scenario and prints a pass/fail table; a failing subject's own output (the tail of its stdout and
stderr) follows the table.

Options:
${OPTIONS.map((o, i) => `  ${left[i]!.padEnd(width)}  ${o.help}`).join("\n")}
  ${"--list".padEnd(width)}  print the capabilities (required or optional, with their tools) and each scenario's, then exit
  ${"-h, --help".padEnd(width)}  this help

Exit codes: 0 every scenario passed, 1 a scenario failed, 2 a usage error or a bad scenario file.

Examples:
  brain-conformance --subject node
  brain-conformance --subject 'command:python my_host.py' --report report.json
  brain-conformance --subject component:my_tools.wasm --only 'deadline-*'
  brain-conformance --subject 'mcp:python my_mcp_server.py'

The protocol your subject speaks: contract/PROTOCOL.md in this package; the scenarios and the
catalogue of tools to implement: README.md and CATALOGUE.md beside it.`;
}
