// Entry of the child process bench section 14 runs each node in (record-memory.ts): measures, prints the result as JSON.
import { measureRecordMemory } from "./record-memory.ts";

process.stdout.write(JSON.stringify(await measureRecordMemory(JSON.parse(process.argv[2]!) as { journal: string; sessions: number; turns: number })));
