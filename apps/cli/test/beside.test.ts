import { operatorSuite } from "./operatorSuite.ts"
import { embeddedTarget } from "./support.ts"

/**
 * The operator contract while `dropshelf serve` holds the embedded data directory: every command
 * run from a second process, with the results and exit codes of embedded.test.ts.
 */
operatorSuite("embedded", async () => embeddedTarget(), undefined, { besideServer: true })
