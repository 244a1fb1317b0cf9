// The typed failures of the rules engine. Nothing here throws to the caller: every public function answers
// `{ok: true, ...} | RulesFailure`.

import type { ErrorCode } from '../errors.ts';

/** The engine's codes, registered with the others in src/errors.ts (which says what each means). */
export type RulesErrorCode = Extract<
  ErrorCode,
  'no-rules-tag' | 'rules-version' | 'rules-syntax' | 'rules-depth' | 'selector' | 'too-expensive' | 'too-large'
>;

export type RulesFailure = { ok: false; status: 400 | 413; code: RulesErrorCode; error: string };

export function failure(code: RulesErrorCode, error: string): RulesFailure {
  return { ok: false, status: code === 'too-large' ? 413 : 400, code, error };
}

/** Thrown inside the engine only (never out of a public function) to abandon an extraction. */
export class RulesAbort extends Error {
  readonly failure: RulesFailure;
  constructor(f: RulesFailure) {
    super(f.error);
    this.failure = f;
  }
}
