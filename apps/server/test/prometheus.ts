/** Prometheus text as the tests read it off the operator port. */

/** One Prometheus text exposition (format 0.0.4) read strictly: every line a comment or a sample. */
export const parsePrometheus = (text: string) => {
  const samples = new Map<string, number>()
  const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*",?)*\})? (-?[0-9.eE+-]+|\+Inf|-Inf|NaN)$/
  const types = new Map<string, string>()
  for (const line of text.split("\n")) {
    if (line === "") continue
    const typed = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line)
    if (typed !== null) {
      types.set(typed[1]!, typed[2]!)
      continue
    }
    if (/^# HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*$/.test(line)) continue
    const match = sample.exec(line)
    if (match === null) throw new Error(`not Prometheus text: ${JSON.stringify(line)}`)
    samples.set(`${match[1]}${match[2] ?? ""}`, Number(match[3]))
  }
  return { samples, types }
}

/** The sum of the samples of `name` whose labels include every one of `labels` (`name="value"`). */
export const sum = (samples: Map<string, number>, name: string, ...labels: Array<string>) =>
  [...samples].filter(([series]) => (series === name || series.startsWith(`${name}{`)) && labels.every((label) => series.includes(label)))
    .reduce((total, [, value]) => total + value, 0)

/** Whether any sample of `name` has every one of `labels`. */
export const has = (samples: Map<string, number>, name: string, ...labels: Array<string>) =>
  [...samples.keys()].some((series) => (series === name || series.startsWith(`${name}{`)) && labels.every((label) => series.includes(label)))

/** GET /metrics on `port`, parsed. */
export const scrape = async (port: number) => {
  const response = await fetch(`http://127.0.0.1:${port}/metrics`)
  if (response.status !== 200) throw new Error(`/metrics answered ${response.status}`)
  return parsePrometheus(await response.text())
}
