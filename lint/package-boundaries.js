// @ts-check
// ESLint rule `icepack/no-cross-package-relative-import`: a relative import must stay inside the
// workspace package of the file that makes it. Another package is used through its name and the
// `exports` of its package.json (`@icepack/provisioner/config`, `@icepack/test/deploy` …), its
// reviewed public surface; `../../../services/x/src/…` reaches past it, and from @icepack/test
// it also hides a dependency that would be a workspace cycle (ADR 0043).
// A file's package is the nearest directory above it that holds a package.json, so a package
// nested in another one's directory (test/cross-service in test/) is a package of its own.
import { existsSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';

/** @type {Map<string, string>} directory → its package's directory */
const packageDirs = new Map();

/** @param {string} dir @returns {string} */
function packageDirOf(dir) {
  const known = packageDirs.get(dir);
  if (known !== undefined) return known;
  const parent = dirname(dir);
  const found =
    existsSync(resolve(dir, 'package.json')) || parent === dir ? dir : packageDirOf(parent);
  packageDirs.set(dir, found);
  return found;
}

/** @type {import('eslint').Rule.RuleModule} */
const noCrossPackageRelativeImport = {
  meta: {
    type: 'problem',
    docs: { description: 'A relative import must not leave its workspace package' },
    schema: [],
    messages: {
      leaves:
        "'{{specifier}}' leaves package {{from}} for {{to}}: import that package by its name and the `exports` of its package.json.",
    },
  },
  create(context) {
    const from = packageDirOf(dirname(context.filename));
    /** @param {import('estree').Node | null | undefined} source */
    function check(source) {
      if (source?.type !== 'Literal' || typeof source.value !== 'string') return;
      const specifier = source.value;
      if (!specifier.startsWith('./') && !specifier.startsWith('../')) return;
      const target = resolve(dirname(context.filename), specifier);
      const to = packageDirOf(dirname(target));
      if (to === from) return;
      const root = context.cwd;
      context.report({
        node: source,
        messageId: 'leaves',
        data: {
          specifier,
          from: relative(root, from) || '.',
          to: relative(root, to) || '.',
        },
      });
    }
    return {
      ImportDeclaration: (node) => check(node.source),
      ExportNamedDeclaration: (node) => check(node.source),
      ExportAllDeclaration: (node) => check(node.source),
      ImportExpression: (node) => check(node.source),
    };
  },
};

export default { rules: { 'no-cross-package-relative-import': noCrossPackageRelativeImport } };
