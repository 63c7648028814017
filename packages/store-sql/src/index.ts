/**
 * @dropshelf/store-sql — the core's storage ports on Postgres: embedded PGlite by default,
 * any PostgreSQL 15+ through DATABASE_URL.
 */
export * as StoreSql from "./StoreSql.ts"
export * as PgliteClient from "./PgliteClient.ts"
export * as DataDirLock from "./DataDirLock.ts"
export * as KeyLookups from "./KeyLookups.ts"
export * as StoreCaches from "./StoreCaches.ts"
export * as ListingCache from "./ListingCache.ts"
export * as CopyLoader from "./CopyLoader.ts"
export * as FirstLoad from "./FirstLoad.ts"
export * as PoolMetrics from "./PoolMetrics.ts"
export * as ReadReplicas from "./ReadReplicas.ts"
