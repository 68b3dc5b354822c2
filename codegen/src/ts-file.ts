import { Project, type SourceFile, IndentationText, QuoteKind } from "ts-morph";

// One in-memory ts-morph project for all emitters: nothing touches disk until the CLI writes.
const project = new Project({
  useInMemoryFileSystem: true,
  manipulationSettings: { indentationText: IndentationText.TwoSpaces, quoteKind: QuoteKind.Double },
});

export function newSourceFile(name: string): SourceFile {
  const existing = project.getSourceFile(name);
  if (existing) project.removeSourceFile(existing);
  return project.createSourceFile(name, "", { overwrite: true });
}

export function render(file: SourceFile, headerText: string): string {
  return headerText + "\n" + file.getFullText().trimEnd() + "\n";
}

/** Turns a schema description into a JSDoc body (ts-morph adds the comment markers). */
export function jsdoc(description: string | undefined): { description: string }[] {
  return description ? [{ description: description.replace(/\*\//g, "*\\/") }] : [];
}
