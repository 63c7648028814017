/** What the tests receive over OTLP/HTTP: a receiver on loopback. */
import { createServer, type Server as NodeServer } from "node:http"

export interface OtlpSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly kind: number
  readonly attributes: ReadonlyArray<{ readonly key: string; readonly value: Record<string, unknown> }>
}

/** An OTLP/HTTP receiver: keeps every JSON body posted to /v1/traces and /v1/metrics. */
export const receiver = async () => {
  const bodies: Record<string, Array<any>> = { "/v1/traces": [], "/v1/metrics": [] }
  const server: NodeServer = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      bodies[request.url ?? ""]?.push(JSON.parse(Buffer.concat(chunks).toString("utf8")))
      response.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  return {
    url: `http://127.0.0.1:${port}`,
    spans: (): Array<OtlpSpan> =>
      bodies["/v1/traces"]!.flatMap((body) => body.resourceSpans.flatMap((rs: any) => rs.scopeSpans.flatMap((ss: any) => ss.spans))),
    metricNames: (): Set<string> =>
      new Set(bodies["/v1/metrics"]!.flatMap((body) => body.resourceMetrics.flatMap((rm: any) => rm.scopeMetrics.flatMap((sm: any) => sm.metrics.map((m: any) => m.name))))),
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
