// The dropshelf TypeScript client: DROPSHELF_URL=$BASE DROPSHELF_KEY=$KEY node docs/examples/client.ts
import { Dropshelf, DropshelfError } from "@dropshelf/client"

const dropshelf = new Dropshelf({
  baseUrl: process.env.DROPSHELF_URL ?? "http://127.0.0.1:8080",
  apiKey: process.env.DROPSHELF_KEY ?? "",
  // The defaults, spelled out: 429 waits Retry-After, 5xx and network failures back off.
  retry: { maxRetries: 4, baseDelayMs: 500, maxDelayMs: 20_000, maxWaitMs: 60_000 }
})

const me = await dropshelf.me()
console.log(`plan ${me.plan}, ${me.reveals.remaining ?? "unlimited"} reveals left this month`)

// Every .com listing scored 40 or more, page after page (next_cursor is followed for you).
let count = 0
for await (const listing of dropshelf.listings.iterate({ tld: "com", rsMin: 40, limit: 100 })) {
  if (count++ < 3) console.log(`${listing.id} ${listing.mask_hint} score ${listing.directory_score?.low}-${listing.directory_score?.high}`)
}
console.log(`${count} listings`)

const [first] = (await dropshelf.listings.list({ tld: "com", limit: 1 })).data
if (first !== undefined) {
  try {
    // Writes carry an Idempotency-Key, the same on each retry: a lost answer cannot charge twice.
    const revealed = await dropshelf.reveal(first.id)
    console.log(`revealed ${revealed.domain}`)
    const { hold } = await dropshelf.hold(first.id)
    console.log(`held until ${hold.expires_at}`)
    await dropshelf.holds.end(hold.id, "released")
  } catch (error) {
    // A refusal: branch on reveal_code / hold_code, read the extra fields.
    if (!(error instanceof DropshelfError)) throw error
    console.log(`refused ${error.status} ${error.revealCode ?? error.holdCode ?? error.code}: ${error.message}`)
  }
}

// The since feed (business plan): keep syncedAt and pass it as `since` next run.
if (me.sync_feed) {
  const feed = dropshelf.listings.since(process.env.DROPSHELF_SINCE ?? null)
  let changed = 0
  let dropped = 0
  for await (const row of feed) row.status === "delisted" ? dropped++ : changed++
  console.log(`since feed: ${changed} to upsert, ${dropped} to drop; next since=${feed.syncedAt}`)
}
