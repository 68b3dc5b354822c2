// The Node and Deno conformance subject: reads BRAIN_URL, BRAIN_TOKEN, BRAIN_HOST_ID and
// BRAIN_HOST_SECRET, registers every catalogue tool on that host, and serves calls until killed.
import { Brain } from "@aexhq/brain";
import { catalogue } from "./catalogue-tools.ts";

const brain = new Brain();
await brain.serve(catalogue.map((factory) => factory()));
