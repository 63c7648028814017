/** Test support for adapters and embedders: the shared port contract and its fixtures. */
export * as StoreContract from "./StoreContract.ts"
export * as Fixtures from "./fixtures.ts"
export * as WatchContract from "./WatchContract.ts"
export * as SessionContract from "./SessionContract.ts"
export * as PasskeyContract from "./PasskeyContract.ts"
export * as SecurityLogContract from "./SecurityLogContract.ts"
export * as AuthorizationContract from "./AuthorizationContract.ts"
