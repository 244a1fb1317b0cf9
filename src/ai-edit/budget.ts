// The daily AI budget of an account: requests, and bytes of prompts, sent to the built-in engines per UTC day,
// counted in the database (one row per account and day) so that every process counts into the same day. A
// request is counted when it is about to go to the engine, in one statement that counts it only if it fits:
// two processes can never both take the last request.
export { charge, sweepUsage, usageOn, type Usage } from '../store/ai-edit-usage.ts';

/** The UTC day of a time, YYYY-MM-DD. */
export const dayOf = (at: Date): string => at.toISOString().slice(0, 10);
