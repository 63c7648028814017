/** How many characters of a caller's value a message repeats at most. */
export const QUOTE_MAX_CHARS = 100

/**
 * A caller's value as a message repeats it: in JSON quotes (control characters escaped), cut
 * to its first QUOTE_MAX_CHARS characters with "…" when longer, so that a refusal never echoes
 * kilobytes of input back.
 */
export const quote = (value: string): string =>
  value.length > QUOTE_MAX_CHARS ? `${JSON.stringify(value.slice(0, QUOTE_MAX_CHARS))}…` : JSON.stringify(value)
