import { createHash } from "node:crypto"

/*
 * The account area's one stylesheet and one script, served from this origin under a name that
 * carries a digest of their content, so a browser keeps them for a year and a new version is a
 * new name. Written here rather than read from files, so that the bundle of `npm run build`
 * carries them. The script only enhances: every page works without it.
 */

const STYLESHEET = `
:root { color-scheme: light dark; --fg: #1b1d21; --bg: #fdfdfc; --muted: #5b6270; --line: #d5d8de; --accent: #1d4ed8; --bad: #b42318; --good: #067647; }
@media (prefers-color-scheme: dark) { :root { --fg: #e7e9ee; --bg: #16181c; --muted: #a5acb8; --line: #3a3f48; --accent: #8ab4ff; --bad: #ff8a80; --good: #7ee2a8; } }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; padding: .5rem 1rem; background: var(--bg); }
.skip:focus { left: .5rem; }
header { border-bottom: 1px solid var(--line); }
header nav, main, footer { max-width: 60rem; margin: 0 auto; padding: .75rem 1rem; }
header nav { display: flex; flex-wrap: wrap; gap: .5rem 1.25rem; align-items: center; }
header nav .brand { font-weight: 700; margin-right: auto; color: var(--fg); text-decoration: none; }
h1 { font-size: 1.6rem; margin: .5rem 0 1rem; }
h2 { font-size: 1.2rem; margin: 1.5rem 0 .5rem; }
dl { display: grid; grid-template-columns: minmax(8rem, max-content) 1fr; gap: .25rem 1rem; margin: 0; }
dt { color: var(--muted); }
dd { margin: 0; }
table { width: 100%; border-collapse: collapse; }
th, td { text-align: left; padding: .4rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
@media (max-width: 40rem) {
  table, thead, tbody, tr, th, td { display: block; }
  thead { position: absolute; left: -999px; }
  tr { border-bottom: 1px solid var(--line); padding: .5rem 0; }
  td { border: 0; padding: .1rem 0; }
  td::before { content: attr(data-label) ": "; color: var(--muted); }
}
form.inline { display: inline; }
label { display: block; font-weight: 600; margin: .75rem 0 .25rem; }
input, select, button { font: inherit; }
input[type=text], input[type=email], select { width: 100%; max-width: 24rem; padding: .4rem .5rem; border: 1px solid var(--muted); border-radius: 4px; background: var(--bg); color: var(--fg); }
button { padding: .45rem 1rem; border-radius: 4px; border: 1px solid var(--accent); background: var(--accent); color: var(--bg); cursor: pointer; }
button.quiet { background: transparent; color: var(--accent); }
.hint { color: var(--muted); font-size: .9rem; margin: .25rem 0; }
.notice { border-left: 4px solid var(--accent); padding: .5rem 1rem; margin: 1rem 0; }
.notice.bad { border-color: var(--bad); }
.notice.good { border-color: var(--good); }
pre, code { font-family: ui-monospace, monospace; font-size: .9rem; }
pre { overflow-x: auto; padding: .75rem; border: 1px solid var(--line); border-radius: 4px; white-space: pre-wrap; word-break: break-all; }
.secret { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; }
.secret code { word-break: break-all; padding: .4rem; border: 1px solid var(--line); border-radius: 4px; }
dd, li { min-width: 0; overflow-wrap: anywhere; }
`.trim() + "\n"

const SCRIPT = `
// Copy buttons: each button[data-copy] copies the text of the element it names, and says so.
for (const button of document.querySelectorAll("button[data-copy]")) {
  const source = document.getElementById(button.dataset.copy);
  if (source === null || navigator.clipboard === undefined) continue;
  const status = document.getElementById(button.dataset.status);
  button.hidden = false;
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(source.textContent.trim());
      if (status !== null) status.textContent = "Copied.";
    } catch {
      if (status !== null) status.textContent = "Copying failed: select the text and copy it.";
    }
  });
}
`.trim() + "\n"

export interface Asset {
  /** The path it is served at: its name carries a digest of its content. */
  readonly path: string
  readonly body: Uint8Array
  readonly contentType: string
  readonly etag: string
}

export const asset = (name: string, extension: string, text: string, contentType: string): Asset => {
  const digest = createHash("sha256").update(text).digest("hex").slice(0, 16)
  return {
    path: `/account/assets/${name}.${digest}.${extension}`,
    body: new TextEncoder().encode(text),
    contentType,
    etag: `"${digest}"`
  }
}

export const stylesheet = asset("account", "css", STYLESHEET, "text/css; charset=utf-8")
export const script = asset("account", "js", SCRIPT, "text/javascript; charset=utf-8")
