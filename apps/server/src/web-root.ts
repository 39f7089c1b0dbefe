import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** The built web dashboard (apps/web/dist), found through the dependency on @pipewright/web. */
export function webRoot(): string {
  return join(dirname(createRequire(import.meta.url).resolve('@pipewright/web/package.json')), 'dist');
}
