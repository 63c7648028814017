export * as StoreMemory from "./StoreMemory.ts"
