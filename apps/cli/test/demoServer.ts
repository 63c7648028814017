import { embeddedTarget, freePort, start } from "./support.ts"

/** `npm start` on a fresh data directory and a free port; its base URL and business key. */
export const startDemo = async () => {
  const target = embeddedTarget({ empty: true })
  const demo = start(["demo", "--json"], { env: { ...target.env, PORT: String(await freePort()) } })
  try {
    const serving = await demo.waitFor(/serving .* on (http:\/\/127\.0\.0\.1:\d+)/, 110_000)
    const printed = JSON.parse(demo.stdout()) as { keys: Array<{ plan: string; key: string }> }
    return {
      base: serving[1]!,
      businessKey: printed.keys.find((key) => key.plan === "business")!.key,
      stop: async () => {
        await demo.stop("SIGTERM")
        await target.dispose()
      }
    }
  } catch (error) {
    await demo.stop("SIGKILL")
    await target.dispose()
    throw error
  }
}
