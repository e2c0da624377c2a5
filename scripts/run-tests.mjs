// Runs every test file under test/ with node's test runner (Node 20 has no glob for --test).
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

function find(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return find(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

const filter = process.argv.slice(2);
const files = find('test')
  .filter((f) => filter.length === 0 || filter.some((word) => f.includes(word)))
  .sort();
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-timeout=300000', ...files],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);
