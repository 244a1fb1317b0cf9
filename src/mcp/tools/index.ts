// Every tool the MCP door offers, in the order `tools/list` gives them.
import type { Tool } from '../tool.ts';
import { listDocuments, readDocument, searchDocuments } from './documents.ts';
import { editDocument, writeDocument } from './writing.ts';
import { createDocument, deleteDocument, moveDocument, renameDocument, uploadFile } from './tree.ts';
import { diffVersions, listVersionsTool, readVersion, restoreVersionTool } from './versions.ts';
import { readData, writeData } from './data.ts';

export const TOOLS: Tool[] = [
  listDocuments,
  readDocument,
  searchDocuments,
  editDocument,
  writeDocument,
  createDocument,
  renameDocument,
  moveDocument,
  deleteDocument,
  uploadFile,
  listVersionsTool,
  readVersion,
  diffVersions,
  restoreVersionTool,
  readData,
  writeData,
];
