// The upload size per file of each plan, whether it includes AI editing and its daily AI budget per account, whether
// agents may connect (MCP: for the instance and per plan), set by an administrator (/_/admin) and shared by every
// process through the instance settings: each process keeps the values in memory (read at start,
// re-read every 5 seconds, at once after its own change), so a request never waits on them.
import type { Db, Plan } from '../store/schema.ts';
import { limits, planLimits } from '../limits.ts';
import { readSetting, writeSetting } from '../store/settings.ts';

const PLANS: Plan[] = ['free', 'personal', 'maker'];

/** Requests, and bytes of prompts, per account per UTC day. */
export interface AiEditBudget {
  requests: number;
  bytes: number;
}
const REFRESH_MS = 5000;

export class PlanSettings {
  /** Bytes one uploaded file may have, per plan (the defaults of src/limits.ts until set). */
  readonly uploadBytes: Record<Plan, number> = {
    free: planLimits.free.uploadSize,
    personal: planLimits.personal.uploadSize,
    maker: planLimits.maker.uploadSize,
  };
  /** Whether each plan's accounts may use the built-in AI editing (src/ai-edit): all, until set. */
  readonly aiEditPlans: Record<Plan, boolean> = { free: true, personal: true, maker: true };
  /** What one account of each plan may send to the built-in engines per UTC day (src/ai-edit/budget.ts). */
  readonly aiEditBudget: Record<Plan, AiEditBudget> = {
    free: { ...limits.aiEdit.budget.free },
    personal: { ...limits.aiEdit.budget.personal },
    maker: { ...limits.aiEdit.budget.maker },
  };
  /** Whether agents may connect over MCP (`/_/mcp`, src/agents/gate.ts): on this Kiln at all, and for each
   *  plan's accounts. On, until set. */
  readonly mcp: { on: boolean; plans: Record<Plan, boolean> } = {
    on: true,
    plans: { free: true, personal: true, maker: true },
  };
  private timer: NodeJS.Timeout | null = null;

  private readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => void this.refresh().catch(() => {}), REFRESH_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  async refresh(): Promise<void> {
    this.mcp.on = (await readSetting(this.db, 'mcp-on')) !== '0';
    for (const plan of PLANS) {
      const v = Number(await readSetting(this.db, `upload-bytes-${plan}`));
      this.uploadBytes[plan] = Number.isSafeInteger(v) && v > 0 ? v : planLimits[plan].uploadSize;
      this.aiEditPlans[plan] = (await readSetting(this.db, `ai-edit-${plan}`)) !== '0';
      this.mcp.plans[plan] = (await readSetting(this.db, `mcp-${plan}`)) !== '0';
      for (const k of ['requests', 'bytes'] as const) {
        const n = Number(await readSetting(this.db, `ai-edit-${k}-${plan}`));
        this.aiEditBudget[plan][k] = Number.isSafeInteger(n) && n > 0 ? n : limits.aiEdit.budget[plan][k];
      }
    }
  }

  /** Sets which plans include AI editing. */
  async saveAiEdit(allowed: Record<Plan, boolean>): Promise<void> {
    for (const plan of PLANS) await writeSetting(this.db, `ai-edit-${plan}`, allowed[plan] ? '1' : '0');
    await this.refresh();
  }

  /** Sets whether agents may connect over MCP on this Kiln, and for which plans. */
  async saveMcp(on: boolean, plans: Record<Plan, boolean>): Promise<void> {
    await writeSetting(this.db, 'mcp-on', on ? '1' : '0');
    for (const plan of PLANS) await writeSetting(this.db, `mcp-${plan}`, plans[plan] ? '1' : '0');
    await this.refresh();
  }

  /** Sets the daily AI budgets given (each at least 1 and at most `limits.aiEdit.maxBudget`). */
  async saveAiEditBudget(budget: Partial<Record<Plan, Partial<AiEditBudget>>>): Promise<void> {
    for (const plan of PLANS)
      for (const k of ['requests', 'bytes'] as const) {
        const v = budget[plan]?.[k];
        if (v === undefined || !Number.isFinite(v)) continue;
        const n = Math.min(Math.max(1, Math.round(v)), limits.aiEdit.maxBudget[k]);
        await writeSetting(this.db, `ai-edit-${k}-${plan}`, String(n));
      }
    await this.refresh();
  }

  /** Sets the limits (bytes; each at most what an upload request may carry). */
  async save(bytes: Record<Plan, number>): Promise<void> {
    for (const plan of PLANS) {
      const v = Math.min(Math.max(1, Math.round(bytes[plan])), limits.body.jsonSyncAndUpload);
      await writeSetting(this.db, `upload-bytes-${plan}`, String(v));
    }
    await this.refresh();
  }
}
