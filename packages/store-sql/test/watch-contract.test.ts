import { WatchContract } from "@dropshelf/core/testing"
import { afterAll } from "@effect/vitest"
import { closePglite, describeOnServer, pgliteStores, serverStores } from "./support.ts"

WatchContract.suite("sql (pglite)", pgliteStores, { propertyRuns: 30 })

afterAll(closePglite)

describeOnServer("sql (server)", (databaseUrl) => {
  WatchContract.suite("sql (server)", serverStores(databaseUrl), { propertyRuns: 10 })
})
