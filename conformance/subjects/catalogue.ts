// The Node and Deno conformance subject: reads BRAIN_URL, BRAIN_TOKEN, BRAIN_HOST_ID and
// BRAIN_HOST_SECRET, registers every catalogue tool on that host, and serves calls until killed.
// BRAIN_CONFORMANCE_VARIANT selects a catalogue variant (see CATALOGUE.md).
import { Brain } from "@aexhq/brain";
import { catalogueFor } from "./catalogue-tools.ts";

// Deno has no `process` global unless asked; Node has no `Deno`.
const denoEnv = (globalThis as { Deno?: { env: { get(name: string): string | undefined } } }).Deno?.env;
const variant = denoEnv ? denoEnv.get("BRAIN_CONFORMANCE_VARIANT") : process.env.BRAIN_CONFORMANCE_VARIANT;

const brain = new Brain();
await brain.serve(catalogueFor(variant || undefined).map((factory) => factory()));
