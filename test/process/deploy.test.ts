/**
 * deploy/: the container image (Dockerfile) and the systemd unit are parsed and checked against what
 * the README promises (no image can be built here: no registry for base images).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { DockerfileParser, type ImageTemplate, type Instruction } from 'dockerfile-ast';
import { validate } from 'dockerfile-utils';
import { ROOT } from '../support/process.js';

const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const args = (instruction: Instruction) => instruction.getArguments().map((a) => a.getValue());

test('deploy/Dockerfile: valid, two stages, runs dist/server.js as an unprivileged user, with a health check', () => {
  const text = read('deploy/Dockerfile');
  const problems = validate(text).map((d) => `line ${d.range.start.line + 1}: ${d.message}`);
  assert.deepEqual(problems, [], 'the Dockerfile validator reports nothing');

  const dockerfile = DockerfileParser.parse(text);
  const stages = dockerfile.getFROMs();
  assert.equal(stages.length, 2, 'a build stage and a runtime stage');
  assert.equal(stages[0]!.getBuildStage(), 'build');
  const [build, runtime] = stages.map((from) => dockerfile.getContainingImage(from.getRange().start)!) as [
    ImageTemplate,
    ImageTemplate,
  ];
  const keywords = (image: ImageTemplate) => image.getInstructions().map((i) => i.getKeyword());

  // The build stage builds once and drops the build tools.
  const runs = build!
    .getInstructions()
    .filter((i) => i.getKeyword() === 'RUN')
    .map((i) => i.getArgumentsContent());
  assert.ok(runs.some((r) => /npm ci\b/.test(r ?? '')));
  assert.ok(runs.some((r) => /npm run build && npm prune --omit=dev/.test(r ?? '')));
  // Everything it copies from the repository exists, and .dockerignore keeps out what is built here.
  for (const copy of build.getCOPYs()) {
    for (const source of args(copy).slice(0, -1)) assert.ok(existsSync(join(ROOT, source)), `COPY ${source}`);
  }
  assert.match(read('.dockerignore'), /^node_modules$/m);
  assert.match(read('.dockerignore'), /^dist$/m);

  // The runtime stage has the built service and production dependencies only.
  const copies = runtime.getCOPYs();
  assert.ok(
    copies.every((c) => c.getFromFlag()?.getValue() === 'build'),
    'the runtime stage copies from the build stage only',
  );
  const copied = copies.map((c) => args(c)[0]);
  assert.ok(copied.includes('/app/dist'));
  assert.ok(copied.includes('/app/node_modules'));
  const user = runtime.getInstructions().filter((i) => i.getKeyword() === 'USER');
  assert.equal(user.length, 1);
  assert.doesNotMatch(args(user[0]!)[0]!, /^(root|0)(:|$)/, 'not root');
  assert.ok(keywords(runtime).indexOf('USER') < keywords(runtime).indexOf('CMD'));
  const [health] = runtime.getHEALTHCHECKs();
  assert.ok(health, 'HEALTHCHECK');
  assert.match(health!.getArgumentsContent() ?? '', /CMD .*\/health/);
  const [cmd] = runtime.getCMDs();
  assert.deepEqual(
    cmd!.getJSONStrings().map((s) => s.getJSONValue()),
    ['node', 'dist/server.js'],
  );
  const env = runtime.getENVs().flatMap((e) => e.getProperties().map((p) => [p.getName(), p.getValue()]));
  assert.deepEqual(Object.fromEntries(env).HOST, '0.0.0.0', 'listens beyond the container');
  assert.ok(keywords(runtime).includes('EXPOSE'));
});

/** The sections of a systemd unit: name → key → values (a key may repeat). */
function parseUnit(text: string): Map<string, Map<string, string[]>> {
  const sections = new Map<string, Map<string, string[]>>();
  let current: Map<string, string[]> | undefined;
  for (const [n, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const section = /^\[(\w+)\]$/.exec(line);
    if (section) {
      current = new Map();
      sections.set(section[1]!, current);
      continue;
    }
    const pair = /^([A-Za-z]+)=(.*)$/.exec(line);
    assert.ok(pair && current, `line ${n + 1} is not key=value in a section: ${raw}`);
    current.set(pair[1]!, [...(current.get(pair[1]!) ?? []), pair[2]!]);
  }
  return sections;
}

test('deploy/event-collector.service: a valid unit that runs dist/server.js and stops it with SIGTERM', () => {
  const text = read('deploy/event-collector.service');
  const unit = parseUnit(text);
  assert.deepEqual([...unit.keys()], ['Unit', 'Service', 'Install']);
  const service = unit.get('Service')!;
  const one = (key: string) => {
    const values = service.get(key);
    assert.equal(values?.length, 1, key);
    return values![0]!;
  };
  assert.match(one('ExecStart'), /^\/usr\/bin\/node dist\/server\.js$/);
  assert.match(one('ExecStartPre'), /dist\/server\.js migrate$/);
  assert.equal(one('KillSignal'), 'SIGTERM');
  assert.equal(one('KillMode'), 'mixed', 'the signal goes to the service alone');
  assert.notEqual(one('User'), 'root');
  assert.ok(Number(one('TimeoutStopSec')) > 10 + 30, 'longer than the grace period and the close');
  assert.equal(one('Restart'), 'on-failure');
  assert.ok(Number(one('LimitNOFILE')) > 10_000, 'above TRACK_MAX_CONNECTIONS');
  assert.ok(service.get('Environment')!.includes('TRACK_DATA_DIR=/var/lib/event-collector'));
  assert.equal(one('StateDirectory'), 'event-collector');
  assert.equal(unit.get('Install')!.get('WantedBy')?.[0], 'multi-user.target');

  // systemd's own check, where systemd is installed: it must report nothing.
  const verify = spawnSync('systemd-analyze', ['verify', join(ROOT, 'deploy', 'event-collector.service')], {
    encoding: 'utf8',
  });
  if (verify.error === undefined) {
    assert.equal(verify.status, 0, verify.stderr);
    assert.equal(verify.stderr.trim(), '', 'systemd-analyze verify reports nothing');
  }
});
