/** The since pull of `npm run bench`: a feed consumer reading the whole directory. */
import { readFileSync } from "node:fs"
import { seconds } from "./postgres.ts"
import { BENCH_SINCE_HORIZON_DAYS } from "./server.ts"

/** Resident memory of a process, in MB. */
export const rssMb = (pid: number) => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8")
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024
}

/** One GET; retried once when the server closed an idle keep-alive connection just as it was reused. */
export const getJson = async (port: number, key: string, path: string, retry = true): Promise<{ body: string; status: number }> => {
  try {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { authorization: `Bearer ${key}` } })
    return { body: await response.text(), status: response.status }
  } catch (error) {
    if (!retry) throw error
    return getJson(port, key, path, false)
  }
}

/** The whole since feed, 250 a page, one request after another, as a consumer pulls it. */
export const pullSince = async (port: number, key: string, pid: number) => {
  let cursor: string | null = null
  const recentCursors: Array<string> = []
  let pulled = 0
  let peakRss = rssMb(pid)
  const start = process.hrtime.bigint()
  // The oldest since the bench server accepts (its horizon, less a minute): every seeded row is younger.
  const since = encodeURIComponent(new Date(Date.now() - BENCH_SINCE_HORIZON_DAYS * 86_400_000 + 60_000).toISOString())
  do {
    const path: string = `/api/v1/domains?since=${since}&limit=250${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`
    const response = await getJson(port, key, path)
    if (response.status !== 200) throw new Error(`since pull: ${response.status} ${response.body}`)
    const body = JSON.parse(response.body) as { data: Array<unknown>; next_cursor: string | null }
    pulled += body.data.length
    cursor = body.next_cursor
    if (cursor !== null) recentCursors.push(cursor)
    if (recentCursors.length > 4) recentCursors.shift()
    if (pulled % 50_000 < 250) peakRss = Math.max(peakRss, rssMb(pid))
  } while (cursor !== null)
  const rate = pulled / seconds(start)
  const cursorNearTheEnd = recentCursors[0]
  if (cursorNearTheEnd === undefined) throw new Error("the since pull gave no cursor near the end")
  return { pulled, rate, peakRss, cursorNearTheEnd }
}
