import { readFile } from 'node:fs/promises';
import { build } from 'esbuild';
import { Router, type Response } from 'express';

const uiDir = new URL('./ui/', import.meta.url);

export interface ConsoleAssets {
  readonly html: string;
  readonly css: string;
  readonly js: string;
}

/**
 * Bundles the front end (Preact, htm, Chart.js) with esbuild into memory: run once when
 * the planner starts (about a second), so there is no build output to commit or go stale
 * and no CDN at run time (ADR 0020).
 */
export async function buildConsoleAssets(): Promise<ConsoleAssets> {
  const [html, css, bundle] = await Promise.all([
    readFile(new URL('index.html', uiDir), 'utf8'),
    readFile(new URL('console.css', uiDir), 'utf8'),
    build({
      entryPoints: [new URL('app.ts', uiDir).pathname],
      bundle: true,
      write: false,
      format: 'esm',
      minify: true,
      target: 'es2022',
      legalComments: 'none',
      logLevel: 'silent',
    }),
  ]);
  const js = bundle.outputFiles[0]?.text;
  if (js === undefined) throw new Error('esbuild produced no console bundle');
  return { html, css, js };
}

/** Serves the console's page and assets at `/console/` (open: they hold no data). */
export function consoleAssetsRouter(assets: ConsoleAssets): Router {
  const router = Router();
  const send = (type: string, body: string) => (_req: unknown, res: Response) => {
    res.type(type).set('Cache-Control', 'no-cache').send(body);
  };
  router.get('/', send('html', assets.html));
  router.get('/app.js', send('js', assets.js));
  router.get('/console.css', send('css', assets.css));
  return router;
}
