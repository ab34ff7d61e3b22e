// passk's TypeScript compile server: `tsc ARGS main.ts` for one program per request, in one long-lived
// process, so that the standard library's declarations (lib.*.d.ts, ~2 s of every tsc start) are read
// and parsed once. The same compiler (this image's tsc), the same command line parsed by tsc's own
// parser, the same diagnostics in tsc's own format and the same exit status as the command would give:
// 0 when there is no error, 1 when errors stopped the emit, 2 when errors were reported and output
// written (tsc's ExitStatus). It never runs the program it compiles.
//
// It talks only to the supervisor, on its stdin and stdout (no socket, no file a candidate can reach):
// one JSON line in, {"args": [...], "file": "main.ts", "source": "..."}; one JSON line out,
// {"exit_code": n, "output": "...", "files": {"main.js": "..."}}. The program's directory is virtual
// (/passk/job): a program sees no file of another job, and nothing is written to disk.
//
// What it does not repeat: type-checking the standard library's declarations (tsc does it at every
// start; it reports nothing for them unless the program declares a global name they also declare, the
// only way a program can change what they mean). So each program is checked with skipDefaultLibCheck,
// and checked again in full, exactly as tsc does, when one of its global names is also a name of the
// standard library's, it augments the global scope (`declare global`), or it has a triple-slash
// directive (`/// <reference lib|types|path|no-default-lib>`): those change which library files are read,
// and two of them may conflict with each other (lib.webworker against lib.dom), whatever the program's
// own names are.
"use strict";
const ts = require("/usr/local/lib/typescript/package/lib/typescript.js");
const path = require("path");
const readline = require("readline");

const JOB = "/passk/job";
const libDir = path.dirname(ts.getDefaultLibFilePath({}));
const cache = new Map();   // standard library files only: their text never changes

function compile(request) {
  const parsed = ts.parseCommandLine([...request.args, request.file]);
  const out = [];
  if (parsed.errors.length) {
    return { exit_code: 1, output: ts.formatDiagnostics(parsed.errors, formatHost), files: {} };
  }
  const options = parsed.options;
  const root = path.join(JOB, request.file);
  const files = {};
  const host = ts.createCompilerHost(options);
  const readFile = host.readFile.bind(host);
  host.getCurrentDirectory = () => JOB;
  host.readFile = (name) => (name === root ? request.source : readFile(name));
  host.fileExists = (name) => name === root || (!name.startsWith(JOB + "/") && ts.sys.fileExists(name));
  host.directoryExists = (name) => name === JOB || (!name.startsWith(JOB + "/") && ts.sys.directoryExists(name));
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, languageVersion, onError, shouldCreate) => {
    if (name === root) return ts.createSourceFile(name, request.source, languageVersion, false);
    if (path.dirname(name) !== libDir) return getSourceFile(name, languageVersion, onError, shouldCreate);
    const key = name + "\0" + JSON.stringify(languageVersion);
    let file = cache.get(key);
    if (!file) {
      file = getSourceFile(name, languageVersion, onError, shouldCreate);
      if (file) cache.set(key, file);
    }
    return file;
  };
  host.writeFile = (name, text) => { files[path.relative(JOB, name)] = text; };
  const roots = parsed.fileNames.map((f) => path.resolve(JOB, f));
  let program = ts.createProgram(roots, { ...options, skipDefaultLibCheck: true }, host);
  const touched = !options.skipDefaultLibCheck && touchesLibrary(program, root);
  if (touched) program = ts.createProgram(roots, options, host);   // the full check, as tsc
  const emitted = program.emit();
  const diagnostics = ts.sortAndDeduplicateDiagnostics(ts.getPreEmitDiagnostics(program).concat(emitted.diagnostics));
  const errors = diagnostics.filter((d) => d.category === ts.DiagnosticCategory.Error);
  out.push(ts.formatDiagnostics(diagnostics, formatHost));
  let exit = 0;
  if (errors.length) exit = emitted.emitSkipped ? 1 : 2;
  return { exit_code: exit, output: out.join(""), files, library_checked: touched };
}

const touchedNames = new Set();
const libraryNames = new Map();   // the lib files a program used -> the global names they declare

function globalNames(file) {
  return file.locals ? Array.from(file.locals.keys()) : [];
}

function touchesLibrary(program, root) {
  const main = program.getSourceFile(root);
  program.getTypeChecker();   // binds every file (their `locals`)
  if (!main) return true;
  if (main.moduleAugmentations && main.moduleAugmentations.length) return true;   // declare global / module
  if (main.libReferenceDirectives.length || main.typeReferenceDirectives.length || main.referencedFiles.length
      || main.hasNoDefaultLib) return true;   // a triple-slash directive: other library files, checked as tsc does
  if (ts.isExternalModule(main)) return false;   // a module's top-level names are its own
  const libs = program.getSourceFiles().filter((f) => path.dirname(f.fileName) === libDir);
  const key = libs.map((f) => f.fileName).join("\0");
  let names = libraryNames.get(key);
  if (!names) {
    names = new Set();
    for (const f of libs) for (const n of globalNames(f)) names.add(n);
    libraryNames.set(key, names);
  }
  return globalNames(main).some((n) => names.has(n) && (touchedNames.add(n), true));
}

const formatHost = {
  getCanonicalFileName: (f) => f,
  getCurrentDirectory: () => JOB,
  getNewLine: () => "\n",
};

const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on("line", (line) => {
  let reply;
  try {
    reply = compile(JSON.parse(line));
  } catch (e) {
    reply = { exit_code: 3, output: "passk: the TypeScript compiler failed: " + String(e && e.stack || e).slice(0, 2000), files: {} };
  }
  process.stdout.write(JSON.stringify(reply) + "\n");
});
process.stdout.write(JSON.stringify({ ready: true, version: ts.version }) + "\n");
