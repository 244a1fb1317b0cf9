// Every tool the MCP door offers, in the order `tools/list` gives them.
import type { Tool } from '../tool.ts';
import { listDocuments, readDocument, searchDocuments } from './documents.ts';

export const TOOLS: Tool[] = [listDocuments, readDocument, searchDocuments];
