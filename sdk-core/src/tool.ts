import type { z } from "zod";
import type { ToolContract } from "@aexhq/brain-protocol";
import { jsonSchemaOf, isZodSchema } from "./schema.ts";
import { contractDigest } from "./digest.ts";
import type { ToolContext } from "./context.ts";
import type { Environment } from "./env.ts";
import { isComponent, type Component } from "./component.ts";
import { notJsonReason } from "./json.ts";
import { deepFreeze } from "./freeze.ts";
import type { ToolOutput } from "./outcome.ts";

const NAME = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;

type Options<O> = O extends z.ZodType ? z.output<O> : Record<string, never>;

/** What the output schema accepts (`z.input`, see ToolOutput); any JSON without an output schema. */
export type OutputOf<O> = O extends z.ZodType ? z.input<O> : unknown;

/**
 * What `run` may return: ordinary output typed by the output schema, an Outcome envelope, or
 * nothing (`return ctx.finish(...)` is nothing: a Promise of void). See the spec's return rules.
 */
export type RunResult<T = unknown> = ToolOutput<T> | void;

/** What `tool()` takes: name, description, Zod schemas for input, output and options, and `run` (or a component `implementation`). */
export interface ToolDefinition<I extends z.ZodType, O extends z.ZodType | undefined, P extends z.ZodType | undefined> {
  name: string;
  description: string;
  input: I;
  output?: O;
  options?: P;
  run?: (input: z.output<I>, ctx: ToolContext<Options<P>, OutputOf<O>>) => RunResult<OutputOf<O>> | Promise<RunResult<OutputOf<O>>>;
  implementation?: Component | ((options: Options<P>) => unknown);
  /**
   * `"always"`: every call of this tool waits for a person's approval before Brain dispatches it
   * (`session.approve` / `session.deny`, an `onApprovalRequest` hook, or the page at /ui). Carried on
   * each placement (`PlacedTool.approval`); a placement may also ask for it on a tool declared
   * without it: `{ ...someTool(), approval: "always" }`.
   */
  approval?: "always";
}

/** A declared tool: its definition plus the JSON Schemas computed once at declaration. */
export interface DeclaredTool {
  readonly name: string;
  readonly description: string;
  readonly input: z.ZodType;
  readonly output: z.ZodType | undefined;
  readonly options: z.ZodType | undefined;
  readonly run: ((input: unknown, ctx: ToolContext<unknown>) => RunResult | Promise<RunResult>) | undefined;
  readonly implementation: Component | ((options: unknown) => unknown) | undefined;
  readonly inputSchema: Record<string, unknown>;
  readonly outputSchema: Record<string, unknown> | undefined;
  readonly optionsSchema: Record<string, unknown> | undefined;
  /** Whether its calls wait for approval (ToolDefinition.approval). */
  readonly approval: "always" | undefined;
  /** The contract with its digest (computed once, asynchronously: crypto.subtle). */
  contract(): Promise<ToolContract>;
}

/**
 * Where a packaged tool's code lives, so that another process can import it: `import(specifier)`
 * where the specifier is `package` for `module` "." and `package + module.slice(1)` otherwise (an
 * `exports` subpath), then take `export`. The `brain-tools` build helper records it on the factories
 * a package exports (and in the package's `brain-tools.json`); tools declared in an application
 * have none.
 */
export interface ExecutableReference {
  /** The npm package name, as in its package.json. */
  readonly package: string;
  /** The package's version, as in its package.json. */
  readonly version: string;
  /** The `exports` subpath that exports the tool: "." or "./sub/path". */
  readonly module: string;
  /** The export name at that subpath ("default" for a default export). */
  readonly export: string;
}

/** A tool configured by its factory: frozen options and where it runs. */
export interface PlacedToolSpec {
  readonly tool: DeclaredTool;
  readonly options: Readonly<Record<string, unknown>>;
  readonly env: Environment | undefined;
  /** A descriptor tool's `implementation(options)`, computed at the factory call: frozen JSON. */
  readonly descriptor?: unknown;
  /** The factory's executable reference, when it came from a package built with `brain-tools`. */
  readonly executable?: ExecutableReference;
  /** The MCP server's name for the tool (brain.mcpTools), when it differs from the Brain name or is set; else the tool's name. */
  readonly mcpTool?: string;
  /** `"always"`: this placement's calls wait for approval, whatever the tool's declaration says (see ToolDefinition.approval). */
  readonly approval?: "always";
}

/** What the factory takes: the options (as accepted before parsing) plus an optional `env`; only `env` without an options schema. */
export type FactoryConfig<P extends z.ZodType | undefined> = P extends z.ZodType ? z.input<P> & { env?: Environment } : { env?: Environment };

/**
 * The factory's call: the config may be left out only when the options schema accepts `{}` (no
 * options schema, or no required option), so `lookup()` for a tool whose options require `prefix`
 * is a type error, not only the TypeError `invalid options` when it runs.
 */
export type FactoryCall<P extends z.ZodType | undefined> = [P] extends [z.ZodType]
  ? Record<never, never> extends z.input<P> ? (config?: FactoryConfig<P>) => PlacedToolSpec : (config: FactoryConfig<P>) => PlacedToolSpec
  : (config?: FactoryConfig<P>) => PlacedToolSpec;

/** What `tool()` returns: call it with the options (and an optional `env`) to place the tool in a session. */
export type ToolFactory<P extends z.ZodType | undefined> = FactoryCall<P> & {
  readonly tool: DeclaredTool;
  /**
   * Set on the `run` tools a package exports when the package was built with `brain-tools`
   * (imported from the published package); undefined for a tool declared in the application.
   */
  readonly executable?: ExecutableReference;
};

/**
 * A descriptor tool's descriptor for one placement. It is computed here, once, so a bad
 * implementation or placement fails at the factory call that caused it, and it is a frozen copy
 * of plain JSON: Brain hands it to the Environment with every invoke and never looks inside.
 */
function descriptorOf(name: string, implementation: (options: unknown) => unknown, env: Environment | undefined, options: unknown): unknown {
  if (env === undefined || env.kind !== "brain") {
    throw new TypeError(`${name}(): descriptor tools run in an Environment that interprets them: pass env: brainEnv({ name })`);
  }
  if (env.filesystem !== undefined) {
    throw new TypeError(`${name}(): brainEnv ${env.name} grants filesystem.workspace, but grants are for component tools; a descriptor tool's Environment is set up by the Brain server's operator`);
  }
  let descriptor: unknown;
  try {
    descriptor = implementation(options);
  } catch (e) {
    throw new TypeError(`${name}(): implementation(options) threw: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
  const reason = notJsonReason(descriptor);
  if (reason !== undefined) throw new TypeError(`${name}(): the descriptor implementation(options) returned is not JSON: ${reason}`);
  return deepFreeze(JSON.parse(JSON.stringify(descriptor)));
}

/** Declares a tool. Bad names, missing parts and unrepresentable schemas throw a TypeError here. */
export function tool<I extends z.ZodType, O extends z.ZodType | undefined = undefined, P extends z.ZodType | undefined = undefined>(
  def: ToolDefinition<I, O, P>,
): ToolFactory<P> {
  if (typeof def !== "object" || def === null) throw new TypeError("tool() takes a definition object");
  if (typeof def.name !== "string" || !NAME.test(def.name)) {
    throw new TypeError(`tool name ${JSON.stringify(def.name)} is invalid: use 1-64 letters, digits, _ or -, starting with a letter`);
  }
  if (typeof def.description !== "string" || def.description.trim() === "") throw new TypeError(`tool ${def.name}: description must be a non-empty string`);
  if (!isZodSchema(def.input)) throw new TypeError(`tool ${def.name}: input must be a Zod schema`);
  if (def.output !== undefined && !isZodSchema(def.output)) throw new TypeError(`tool ${def.name}: output must be a Zod schema`);
  if (def.options !== undefined && !isZodSchema(def.options)) throw new TypeError(`tool ${def.name}: options must be a Zod schema`);
  // Neither is a tool with only its contract, served by someone else's endpoint: see the factory.
  if (def.run !== undefined && def.implementation !== undefined) {
    throw new TypeError(`tool ${def.name}: give run or implementation, not both`);
  }
  if (def.run !== undefined && typeof def.run !== "function") throw new TypeError(`tool ${def.name}: run must be a function`);
  if (def.implementation !== undefined && typeof def.implementation !== "function" && !isComponent(def.implementation)) {
    throw new TypeError(`tool ${def.name}: implementation must be component(url) or a function returning a descriptor`);
  }
  if (def.approval !== undefined && def.approval !== "always") throw new TypeError(`tool ${def.name}: approval must be "always" (or left out), got ${JSON.stringify(def.approval)}`);
  const inputSchema = jsonSchemaOf(def.input, "input", `tool ${def.name}: input`);
  const outputSchema = def.output ? jsonSchemaOf(def.output, "output", `tool ${def.name}: output`) : undefined;
  const optionsSchema = def.options ? jsonSchemaOf(def.options, "input", `tool ${def.name}: options`) : undefined;
  let contract: Promise<ToolContract> | undefined;
  const declared: DeclaredTool = Object.freeze({
    name: def.name,
    description: def.description,
    input: def.input,
    output: def.output,
    options: def.options,
    run: def.run as DeclaredTool["run"],
    implementation: def.implementation as DeclaredTool["implementation"],
    inputSchema,
    outputSchema,
    optionsSchema,
    approval: def.approval,
    contract: () =>
      (contract ??= contractDigest({ name: def.name, inputSchema, outputSchema, optionsSchema }).then((digest) => ({
        name: def.name,
        description: def.description,
        inputSchema,
        ...(outputSchema ? { outputSchema } : {}),
        ...(optionsSchema ? { optionsSchema } : {}),
        digest,
      }))),
  });

  const factory = (config?: Record<string, unknown>): PlacedToolSpec => {
    if (config !== undefined && (typeof config !== "object" || config === null)) throw new TypeError(`${def.name}(): options must be an object`);
    const { env, ...rest } = config ?? {};
    let options: Record<string, unknown>;
    if (def.options) {
      const parsed = def.options.safeParse(rest);
      if (!parsed.success) throw new TypeError(`${def.name}(): invalid options: ${parsed.error.issues.map((i) => `${i.path.join(".") || "/"} ${i.message}`).join("; ")}`);
      options = parsed.data as Record<string, unknown>;
    } else {
      if (Object.keys(rest).length > 0) throw new TypeError(`${def.name}() takes no options (it declares no options schema); got ${Object.keys(rest).join(", ")}`);
      options = {};
    }
    const frozen = deepFreeze(options);
    const placedEnv = env as Environment | undefined;
    if (placedEnv?.kind === "http_plain" && def.implementation !== undefined) {
      throw new TypeError(`${def.name}(): a plain-JSON endpoint (http({ url })) serves the tool itself; component and descriptor implementations run in brainEnv`);
    }
    if (placedEnv?.kind === "mcp" && (def.run !== undefined || def.implementation !== undefined)) {
      throw new TypeError(`${def.name}(): MCP server ${placedEnv.name} runs the tool itself: declare only its contract (name, description, input, output) to place it with mcpEnv`);
    }
    if (placedEnv?.kind !== "http_plain" && placedEnv?.kind !== "mcp" && def.run === undefined && def.implementation === undefined) {
      throw new TypeError(`${def.name}(): tool ${def.name} has only a contract (no run, no implementation), so an endpoint elsewhere serves it: place it with env: http({ url })`);
    }
    if (placedEnv?.kind === "brain" && placedEnv.runtime !== undefined && (factory as { executable?: ExecutableReference }).executable === undefined) {
      throw new TypeError(
        `${def.name}(): brainEnv ${placedEnv.name} (runtime ${placedEnv.runtime}) runs packaged tools: tools exported by a package built with brain-tools and imported from it where it is installed; ` +
          `${def.name} has no executable reference (declared in this application, or its package was built without brain-tools)`,
      );
    }
    if (typeof def.implementation !== "function") {
      // brain-tools defines `executable` on the factory after declaration (see ToolFactory).
      const { executable } = factory as { executable?: ExecutableReference };
      return Object.freeze({ tool: declared, options: frozen, env: placedEnv, ...(executable !== undefined ? { executable } : {}) });
    }
    const descriptor = descriptorOf(def.name, def.implementation as (options: unknown) => unknown, placedEnv, frozen);
    return Object.freeze({ tool: declared, options: frozen, env: placedEnv, descriptor });
  };
  return Object.assign(factory, { tool: declared }) as unknown as ToolFactory<P>;
}
