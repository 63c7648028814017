/**
 * Masking speed: `node bench/masking.ts` splits the names of 50 000 seeded listings (as
 * `dropshelf import` does for every line) and prints the time per name, three rounds.
 */
import { Masking } from "@dropshelf/core"
import { seedLines } from "../apps/cli/src/Seed.ts"

const domains = Array.from(seedLines(50_000, 99, Date.UTC(2026, 10, 1)), (line) => line.domain)
Masking.maskHint("warm.com") // builds the trie, if seeding did not
for (let round = 1; round <= 3; round++) {
  const t0 = performance.now()
  for (const domain of domains) Masking.nameShape(domain)
  console.log(`round ${round}: ${(((performance.now() - t0) / domains.length) * 1000).toFixed(2)} µs a name`)
}
