declare module "fresh" {
  /** Whether a response with `resHeaders` is fresh for a request with `reqHeaders` (lower-case names). */
  export default function fresh(
    reqHeaders: Readonly<Record<string, string | undefined>>,
    resHeaders: Readonly<Record<string, string | undefined>>
  ): boolean
}
