import type { RoutePlugin } from './index.ts';

const plugin: RoutePlugin = async (_app, _opts) => {};
export default plugin;
