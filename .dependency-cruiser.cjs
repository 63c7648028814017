/** Layering of the hexagon, checked in `npm test`. */
module.exports = {
  forbidden: [
    {
      name: "core-is-pure",
      comment: "The core imports only effect, the Public Suffix List and the word segmenter, and its own files: no HTTP, SQL, Node built-ins or other workspaces.",
      severity: "error",
      from: { path: "^packages/core/src/(?!testing/)" },
      to: {
        pathNot: ["^packages/core/src", "node_modules/(effect|tldts|tldts-core|wordsninja)/"]
      }
    },
    {
      name: "adapters-never-import-apps",
      severity: "error",
      from: { path: "^packages/" },
      to: { path: "^apps/" }
    },
    {
      name: "adapters-never-import-each-other",
      comment: "An adapter depends on the core only.",
      severity: "error",
      from: { path: "^packages/(?!core/)([^/]+)/src" },
      to: { path: "^packages/(?!core/)([^/]+)/", pathNot: "^packages/$1/" }
    },
    {
      name: "no-circular",
      severity: "error",
      from: {},
      to: { circular: true }
    }
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    combinedDependencies: true,
    exclude: { path: "(^|/)(test|node_modules)/" },
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default"] }
  }
}
