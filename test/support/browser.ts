// Real-browser tests: Debian's Chromium driven by playwright-core, against a real Kiln.
//
// Kiln's hosts are `kiln.localhost:<port>` (main app) and `<username>.kiln.localhost:<port>` (documents).
// Chromium resolves every `*.localhost` name to loopback by itself; the host resolver rule below also
// pins those names to 127.0.0.1 (where the test server listens), so no DNS set-up is needed and IPv6
// `::1` is never tried first. ROOT_DOMAIN must carry the port the browser uses, so a free port is
// chosen before the server starts.
import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { startKiln, type TestKiln } from './kiln.ts';
import { freePort } from './child.ts';

export { freePort };

export const CHROMIUM = process.env.KILN_TEST_CHROMIUM ?? '/usr/bin/chromium';

/** Flags this machine needs: no sandbox as root, and no background traffic to a closed network. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
  '--host-resolver-rules=MAP localhost 127.0.0.1, MAP *.localhost 127.0.0.1',
];

/** True when Chromium is installed (`.ci/run` installs it). */
export const hasChromium = existsSync(CHROMIUM);

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}

export interface BrowserKiln {
  kiln: TestKiln;
  browser: Browser;
  /** A fresh browser profile (own cookies). */
  newContext(): Promise<BrowserContext>;
  /** `http://kiln.localhost:<port>` + path */
  mainUrl(p?: string): string;
  /** `http://<username>.kiln.localhost:<port>` + path */
  docUrl(username: string, p?: string): string;
  stop(): Promise<void>;
}

/** Starts Kiln on a known port with ROOT_DOMAIN=kiln.localhost:<port>, and Chromium beside it. */
export async function startBrowserKiln(opts: { env?: Record<string, string> } = {}): Promise<BrowserKiln> {
  let kiln: TestKiln | undefined;
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    try {
      kiln = await startKiln({ env: { PORT: String(port), ROOT_DOMAIN: `kiln.localhost:${port}`, ...opts.env } });
      break;
    } catch (err) {
      // Another process took the port between the probe and the listen: try another one.
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 5) throw err;
    }
  }
  const root = kiln.config.rootDomain;
  const browser = await launchChromium();
  return {
    kiln,
    browser,
    newContext: () => browser.newContext(),
    mainUrl: (p = '/') => `http://${root}${p}`,
    docUrl: (username, p = '/') => `http://${username}.${root}${p}`,
    stop: async () => {
      await browser.close().catch(() => {});
      await kiln!.stop();
    },
  };
}

/** Calls hyperclay.savePage(), waiting out an autosave that may already be in flight. */
export async function saveNow(page: import('playwright-core').Page): Promise<{ msg: string; msgType: string }> {
  for (let i = 0; i < 50; i++) {
    const r = await page.evaluate(() => (window as any).hyperclay.savePage());
    if (!(r.msgType === 'skipped' && /in progress/.test(r.msg))) return r;
    await page.waitForTimeout(100);
  }
  throw new Error('a save stayed in progress');
}

/** Appends `<li id="<id>"><text></li>` to `#items` in the page and saves through hyperclayjs until
 *  `stored()` (the document as Kiln serves it) has the item; returns the last stored text. An edit
 *  made before the library captured its baseline reads as "no changes", and an autosave may land it
 *  first: both are fine. Throws when a save answers with an error. */
export async function appendAndSave(
  page: import('playwright-core').Page,
  stored: () => Promise<string>,
  id: string,
  text: string,
): Promise<string> {
  const item = `<li id="${id}">${text}</li>`;
  let served = await stored();
  for (let i = 0; i < 20 && !served.includes(item); i++) {
    await page.evaluate(
      ([n, id, text]) => {
        if (!document.getElementById(id)) {
          const li = document.createElement('li');
          li.id = id;
          li.textContent = text;
          document.getElementById('items')!.appendChild(li);
        }
        document.getElementById('items')!.dataset.rev = n;
      },
      [String(i), id, text],
    );
    const result = await saveNow(page);
    if (result.msgType === 'error') throw new Error(`save failed: ${JSON.stringify(result)}`);
    for (let j = 0; j < 20 && !served.includes(item); j++) {
      await page.waitForTimeout(50);
      served = await stored();
    }
  }
  return served;
}
