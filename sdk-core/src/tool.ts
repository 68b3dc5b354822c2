import type { z } from "zod";
import type { ToolContract } from "@aexhq/brain-protocol";
import { jsonSchemaOf, isZodSchema } from "./schema.ts";
import { contractDigest } from "./digest.ts";
import type { ToolContext } from "./context.ts";
import type { Environment } from "./env.ts";
import { isComponent, type Component } from "./component.ts";

const NAME = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;

type Options<O> = O extends z.ZodType ? z.output<O> : Record<string, never>;

/** What `run` may return: ordinary output, an Outcome envelope, or nothing (see the spec's return rules). */
export type RunResult = unknown;

export interface ToolDefinition<I extends z.ZodType, O extends z.ZodType | undefined, P extends z.ZodType | undefined> {
  name: string;
  description: string;
  input: I;
  output?: O;
  options?: P;
  run?: (input: z.output<I>, ctx: ToolContext<Options<P>>) => RunResult | Promise<RunResult>;
  implementation?: Component | ((options: Options<P>) => unknown);
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
  /** The contract with its digest (computed once, asynchronously: crypto.subtle). */
  contract(): Promise<ToolContract>;
}

/** A tool configured by its factory: frozen options and where it runs. */
export interface PlacedToolSpec {
  readonly tool: DeclaredTool;
  readonly options: Readonly<Record<string, unknown>>;
  readonly env: Environment | undefined;
}

/** What the factory takes: the options (as accepted before parsing) plus an optional `env`; only `env` without an options schema. */
export type FactoryConfig<P extends z.ZodType | undefined> = P extends z.ZodType ? z.input<P> & { env?: Environment } : { env?: Environment };

export type ToolFactory<P extends z.ZodType | undefined> = ((config?: FactoryConfig<P>) => PlacedToolSpec) & {
  readonly tool: DeclaredTool;
};

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
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
  if ((def.run === undefined) === (def.implementation === undefined)) {
    throw new TypeError(`tool ${def.name}: give exactly one of run or implementation`);
  }
  if (def.run !== undefined && typeof def.run !== "function") throw new TypeError(`tool ${def.name}: run must be a function`);
  if (def.implementation !== undefined && typeof def.implementation !== "function" && !isComponent(def.implementation)) {
    throw new TypeError(`tool ${def.name}: implementation must be component(url) or a function returning a descriptor`);
  }
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
    return Object.freeze({ tool: declared, options: deepFreeze(options), env: env as Environment | undefined });
  };
  return Object.assign(factory, { tool: declared }) as unknown as ToolFactory<P>;
}
