// What an MCP tool is in Kiln: a name, words for a model, zod input and output schemas, the MCP annotations, and a
// use case run with the caller's ctx. The MCP door (src/http/routes/mcp.ts, `kiln mcp`) only registers these on
// the official SDK's server: it decides no access itself; every node a tool touches comes through
// `ctx.nodes.open`, and every write goes through the one save pipeline.
import type { z } from 'zod';
import type { Ctx } from '../context.ts';

export interface ToolAnnotations {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** Who the agent is, as the activity feed names it: the client's own name (its `clientInfo`) and the grant it
 *  came with (an agent key's name, or an OAuth client's). */
export interface AgentInfo {
  client: string;
  grant: string;
}

export interface Tool<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  name: string;
  title: string;
  /** For a model: what it does, short, with an example. */
  description: string;
  input: I;
  output: O;
  annotations: ToolAnnotations;
  run(ctx: Ctx, input: z.output<I>, agent: AgentInfo): Promise<z.input<O>>;
}

/** A tool, typed by its schemas. */
export const tool = <I extends z.ZodType, O extends z.ZodType>(t: Tool<I, O>): Tool => t as unknown as Tool;
