import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { BootstrapError, parseBootstrap, type Bootstrap } from '../domain/bootstrap.ts';

/**
 * Reads `ICEPACK_SCANNER_BOOTSTRAP`: the JSON document itself when it starts with `{`,
 * otherwise a path to a YAML or JSON file (YAML is a superset of JSON).
 */
export async function loadBootstrap(value: string): Promise<Bootstrap> {
  if (value.trimStart().startsWith('{')) {
    let document: unknown;
    try {
      document = JSON.parse(value) as unknown;
    } catch (error) {
      throw new BootstrapError(
        `invalid bootstrap ICEPACK_SCANNER_BOOTSTRAP: not JSON: ${(error as Error).message}`,
      );
    }
    return parseBootstrap(document, 'ICEPACK_SCANNER_BOOTSTRAP');
  }
  let text: string;
  try {
    text = await readFile(value, 'utf8');
  } catch (error) {
    throw new BootstrapError(`cannot read bootstrap file ${value}: ${(error as Error).message}`);
  }
  let document: unknown;
  try {
    document = parseYaml(text) as unknown;
  } catch (error) {
    throw new BootstrapError(`invalid bootstrap ${value}: ${(error as Error).message}`);
  }
  return parseBootstrap(document, value);
}
