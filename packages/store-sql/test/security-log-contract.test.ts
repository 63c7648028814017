import { SecurityLogContract } from "@dropshelf/core/testing"
import { afterAll } from "@effect/vitest"
import { closePglite, describeOnServer, pgliteStores, serverStores } from "./support.ts"

SecurityLogContract.suite("sql (pglite)", pgliteStores)

afterAll(closePglite)

describeOnServer("sql (server)", (databaseUrl) => {
  SecurityLogContract.suite("sql (server)", serverStores(databaseUrl))
})
