import { ensureMigratedPgliteTemplate, ensurePgliteTemplate } from "./PgliteTemplate.ts"

/*
 * vitest's globalSetup: the empty PGlite database the tests copy, and the same migrated
 * (scripts/PgliteTemplate.ts), made once before the first file starts rather than by many
 * files at once on a clean clone.
 */
export default async function setup() {
  await ensurePgliteTemplate().then(ensureMigratedPgliteTemplate)
}
