// The package's public module: the tools a user imports. `npm run build` compiles it with tsc and
// then runs brain-tools, which writes dist/brain-tools.json and records on each factory where it
// lives (countWords.executable: this package, its version, ".", "countWords").
export { countWords } from "./count-words.ts";
export { slugify } from "./slugify.ts";
