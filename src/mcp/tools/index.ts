// Every tool the MCP door offers, in the order `tools/list` gives them.
import type { Tool } from '../tool.ts';

export const TOOLS: Tool[] = [];
