import { startFixture } from "../src/fixture.ts";
const f = await startFixture({ journal: (process.env.J as any) ?? "memory", host: "raw", sessions: 64 });
let done = 0; const end = Date.now() + 3000;
await Promise.all(Array.from({ length: 64 }, async (_, i) => { while (Date.now() < end) { await f.call(i); done++; } }));
console.log("calls/s", done / 3);
await f.close();
