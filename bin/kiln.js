#!/usr/bin/env node
// The `kiln` command: TypeScript sources run through tsx, so a checkout needs no build step.
import { register } from 'tsx/esm/api';
register();
await import('../src/cli.ts');
