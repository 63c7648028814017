/**
 * @dropshelf/server — the REST API over the core's `Directory`: the HttpApi contract (also at
 * `@dropshelf/server/api`), its handlers, the HTTP boundary and the Node server, plus the RDAP
 * availability check the reveal uses.
 */
export * as Api from "./api/Api.ts"
export * as ApiErrors from "./api/ApiErrors.ts"
export * as Boundary from "./http/Boundary.ts"
export * as ErrorMapping from "./http/ErrorMapping.ts"
export * as RdapAvailability from "./RdapAvailability.ts"
export * as Server from "./Server.ts"
