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
      name: "contract-is-server-free",
      comment: "The HttpApi contract imports only effect, the core's schemas and its own files, so a client can use it without the server.",
      severity: "error",
      from: { path: "^packages/api/src" },
      to: {
        pathNot: ["^packages/api/src", "^packages/core/src", "node_modules/effect/"]
      }
    },
    {
      name: "client-builds-on-the-contract",
      comment: "The typed client imports the contract (and through it the core's schemas), effect and its own few libraries: never a server, an adapter or Node built-ins, so it also runs in a browser.",
      severity: "error",
      from: { path: "^packages/client/src" },
      to: {
        pathNot: ["^packages/client/src", "^packages/api/src", "^packages/core/src", "node_modules/(effect|structured-headers)/"]
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
      comment: "An adapter depends on the core only (the client and the contract have their own rules above).",
      severity: "error",
      from: { path: "^packages/(?!core/|api/|client/)([^/]+)/src" },
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
