import type { HttpServer } from '@icepack/runtime';
import { buildConsoleAssets, consoleAssetsRouter } from './console-assets.ts';
import { consoleRouter, type ConsoleRouterOptions } from './console-router.ts';

/**
 * Adds the console to the planner's HTTP server: the page at `/console/`, its JSON API at
 * `/console/api` (token or trusted proxy header), ADR 0020. Bundles the front end first.
 */
export async function mountConsole(http: HttpServer, options: ConsoleRouterOptions): Promise<void> {
  const assets = await buildConsoleAssets();
  http.app.use('/console/api', consoleRouter(options));
  http.app.use('/console', consoleAssetsRouter(assets));
}
