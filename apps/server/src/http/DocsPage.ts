import { readFile } from "node:fs/promises"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"

/*
 * `/docs`: Scalar's API reference (`@scalar/api-reference`, its standalone browser bundle read
 * from the installed package) with the served document embedded, all in one page: nothing is
 * fetched from another origin (docs/decisions/0602-openapi-tools.md says why not Effect's
 * bundled copy).
 */

/**
 * The page's Scalar configuration. No fonts, telemetry or agent chat from elsewhere, and no
 * developer toolbar (Scalar shows one on localhost); the key is the one scheme, so the page
 * offers it from the start.
 */
export const SCALAR_CONFIGURATION = {
  withDefaultFonts: false,
  defaultOpenAllTags: true,
  authentication: { preferredSecurityScheme: "bearer" },
  telemetry: false,
  agent: { disabled: true },
  showDeveloperTools: "never"
} as const

/** The standalone bundle's path: the package exports no file of it, so it is found from its main module. */
const standalonePath = (): string =>
  join(dirname(createRequire(import.meta.url).resolve("@scalar/api-reference")), "browser", "standalone.js")

/** JSON that is safe inside a `<script>` element: no `<` that could close it, no line separators. */
const scriptJson = (value: unknown): string =>
  JSON.stringify(value).replace(/</g, "\\u003c").replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029")

const escapeHtml = (text: string): string =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

/** The whole page for an OpenAPI document. */
export const render = async (document: Record<string, unknown>): Promise<string> => {
  const info = document.info as { readonly title: string; readonly description?: string }
  // The bundle ends with a source map comment naming a file this server does not serve.
  const script = (await readFile(standalonePath(), "utf8")).replace(/\n\/\/# sourceMappingURL=\S+\s*$/, "\n")
  const description = info.description === undefined
    ? ""
    : `<meta name="description" content="${escapeHtml(info.description)}" />`
  return `<!doctype html>
<html>
  <head>
    <meta charset="utf-8" />
    <title>${escapeHtml(info.title)}</title>
    ${description}
    <meta name="viewport" content="width=device-width, initial-scale=1" />
  </head>
  <body>
    <div id="api-reference-container"></div>
    <script>${script}</script>
    <script>
      window.Scalar.createApiReference(document.getElementById("api-reference-container"), {
        ...${scriptJson(SCALAR_CONFIGURATION)},
        content: ${scriptJson(document)}
      })
    </script>
  </body>
</html>`
}
