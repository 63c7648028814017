/** The REST contract only: importable by clients without pulling in server code. */
export * as Api from "./Api.ts"
export * as ApiErrors from "./ApiErrors.ts"
export * as WatchesApi from "./WatchesApi.ts"
