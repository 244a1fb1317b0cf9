// The typed failures of the rules engine. Nothing here throws to the caller: every public function answers
// `{ok: true, ...} | RulesFailure`.

export type RulesErrorCode =
  | 'no-rules-tag' // the document has no `api` rules tag (400, error text fixed by the spec)
  | 'rules-version' // the tag's data-rules-version is not "1" (400)
  | 'rules-syntax' // the rules text does not parse (400)
  | 'rules-depth' // rules nested deeper than 20 (400)
  | 'selector' // a selector does not parse or is not supported (400)
  | 'too-expensive' // the extraction ran out of its work or time budget (400)
  | 'too-large'; // query, tag, rules, selector, document or result over its size bound (413)

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
