// The package's public module: the tools a user imports. `npm run build` compiles it with tsc and
// then runs brain-tools, which writes dist/brain-tools.json and records on each factory where it
// lives (countWords.executable: this package, its version, ".", "countWords").
// `.js` specifiers, as a published package's sources have them: tsc rewrites `.ts` ones in the
// JavaScript it emits but not in the .d.ts, whose `./count-words.ts` Deno's type check cannot find.
export { countWords } from "./count-words.js";
export { slugify } from "./slugify.js";
