import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { asset } from "./Assets.ts"

/*
 * The passkey pages' two scripts, served from this origin under names that carry a digest of
 * their content (as Assets.ts serves the stylesheet): @simplewebauthn/browser's own prebuilt
 * browser bundle, read from the package as it ships (no build step of ours), and the few lines
 * that run a ceremony when a passkey button is pressed. Without JavaScript the buttons stay
 * hidden and a <noscript> line says why (docs/decisions/0804-passkeys.md).
 */

/** The package exports no path to its bundle: found beside its CommonJS entry (`script/index.js`). */
const browserBundle = () =>
  join(dirname(createRequire(import.meta.url).resolve("@simplewebauthn/browser")), "..", "dist", "bundle", "index.umd.min.js")

/** The library, as a classic script defining the global `SimpleWebAuthnBrowser`. */
export const webAuthnBrowser = asset(
  "simplewebauthn-browser",
  "js",
  readFileSync(browserBundle(), "utf8"),
  "text/javascript; charset=utf-8"
)

const SCRIPT = `
// Passkey ceremonies: a form[data-passkey] asks the server for options (a same-origin POST of
// its CSRF token, if any), lets the browser and authenticator answer, and submits the answer.
(() => {
  const webauthn = window.SimpleWebAuthnBrowser;
  if (webauthn === undefined || !webauthn.browserSupportsWebAuthn()) return;
  for (const form of document.querySelectorAll("form[data-passkey]")) {
    const status = document.getElementById(form.dataset.status);
    const say = (text) => { if (status !== null) status.textContent = text; };
    for (const hidden of form.querySelectorAll("[data-needs-script]")) hidden.hidden = false;
    form.addEventListener("submit", async (event) => {
      if (form.elements.response.value !== "") return;
      event.preventDefault();
      if (!form.reportValidity()) return;
      const body = new URLSearchParams();
      if (form.elements.csrf !== undefined) body.set("csrf", form.elements.csrf.value);
      try {
        const answer = await fetch(form.dataset.options, { method: "POST", body, credentials: "same-origin" });
        if (answer.status === 429) throw new Error("Too many sign-in attempts from here: try again in a few minutes.");
        if (!answer.ok) throw new Error("The server refused to start: reload the page and try again.");
        const { challengeId, options } = await answer.json();
        const response = form.dataset.passkey === "register"
          ? await webauthn.startRegistration({ optionsJSON: options })
          : await webauthn.startAuthentication({ optionsJSON: options });
        form.elements.challenge.value = challengeId;
        form.elements.response.value = JSON.stringify(response);
        form.submit();
      } catch (error) {
        say(error instanceof Error && error.name === "NotAllowedError"
          ? "Cancelled, or no passkey was chosen."
          : String(error instanceof Error ? error.message : error));
      }
    });
  }
})();
`.trim() + "\n"

export const passkeyScript = asset("passkeys", "js", SCRIPT, "text/javascript; charset=utf-8")

/** The scripts a passkey page loads, in order. */
export const PASSKEY_SCRIPTS: ReadonlyArray<string> = [webAuthnBrowser.path, passkeyScript.path]
