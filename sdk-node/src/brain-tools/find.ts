// brain-tools: finding the tools a package exports, with ts-morph over its built JavaScript. Each
// public module's exported declarations are followed through re-exports (`export { x } from`,
// `export *`) to the file that declares them; a declaration `tool({...})` (the SDK's `tool`,
// imported under any local name, or `ns.tool` of a namespace import) is a candidate. Only the
// package's own files are read: relative imports resolve to the .js files beside them (never to the
// .d.ts tsc writes next to them, which has no initializer), and packages are not loaded at all.
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type * as TsMorph from "ts-morph";
import { BrainToolsError, rel, type PackageInfo } from "./package.ts";

/** One export of one public module that is declared as `tool(...)`. */
export interface Candidate {
  readonly subpath: string;
  /** The export name at that subpath. */
  readonly exportName: string;
  /** The public module's file (imported to get the value). */
  readonly entryFile: string;
  /** The file that declares the tool (where brain-tools records the reference). */
  readonly declFile: string;
  /** Its 1-based line, for messages. */
  readonly line: number;
  /** The declaration's identity: file and position. */
  readonly key: string;
  /** The declaring file's own binding for it: a variable name, or "default" for `export default tool(...)`. */
  readonly local: string;
  /** Whether the definition literal visibly has `run` (undefined when the argument is not an object literal). */
  readonly hasRun: boolean | undefined;
}

/** What ts-morph is loaded as; a missing optional peer is the publisher's to install. */
export async function loadTsMorph(): Promise<typeof TsMorph> {
  try {
    return await import("ts-morph");
  } catch (e) {
    if ((e as { code?: string }).code === "ERR_MODULE_NOT_FOUND") {
      throw new BrainToolsError("brain-tools needs ts-morph, an optional peer dependency of @aexhq/brain that only publishers use: npm install --save-dev ts-morph");
    }
    throw e;
  }
}

export async function findTools(pkg: PackageInfo): Promise<{ candidates: Candidate[]; files: TsMorph.SourceFile[] }> {
  const { Project, Node, ts } = await loadTsMorph();
  const project = new Project({
    compilerOptions: { allowJs: true, checkJs: false, noLib: true, types: [], noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
    skipAddingFilesFromTsConfig: true,
    skipFileDependencyResolution: false,
    resolutionHost: () => ({
      resolveModuleNames: (names: string[], containingFile: string) =>
        names.map((name) => {
          if (!name.startsWith("./") && !name.startsWith("../")) return undefined;
          const file = resolve(dirname(containingFile), name);
          const ext = file.endsWith(".mjs") ? ts.Extension.Mjs : file.endsWith(".js") ? ts.Extension.Js : undefined;
          return ext !== undefined && existsSync(file) ? { resolvedFileName: file, extension: ext, isExternalLibraryImport: false } : undefined;
        }),
    }),
  });
  for (const entry of pkg.entries) project.addSourceFileAtPath(entry.file);
  project.resolveSourceFileDependencies();

  /** Whether `callee` is Brain's `tool`: an import named `tool`, or `ns.tool` of a namespace import. */
  const isToolCallee = (callee: TsMorph.Node): boolean => {
    if (Node.isIdentifier(callee)) {
      return (callee.getSymbol()?.getDeclarations() ?? []).some((d) => Node.isImportSpecifier(d) && d.getName() === "tool");
    }
    if (Node.isPropertyAccessExpression(callee) && callee.getName() === "tool") {
      const target = callee.getExpression();
      return Node.isIdentifier(target) && (target.getSymbol()?.getDeclarations() ?? []).some((d) => Node.isNamespaceImport(d));
    }
    return false;
  };
  const unwrap = (e: TsMorph.Node | undefined): TsMorph.Node | undefined => {
    while (e !== undefined && (Node.isParenthesizedExpression(e) || Node.isAsExpression(e) || Node.isSatisfiesExpression(e))) e = e.getExpression();
    return e;
  };
  /** The `tool(...)` call that initializes a declaration, if it is one. */
  const toolCall = (init: TsMorph.Node | undefined): TsMorph.CallExpression | undefined => {
    const e = unwrap(init);
    return e !== undefined && Node.isCallExpression(e) && isToolCallee(e.getExpression()) ? e : undefined;
  };
  const visiblyHasRun = (call: TsMorph.CallExpression): boolean | undefined => {
    const arg = unwrap(call.getArguments()[0]);
    if (arg === undefined || !Node.isObjectLiteralExpression(arg)) return undefined;
    if (arg.getProperties().some((p) => Node.isSpreadAssignment(p))) return undefined;
    return arg.getProperty("run") !== undefined;
  };

  const candidates: Candidate[] = [];
  for (const entry of pkg.entries) {
    const source = project.getSourceFileOrThrow(entry.file);
    for (const [exportName, declarations] of source.getExportedDeclarations()) {
      for (const decl of declarations) {
        let call: TsMorph.CallExpression | undefined;
        let local: string;
        if (Node.isVariableDeclaration(decl)) {
          call = toolCall(decl.getInitializer());
          local = decl.getName();
        } else if (Node.isExportAssignment(decl) || Node.isExportAssignment(decl.getParent())) {
          // `export default tool({...})`: ts-morph gives the expression (or the assignment).
          call = toolCall(Node.isExportAssignment(decl) ? decl.getExpression() : decl);
          local = "default";
        } else continue;
        if (call === undefined) continue;
        const declFile = decl.getSourceFile().getFilePath();
        candidates.push({
          subpath: entry.subpath,
          exportName,
          entryFile: entry.file,
          declFile,
          line: decl.getStartLineNumber(),
          key: `${declFile}:${decl.getStart()}`,
          local,
          hasRun: visiblyHasRun(call),
        });
      }
    }
  }
  return { candidates, files: project.getSourceFiles() };
}

/** "dist/lookup.js:4" */
export const where = (pkg: PackageInfo, c: Candidate): string => `${rel(pkg.dir, c.declFile)}:${c.line}`;
