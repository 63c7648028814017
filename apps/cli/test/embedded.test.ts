import { operatorSuite } from "./operatorSuite.ts"
import { embeddedTarget } from "./support.ts"

// From a data directory that does not exist yet: the first command makes the database, as on a new machine.
operatorSuite("embedded", async () => embeddedTarget({ empty: true }))
