// What every page a person sees is held to, in Chromium: a screenshot for a person to look at
// (test-output/screens/, git-ignored), no sideways scrolling, and no serious or critical axe-core finding.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { AxeBuilder } from '@axe-core/playwright';
import { ROOT } from '../../src/paths.ts';

export const SCREENS = path.join(ROOT, 'test-output', 'screens');
export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

/** KILN_TEST_SCREENSHOTS=0 (.ci/run: nobody looks at a clean clone's screenshots) skips them; every
 *  assertion still runs. */
const SHOTS = process.env.KILN_TEST_SCREENSHOTS !== '0';

export async function check(p: Page, name: string, size: 'desktop' | 'phone') {
  await p.waitForLoadState('load');
  if (SHOTS) {
    mkdirSync(SCREENS, { recursive: true });
    await p.screenshot({ path: path.join(SCREENS, `${name}-${size}.png`), fullPage: true });
  }
  const [scrollWidth, width] = await p.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
  assert.ok(scrollWidth <= width, `${name} at ${size}: ${scrollWidth}px wide in a ${width}px viewport`);
  const axe = await new AxeBuilder({ page: p }).exclude('kiln-toolbar').analyze();
  const bad = axe.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(
    bad.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`),
    [],
    `${name} at ${size}: axe violations`,
  );
}
