import { StoreContract } from "@dropshelf/core/testing"
import { afterAll } from "@effect/vitest"
import { closePglite, describeOnServer, pgliteStores, serverStores } from "./support.ts"

StoreContract.suite("sql (pglite)", pgliteStores)

afterAll(closePglite)

describeOnServer("sql (server)", (databaseUrl) => {
  StoreContract.suite("sql (server)", serverStores(databaseUrl))
})
