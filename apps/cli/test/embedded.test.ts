import { operatorSuite } from "./operatorSuite.ts"
import { embeddedTarget } from "./support.ts"

operatorSuite("embedded", async () => embeddedTarget())
